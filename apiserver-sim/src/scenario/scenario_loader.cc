// Loading a scenario file (scenarios/FORMAT.md): YAML -> typed Scenario, with every error naming
// the file, line:column and field path. Values are read with core::parseYamlDocuments (the
// Kubernetes scalar rules); positions come from yaml_locations.

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <array>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/json_pointer.h"
#include "harness/core/object.h"
#include "harness/core/webhook_config.h"
#include "harness/core/yaml.h"
#include "harness/go/regexp.h"
#include "harness/go/strconv.h"
#include "harness/go/time.h"
#include "harness/sim/audit_assert.h"
#include "harness/sim/builtin_plugins.h"
#include "harness/sim/cel.h"
#include "harness/sim/endpoint.h"
#include "harness/sim/injector_process.h"
#include "harness/sim/scenario.h"
#include "harness/sim/stub_webhook.h"
#include "harness/validation/validation.h"
#include "yaml_locations.h"

namespace harness::sim {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string typeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "sequence";
    case json::value_t::object:
      return "mapping";
    default:
      return "value";
  }
}

std::string jsonQuote(std::string_view text) { return json(std::string(text)).dump(); }

std::string joinNames(std::initializer_list<std::string_view> names) {
  std::string out;
  for (auto name : names) {
    if (!out.empty()) out += ", ";
    out.append(name);
  }
  return out;
}

// A value of the document being read, with its field path.
struct View {
  const json* value = nullptr;
  std::string path;

  [[nodiscard]] const json& operator*() const { return *value; }
  [[nodiscard]] const json* operator->() const { return value; }
};

// Reads one scenario document and accumulates errors ("<file>:<line>:<col>: <path>: <what>").
class Reader {
 public:
  Reader(fs::path file, detail::LocationIndex index)
      : file_(std::move(file)), index_(std::move(index)) {}

  [[nodiscard]] const fs::path& file() const { return file_; }
  [[nodiscard]] fs::path baseDir() const { return file_.parent_path(); }
  [[nodiscard]] bool failed() const { return !errors_.empty(); }
  [[nodiscard]] std::size_t errorCount() const { return errors_.size(); }

  [[nodiscard]] std::string errorText() const {
    std::string out;
    for (const auto& error : errors_) {
      if (!out.empty()) out += '\n';
      out += error;
    }
    return out;
  }

  SourceLocation locate(const std::string& path, bool at_key = false) const {
    const detail::Position position = at_key ? index_.key(path) : index_.value(path);
    return {file_.string(), position.line, position.column};
  }

  void fail(const std::string& path, const std::string& message, bool at_key = false) {
    const std::string where = locate(path, at_key).toString();
    if (path.empty()) {
      errors_.push_back(fmt::format("{}: {}", where, message));
    } else {
      errors_.push_back(fmt::format("{}: {}: {}", where, path, message));
    }
  }

  // An error of a parser that names fields by their path in the scenario (the endpoint
  // parsers): located at its field when that is at or below `base`, else at `base`.
  void failAtField(const core::Error& error, const std::string& base) {
    if (!error.field.empty() && error.field.starts_with(base)) {
      fail(error.field, error.text());
    } else {
      fail(base, error.message);
    }
  }

  void typeError(const View& view, std::string_view expected) {
    fail(view.path, fmt::format("expected {}, got {}", expected, typeName(*view)));
  }

  // The child at `key` when present and not null.
  std::optional<View> get(const View& map, std::string_view key) const {
    if (!map->is_object()) return std::nullopt;
    auto it = map->find(std::string(key));
    if (it == map->end() || it->is_null()) return std::nullopt;
    return View{&*it, detail::childPath(map.path, key)};
  }

  std::optional<View> require(const View& map, std::string_view key) {
    auto child = get(map, key);
    if (!child) fail(detail::childPath(map.path, key), "required field is missing");
    return child;
  }

  bool mapping(const View& view) {
    if (view->is_object()) return true;
    typeError(view, "mapping");
    return false;
  }

  bool sequence(const View& view) {
    if (view->is_array()) return true;
    typeError(view, "sequence");
    return false;
  }

