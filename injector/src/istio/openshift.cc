#include "harness/injector/istio/openshift.h"

#include <limits>
#include <optional>
#include <string>

// Followed: istio/istio pkg/kube/inject/inject.go (GetProxyIDs), openshift.go
// (getPreallocatedUIDRange, getSupplementalGroupsAnnotation, parseSupplementalGroupAnnotation,
// ParseBlock), webhook.go (inject's OpenShift step, isSidecarUserMatchingAppUser, FindSidecar),
// pkg/platform/platform.go (IsOpenShift), the istiod chart's deployment.yaml (PLATFORM env);
// Go's fmt/scan.go (Sscanf with %d into a uint32).

namespace harness::injector::istio {

namespace {

using nlohmann::json;

constexpr std::int64_t kDefaultProxyId = 1337;  // constants.DefaultProxyUIDInt

const json* member(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

const json* path(const json& j, std::initializer_list<const char*> keys) {
  const json* v = &j;
  for (const char* k : keys) {
    v = member(*v, k);
    if (v == nullptr) return nullptr;
  }
  return v;
}

std::optional<std::string> stringAt(const json& j, std::initializer_list<const char*> keys) {
  const json* v = path(j, keys);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

// fmt's scanner over one string, as Sscanf uses it: spaces before a number are skipped, a
// newline there is an error, a number is unsigned decimal digits that must fit 32 bits.
class Scanner {
 public:
  explicit Scanner(std::string_view in) : in_(in) {}

  core::Result<std::uint32_t> number() {
    if (auto e = skipSpace(); !e.empty()) return core::Error{e};
    if (pos_ >= in_.size()) return core::Error{"unexpected EOF"};
    const std::size_t start = pos_;
    while (pos_ < in_.size() && in_[pos_] >= '0' && in_[pos_] <= '9') ++pos_;
    if (pos_ == start) return core::Error{"expected integer"};
    const std::string token(in_.substr(start, pos_ - start));
    std::uint64_t value = 0;
    for (char c : token) {
      const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
      if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        return core::Error{"strconv.ParseUint: parsing \"" + token + "\": value out of range"};
      }
      value = value * 10 + digit;
    }
    if (value > std::numeric_limits<std::uint32_t>::max()) {
      return core::Error{"unsigned integer overflow on token " + token};
    }
    return static_cast<std::uint32_t>(value);
  }

  // A literal of the format.
  core::Result<void> literal(char c) {
    if (pos_ >= in_.size()) return core::Error{"unexpected EOF"};
    if (in_[pos_] != c) return core::Error{"input does not match format"};
    ++pos_;
    return {};
  }

 private:
  std::string skipSpace() {
    while (pos_ < in_.size()) {
      const char c = in_[pos_];
      if (c == '\r' && pos_ + 1 < in_.size() && in_[pos_ + 1] == '\n') {
        ++pos_;
        continue;
      }
      if (c == '\n') return "unexpected newline";
      if (c != ' ' && c != '\t' && c != '\v' && c != '\f' && c != '\r') break;
      ++pos_;
    }
    return {};
  }

  std::string_view in_;
  std::size_t pos_ = 0;
};

std::optional<std::string> annotation(const json& ns, std::string_view key) {
  const json* annotations = path(ns, {"metadata", "annotations"});
  if (annotations == nullptr || !annotations->is_object()) return std::nullopt;
  const auto it = annotations->find(std::string(key));
  if (it == annotations->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

// runAsUser of a container's securityContext, when set.
std::optional<std::int64_t> runAsUser(const json& container) {
  const json* v = path(container, {"securityContext", "runAsUser"});
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<std::int64_t>();
}

std::string nameOf(const json& container) {
  const json* n = member(container, "name");
  return n != nullptr && n->is_string() ? n->get<std::string>() : std::string();
}

}  // namespace

bool isOpenShift(const InjectorSettings& settings, std::string_view override_platform) {
  if (!override_platform.empty()) return override_platform == "openshift";
  const json& values = settings.values.map;
  // The chart writes PLATFORM from global.platform first and pilot.env after it; the kubelet
  // keeps the last of two env entries with one name.
  if (auto env = stringAt(values, {"pilot", "env", "PLATFORM"})) return *env == "openshift";
  return stringAt(values, {"global", "platform"}).value_or("") == "openshift";
}

core::Result<UidBlock> parseUidBlock(std::string_view text) {
  const char separator = text.find('/') != std::string_view::npos ? '/' : '-';
  Scanner scan(text);
  auto first = scan.number();
  if (!first) return first.error();
  if (auto l = scan.literal(separator); !l) return l.error();
  auto second = scan.number();
  if (!second) return second.error();
  if (separator == '/') {
    // start + size - 1 in uint32 arithmetic, wrapping as Go's does.
    return UidBlock{*first, static_cast<std::uint32_t>(*first + *second - 1U)};
  }
  return UidBlock{*first, *second};
}

std::pair<std::int64_t, std::int64_t> proxyIds(const json& ns) {
  std::int64_t uid = kDefaultProxyId;
  std::int64_t gid = kDefaultProxyId;
  if (ns.is_null()) return {uid, gid};
  if (auto range = annotation(ns, kUidRangeAnnotation); range && !range->empty()) {
    if (auto block = parseUidBlock(*range)) uid = block->end;
  }
  auto groups = annotation(ns, kSupplementalGroupsAnnotation);
  if (!groups) groups = annotation(ns, kUidRangeAnnotation);
  if (groups && !groups->empty()) {
    // Every comma-separated block must parse; the first one's end is the gid.
    std::optional<std::uint32_t> first_end;
    bool ok = true;
    std::string_view rest = *groups;
    while (ok) {
      const std::size_t comma = rest.find(',');
      auto block = parseUidBlock(rest.substr(0, comma));
      if (!block) {
        ok = false;
        break;
      }
      if (!first_end) first_end = block->end;
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (ok && first_end) gid = *first_end;
  }
  return {uid, gid};
}

bool resetSidecarUserMatchingApp(json& pod, std::vector<LogLine>* logs) {
  json* spec = pod.is_object() && pod.contains("spec") ? &pod["spec"] : nullptr;
  if (spec == nullptr || !spec->is_object()) return false;
  json* sidecar = nullptr;
  for (const char* list : {"containers", "initContainers"}) {
    auto it = spec->find(list);
    if (it == spec->end() || !it->is_array()) continue;
    for (auto& c : *it) {
      if (c.is_object() && nameOf(c) == "istio-proxy") {
        sidecar = &c;
        break;
      }
    }
    if (sidecar != nullptr) break;
  }
  if (sidecar == nullptr) return false;
  auto sc = sidecar->find("securityContext");
  if (sc == sidecar->end() || !sc->is_object()) return false;
  std::int64_t sidecar_user = 0;
  std::int64_t app_user = 0;
  for (const char* list : {"containers", "initContainers"}) {
    auto it = spec->find(list);
    if (it == spec->end() || !it->is_array()) continue;
    for (const auto& c : *it) {
      const std::string name = nameOf(c);
      if (name == "istio-proxy") {
        if (auto u = runAsUser(c)) sidecar_user = *u;
      } else if (name != "istio-validation" && name != "istio-init") {
        if (auto u = runAsUser(c)) app_user = *u;
      }
    }
  }
  if (sidecar_user != app_user) return false;
  if (logs != nullptr) {
    logs->push_back({LogLine::Level::kInfo,
                     "Resetting the UserID of sideCar proxy as it matches with the app container "
                     "for Pod \"" +
                         stringAt(pod, {"metadata", "name"}).value_or("") + "\""});
  }
  sc->erase("runAsUser");
  sc->erase("runAsGroup");
  return true;
}

}  // namespace harness::injector::istio
