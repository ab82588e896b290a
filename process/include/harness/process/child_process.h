#pragma once

// harness::process: a program started as a child process with its output in a log file, watched
// and stopped like a pod (SIGTERM, then SIGKILL after a grace period). Used for the real
// injector binary and the real control plane (etcd, kube-apiserver, kube-controller-manager).
//
// The child gets SIGKILL if the thread that started it exits (PR_SET_PDEATHSIG), so that a
// crashed test or launcher never leaves a process behind: start children from a thread that
// outlives them (the main thread, or the thread that also stops them).

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/result.h"

namespace harness::process {

class ChildProcess {
 public:
  // fork + execv of argv[0] (a path; no $PATH search) with stdin from /dev/null and stdout and
  // stderr appended to `log_file`. The child inherits no descriptor above 2 and starts with an
  // empty signal mask and default dispositions. Errors: the log file cannot be opened, fork
  // fails, exec fails (e.g. "exec /x/etcd: No such file or directory").
  static core::Result<std::unique_ptr<ChildProcess>> start(std::vector<std::string> argv,
                                                           std::filesystem::path log_file);
  // The same, with the child's stdin and stdout connected to pipes the caller reads and writes
  // (stdinFd(), stdoutFd(); both close-on-exec, closed by stop()). stderr goes to `log_file`.
  // For helpers that speak a line protocol (kube-cel).
  static core::Result<std::unique_ptr<ChildProcess>> startPiped(std::vector<std::string> argv,
                                                                std::filesystem::path log_file);

  ~ChildProcess();  // stop()
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  [[nodiscard]] pid_t pid() const { return pid_; }
  [[nodiscard]] const std::vector<std::string>& commandLine() const { return argv_; }
  [[nodiscard]] const std::filesystem::path& logFile() const { return log_file_; }
  // The last `max_lines` lines of the log.
  [[nodiscard]] std::string logTail(std::size_t max_lines = 20) const;

  // Whether the process is still running (reaps it when it has exited).
  bool running();
  // The exit status once it has exited: the exit code, or 128 + signal number.
  std::optional<int> exitStatus();
  // SIGTERM, wait up to `grace`, then SIGKILL. Returns the exit status (the exit code, or
  // 128 + signal number). Idempotent: later calls return the same status.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5'000));

  // startPiped only: the write end of the child's stdin and the read end of its stdout (-1
  // otherwise, and after stop()).
  [[nodiscard]] int stdinFd() const { return stdin_fd_; }
  [[nodiscard]] int stdoutFd() const { return stdout_fd_; }
  // Closes the child's stdin (end of input: a line helper then exits by itself). Idempotent.
  void closeStdin();

 private:
  ChildProcess() = default;
  bool reap(bool block);  // waitpid; true once the child has been reaped

  std::vector<std::string> argv_;
  std::filesystem::path log_file_;
  pid_t pid_ = -1;
  std::mutex mutex_;
  bool reaped_ = false;
  int exit_status_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
};

// The last `max_lines` lines of a text file (at most its last 64 KiB); empty when unreadable.
std::string tailOf(const std::filesystem::path& file, std::size_t max_lines);

// "exit status 2", "killed by signal 9 (Killed)" for an exit status as ChildProcess reports it.
std::string describeExitStatus(int status);

}  // namespace harness::process