  // Unknown keys are errors: a misspelt expectation must not silently pass.
  void checkKeys(const View& map, std::initializer_list<std::string_view> allowed) {
    if (!map->is_object()) return;
    for (const auto& [key, value] : map->items()) {
      if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
        fail(detail::childPath(map.path, key),
             fmt::format("unknown field (expected one of: {})", joinNames(allowed)), true);
      }
    }
  }

  std::optional<std::string> string(const View& map, std::string_view key, bool required = false) {
    auto child = required ? require(map, key) : get(map, key);
    if (!child) return std::nullopt;
    if (!(*child)->is_string()) {
      typeError(*child, "string");
      return std::nullopt;
    }
    return (*child)->get<std::string>();
  }

  std::optional<std::int64_t> integer(const View& map, std::string_view key,
                                      std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                                      std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    auto child = get(map, key);
    if (!child) return std::nullopt;
    return integerValue(*child, min, max);
  }

  std::optional<std::int64_t> integerValue(const View& view, std::int64_t min, std::int64_t max) {
    std::int64_t value = 0;
    bool too_large = false;
    if (view->is_number_unsigned()) {
      // nlohmann stores non-negative integers as unsigned.
      const auto u = view->get<std::uint64_t>();
      too_large = u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
      value = too_large ? std::numeric_limits<std::int64_t>::max() : static_cast<std::int64_t>(u);
    } else if (view->is_number_integer()) {
      value = view->get<std::int64_t>();
    } else {
      typeError(view, "integer");
      return std::nullopt;
    }
    if (value < min || value > max || too_large) {
      fail(view.path, fmt::format("must be between {} and {}", min, max));
      return std::nullopt;
    }
    return value;
  }

  std::optional<double> number(const View& map, std::string_view key) {
    auto child = get(map, key);
    if (!child) return std::nullopt;
    if (!(*child)->is_number()) {
      typeError(*child, "number");
      return std::nullopt;
    }
    return (*child)->get<double>();
  }

  std::optional<bool> boolean(const View& map, std::string_view key) {
    auto child = get(map, key);
    if (!child) return std::nullopt;
    if (!(*child)->is_boolean()) {
      typeError(*child, "boolean");
      return std::nullopt;
    }
    return (*child)->get<bool>();
  }

  std::optional<std::vector<std::string>> strings(const View& map, std::string_view key) {
    auto child = get(map, key);
    if (!child) return std::nullopt;
    return stringsValue(*child);
  }

  std::optional<std::vector<std::string>> stringsValue(const View& view) {
    if (!sequence(view)) return std::nullopt;
    std::vector<std::string> out;
    bool ok = true;
    for (std::size_t i = 0; i < view->size(); ++i) {
      View item{&(*view)[i], detail::indexPath(view.path, i)};
      if (!item->is_string()) {
        typeError(item, "string");
        ok = false;
        continue;
      }
      out.push_back(item->get<std::string>());
    }
    if (!ok) return std::nullopt;
    return out;
  }

  std::optional<std::map<std::string, std::string>> stringMap(const View& view) {
    if (!mapping(view)) return std::nullopt;
    std::map<std::string, std::string> out;
    bool ok = true;
    for (const auto& [key, value] : view->items()) {
      View item{&value, detail::childPath(view.path, key)};
      if (!value.is_string()) {
        typeError(item, "string");
        ok = false;
        continue;
      }
      out.emplace(key, value.get<std::string>());
    }
    if (!ok) return std::nullopt;
    return out;
  }

  // A Go duration ("10s", "1m30s", "250ms"), > 0.
  std::optional<std::chrono::milliseconds> duration(const View& map, std::string_view key) {
    auto child = get(map, key);
    if (!child) return std::nullopt;
    if (!(*child)->is_string()) {
      typeError(*child, "duration string (e.g. \"10s\")");
      return std::nullopt;
    }
    auto parsed = go::parseDuration((*child)->get<std::string>());
    if (!parsed.ok()) {
      fail(child->path, parsed.error().message);
      return std::nullopt;
    }
    if (*parsed <= 0) {
      fail(child->path, "must be a positive duration");
      return std::nullopt;
    }
    // Round up so that sub-millisecond durations stay positive.
    return std::chrono::milliseconds((*parsed + 999'999) / 1'000'000);
  }

  std::optional<std::string> oneOf(const View& map, std::string_view key,
                                   std::initializer_list<std::string_view> values) {
    auto value = string(map, key);
    if (!value) return std::nullopt;
    if (std::find(values.begin(), values.end(), *value) == values.end()) {
      fail(detail::childPath(map.path, key),
           fmt::format("unsupported value {} (expected one of: {})", jsonQuote(*value),
                       joinNames(values)));
      return std::nullopt;
    }
    return value;
  }

 private:
  fs::path file_;
  detail::LocationIndex index_;
  std::vector<std::string> errors_;
};

core::Result<std::string> readTextFile(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    return core::makeError(fmt::format("cannot read {}: is a directory", jsonQuote(path.string())));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return core::makeError(fmt::format("cannot read {}: {}", jsonQuote(path.string()),
                                       std::error_code(errno, std::generic_category()).message()));
  }
  // A bound, so that a device or a runaway file (/dev/zero, a FIFO fed forever) is an error rather
  // than a read without end.
  constexpr std::size_t kMaxFileBytes = std::size_t{64} << 20;
  std::string text;
  std::array<char, 1 << 16> chunk{};
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes) {
      return core::makeError(
          fmt::format("cannot read {}: larger than 64 MiB", jsonQuote(path.string())));
    }
  }
  return text;
}

// --- objects (inline, {file: ...}, Lists) ---

// A List (kind *List with items) becomes its items, as kubectl reads it.
void expandLists(const json& document, std::vector<json>& out) {
  if (document.is_object() && document.contains("items") && document["items"].is_array()) {
    auto kind = document.find("kind");
    if (kind != document.end() && kind->is_string()) {
      const auto& text = kind->get_ref<const std::string&>();
      if (text.size() >= 4 && text.compare(text.size() - 4, 4, "List") == 0) {
        for (const auto& item : document["items"]) expandLists(item, out);
        return;
      }
    }
  }
  out.push_back(document);
}

// Checks that an object names its type and itself; returns the problem or "".
std::string objectProblem(const json& object, bool require_name) {
  if (!object.is_object()) return fmt::format("expected an object (mapping), got {}", typeName(object));
  auto gvk = core::groupVersionKindOf(object);
  if (!gvk.ok()) return gvk.error().message;
  if (gvk->kind.empty()) return "kind is required";
  if (gvk->version.empty()) return "apiVersion is required";
  auto name = core::nameOf(object);
  if (!name.ok()) return name.error().message;
  auto generate_name = core::generateNameOf(object);
  if (!generate_name.ok()) return generate_name.error().message;
  auto ns = core::namespaceOf(object);
  if (!ns.ok()) return ns.error().message;
  if (require_name && name->empty()) return "metadata.name is required";
  return {};
}

bool isWebhookConfiguration(const json& object) {
  if (!object.is_object()) return false;
  auto kind = object.find("kind");
  if (kind == object.end() || !kind->is_string()) return false;
  const auto& text = kind->get_ref<const std::string&>();
  return text == "MutatingWebhookConfiguration" || text == "ValidatingWebhookConfiguration";
}

// The objects of a `{file: x.yaml}` entry or of an inline value.
std::optional<std::vector<SourcedObject>> readObjectSource(Reader& reader, const View& item) {
  std::vector<SourcedObject> out;
  if (item->is_object() && item->size() == 1 && item->contains("file")) {
    auto file = reader.string(item, "file");
    if (!file) return std::nullopt;
    const fs::path path = reader.baseDir() / *file;
    auto text = readTextFile(path);
    if (!text.ok()) {
      reader.fail(detail::childPath(item.path, "file"), text.error().message);
      return std::nullopt;
    }
    auto documents = core::parseYamlDocuments(*text);
    if (!documents.ok()) {
      reader.fail(detail::childPath(item.path, "file"),
                  fmt::format("{}: {}", path.string(), documents.error().message));
      return std::nullopt;
    }
    std::size_t number = 0;
    for (const auto& document : *documents) {
      ++number;
      std::vector<json> expanded;
      expandLists(document, expanded);
      for (auto& object : expanded) {
        out.push_back({std::move(object), {fmt::format("{} (document {})", path.string(), number)}});
      }
    }
    return out;
  }
  if (!reader.mapping(item)) return std::nullopt;
  std::vector<json> expanded;
  expandLists(*item, expanded);
  for (auto& object : expanded) out.push_back({std::move(object), reader.locate(item.path)});
  return out;
}

