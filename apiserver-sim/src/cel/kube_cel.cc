// The kube-cel helper process: start, one JSON line out and one in per call, with a deadline.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>

#include <fmt/format.h>

#include "harness/process/child_process.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/cel.h"

namespace harness::sim::cel {

namespace fs = std::filesystem;

namespace {

// A response line may hold results for up to 64 conditions and error texts; a megabyte is far
// beyond that and bounds what a misbehaving helper can make us buffer.
constexpr std::size_t kMaxResponseBytes = 1 << 20;

// write(2) all of `data` to a pipe whose reader may be gone, without letting SIGPIPE end the
// process: the signal is blocked in this thread and a pending one is consumed (EPIPE reports it).
// Returns 0 or the errno of the failed write.
int writeAll(int fd, std::string_view data) {
  sigset_t pipe_set;
  sigset_t old_set;
  sigemptyset(&pipe_set);
  sigaddset(&pipe_set, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
  int failed_errno = 0;
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      failed_errno = errno;
      break;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  if (failed_errno == EPIPE) {
    const timespec zero{0, 0};
    while (sigtimedwait(&pipe_set, nullptr, &zero) > 0) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
  return failed_errno;
}

}  // namespace

fs::path KubeCel::defaultBinary() { return process::kubeBinDir() / "kube-cel"; }

core::Result<std::shared_ptr<KubeCel>> KubeCel::start(const fs::path& binary,
                                                       const fs::path& log_file) {
  std::error_code ec;
  if (!fs::exists(binary, ec)) {
    return core::makeError(fmt::format(
        "kube-cel is not built ({}; bash scripts/build-kube.sh builds it, with Go 1.26)",
        binary.string()));
  }
  auto child = process::ChildProcess::startPiped({binary.string()}, log_file);
  if (!child) return core::makeError(fmt::format("cannot start kube-cel: {}", child.error().message));
  std::shared_ptr<KubeCel> cel(new KubeCel());
  cel->child_ = std::move(child).value();
  auto version = cel->call(nlohmann::json{{"op", "version"}});
  if (!version) return version.error();
  cel->kubernetes_version_ = version->value("kubernetes", "");
  cel->compatibility_version_ = version->value("celCompatibilityVersion", "");
  return cel;
}

KubeCel::~KubeCel() {
  if (!child_) return;
  // End of input: kube-cel exits by itself; stop() then only reaps it (or ends a stuck one).
  child_->closeStdin();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2'000);
  while (child_->running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  child_->stop(std::chrono::milliseconds(2'000));
}

bool KubeCel::healthy() {
  std::lock_guard lock(mutex_);
  return !broken_;
}

std::string KubeCel::failure(const std::string& what) {
  broken_ = true;
  child_->stop(std::chrono::milliseconds(2'000));
  std::string reason = fmt::format("kube-cel {}", what);
  if (auto status = child_->exitStatus()) {
    reason += fmt::format(" ({})", process::describeExitStatus(*status));
  }
  if (auto tail = child_->logTail(5); !tail.empty()) {
    reason += fmt::format("; {}: {}", child_->logFile().string(), tail);
  }
  broken_reason_ = reason;
  return reason;
}

core::Result<nlohmann::json> KubeCel::call(const nlohmann::json& request,
                                           std::chrono::milliseconds timeout) {
  std::string line = request.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  line += '\n';
  std::lock_guard lock(mutex_);
  if (broken_) return core::makeError(broken_reason_);
  return callLocked(line, timeout);
}

core::Result<nlohmann::json> KubeCel::callLocked(const std::string& line,
                                                 std::chrono::milliseconds timeout) {
  if (const int failed = writeAll(child_->stdinFd(), line); failed != 0) {
    // EPIPE: the helper closed its input, so it has exited or is exiting; whether the write or
    // the read notices first is a race, and both are the same failure (failure() reaps it and
    // adds its exit status).
    if (failed == EPIPE) return core::makeError(failure("exited"));
    return core::makeError(failure(fmt::format("cannot be written to: {}", std::strerror(failed))));
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const auto newline = pending_.find('\n'); newline != std::string::npos) {
      std::string response_line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      nlohmann::json response = nlohmann::json::parse(response_line, nullptr, false);
      if (response.is_discarded() || !response.is_object()) {
        return core::makeError(failure("answered with a line that is not a JSON object"));
      }
      if (auto it = response.find("error"); it != response.end() && it->is_string()) {
        return core::makeError(fmt::format("kube-cel: {}", it->get<std::string>()));
      }
      return response;
    }
    if (pending_.size() > kMaxResponseBytes) {
      return core::makeError(failure("answered with a line over 1 MiB"));
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return core::makeError(failure(fmt::format("did not answer within {} ms", timeout.count())));
    }
    pollfd pfd{child_->stdoutFd(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      return core::makeError(failure(fmt::format("poll: {}", std::strerror(errno))));
    }
    if (ready == 0) continue;
    char buffer[64 * 1024];
    const ssize_t n = ::read(child_->stdoutFd(), buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return core::makeError(failure(fmt::format("read: {}", std::strerror(errno))));
    }
    if (n == 0) return core::makeError(failure("exited"));
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
}

}  // namespace harness::sim::cel
