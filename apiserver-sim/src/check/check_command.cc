// `apiserver-sim check-idempotence` (check_command.h).

#include "harness/sim/check_command.h"

#include <stdlib.h>  // mkdtemp

#include <chrono>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/yaml.h"
#include "harness/net/certificates.h"
#include "harness/property/workloads.h"
#include "harness/sim/endpoint.h"
#include "harness/sim/idempotence_check.h"
#include "harness/sim/injector_process.h"
#include "harness/sim/stub_webhook.h"

namespace harness::sim {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kExitUsage = 2;

core::Result<std::string> readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::makeError(fmt::format("cannot read \"{}\"", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

core::Result<std::vector<std::string>> parseKinds(const std::string& text) {
  if (text == "all") return property::workloadKinds();
  std::vector<std::string> kinds;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = text.find(',', start);
    const std::string kind = text.substr(start, end == std::string::npos ? end : end - start);
    const auto& known = property::workloadKinds();
    if (std::find(known.begin(), known.end(), kind) == known.end()) {
      return core::makeError(fmt::format("--kinds: unknown kind \"{}\" (known: {}, or all)", kind,
                                         fmt::join(known, ", ")));
    }
    kinds.push_back(kind);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return kinds;
}

// The namespaces generated objects are admitted in, as the injector's Kubernetes API serves
// them: injection enabled for both profiles, so that every case is a candidate.
json generatedNamespaces() {
  json items = json::array();
  for (const char* name : {"shop", "default", "payments"}) {
    items.push_back({{"apiVersion", "v1"},
                     {"kind", "Namespace"},
                     {"metadata",
                      {{"name", name},
                       {"labels", {{"kubernetes.io/metadata.name", name},
                                   {"istio-injection", "enabled"}}},
                       {"annotations", {{"linkerd.io/inject", "enabled"}}}}}});
  }
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

// A temporary work folder removed at the end, or the one given (kept).
class WorkDir {
 public:
  static core::Result<WorkDir> make(const std::string& given) {
    WorkDir dir;
    if (!given.empty()) {
      std::error_code ec;
      fs::create_directories(given, ec);
      if (ec) return core::makeError(fmt::format("--work-dir {}: {}", given, ec.message()));
      dir.path_ = fs::absolute(given);
      return dir;
    }
    std::string tmpl = (fs::temp_directory_path() / "check-idempotence-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) return core::makeError("cannot create a temporary folder");
    dir.path_ = tmpl;
    dir.owned_ = true;
    return dir;
  }
  WorkDir() = default;
  WorkDir(WorkDir&& other) noexcept : path_(std::move(other.path_)), owned_(other.owned_) {
    other.owned_ = false;
  }
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir() {
    std::error_code ec;
    if (owned_) fs::remove_all(path_, ec);
  }
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool owned_ = false;
};

}  // namespace

int runCheckIdempotence(const CheckIdempotenceArgs& args, std::ostream& out, std::ostream& err) {
  auto usage = [&err](const std::string& message) {
    err << "apiserver-sim check-idempotence: " << message << "\n";
    return kExitUsage;
  };
  const int targets = !args.injector.empty() + !args.stub_file.empty() +
                      !args.stub_mutator.empty() + !args.url.empty();
  if (targets != 1) {
    return usage("name exactly one webhook: --injector, --stub, --stub-mutator or --url");
  }
  if (args.output != "table" && args.output != "json" && args.output != "junit") {
    return usage(fmt::format("-o: unknown format \"{}\" (table, json, junit)", args.output));
  }
  if (args.cases == 0) return usage("--cases must be at least 1");
  IdempotenceOptions options;
  options.cases = args.cases;
  options.seed = args.seed.value_or(static_cast<std::uint64_t>(
      std::chrono::system_clock::now().time_since_epoch().count()));
  auto kinds = parseKinds(args.kinds);
  if (!kinds) return usage(kinds.error().message);
  options.kinds = std::move(*kinds);
  for (const auto& text : args.mutators) {
    auto mutator = parseMutator(text);
    if (!mutator) return usage("--mutator: " + mutator.error().message);
    options.mutators.push_back(std::move(*mutator));
  }
  if (!args.ca_file.empty() && args.url.empty()) return usage("--ca-file needs --url");
  if (!args.injector_args.empty() && args.injector.empty()) {
    return usage("--injector-arg needs --injector");
  }

  auto work = WorkDir::make(args.work_dir);
  if (!work) return usage(work.error().message);
  auto ca = net::CertificateAuthority::create("check-idempotence CA");
  if (!ca) return usage(ca.error().message);

  std::unique_ptr<StubWebhook> stub;
  std::unique_ptr<InjectorProcess> injector;
  std::string url, ca_pem, webhook;
  if (!args.url.empty()) {
    json endpoint = {{"url", args.url}};
    if (!args.ca_file.empty()) endpoint["caFile"] = fs::absolute(args.ca_file).string();
    auto external = parseExternalEndpoint(endpoint, fs::current_path(), "--url");
    if (!external) return usage(external.error().message);
    url = external->url;
    ca_pem = external->ca_pem;
    webhook = url;
  } else if (!args.injector.empty()) {
    if (args.injector != "linkerd" && args.injector != "istio") {
      return usage(fmt::format("--injector: unknown profile \"{}\" (linkerd, istio)",
                               args.injector));
    }
    const fs::path namespaces = work->path() / "namespaces.json";
    std::ofstream(namespaces) << generatedNamespaces().dump(2) << "\n";
    InjectorSpec spec;
    spec.profiles = {args.injector};
    if (args.injector == "linkerd") {
      // The chart's default values, and a trust bundle (any CA certificate: the checker never
      // talks to the proxies).
      spec.values = work->path() / "linkerd-values.yaml";
      spec.trust_anchors = work->path() / "trust-anchors.pem";
      std::ofstream(spec.values) << "{}\n";
      std::ofstream(spec.trust_anchors) << ca->certificate_pem;
    }
    spec.args = args.injector_args;
    InjectorLaunchOptions launch;
    launch.binary = args.injector_binary;
    launch.object_files = {namespaces};
    auto started = InjectorProcess::start(args.injector, spec, *ca, work->path(), {}, launch);
    if (!started) return usage(started.error().message);
    injector = std::move(*started);
    url = injector->url() + (args.injector == "istio" ? "inject" : "inject/linkerd");
    ca_pem = ca->certificate_pem;
    webhook = "injector " + args.injector;
    for (const auto& a : args.injector_args) webhook += " " + a;
  } else {
    json stub_json;
    if (!args.stub_mutator.empty()) {
      stub_json = {{"responses", json::array({{{"respond", {{"mutator", args.stub_mutator}}}}})}};
      webhook = "stub " + args.stub_mutator;
    } else {
      auto text = readText(args.stub_file);
      if (!text) return usage("--stub: " + text.error().message);
      auto parsed = core::parseYaml(*text);
      if (!parsed) return usage(args.stub_file + ": " + parsed.error().message);
      stub_json = parsed->is_object() && parsed->contains("stub") ? (*parsed)["stub"] : *parsed;
      webhook = "stub " + args.stub_file;
    }
    auto spec = parseStubSpec(stub_json, args.stub_file.empty() ? "--stub-mutator" : "stub");
    if (!spec) {
      return usage((args.stub_file.empty() ? std::string() : args.stub_file + ": ") +
                   spec.error().message);
    }
    auto started = StubWebhook::start("check-idempotence", std::move(*spec), *ca, work->path(),
                                      {}, 0.0);
    if (!started) return usage(started.error().message);
    stub = std::move(*started);
    url = stub->url();
    ca_pem = ca->certificate_pem;
  }

  auto caller = std::make_shared<HttpsWebhookCaller>();
  IdempotenceReport report =
      checkIdempotence(options, httpsTransport(caller, url, ca_pem));
  report.webhook = webhook;
  writeIdempotenceReport(report, args.output, out);
  if (report.error && injector) err << "injector log:\n" << injector->logTail() << "\n";
  if (stub) stub->stop();
  if (injector) injector->stop();
  return report.exitCode();
}

}  // namespace harness::sim