// Parses, v1-defaults and validates a webhook configuration as the apiserver would on create.
std::optional<json> checkWebhookConfiguration(Reader& reader, const json& object,
                                              const std::string& path,
                                              const SourceLocation& location) {
  auto failAt = [&](const std::string& message) {
    if (location.line > 0 || location.file == reader.file().string()) {
      reader.fail(path, message);
    } else {
      reader.fail(path, fmt::format("{}: {}", location.file, message));
    }
  };
  auto config = core::parseWebhookConfiguration(object);
  if (!config.ok()) {
    failAt(config.error().message);
    return std::nullopt;
  }
  core::applyV1Defaults(*config);
  if (auto missing = cel::unavailableReason()) {
    for (std::size_t i = 0; i < config->webhooks.size(); ++i) {
      if (config->webhooks[i].match_conditions.empty()) continue;
      failAt(fmt::format("{} {}: webhooks[{}] ({}) has matchConditions, which need CEL: {}",
                         core::kindName(config->kind), go::quote(config->name), i,
                         config->webhooks[i].name, *missing));
      return std::nullopt;
    }
  }
  const core::FieldErrors errors = core::validateWebhookConfiguration(*config);
  if (!errors.empty()) {
    failAt(core::invalidConfigurationMessage(*config, errors));
    return std::nullopt;
  }
  return object;
}

// Why an admission policy object cannot be played here ("" when it can): without kube-cel, one
// line naming what is missing; in the starting state, also the 422 kube-apiserver would answer
// (steps may expect that 422).
std::string policyObjectProblem(const json& object, bool starting_state) {
  if (!isAdmissionPolicyObject(object)) return {};
  const std::string kind = object.value("kind", "");
  const std::string name = object.contains("metadata") && object["metadata"].is_object()
                               ? object["metadata"].value("name", "")
                               : std::string();
  if (auto missing = cel::unavailableReason()) {
    return fmt::format("{} {} needs CEL: {}", kind, go::quote(name), *missing);
  }
  if (!starting_state) return {};
  auto admit = cel::processPolicyObjectAdmitter();
  if (!admit) return {};
  try {
    auto admitted = admit(kind, object, nullptr, nullptr);
    if (auto* status = std::get_if<core::Status>(&admitted)) return status->message;
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

void readObjects(Reader& reader, const View& spec, Scenario& scenario) {
  for (std::string_view key : {"objects", "webhookConfigurations"}) {
    auto list = reader.get(spec, key);
    if (!list || !reader.sequence(*list)) continue;
    const bool configs_only = key == "webhookConfigurations";
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
      View item{&(**list)[i], detail::indexPath(list->path, i)};
      auto objects = readObjectSource(reader, item);
      if (!objects) continue;
      for (auto& sourced : *objects) {
        std::string problem = objectProblem(sourced.object, true);
        if (problem.empty()) problem = policyObjectProblem(sourced.object, true);
        const bool from_file = sourced.location.line == 0;
        if (!problem.empty()) {
          reader.fail(item.path, from_file ? fmt::format("{}: {}", sourced.location.file, problem)
                                           : problem);
          continue;
        }
        if (isWebhookConfiguration(sourced.object)) {
          auto checked = checkWebhookConfiguration(reader, sourced.object, item.path,
                                                   sourced.location);
          if (checked) scenario.webhook_configurations.push_back(std::move(sourced));
        } else if (configs_only) {
          const std::string message = fmt::format(
              "expected a MutatingWebhookConfiguration or ValidatingWebhookConfiguration, got {}",
              jsonQuote(sourced.object.value("kind", "")));
          reader.fail(item.path,
                      from_file ? fmt::format("{}: {}", sourced.location.file, message) : message);
        } else {
          scenario.objects.push_back(std::move(sourced));
        }
      }
    }
  }
}

// --- endpoints ---

std::optional<ServiceAddress> readService(Reader& reader, const View& view) {
  if (!reader.mapping(view)) return std::nullopt;
  reader.checkKeys(view, {"namespace", "name", "port"});
  ServiceAddress service;
  auto ns = reader.string(view, "namespace", true);
  auto name = reader.string(view, "name", true);
  auto port = reader.integer(view, "port", 1, 65535);
  if (!ns || !name) return std::nullopt;
  for (const auto& [field, value] : {std::pair{"namespace", *ns}, std::pair{"name", *name}}) {
    auto problems = validation::isDns1123Label(value);
    if (!problems.empty()) {
      reader.fail(detail::childPath(view.path, field), problems.front());
      return std::nullopt;
    }
  }
  service.namespace_name = *ns;
  service.name = *name;
  if (port) service.port = static_cast<int>(*port);
  return service;
}

bool validHostPort(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) return false;
  auto port = go::parseInt(text.substr(colon + 1), 10, 32);
  return port.ok() && *port >= 1 && *port <= 65535;
}

void readEndpoints(Reader& reader, const View& spec, Scenario& scenario) {
  auto list = reader.get(spec, "endpoints");
  if (!list || !reader.sequence(*list)) return;
  std::set<std::string> names;
  std::set<std::string> addresses;
  for (std::size_t i = 0; i < (*list)->size(); ++i) {
    View item{&(**list)[i], detail::indexPath(list->path, i)};
    if (!reader.mapping(item)) continue;
    reader.checkKeys(item, {"name", "stub", "injector", "external", "service", "hosts"});
    EndpointSpec endpoint;
    endpoint.location = reader.locate(item.path);
    auto name = reader.string(item, "name", true);
    if (name) {
      auto problems = validation::isDns1123Label(*name);
      if (!problems.empty()) {
        reader.fail(detail::childPath(item.path, "name"), problems.front());
      } else if (!names.insert(*name).second) {
        reader.fail(detail::childPath(item.path, "name"),
                    fmt::format("duplicate endpoint name {}", jsonQuote(*name)));
      }
      endpoint.name = *name;
    }
    const auto stub = reader.get(item, "stub");
    const auto injector = reader.get(item, "injector");
    const auto external = reader.get(item, "external");
    const int kinds = (stub ? 1 : 0) + (injector ? 1 : 0) + (external ? 1 : 0);
    if (kinds != 1) {
      reader.fail(item.path, "exactly one of stub, injector or external is required");
      continue;
    }
    if (stub) {
      endpoint.type = EndpointType::kStub;
      if (reader.mapping(*stub)) {
        auto parsed = parseStubSpec(**stub, stub->path);
        if (parsed.ok()) {
          endpoint.stub = std::move(*parsed);
        } else {
          reader.failAtField(parsed.error(), stub->path);
        }
      }
    } else if (injector) {
      endpoint.type = EndpointType::kInjector;
      if (reader.mapping(*injector)) {
        auto parsed = parseInjectorSpec(**injector, reader.baseDir(), injector->path);
        if (parsed.ok()) {
          endpoint.injector = std::move(*parsed);
        } else {
          reader.failAtField(parsed.error(), injector->path);
        }
      }
    } else {
      endpoint.type = EndpointType::kExternal;
      if (reader.mapping(*external)) {
        auto parsed = parseExternalEndpoint(**external, reader.baseDir(), external->path);
        if (parsed.ok()) {
          endpoint.external = std::move(*parsed);
        } else {
          reader.failAtField(parsed.error(), external->path);
        }
      }
    }
    if (auto service = reader.get(item, "service")) {
      if ((*service)->is_array()) {
        for (std::size_t j = 0; j < (*service)->size(); ++j) {
          if (auto parsed = readService(
                  reader, View{&(**service)[j], detail::indexPath(service->path, j)})) {
            endpoint.services.push_back(*parsed);
          }
        }
      } else if (auto parsed = readService(reader, *service)) {
        endpoint.services.push_back(*parsed);
      }
    }
    bool hosts_given = false;
    if (auto hosts = reader.get(item, "hosts")) {
      if (auto values = reader.stringsValue(*hosts)) {
        hosts_given = !values->empty();
        for (std::size_t j = 0; j < values->size(); ++j) {
          if (!validHostPort((*values)[j])) {
            reader.fail(detail::indexPath(hosts->path, j),
                        fmt::format("{} is not host:port", jsonQuote((*values)[j])));
          } else {
            endpoint.hosts.push_back((*values)[j]);
          }
        }
      }
    }
    if (endpoint.type != EndpointType::kExternal && endpoint.services.empty() &&
        endpoint.hosts.empty() && !hosts_given) {
      reader.fail(item.path,
                  "a service or hosts entry is required: webhook configurations reach an "
                  "endpoint through the addresses routed to it");
    }
    for (const auto& service : endpoint.services) {
      if (!addresses.insert(service.hostPort()).second) {
        reader.fail(item.path, fmt::format("address {} is routed to two endpoints",
                                           jsonQuote(service.hostPort())));
      }
    }
    for (const auto& host : endpoint.hosts) {
      if (!addresses.insert(host).second) {
        reader.fail(item.path,
                    fmt::format("address {} is routed to two endpoints", jsonQuote(host)));
      }
    }
    scenario.endpoints.push_back(std::move(endpoint));
  }
}

