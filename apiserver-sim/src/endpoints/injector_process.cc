// InjectorProcess: the injector binary as a child process (see injector/src/runtime/serve.h for
// its command line and ports file).

#include "harness/sim/injector_process.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "harness/core/field_errors.h"
#include "harness/core/json.h"
#include "json_fields.h"

namespace harness::sim {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using detail::ObjectFields;

std::string fileNameFor(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    out += keep ? c : '_';
  }
  return out.empty() ? std::string("injector") : out;
}

bool isExecutableFile(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

core::Result<std::vector<std::string>> parseProfiles(const nlohmann::json& value,
                                                     const std::string& path) {
  std::vector<std::string> profiles;
  auto split = [&profiles](std::string_view text) {
    while (true) {
      const auto comma = text.find(',');
      profiles.emplace_back(text.substr(0, comma));
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
  };
  if (value.is_string()) {
    split(value.get_ref<const std::string&>());
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) {
        return detail::typeError(fmt::format("{}[{}]", path, i), "a string", value[i]);
      }
      profiles.push_back(value[i].get<std::string>());
    }
  } else {
    return detail::typeError(path, "a string or a list of strings", value);
  }
  if (profiles.empty()) return detail::invalidField(path, "must name at least one profile");
  // The profiles `injector serve` knows (injector/src/runtime/serve.cc runServe).
  const std::vector<std::string> known = {"linkerd", "istio"};
  for (std::size_t i = 0; i < profiles.size(); ++i) {
    if (std::find(known.begin(), known.end(), profiles[i]) == known.end()) {
      return core::toError(core::FieldError::notSupported(path, profiles[i], known));
    }
    if (std::find(profiles.begin(), profiles.begin() + static_cast<std::ptrdiff_t>(i),
                  profiles[i]) != profiles.begin() + static_cast<std::ptrdiff_t>(i)) {
      return core::toError(core::FieldError::duplicate(path, profiles[i]));
    }
  }
  return profiles;
}

core::Result<fs::path> readableFile(ObjectFields& fields, std::string_view key,
                                    const fs::path& base_dir) {
  auto text = fields.string(key);
  if (!text) return text.error();
  if (!*text) return fs::path();
  const std::string field = fields.pathOf(key);
  if (text->value().empty()) return detail::invalidField(field, "must not be empty");
  fs::path path = **text;
  if (path.is_relative()) path = base_dir / path;
  path = path.lexically_normal();
  std::ifstream in(path);
  if (!in) {
    return detail::invalidField(field, fmt::format("cannot read \"{}\": {}", path.string(),
                                                 std::strerror(errno)));
  }
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return detail::invalidField(field, fmt::format("\"{}\" is a directory", path.string()));
  }
  return path;
}

core::Result<std::pair<std::uint16_t, std::uint16_t>> readPorts(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  auto ports = core::parseJsonOrDiscarded(text.str());
  auto port = [&ports](const char* key) -> int {
    if (!ports.is_object() || !ports.contains(key) || !ports[key].is_number_integer()) return -1;
    const auto value = ports[key].get<std::int64_t>();
    return value >= 0 && value <= 65535 ? static_cast<int>(value) : -1;
  };
  const int webhook = port("webhook");
  const int admin = port("admin");
  if (webhook <= 0 || admin < 0) {
    return core::makeError(
        fmt::format("unexpected ports file {}: {}", file.string(), text.str()));
  }
  return std::pair{static_cast<std::uint16_t>(webhook), static_cast<std::uint16_t>(admin)};
}

}  // namespace

core::Result<InjectorSpec> parseInjectorSpec(const nlohmann::json& json, const fs::path& base_dir,
                                             std::string_view path) {
  auto fields = ObjectFields::open(json, std::string(path));
  if (!fields) return fields.error();
  InjectorSpec out;
  if (const auto* profile = fields->get("profile"); profile && !profile->is_null()) {
    auto profiles = parseProfiles(*profile, fields->pathOf("profile"));
    if (!profiles) return profiles.error();
    out.profiles = std::move(*profiles);
  }
  auto args = fields->stringList("args");
  if (!args) return args.error();
  if (*args) out.args = std::move(**args);
  auto log_level = fields->string("logLevel");
  if (!log_level) return log_level.error();
  out.log_level = std::move(*log_level);
  for (auto [key, target] :
       {std::pair{"values", &out.values}, std::pair{"trustAnchors", &out.trust_anchors},
        std::pair{"istioConfig", &out.istio_config}, std::pair{"istioValues", &out.istio_values},
        std::pair{"istioMesh", &out.istio_mesh}}) {
    auto file = readableFile(*fields, key, base_dir);
    if (!file) return file.error();
    *target = std::move(*file);
  }
  HARNESS_TRY(fields->rejectUnknown());
  return out;
}

