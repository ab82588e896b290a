#include "harness/testing/support.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

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

}  // namespace harness::testing