// --- steps ---

std::optional<json> readObjectValue(Reader& reader, const View& view, bool require_name) {
  auto objects = readObjectSource(reader, view);
  if (!objects) return std::nullopt;
  if (objects->size() != 1) {
    reader.fail(view.path, fmt::format("expected exactly one object, got {}", objects->size()));
    return std::nullopt;
  }
  auto& sourced = objects->front();
  std::string problem = objectProblem(sourced.object, require_name);
  if (problem.empty()) problem = policyObjectProblem(sourced.object, false);
  if (!problem.empty()) {
    reader.fail(view.path, sourced.location.line == 0
                               ? fmt::format("{}: {}", sourced.location.file, problem)
                               : problem);
    return std::nullopt;
  }
  return std::move(sourced.object);
}

std::optional<core::UserInfo> readUserInfo(Reader& reader, const View& view) {
  if (!reader.mapping(view)) return std::nullopt;
  reader.checkKeys(view, {"username", "uid", "groups", "extra"});
  core::UserInfo user;
  if (auto username = reader.string(view, "username")) user.username = *username;
  if (auto uid = reader.string(view, "uid")) user.uid = *uid;
  if (auto groups = reader.strings(view, "groups")) user.groups = *groups;
  if (auto extra = reader.get(view, "extra"); extra && reader.mapping(*extra)) {
    for (const auto& [key, value] : (*extra)->items()) {
      if (auto values = reader.stringsValue(View{&value, detail::childPath(extra->path, key)})) {
        user.extra.emplace(key, *values);
      }
    }
  }
  return user;
}

// The fields of PATCH and APPLY steps: patchType and the patch (inline, any YAML value, or
// patchFile: one YAML or JSON document), sent as JSON as kubectl sends it; fieldManager,
// fieldValidation, force (the query).
void readPatch(Reader& reader, const View& view, RequestSpec& request) {
  const bool patch = request.operation == "PATCH";
  for (const char* key : {"patchType", "patch", "patchFile"}) {
    if (!patch && reader.get(view, key)) {
      reader.fail(detail::childPath(view.path, key), "only for operation PATCH");
    }
  }
  for (const char* key : {"fieldManager", "fieldValidation", "force"}) {
    if (!request.isPatch() && reader.get(view, key)) {
      reader.fail(detail::childPath(view.path, key), "only for operations PATCH and APPLY");
    }
  }
  if (auto manager = reader.string(view, "fieldManager")) request.field_manager = *manager;
  if (auto directive = reader.oneOf(view, "fieldValidation", {"Strict", "Warn", "Ignore"})) {
    request.field_validation = *directive;
  }
  if (auto force = reader.boolean(view, "force")) request.force = *force;
  if (!patch) return;
  if (auto type = reader.oneOf(view, "patchType", {"json", "merge", "strategic"})) {
    request.patch_type = *type;
  } else if (!reader.get(view, "patchType") && !reader.failed()) {
    reader.fail(view.path, "PATCH needs a patchType (json, merge or strategic)");
  }
  const auto inline_patch = reader.get(view, "patch");
  const auto file = reader.get(view, "patchFile");
  if (inline_patch && file) {
    reader.fail(view.path, "patch and patchFile are mutually exclusive");
  } else if (inline_patch) {
    request.patch = (*inline_patch)->dump();
  } else if (file) {
    auto name = reader.string(view, "patchFile");
    if (!name) return;
    const fs::path path = reader.baseDir() / *name;
    auto text = readTextFile(path);
    if (!text.ok()) {
      reader.fail(file->path, text.error().message);
      return;
    }
    auto document = core::parseYaml(*text);
    if (!document.ok()) {
      reader.fail(file->path, fmt::format("{}: {}", path.string(), document.error().message));
      return;
    }
    request.patch = document->dump();
  } else if (!reader.failed()) {
    reader.fail(view.path, "PATCH needs a patch (patch or patchFile)");
  }
}

