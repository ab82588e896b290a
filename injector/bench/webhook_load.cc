// Load benchmark of the injector's request path: the `injector serve` process on 127.0.0.1 with
// fresh certificates, sent the seed tutorial Pod's AdmissionReview over keep-alive HTTPS by 1 and
// 16 concurrent connections. Reports requests per second, per injector CPU-second (from
// /proc/<pid>/stat), and p50/p99 latency. With --large-mb, then the injector's resident memory
// (VmRSS, VmHWM from /proc/<pid>/status) before, at its peak and after two rounds of large
// reviews (a Pod with that many MB of env vars) on 16 connections. Bounded in time; stops the process it starts.
//
//   injector_load_bench --injector build/default/injector/injector [--seconds 5]
//                       [--connections 1,16] [--large-mb 8]

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "harness/net/client.h"
#include "harness/testing/support.h"

namespace {

namespace t = harness::testing;
using Clock = std::chrono::steady_clock;

double processCpuSeconds(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) {
      stime = std::stoull(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A field of /proc/<pid>/status in MiB ("VmRSS", "VmHWM").
double processStatusMib(int pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(field + ":")) {
      return static_cast<double>(std::stoull(line.substr(field.size() + 1))) / 1024.0;  // kB
    }
  }
  return 0;
}

// The review with about `mib` MiB of env vars added to the Pod's first container.
std::string enlargedReview(const std::string& review, int mib) {
  auto json = nlohmann::json::parse(review);
  auto& env = json["request"]["object"]["spec"]["containers"][0]["env"];
  const std::size_t count = static_cast<std::size_t>(mib) * 1024 * 1024 / 64;
  for (std::size_t i = 0; i < count; ++i) {
    env.push_back({{"name", "VAR_" + std::to_string(i)}, {"value", std::string(24, 'v')}});
  }
  return json.dump();
}

struct Result {
  int connections;
  std::size_t requests;
  std::size_t errors;
  double seconds, cpu_seconds, p50_ms, p99_ms;
};

Result runLoad(harness::net::HttpClient& client, const std::string& url, const std::string& body,
               int connections, double seconds, int pid) {
  std::vector<std::vector<double>> latencies(static_cast<size_t>(connections));
  std::atomic<std::size_t> errors{0};
  const double cpu_before = processCpuSeconds(pid);
  const auto started = Clock::now();
  const auto until = started + std::chrono::duration<double>(seconds);
  std::vector<std::thread> workers;
  for (int c = 0; c < connections; ++c) {
    workers.emplace_back([&, c] {
      while (Clock::now() < until) {
        harness::net::ClientRequest r;
        r.url = url;
        r.body = body;
        r.headers.set("Content-Type", "application/json");
        r.deadline = Clock::now() + std::chrono::seconds(10);
        const auto t0 = Clock::now();
        auto res = client.sendSync(std::move(r));
        const auto t1 = Clock::now();
        if (!res.ok() || res.status != 200) {
          ++errors;
          continue;
        }
        latencies[static_cast<size_t>(c)].push_back(
            std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
    });
  }
  for (auto& w : workers) w.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) {
    return all.empty() ? 0.0 : all[std::min(all.size() - 1, static_cast<size_t>(p * all.size()))];
  };
  return {connections, all.size(), errors.load(), elapsed, processCpuSeconds(pid) - cpu_before,
          pct(0.50), pct(0.99)};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Load benchmark of the injector webhook's request path"};
  std::string injector = HARNESS_INJECTOR_BINARY;
  double seconds = 5;
  std::vector<int> connection_counts = {1, 16};
  int large_mb = 0;
  app.add_option("--injector", injector, "The injector binary")->capture_default_str();
  app.add_option("--seconds", seconds, "Duration of each run")->capture_default_str();
  app.add_option("--connections", connection_counts, "Concurrent keep-alive connections")
      ->delimiter(',');
  app.add_option("--large-mb", large_mb,
                 "Then measure memory around large reviews of about this many MiB (0: skip)")
      ->check(CLI::Range(0, 9));
  CLI11_PARSE(app, argc, argv);
  if (seconds <= 0 || seconds > 120) {
    std::cerr << "--seconds must be in (0, 120]\n";
    return 2;
  }

  t::ScratchDir dir{"injector-load"};
  t::generateCertificates(dir.path());
  t::writeFile(dir / "values.yaml", "proxy: {}\n");
  const auto seed = t::sourceDir() / "scenarios" / "seed-tutorial";
  t::ChildProcess process(
      {injector, "--log-level", "warn", "serve", "--address", "127.0.0.1", "--port", "0",
       "--admin-port", "-1", "--threads", "2", "--tls-cert", (dir / "tls.crt").string(),
       "--tls-key", (dir / "tls.key").string(), "--values", (dir / "values.yaml").string(),
       "--trust-anchors", (dir / "ca.crt").string(), "--objects",
       (seed / "application.yaml").string(), "--objects", (seed / "owners.yaml").string(),
       "--ports-file", (dir / "ports.json").string()},
      dir / "injector.log");
  if (!t::waitForFile(dir / "ports.json", 15000)) {
    std::cerr << "the injector did not start:\n" << t::readFile(dir / "injector.log");
    return 1;
  }
  const int port = nlohmann::json::parse(t::readFile(dir / "ports.json"))["webhook"];
  // The review body, built by the injector's own `review` command.
  const std::string review_file = (dir / "review.json").string();
  const std::string cmd = "'" + injector + "' review '" + (seed / "pod.yaml").string() +
                          "' --uid bench > '" + review_file + "'";
  if (t::runCommand(cmd) != 0) {
    std::cerr << "injector review failed\n";
    return 1;
  }
  const std::string body = t::readFile(review_file);
  const std::string url = "https://127.0.0.1:" + std::to_string(port) + "/?timeout=10s";

  std::printf("%-12s %10s %8s %12s %16s %10s %10s\n", "connections", "requests", "errors",
              "req/s", "req/CPU-second", "p50 ms", "p99 ms");
  for (int connections : connection_counts) {
    harness::net::ClientOptions o;
    o.ca_pem = t::readFile(dir / "ca.crt");
    o.threads = 2;
    harness::net::HttpClient client(o);
    runLoad(client, url, body, connections, std::min(1.0, seconds), process.pid());  // warm-up
    const auto r = runLoad(client, url, body, connections, seconds, process.pid());
    std::printf("%-12d %10zu %8zu %12.0f %16.0f %10.3f %10.3f\n", r.connections, r.requests,
                r.errors, static_cast<double>(r.requests) / r.seconds,
                r.cpu_seconds > 0 ? static_cast<double>(r.requests) / r.cpu_seconds : 0.0,
                r.p50_ms, r.p99_ms);
  }
  std::printf("(injector: 2 server threads; the client runs on the same 2 cores)\n");
  if (large_mb > 0) {
    harness::net::ClientOptions o;
    o.ca_pem = t::readFile(dir / "ca.crt");
    o.threads = 2;
    harness::net::HttpClient client(o);
    const std::string large = enlargedReview(body, large_mb);
    const double before = processStatusMib(process.pid(), "VmRSS");
    constexpr int kConnections = 16, kRounds = 2;
    std::size_t answered = 0, failed = 0;
    for (int round = 0; round < kRounds; ++round) {
      std::vector<std::future<harness::net::ClientResponse>> inflight;
      for (int c = 0; c < kConnections; ++c) {
        harness::net::ClientRequest req;
        req.url = url;
        req.body = large;
        req.headers.set("Content-Type", "application/json");
        req.deadline = Clock::now() + std::chrono::seconds(300);
        inflight.push_back(client.send(std::move(req)));
      }
      for (auto& f : inflight) {
        auto res = f.get();
        (res.ok() && res.status == 200 ? answered : failed)++;
      }
    }
    // Small requests afterwards, as a webhook sees between large ones.
    runLoad(client, url, body, 1, 1.0, process.pid());
    // Until the injector is idle (work whose client gave up may still run), at most a minute.
    for (int i = 0; i < 60; ++i) {
      const double cpu = processCpuSeconds(process.pid());
      std::this_thread::sleep_for(std::chrono::seconds(1));
      if (processCpuSeconds(process.pid()) - cpu < 0.02) break;
    }
    std::printf("large reviews: %d x %d of %.1f MiB (%zu answered, %zu failed); injector RSS "
                "before %.1f MiB, peak %.1f MiB, after %.1f MiB\n",
                kRounds, kConnections, static_cast<double>(large.size()) / (1024 * 1024), answered,
                failed, before, processStatusMib(process.pid(), "VmHWM"),
                processStatusMib(process.pid(), "VmRSS"));
  }
  return process.stop(SIGTERM) == 0 ? 0 : 1;
}