core::Result<fs::path> findInjectorBinary(const fs::path& explicit_path) {
  if (!explicit_path.empty()) {
    if (isExecutableFile(explicit_path)) return explicit_path;
    return core::makeError(
        fmt::format("injector binary {} is not an executable file", explicit_path.string()));
  }
  if (const char* env = std::getenv("HARNESS_INJECTOR_BINARY"); env && *env) {
    if (isExecutableFile(env)) return fs::path(env);
    return core::makeError(
        fmt::format("HARNESS_INJECTOR_BINARY={} is not an executable file", env));
  }
  std::vector<fs::path> tried;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path dir = self.parent_path();
    for (const auto& candidate : {dir / ".." / "injector" / "injector", dir / "injector"}) {
      const fs::path normal = candidate.lexically_normal();
      if (isExecutableFile(normal)) return normal;
      tried.push_back(normal);
    }
  }
  if (const char* path = std::getenv("PATH"); path && *path) {
    std::string_view rest = path;
    while (true) {
      const auto colon = rest.find(':');
      const std::string_view dir = rest.substr(0, colon);
      const fs::path candidate = fs::path(dir.empty() ? "." : std::string(dir)) / "injector";
      if (isExecutableFile(candidate)) return candidate;
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
    tried.emplace_back("$PATH");
  }
  std::string places;
  for (const auto& p : tried) {
    if (!places.empty()) places.append(", ");
    places.append(p.string());
  }
  return core::makeError(fmt::format(
      "injector binary not found (tried {}); build the `injector` target, or set "
      "HARNESS_INJECTOR_BINARY",
      places.empty() ? "nothing" : places));
}

core::Result<std::unique_ptr<InjectorProcess>> InjectorProcess::start(
    std::string name, InjectorSpec spec, const net::CertificateAuthority& ca,
    const fs::path& scratch_dir, std::vector<std::string> extra_dns_names,
    InjectorLaunchOptions options) {
  const std::string where = fmt::format("injector \"{}\"", name);
  if (!options.kubeconfig.empty() && !options.object_files.empty()) {
    return core::makeError(where + ": a kubeconfig and object files are mutually exclusive");
  }
  auto binary = findInjectorBinary(options.binary);
  if (!binary) return binary.error().within(where);

  std::vector<std::string> sans = {"127.0.0.1", "localhost"};
  for (auto& dns : extra_dns_names) {
    if (std::find(sans.begin(), sans.end(), dns) == sans.end()) sans.push_back(std::move(dns));
  }
  auto certificate = net::issueCertificate(ca, name, sans);
  if (!certificate) return certificate.error().within(where + ": certificate");
  const fs::path dir = fs::absolute(scratch_dir / ("injector-" + fileNameFor(name)));
  if (auto written = net::writePemFiles(*certificate, dir / "tls.crt", dir / "tls.key");
      !written) {
    return written.error().within(where);
  }
  const fs::path ports_file = dir / "ports.json";
  std::error_code ec;
  fs::remove(ports_file, ec);

  std::unique_ptr<InjectorProcess> process(new InjectorProcess());
  process->name_ = std::move(name);
  process->stop_timeout_ = options.stop_timeout;
  const fs::path log_file = dir / "injector.log";
  std::vector<std::string> argv = {binary->string()};
  if (spec.log_level) argv.insert(argv.end(), {"--log-level", *spec.log_level});
  argv.insert(argv.end(), {"serve", "--address", "127.0.0.1", "--port", "0", "--admin-port", "0",
                           "--ports-file", ports_file.string(), "--tls-cert",
                           (dir / "tls.crt").string(), "--tls-key", (dir / "tls.key").string()});
  std::string profiles;
  for (const auto& p : spec.profiles) {
    if (!profiles.empty()) profiles.append(",");
    profiles.append(p);
  }
  argv.insert(argv.end(), {"--profile", profiles});
  for (auto [flag, file] :
       {std::pair{"--values", &spec.values}, std::pair{"--trust-anchors", &spec.trust_anchors},
        std::pair{"--istio-config", &spec.istio_config},
        std::pair{"--istio-values", &spec.istio_values},
        std::pair{"--istio-mesh", &spec.istio_mesh}}) {
    if (!file->empty()) argv.insert(argv.end(), {flag, file->string()});
  }
  if (!options.kubeconfig.empty()) {
    argv.insert(argv.end(), {"--kubeconfig", fs::absolute(options.kubeconfig).string()});
  }
  // One flag per file: CLI11 would otherwise take the following arguments as more files.
  for (const auto& file : options.object_files) {
    argv.insert(argv.end(), {"--objects", fs::absolute(file).string()});
  }
  argv.insert(argv.end(), spec.args.begin(), spec.args.end());

  {
    std::ofstream(log_file, std::ios::trunc);  // a fresh log per start
  }
  auto child = process::ChildProcess::start(std::move(argv), log_file);
  if (!child) return child.error().within(where);
  process->child_ = std::move(*child);

  const auto deadline = std::chrono::steady_clock::now() + options.startup_timeout;
  while (true) {
    if (fs::exists(ports_file, ec)) {
      auto ports = readPorts(ports_file);
      if (!ports) {
        process->stop();
        return ports.error().within(where);
      }
      process->port_ = ports->first;
      process->admin_port_ = ports->second;
      return process;
    }
    if (!process->running()) {
      return core::makeError(fmt::format("{} exited with status {} before listening; log {}:\n{}",
                                         where, process->stop(), log_file.string(),
                                         process->logTail()));
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      process->stop();
      return core::makeError(fmt::format(
          "{} did not start listening within {}ms (no {}); log {}:\n{}", where,
          options.startup_timeout.count(), ports_file.string(), log_file.string(),
          process->logTail()));
    }
    std::this_thread::sleep_for(10ms);
  }
}

InjectorProcess::~InjectorProcess() { stop(); }

std::string InjectorProcess::url() const { return fmt::format("https://127.0.0.1:{}/", port_); }

std::string InjectorProcess::logTail(std::size_t max_lines) const {
  return child_->logTail(max_lines);
}

bool InjectorProcess::running() { return child_->running(); }

int InjectorProcess::stop() { return child_ ? child_->stop(stop_timeout_) : -1; }

}  // namespace harness::sim
