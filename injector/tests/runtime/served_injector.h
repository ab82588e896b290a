#pragma once

// The `injector serve` process the webhook integration tests talk to: started with the given
// arguments plus `--ports-file`, its log in <dir>/injector.log, its webhook port trusted through
// <dir>/webhook/ca.crt (t::generateCertificates), stopped with SIGTERM.

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/net/client.h"
#include "harness/testing/support.h"

namespace harness::injector::tests {

class ServedInjector {
 public:
  // Use as ASSERT_NO_FATAL_FAILURE(injector.start(...)).
  void start(const std::filesystem::path& dir, std::vector<std::string> args) {
    namespace t = harness::testing;
    dir_ = dir;
    args.push_back("--ports-file");
    args.push_back((dir / "ports.json").string());
    process_ = std::make_unique<t::ChildProcess>(std::move(args), dir / "injector.log");
    ASSERT_TRUE(t::waitForFile(dir / "ports.json", 15000)) << log();
    auto ports = nlohmann::json::parse(t::readFile(dir / "ports.json"));
    webhook_port_ = ports["webhook"];
    admin_port_ = ports["admin"];
    net::ClientOptions options;
    options.ca_pem = t::readFile(dir / "webhook" / "ca.crt");
    client_ = std::make_unique<net::HttpClient>(options);
  }

  // SIGTERM; the exit status must be 0. Nothing when start() did not get that far.
  void stop() {
    if (process_) {
      EXPECT_EQ(process_->stop(SIGTERM), 0) << log();
      process_.reset();
    }
  }

  // POST to the webhook port, as kube-apiserver does (?timeout=10s); no Content-Type header when
  // `content_type` is empty.
  net::ClientResponse post(const std::string& body, const std::string& path,
                           const std::string& content_type = "application/json") {
    net::ClientRequest r;
    r.url = webhookUrl(path) + "?timeout=10s";
    if (!content_type.empty()) r.headers.set("Content-Type", content_type);
    r.body = body;
    r.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    return client_->sendSync(std::move(r));
  }

  net::ClientResponse get(const std::string& url) {
    net::ClientRequest r;
    r.method = "GET";
    r.url = url;
    r.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    return client_->sendSync(std::move(r));
  }

  [[nodiscard]] std::string webhookUrl(const std::string& path) const {
    return "https://127.0.0.1:" + std::to_string(webhook_port_) + path;
  }
  [[nodiscard]] std::string admin(const std::string& path) const {
    return "http://127.0.0.1:" + std::to_string(admin_port_) + path;
  }
  [[nodiscard]] int webhookPort() const { return webhook_port_; }
  [[nodiscard]] int pid() const { return process_ ? process_->pid() : -1; }
  [[nodiscard]] std::string log() const {
    return harness::testing::readFile(dir_ / "injector.log");
  }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<harness::testing::ChildProcess> process_;
  std::unique_ptr<net::HttpClient> client_;
  int webhook_port_ = 0;
  int admin_port_ = 0;
};

}  // namespace harness::injector::tests
