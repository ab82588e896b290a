#include "harness/process/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include <fmt/format.h>

namespace harness::process {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

int decodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// fork + execv. Between fork and exec the child only makes async-signal-safe calls (the parent
// may have many threads). Every inherited descriptor above 2 is closed at exec, so the child
// holds none of the parent's sockets (a listening port must close when its owner stops).
// Where the child's stdin and stdout come from: /dev/null and the log, or pipes.
struct Pipes {
  int child_stdin = -1;    // read end, becomes the child's fd 0
  int child_stdout = -1;   // write end, becomes the child's fd 1
};

core::Result<pid_t> spawn(const std::vector<std::string>& argv, const fs::path& log_file,
                          const Pipes& pipes = {}) {
  if (argv.empty()) return core::makeError("no program to start");
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  const int log_fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return core::makeError(
        fmt::format("cannot open {}: {}", log_file.string(), std::strerror(errno)));
  }
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  int error_pipe[2];
  if (null_fd < 0 || ::pipe2(error_pipe, O_CLOEXEC) != 0) {
    const int saved = errno;
    ::close(log_fd);
    if (null_fd >= 0) ::close(null_fd);
    return core::makeError(fmt::format("cannot prepare the child: {}", std::strerror(saved)));
  }
  const long open_max = std::min(::sysconf(_SC_OPEN_MAX), 65536L);
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    ::signal(SIGINT, SIG_DFL);
    ::dup2(pipes.child_stdin >= 0 ? pipes.child_stdin : null_fd, 0);
    ::dup2(pipes.child_stdout >= 0 ? pipes.child_stdout : log_fd, 1);
    ::dup2(log_fd, 2);
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
      for (int fd = 3; fd < open_max; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    ::execv(args[0], args.data());
    const int saved = errno;
    ssize_t ignored = ::write(error_pipe[1], &saved, sizeof saved);
    (void)ignored;
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(error_pipe[1]);
  ::close(log_fd);
  ::close(null_fd);
  if (pid < 0) {
    ::close(error_pipe[0]);
    return core::makeError(fmt::format("fork: {}", std::strerror(fork_errno)));
  }
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(error_pipe[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return core::makeError(fmt::format("exec {}: {}", argv[0], std::strerror(child_errno)));
  }
  return pid;
}

}  // namespace

core::Result<std::unique_ptr<ChildProcess>> ChildProcess::start(std::vector<std::string> argv,
                                                                fs::path log_file) {
  auto pid = spawn(argv, log_file);
  if (!pid) return pid.error();
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->argv_ = std::move(argv);
  child->log_file_ = std::move(log_file);
  child->pid_ = *pid;
  return child;
}

core::Result<std::unique_ptr<ChildProcess>> ChildProcess::startPiped(
    std::vector<std::string> argv, fs::path log_file) {
  int in[2];
  int out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    return core::makeError(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  }
  if (::pipe2(out, O_CLOEXEC) != 0) {
    const int saved = errno;
    ::close(in[0]);
    ::close(in[1]);
    return core::makeError(fmt::format("cannot create a pipe: {}", std::strerror(saved)));
  }
  auto pid = spawn(argv, log_file, Pipes{in[0], out[1]});
  ::close(in[0]);
  ::close(out[1]);
  if (!pid) {
    ::close(in[1]);
    ::close(out[0]);
    return pid.error();
  }
  std::unique_ptr<ChildProcess> child(new ChildProcess());
  child->argv_ = std::move(argv);
  child->log_file_ = std::move(log_file);
  child->pid_ = *pid;
  child->stdin_fd_ = in[1];
  child->stdout_fd_ = out[0];
  return child;
}

ChildProcess::~ChildProcess() { stop(); }

std::string ChildProcess::logTail(std::size_t max_lines) const {
  return tailOf(log_file_, max_lines);
}

bool ChildProcess::reap(bool block) {
  if (reaped_ || pid_ <= 0) return true;
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (r < 0 && errno == EINTR);
  if (r == 0) return false;
  reaped_ = true;
  exit_status_ = r == pid_ ? decodeWaitStatus(status) : -1;
  return true;
}

bool ChildProcess::running() {
  std::lock_guard lock(mutex_);
  return !reap(false);
}

std::optional<int> ChildProcess::exitStatus() {
  std::lock_guard lock(mutex_);
  if (!reap(false)) return std::nullopt;
  return exit_status_;
}

void ChildProcess::closeStdin() {
  std::lock_guard lock(mutex_);
  if (stdin_fd_ >= 0) ::close(stdin_fd_);
  stdin_fd_ = -1;
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  std::lock_guard lock(mutex_);
  // Closing its stdin is how a piped helper learns to exit; its stdout is no longer read.
  for (int* fd : {&stdin_fd_, &stdout_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  if (reap(false)) return exit_status_;
  ::kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (reap(false)) return exit_status_;
    std::this_thread::sleep_for(10ms);
  }
  ::kill(pid_, SIGKILL);
  reap(true);
  return exit_status_;
}

std::string tailOf(const fs::path& file, std::size_t max_lines) {
  if (max_lines == 0) return {};
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  constexpr std::streamoff kMaxBytes = std::streamoff{64} * 1024;
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(std::max<std::streamoff>(0, size - kMaxBytes));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::size_t start = text.size();
  for (std::size_t lines = 0; lines < max_lines; ++lines) {
    const auto newline = start == 0 ? std::string::npos : text.rfind('\n', start - 1);
    if (newline == std::string::npos) return text;
    start = newline;
  }
  return text.substr(start + 1);
}

std::string describeExitStatus(int status) {
  if (status > 128) {
    return fmt::format("killed by signal {} ({})", status - 128, ::strsignal(status - 128));
  }
  if (status < 0) return "exit status unknown";
  return fmt::format("exit status {}", status);
}

}  // namespace harness::process