void readRequest(Reader& reader, const View& view, RequestSpec& request) {
  if (!reader.mapping(view)) return;
  reader.checkKeys(view, {"operation", "object", "file", "resource", "subresource", "namespace",
                          "name", "dryRun", "timeout", "userInfo", "oldObject", "options",
                          "patchType", "patch", "patchFile", "fieldManager", "fieldValidation",
                          "force"});
  if (auto operation = reader.oneOf(
          view, "operation", {"CREATE", "UPDATE", "DELETE", "CONNECT", "PATCH", "APPLY"})) {
    request.operation = *operation;
  }
  readPatch(reader, view, request);
  const auto object = reader.get(view, "object");
  const auto file = reader.get(view, "file");
  if (object && file) {
    reader.fail(view.path, "object and file are mutually exclusive");
  } else if (object) {
    request.object = readObjectValue(reader, *object, false);
  } else if (file) {
    if (!(*file)->is_string()) {
      reader.typeError(*file, "string");
    } else {
      json wrapper = {{"file", **file}};
      request.object = readObjectValue(reader, View{&wrapper, view.path}, false);
    }
  }
  if (auto old_object = reader.get(view, "oldObject")) {
    request.old_object = readObjectValue(reader, *old_object, false);
  }
  if (auto options = reader.get(view, "options"); options && reader.mapping(*options)) {
    request.options = **options;
  }
  if (auto subresource = reader.string(view, "subresource")) request.subresource = *subresource;
  if (auto dry_run = reader.boolean(view, "dryRun")) request.dry_run = *dry_run;
  request.timeout = reader.duration(view, "timeout");
  if (auto user = reader.get(view, "userInfo")) request.user_info = readUserInfo(reader, *user);

  std::optional<core::GroupVersionKind> kind;
  if (request.object) {
    auto gvk = core::groupVersionKindOf(*request.object);
    if (gvk.ok()) kind = *gvk;
  }
  if (auto resource = reader.get(view, "resource"); resource && reader.mapping(*resource)) {
    reader.checkKeys(*resource, {"group", "version", "resource"});
    request.resource.group = reader.string(*resource, "group").value_or("");
    request.resource.version = reader.string(*resource, "version", true).value_or("");
    request.resource.resource = reader.string(*resource, "resource", true).value_or("");
  } else if (kind) {
    request.resource = resourceForKind(*kind);
  } else if (!reader.failed()) {
    reader.fail(view.path, "resource is required when there is no object to take it from");
  }

  const json* target = request.object ? &*request.object
                                      : (request.old_object ? &*request.old_object : nullptr);
  if (auto name = reader.string(view, "name")) {
    request.name = *name;
  } else if (target != nullptr) {
    request.name = core::nameOf(*target).ok() ? *core::nameOf(*target) : "";
  }
  if (auto ns = reader.string(view, "namespace")) {
    request.namespace_name = *ns;
  } else if (request.resource.group.empty() && request.resource.resource == "namespaces") {
    // RequestInfo: /api/v1/namespaces/<name>[/...] carries the namespace's own name; a create
    // (POST /api/v1/namespaces) carries none (apiserver pkg/endpoints/request/requestinfo.go).
    if (request.operation != "CREATE") request.namespace_name = request.name;
  } else {
    std::string from_object;
    if (target != nullptr && core::namespaceOf(*target).ok()) from_object = *core::namespaceOf(*target);
    const auto info = core::findResource(request.resource);
    const bool namespaced = info ? info->namespaced : true;
    if (!from_object.empty()) {
      request.namespace_name = from_object;
    } else if (namespaced) {
      request.namespace_name = "default";  // kubectl's namespace without a context namespace
    }
  }
  if ((request.operation == "DELETE" || request.isPatch()) && request.name.empty() &&
      !reader.failed()) {
    reader.fail(view.path, fmt::format("{} needs a name (name, or an object naming the target)",
                                       request.operation));
  }
  if ((request.operation == "CREATE" || request.operation == "UPDATE" ||
       request.operation == "CONNECT" || request.operation == "APPLY") &&
      !request.object && !reader.failed()) {
    reader.fail(view.path, fmt::format("{} needs an object (object or file)", request.operation));
  }
}

// Scenario regular expressions are Go's (RE2 syntax), as in go test -run.
bool compileRegex(Reader& reader, const std::string& path, const std::string& pattern) {
  const auto compiled = go::Regexp::compile(pattern);
  if (!compiled) {
    reader.fail(path, fmt::format("invalid regular expression {}: {}", jsonQuote(pattern),
                                  compiled.error().message));
  }
  return compiled.ok();
}

// `$regex` leaves of an expected object must compile.
void checkObjectMatchers(Reader& reader, const json& value, const std::string& path) {
  if (value.is_object()) {
    if (value.size() == 1 && value.contains("$regex")) {
      if (!value["$regex"].is_string()) {
        reader.fail(detail::childPath(path, "$regex"),
                    fmt::format("expected string, got {}", typeName(value["$regex"])));
      } else {
        compileRegex(reader, detail::childPath(path, "$regex"), value["$regex"].get<std::string>());
      }
      return;
    }
    for (const auto& [key, child] : value.items()) {
      checkObjectMatchers(reader, child, detail::childPath(path, key));
    }
  } else if (value.is_array()) {
    for (std::size_t i = 0; i < value.size(); ++i) {
      checkObjectMatchers(reader, value[i], detail::indexPath(path, i));
    }
  }
}

std::optional<TextExpectation> readText(Reader& reader, const View& view) {
  if (view->is_string()) return TextExpectation{TextMatch::kExact, view->get<std::string>()};
  if (!view->is_object()) {
    reader.typeError(view, "string or mapping {exact|contains|regex}");
    return std::nullopt;
  }
  reader.checkKeys(view, {"exact", "contains", "regex"});
  if (view->size() != 1) {
    reader.fail(view.path, "exactly one of exact, contains or regex is required");
    return std::nullopt;
  }
  TextExpectation text;
  for (auto [key, match] : {std::pair{"exact", TextMatch::kExact},
                            std::pair{"contains", TextMatch::kContains},
                            std::pair{"regex", TextMatch::kRegex}}) {
    if (auto value = reader.string(view, key)) {
      text = {match, *value};
      if (match == TextMatch::kRegex &&
          !compileRegex(reader, detail::childPath(view.path, key), *value)) {
        return std::nullopt;
      }
      return text;
    }
  }
  return std::nullopt;
}

ListMatch readListMatch(Reader& reader, const View& map, std::string_view key) {
  auto value = reader.oneOf(map, key, {"exact", "subset"});
  return value && *value == "subset" ? ListMatch::kSubset : ListMatch::kExact;
}

