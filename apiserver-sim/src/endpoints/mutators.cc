// Example mutators (mutators.h): each computes a JSON Patch from the object it is sent.

#include "harness/sim/mutators.h"

#include <atomic>
#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "harness/core/json_pointer.h"
#include "harness/core/object.h"

namespace harness::sim {

namespace {

using nlohmann::json;
using Kind = Mutator::Kind;

struct Known {
  const char* name;
  Kind kind;
  const char* default_parameter;  // nullptr: a parameter is required
};

constexpr Known kKnown[] = {
    {"add-annotation", Kind::kAddAnnotation, "example.com/audited:true"},
    {"add-init-container", Kind::kAddInitContainer, "wait-for-config"},
    {"set-image-pull-policy", Kind::kSetImagePullPolicy, "IfNotPresent"},
    {"label-fighter", Kind::kLabelFighter, nullptr},
    {"append-sidecar", Kind::kAppendSidecar, ""},
    {"timestamp-annotation", Kind::kTimestampAnnotation, ""},
    {"reorder-containers", Kind::kReorderContainers, ""},
};

const json* at(const json& object, const std::string& pointer) {
  auto resolved = core::resolvePointer(object, std::string_view(pointer));
  return resolved ? *resolved : nullptr;
}

json op(const char* name, std::string path, json value) {
  return {{"op", name}, {"path", std::move(path)}, {"value", std::move(value)}};
}

// Sets metadata.<map>.<key> = value (creating the map) unless it already holds that value.
json setMetadataEntry(const json& object, const std::string& meta_pointer, const char* map,
                      const std::string& key, const std::string& value) {
  const json* meta = at(object, meta_pointer);
  const json* entries = meta && meta->is_object() ? at(*meta, std::string("/") + map) : nullptr;
  if (entries && entries->is_object()) {
    auto it = entries->find(key);
    if (it != entries->end() && *it == value) return json::array();
    return json::array({op("add", fmt::format("{}/{}/{}", meta_pointer, map,
                                              core::escapePointerToken(key)),
                           value)});
  }
  if (meta && !meta->is_object()) return json::array();
  json patch = json::array();
  if (!meta) patch.push_back(op("add", meta_pointer, json::object()));
  patch.push_back(op("add", fmt::format("{}/{}", meta_pointer, map), json{{key, value}}));
  return patch;
}

// RFC 3339 with nanoseconds, strictly increasing within the process: two calls never get the
// same stamp, however fast they follow each other.
std::string nextTimestamp() {
  static std::atomic<std::int64_t> last{0};
  std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  std::int64_t previous = last.load();
  while (true) {
    const std::int64_t stamp = now > previous ? now : previous + 1;
    if (last.compare_exchange_weak(previous, stamp)) {
      now = stamp;
      break;
    }
  }
  const std::time_t seconds = static_cast<std::time_t>(now / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:09d}Z", date, now % 1'000'000'000);
}

}  // namespace

bool Mutator::idempotent() const {
  return kind != Kind::kAppendSidecar && kind != Kind::kTimestampAnnotation &&
         kind != Kind::kReorderContainers;
}

const std::vector<std::string>& mutatorNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& k : kKnown) names.emplace_back(k.name);
    return names;
  }();
  return kNames;
}

