#include "harness/testing/support.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "harness/process/kube_bin_dir.h"

namespace harness::testing {

namespace fs = std::filesystem;

fs::path sourceDir() {
  if (const char* dir = std::getenv("HARNESS_SOURCE_DIR")) return dir;
  return HARNESS_DEFAULT_SOURCE_DIR;
}

fs::path binaryDir() {
  if (const char* dir = std::getenv("HARNESS_BINARY_DIR")) return dir;
  return HARNESS_DEFAULT_BINARY_DIR;
}

fs::path kubectlPath() {
  if (const char* path = std::getenv("HARNESS_KUBECTL"); path != nullptr && *path != '\0') {
    return path;
  }
  return process::kubeBinDir() / "kubectl";
}

std::string notBuiltReason(const fs::path& binary) {
  if (::access(binary.c_str(), X_OK) == 0 && !fs::is_directory(binary)) return {};
  return binary.string() + " is not built (bash scripts/build-kube.sh builds it; needs Go 1.26)";
}

ScratchDir::ScratchDir(const std::string& prefix) {
  static std::atomic<int> counter{0};
  path_ = fs::current_path() / "test-scratch" /
          (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

namespace {

std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out.push_back(c);
    }
  }
  return out + "'";
}

}  // namespace

void generateCertificates(const fs::path& dir, const CertificateRequest& request) {
  std::string cmd = "bash " + shellQuote((sourceDir() / "scripts" / "gen-certs.sh").string()) +
                    " --out " + shellQuote(dir.string());
  for (const auto& d : request.dns_names) cmd += " --dns " + shellQuote(d);
  for (const auto& ip : request.ip_addresses) cmd += " --ip " + shellQuote(ip);
  if (!request.common_name.empty()) cmd += " --cn " + shellQuote(request.common_name);
  if (!request.ca_cert_file.empty()) {
    cmd += " --ca-cert " + shellQuote(request.ca_cert_file) + " --ca-key " +
           shellQuote(request.ca_key_file);
  }
  if (request.client) cmd += " --client";
  cmd += " >/dev/null";
  if (runCommand(cmd) != 0) throw std::runtime_error("gen-certs.sh failed: " + cmd);
}

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const fs::path& path, const std::string& content) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path.string());
  out << content;
}

int runCommand(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::size_t threadCount(int pid) {
  const std::string process = pid == 0 ? "self" : std::to_string(pid);
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& task : fs::directory_iterator("/proc/" + process + "/task")) {
    ++n;
  }
  return n;
}

ListeningSocket::ListeningSocket() {
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd_, 16) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error("cannot listen on 127.0.0.1");
  }
  port_ = ntohs(address.sin_port);
}

ListeningSocket::~ListeningSocket() { ::close(fd_); }

CommandOutput runCapture(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  CommandOutput result;
  char err_template[] = "run-capture-stderr-XXXXXX";
  const int err_fd = ::mkstemp(err_template);
  if (err_fd < 0) return result;
  ::close(err_fd);
  std::string command = "env";
  for (const auto& variable : env) command += " " + shellQuote(variable);
  for (const auto& arg : argv) command += " " + shellQuote(arg);
  command += " 2>" + shellQuote(err_template);
  if (FILE* pipe = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.out.append(buffer, n);
    const int status = ::pclose(pipe);
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    result.err = readFile(err_template);
  }
  ::unlink(err_template);
  return result;
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const fs::path& log_file) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    if (!log_file.empty()) {
      const int fd = ::open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
      }
    }
    // The child must not inherit a blocked signal mask from the test runner.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (running()) {
    ::kill(pid_, SIGKILL);
    wait(5000);
  }
}

bool ChildProcess::running() {
  if (pid_ <= 0 || status_ != -1) return false;
  int st = 0;
  const int r = ::waitpid(pid_, &st, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return false;
}

int ChildProcess::wait(int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (running()) {
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return status_;
}

int ChildProcess::stop(int signal, int timeout_ms) {
  if (running()) ::kill(pid_, signal);
  return wait(timeout_ms);
}

bool waitForFile(const fs::path& path, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    if (fs::exists(path, ec) && fs::file_size(path, ec) > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::optional<std::string> waitForText(const fs::path& path, const std::string& text,
                                       int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
      std::string content = readFile(path);
      if (content.find(text) != std::string::npos) return content;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace harness::testing