// Annotation values: strings as written; anything else (a YAML mapping for a JSON value) as
// compact JSON.
std::optional<std::map<std::string, std::string>> readAnnotationValues(Reader& reader,
                                                                      const View& view) {
  if (!reader.mapping(view)) return std::nullopt;
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : view->items()) {
    out.emplace(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out;
}

// `annotations: {exact: {...}} | {subset: {...}}`.
void readAnnotations(Reader& reader, const View& view,
                     std::optional<std::map<std::string, std::string>>& target, ListMatch& match) {
  if (!reader.mapping(view)) return;
  reader.checkKeys(view, {"exact", "subset"});
  const auto exact = reader.get(view, "exact");
  const auto subset = reader.get(view, "subset");
  if ((exact ? 1 : 0) + (subset ? 1 : 0) != 1) {
    reader.fail(view.path, "exactly one of exact or subset is required");
    return;
  }
  match = exact ? ListMatch::kExact : ListMatch::kSubset;
  target = readAnnotationValues(reader, exact ? *exact : *subset);
}

std::optional<CallExpectation> readCall(Reader& reader, const View& view) {
  if (!reader.mapping(view)) return std::nullopt;
  reader.checkKeys(view, {"webhook", "configuration", "type", "round", "index", "outcome",
                          "called", "timeout", "code", "changed"});
  CallExpectation call;
  call.webhook = reader.string(view, "webhook");
  call.configuration = reader.string(view, "configuration");
  call.type = reader.oneOf(view, "type", {"mutating", "validating"});
  if (auto round = reader.integer(view, "round", 0, 1)) call.round = static_cast<int>(*round);
  if (auto index = reader.integer(view, "index", 0, 1'000'000)) {
    call.index = static_cast<std::size_t>(*index);
  }
  call.outcome = reader.oneOf(view, "outcome", {"Allowed", "Patched", "Denied", "CallingError",
                                                "FailedOpen", "DryRunUnsupported", "ApplyError",
                                                "RequestTimeout"});
  call.called = reader.boolean(view, "called");
  call.timeout = reader.string(view, "timeout");
  if (auto code = reader.integer(view, "code", 0, 999)) call.code = static_cast<int>(*code);
  call.changed = reader.boolean(view, "changed");
  return call;
}

void readAuditEvent(Reader& reader, const View& view, AuditEventExpectation& audit_event) {
  if (!reader.mapping(view)) return;
  reader.checkKeys(view, {"present", "level", "annotations", "requestObject", "responseObject"});
  audit_event.present = reader.boolean(view, "present");
  audit_event.level = reader.oneOf(view, "level", {"Metadata", "Request", "RequestResponse"});
  if (auto annotations = reader.get(view, "annotations")) {
    readAnnotations(reader, *annotations, audit_event.annotations,
                    audit_event.annotations_match);
  }
  audit_event.request_object = reader.boolean(view, "requestObject");
  audit_event.response_object = reader.boolean(view, "responseObject");
}

void readExpect(Reader& reader, const View& view, const Scenario& scenario, Expectation& expect) {
  if (!reader.mapping(view)) return;
  reader.checkKeys(view, {"allowed", "code", "message", "reason", "object", "absent", "calls",
                          "callsMatch", "callCounts", "annotations", "warnings", "metrics", "stub",
                          "reinvoked", "auditEvent"});
  expect.allowed = reader.boolean(view, "allowed");
  if (auto code = reader.integer(view, "code", 100, 999)) expect.code = static_cast<int>(*code);
  if (auto message = reader.get(view, "message")) expect.message = readText(reader, *message);
  expect.reason = reader.string(view, "reason");
  if (auto object = reader.get(view, "object"); object && reader.mapping(*object)) {
    checkObjectMatchers(reader, **object, object->path);
    expect.object = **object;
  }
  if (auto absent = reader.get(view, "absent")) {
    if (auto pointers = reader.stringsValue(*absent)) {
      for (std::size_t i = 0; i < pointers->size(); ++i) {
        auto parsed = core::JsonPointer::parse((*pointers)[i]);
        if (!parsed.ok()) {
          reader.fail(detail::indexPath(absent->path, i), parsed.error().message);
        } else if (parsed->isRoot()) {
          reader.fail(detail::indexPath(absent->path, i), "the root cannot be absent");
        } else {
          expect.absent.push_back((*pointers)[i]);
        }
      }
    }
  }
  if (auto calls = reader.get(view, "calls"); calls && reader.sequence(*calls)) {
    std::vector<CallExpectation> list;
    for (std::size_t i = 0; i < (*calls)->size(); ++i) {
      if (auto call = readCall(reader, View{&(**calls)[i], detail::indexPath(calls->path, i)})) {
        list.push_back(*call);
      }
    }
    expect.calls = std::move(list);
  }
  expect.calls_match = readListMatch(reader, view, "callsMatch");
  if (auto counts = reader.get(view, "callCounts"); counts && reader.mapping(*counts)) {
    for (const auto& [name, value] : (*counts)->items()) {
      View item{&value, detail::childPath(counts->path, name)};
      if (auto count = reader.integerValue(item, 0, 1'000'000)) {
        expect.call_counts.emplace(name, static_cast<int>(*count));
      }
    }
  }
  if (auto annotations = reader.get(view, "annotations")) {
    readAnnotations(reader, *annotations, expect.annotations, expect.annotations_match);
  }
  if (auto warnings = reader.get(view, "warnings")) expect.warnings = reader.stringsValue(*warnings);
  if (auto metrics = reader.get(view, "metrics"); metrics && reader.sequence(*metrics)) {
    for (std::size_t i = 0; i < (*metrics)->size(); ++i) {
      View item{&(**metrics)[i], detail::indexPath(metrics->path, i)};
      if (!reader.mapping(item)) continue;
      reader.checkKeys(item, {"name", "labels", "delta"});
      MetricExpectation metric;
      auto name = reader.string(item, "name", true);
      if (auto labels = reader.get(item, "labels")) {
        if (auto map = reader.stringMap(*labels)) metric.labels = *map;
      }
      auto delta = reader.get(item, "delta");
      if (!delta) {
        reader.fail(detail::childPath(item.path, "delta"), "required field is missing");
      } else if (!(*delta)->is_number()) {
        reader.typeError(*delta, "number");
      } else {
        metric.delta = (*delta)->get<double>();
      }
      if (name) {
        metric.name = *name;
        expect.metrics.push_back(std::move(metric));
      }
    }
  }
  if (auto stubs = reader.get(view, "stub"); stubs && reader.mapping(*stubs)) {
    for (const auto& [name, value] : (*stubs)->items()) {
      View item{&value, detail::childPath(stubs->path, name)};
      const EndpointSpec* endpoint = scenario.findEndpoint(name);
      if (endpoint == nullptr || endpoint->type != EndpointType::kStub) {
        reader.fail(item.path, fmt::format("no stub endpoint named {}", jsonQuote(name)), true);
        continue;
      }
      if (!reader.mapping(item)) continue;
      reader.checkKeys(item, {"calls", "lastTimeout", "lastOperation", "lastDryRun"});
      StubExpectation stub;
      if (auto calls = reader.integer(item, "calls", 0, 1'000'000)) {
        stub.calls = static_cast<int>(*calls);
      }
      stub.last_timeout = reader.string(item, "lastTimeout");
      stub.last_operation = reader.string(item, "lastOperation");
      stub.last_dry_run = reader.boolean(item, "lastDryRun");
      expect.stubs.emplace(name, stub);
    }
  }
  expect.reinvoked = reader.boolean(view, "reinvoked");
  if (auto audit_event = reader.get(view, "auditEvent")) {
    AuditEventExpectation parsed;
    readAuditEvent(reader, *audit_event, parsed);
    expect.audit_event = parsed;
    if (!scenario.audit_policy) {
      reader.fail(audit_event->path, "needs spec.auditPolicy (no audit events are written without one)");
    }
  }
}

void readSteps(Reader& reader, const View& spec, Scenario& scenario) {
  auto list = reader.require(spec, "steps");
  if (!list || !reader.sequence(*list)) return;
  if ((*list)->empty()) reader.fail(list->path, "at least one step is required");
  std::set<std::string> names;
  for (std::size_t i = 0; i < (*list)->size(); ++i) {
    View item{&(**list)[i], detail::indexPath(list->path, i)};
    if (!reader.mapping(item)) continue;
    reader.checkKeys(item, {"name", "request", "expect"});
    Step step;
    step.location = reader.locate(item.path);
    step.name = reader.string(item, "name").value_or(fmt::format("step {}", i + 1));
    if (step.name.empty() || step.name.find('/') != std::string::npos) {
      reader.fail(detail::childPath(item.path, "name"), "must be non-empty and contain no \"/\"");
    } else if (!names.insert(step.name).second) {
      reader.fail(detail::childPath(item.path, "name"),
                  fmt::format("duplicate step name {}", jsonQuote(step.name)));
    }
    const std::size_t errors_before = reader.errorCount();
    if (auto request = reader.require(item, "request")) {
      readRequest(reader, *request, step.request);
    }
    if (auto expect = reader.get(item, "expect")) readExpect(reader, *expect, scenario, step.expect);
    if (reader.errorCount() == errors_before) scenario.steps.push_back(std::move(step));
  }
}

void readSpec(Reader& reader, const View& spec, Scenario& scenario) {
  if (!reader.mapping(spec)) return;
  reader.checkKeys(spec, {"timeScale", "requestTimeout", "plugins", "auditPolicy", "seed",
                          "stopOnFailure", "objects", "webhookConfigurations", "endpoints",
                          "steps"});
  if (auto scale = reader.number(spec, "timeScale")) {
    if (!(*scale > 0) || !std::isfinite(*scale)) {
      reader.fail(detail::childPath(spec.path, "timeScale"), "must be greater than 0");
    } else {
      scenario.time_scale = *scale;
    }
  }
  if (auto timeout = reader.duration(spec, "requestTimeout")) scenario.request_timeout = *timeout;
  if (auto plugins = reader.strings(spec, "plugins")) {
    auto checked = makePlugins(*plugins);
    if (!checked.ok()) {
      reader.fail(detail::childPath(spec.path, "plugins"), checked.error().message);
    } else {
      scenario.plugins = *plugins;
    }
  }
  if (auto seed = reader.integer(spec, "seed", 0)) scenario.seed = static_cast<std::uint64_t>(*seed);
  if (auto stop = reader.boolean(spec, "stopOnFailure")) scenario.stop_on_failure = *stop;
  if (auto policy = reader.get(spec, "auditPolicy")) {
    // The policy is read like kube-apiserver's --audit-policy-file: from its own file, whose
    // errors name that file, or inline.
    if ((*policy)->is_string()) {
      const fs::path path = reader.baseDir() / (*policy)->get<std::string>();
      auto text = readTextFile(path);
      if (!text.ok()) {
        reader.fail(policy->path, text.error().message);
      } else if (auto parsed = audit::parsePolicy(*text, path.string()); !parsed.ok()) {
        reader.fail(policy->path, parsed.error().message);
      } else {
        scenario.audit_policy = std::move(*parsed);
        scenario.audit_policy_text = *text;
      }
    } else if ((*policy)->is_object()) {
      // Positions in the parser's message refer to the re-serialized policy: keep only its
      // field path (relative to the policy) and locate that in the scenario file.
      auto parsed = audit::parsePolicy((*policy)->dump(), policy->path);
      if (!parsed.ok()) {
        const core::Error& error = parsed.error();
        reader.fail(error.field.empty() ? policy->path : policy->path + "." + error.field,
                    error.text());
      } else {
        scenario.audit_policy = std::move(*parsed);
        scenario.audit_policy_text = (*policy)->dump();
      }
    } else {
      reader.typeError(*policy, "file name or mapping");
    }
  }
  readObjects(reader, spec, scenario);
  readEndpoints(reader, spec, scenario);
  readSteps(reader, spec, scenario);
}

}  // namespace