core::Result<Mutator> parseMutator(std::string_view text) {
  const auto eq = text.find('=');
  const std::string_view name = text.substr(0, eq);
  for (const auto& k : kKnown) {
    if (name != k.name) continue;
    Mutator m;
    m.kind = k.kind;
    m.text = std::string(text);
    if (eq != std::string_view::npos) {
      m.parameter = std::string(text.substr(eq + 1));
    } else if (k.default_parameter) {
      m.parameter = k.default_parameter;
    }
    if (!k.default_parameter && m.parameter.empty()) {
      return core::makeError(
          fmt::format("mutator \"{}\" needs a value ({}=VALUE)", k.name, k.name));
    }
    if (k.default_parameter && *k.default_parameter == '\0' && !m.parameter.empty()) {
      return core::makeError(fmt::format("mutator \"{}\" takes no value", k.name));
    }
    if (m.kind == Kind::kAddAnnotation) {
      const auto colon = m.parameter.find(':');
      if (colon == std::string::npos || colon == 0) {
        return core::makeError(fmt::format(
            "mutator \"{}\": expected add-annotation=KEY:VALUE with a non-empty KEY", text));
      }
    }
    if ((m.kind == Kind::kAddInitContainer || m.kind == Kind::kSetImagePullPolicy) &&
        m.parameter.empty()) {
      return core::makeError(fmt::format("mutator \"{}\": the value is empty", text));
    }
    return m;
  }
  return core::makeError(fmt::format("unknown mutator \"{}\" (known: {})", name,
                                     fmt::join(mutatorNames(), ", ")));
}

json mutatorPatch(const Mutator& mutator, const json& object) {
  if (!object.is_object()) return json::array();
  const std::string kind = object.value("kind", "");
  const auto spec_pointer = core::podSpecPointer(kind);
  const auto meta_pointer = core::podMetadataPointer(kind);
  if (!spec_pointer || !meta_pointer) return json::array();
  const json* spec = at(object, *spec_pointer);
  if (!spec || !spec->is_object()) return json::array();
  const json* containers = at(*spec, "/containers");
  const bool has_containers = containers && containers->is_array();

  switch (mutator.kind) {
    case Kind::kAddAnnotation: {
      const auto colon = mutator.parameter.find(':');
      return setMetadataEntry(object, *meta_pointer, "annotations",
                              mutator.parameter.substr(0, colon),
                              mutator.parameter.substr(colon + 1));
    }
    case Kind::kLabelFighter:
      return setMetadataEntry(object, *meta_pointer, "labels", "example.com/owner",
                              mutator.parameter);
    case Kind::kTimestampAnnotation:
      return setMetadataEntry(object, *meta_pointer, "annotations", "example.com/mutated-at",
                              nextTimestamp());
    case Kind::kAddInitContainer: {
      const json* init = at(*spec, "/initContainers");
      const json container = {{"name", mutator.parameter},
                              {"image", "busybox:1.36"},
                              {"command", json::array({"sh", "-c", "true"})}};
      if (!init || init->is_null()) {
        return json::array(
            {op("add", *spec_pointer + "/initContainers", json::array({container}))});
      }
      if (!init->is_array()) return json::array();
      for (const auto& c : *init) {
        if (c.is_object() && c.value("name", "") == mutator.parameter) return json::array();
      }
      return json::array({op("add", *spec_pointer + "/initContainers/-", container)});
    }
    case Kind::kSetImagePullPolicy: {
      json patch = json::array();
      for (const char* list : {"initContainers", "containers"}) {
        const json* items = at(*spec, std::string("/") + list);
        if (!items || !items->is_array()) continue;
        for (std::size_t i = 0; i < items->size(); ++i) {
          const json& c = (*items)[i];
          if (!c.is_object() || c.value("imagePullPolicy", json()) == mutator.parameter) continue;
          patch.push_back(op("add", fmt::format("{}/{}/{}/imagePullPolicy", *spec_pointer, list, i),
                             mutator.parameter));
        }
      }
      return patch;
    }
    case Kind::kAppendSidecar: {
      const json sidecar = {{"name", "logger"}, {"image", "fluent/fluent-bit:3.1"}};
      if (!has_containers) return json::array();
      return json::array({op("add", *spec_pointer + "/containers/-", sidecar)});
    }
    case Kind::kReorderContainers: {
      if (!has_containers || containers->size() < 2) return json::array();
      return json::array({{{"op", "move"},
                           {"from", *spec_pointer + "/containers/0"},
                           {"path", *spec_pointer + "/containers/-"}}});
    }
  }
  return json::array();
}

}  // namespace harness::sim