std::string SourceLocation::toString() const {
  if (line <= 0) return file;
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string_view toString(TextMatch match) {
  switch (match) {
    case TextMatch::kExact:
      return "exact";
    case TextMatch::kContains:
      return "contains";
    case TextMatch::kRegex:
      return "regex";
  }
  return "exact";
}

std::string_view toString(EndpointType type) {
  switch (type) {
    case EndpointType::kStub:
      return "stub";
    case EndpointType::kInjector:
      return "injector";
    case EndpointType::kExternal:
      return "external";
  }
  return "stub";
}

bool Expectation::empty() const {
  return !allowed && !code && !message && !reason && !object && absent.empty() && !calls &&
         call_counts.empty() && !annotations && !warnings && metrics.empty() && stubs.empty() &&
         !reinvoked && !audit_event;
}

std::string ServiceAddress::host() const {
  return fmt::format("{}.{}.svc", name, namespace_name);
}

std::string ServiceAddress::hostPort() const { return fmt::format("{}:{}", host(), port); }

const EndpointSpec* Scenario::findEndpoint(std::string_view name) const {
  for (const auto& endpoint : endpoints) {
    if (endpoint.name == name) return &endpoint;
  }
  return nullptr;
}

core::GroupVersionResource resourceForKind(const core::GroupVersionKind& kind) {
  if (auto info = core::findResourceForKind(kind)) return info->resource;
  // apimachinery pkg/api/meta/restmapper.go UnsafeGuessKindToResource.
  std::string singular = kind.kind;
  std::transform(singular.begin(), singular.end(), singular.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::string plural = singular;
  auto endsWith = [&](std::string_view suffix) {
    return singular.size() >= suffix.size() &&
           singular.compare(singular.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (singular.empty() || endsWith("endpoints") || endsWith("securitycontextconstraints")) {
    plural = singular;
  } else if (singular.back() == 's') {
    plural = singular + "es";
  } else if (singular.back() == 'y') {
    plural = singular.substr(0, singular.size() - 1) + "ies";
  } else {
    plural = singular + "s";
  }
  return {kind.group, kind.version, plural};
}

namespace {

// apiVersion apiserver-sim.harness.dev/v1alpha1 and the document's kind, both required.
void checkTypeMeta(Reader& reader, const View& root, std::string_view expected_kind) {
  auto api_version = reader.string(root, "apiVersion", true);
  auto kind = reader.string(root, "kind", true);
  if (api_version && *api_version != kScenarioApiVersion) {
    reader.fail("apiVersion", fmt::format("expected {}, got {}", jsonQuote(kScenarioApiVersion),
                                          jsonQuote(*api_version)));
  }
  if (kind && *kind != expected_kind) {
    reader.fail("kind", fmt::format("expected {}, got {}", jsonQuote(expected_kind),
                                    jsonQuote(*kind)));
  }
}

}  // namespace

core::Result<Scenario> parseScenario(std::string_view text, const fs::path& path) {
  auto documents = core::parseYamlDocuments(text);
  if (!documents.ok()) return documents.error().within(path.string());
  if (documents->size() != 1) {
    return core::makeError(fmt::format(
        "{}: expected exactly one YAML document (one scenario per file), got {}", path.string(),
        documents->size()));
  }
  const json& document = documents->front();
  Reader reader(path, detail::LocationIndex::build(text));
  Scenario scenario;
  scenario.path = path;
  const View root{&document, ""};
  if (!reader.mapping(root)) return core::makeError(reader.errorText());
  reader.checkKeys(root, {"apiVersion", "kind", "metadata", "spec"});
  checkTypeMeta(reader, root, kScenarioKind);
  if (auto metadata = reader.require(root, "metadata"); metadata && reader.mapping(*metadata)) {
    reader.checkKeys(*metadata, {"name", "description", "labels", "annotations"});
    if (auto name = reader.string(*metadata, "name", true)) {
      if (name->empty() || name->find('/') != std::string::npos) {
        reader.fail("metadata.name", "must be non-empty and contain no \"/\"");
      }
      scenario.name = *name;
    }
    scenario.description = reader.string(*metadata, "description").value_or("");
    if (auto labels = reader.get(*metadata, "labels")) {
      if (auto map = reader.stringMap(*labels)) {
        auto slow = map->find(std::string(kSlowLabel));
        scenario.slow = slow != map->end() && slow->second == "true";
      }
    }
  }
  if (auto spec = reader.require(root, "spec")) readSpec(reader, *spec, scenario);
  if (reader.failed()) return core::makeError(reader.errorText());
  return scenario;
}

core::Result<Scenario> loadScenario(const fs::path& path) {
  auto text = readTextFile(path);
  if (!text.ok()) return text.error();
  return parseScenario(*text, path);
}

bool looksLikeScenario(std::string_view text) {
  auto documents = core::parseYamlDocuments(text);
  if (!documents.ok() || documents->empty()) return false;
  const json& first = documents->front();
  return first.is_object() && first.contains("kind") && first["kind"] == kScenarioKind;
}

core::Result<std::vector<fs::path>> findScenarioFiles(const std::vector<fs::path>& paths) {
  std::vector<fs::path> out;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> found;
      fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
      if (ec) {
        return core::makeError(fmt::format("cannot read {}: {}", jsonQuote(path.string()),
                                           ec.message()));
      }
      for (const auto& entry : it) {
        if (!entry.is_regular_file(ec)) continue;
        const auto extension = entry.path().extension();
        if (extension != ".yaml" && extension != ".yml") continue;
        auto text = readTextFile(entry.path());
        if (text.ok() && looksLikeScenario(*text)) found.push_back(entry.path());
      }
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(path, ec)) {
      out.push_back(path);
    } else {
      return core::makeError(fmt::format("{}: no such file or directory", path.string()));
    }
  }
  return out;
}

core::Result<std::vector<LogExpectation>> parseLogExpectations(std::string_view text,
                                                               const fs::path& path) {
  auto document = core::parseYaml(text);
  if (!document.ok()) return document.error().within(path.string());
  Reader reader(path, detail::LocationIndex::build(text));
  const View root{&*document, ""};
  std::vector<LogExpectation> out;
  if (!reader.mapping(root)) return core::makeError(reader.errorText());
  reader.checkKeys(root, {"apiVersion", "kind", "expectations"});
  checkTypeMeta(reader, root, kAuditExpectationsKind);
  const Scenario none;
  if (auto list = reader.require(root, "expectations"); list && reader.sequence(*list)) {
    if ((*list)->empty()) reader.fail(list->path, "at least one expectation is required");
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
      const View item{&(**list)[i], detail::indexPath(list->path, i)};
      if (!reader.mapping(item)) continue;
      reader.checkKeys(item, {"name", "match", "count", "expect"});
      LogExpectation expectation;
      expectation.location = reader.locate(item.path);
      expectation.name = reader.string(item, "name").value_or("expectations[" +
                                                              std::to_string(i) + "]");
      if (auto match = reader.require(item, "match"); match && reader.mapping(*match)) {
        reader.checkKeys(*match, {"verb", "resource", "namespace", "name", "generateName", "user"});
        auto& selector = expectation.match;
        selector.verb = reader.string(*match, "verb").value_or("");
        selector.resource = reader.string(*match, "resource").value_or("");
        selector.namespace_name = reader.string(*match, "namespace").value_or("");
        selector.name = reader.string(*match, "name").value_or("");
        selector.generate_name = reader.string(*match, "generateName").value_or("");
        selector.user = reader.string(*match, "user").value_or("");
      }
      if (auto count = reader.integer(item, "count", 0, 1'000'000'000)) {
        expectation.count = static_cast<std::size_t>(*count);
      }
      if (auto expect = reader.require(item, "expect"); expect && reader.mapping(*expect)) {
        for (const char* field :
             {"calls", "callsMatch", "callCounts", "warnings", "metrics", "stub", "reinvoked",
              "auditEvent"}) {
          if ((*expect)->contains(field)) {
            reader.fail(detail::childPath(expect->path, field),
                        "not recorded in an audit log (allowed, code, message, reason, object, "
                        "absent and annotations are)",
                        true);
          }
        }
        readExpect(reader, *expect, none, expectation.expect);
      }
      out.push_back(std::move(expectation));
    }
  }
  if (reader.failed()) return core::makeError(reader.errorText());
  return out;
}

}  // namespace harness::sim
