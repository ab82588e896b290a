// LimitRanger (kubernetes/kubernetes plugin/pkg/admission/limitranger/admission.go): pods on
// CREATE (pod updates cannot change containers, so they are skipped) and
// PersistentVolumeClaims, not subresources, unless the old object is being deleted. The
// namespace's LimitRange objects (defaulted as the informer decodes them) apply in list order.
//   Admit (PodMutateLimitFunc): the Container-type default / defaultRequest fill the missing
//   limits / requests of every container and init container, and the pod is annotated
//   kubernetes.io/limit-ranger: "LimitRanger plugin set: cpu, memory request for container app;
//   ..." (resources sorted per container).
//   Validate (PodValidateLimitFunc, Container type): min, max and maxLimitRequestRatio per
//   container and init container; violations -> 403 with the aggregated messages. The Pod type
//   (sums over containers) and PVC storage limits are not modelled. Quantities print as
//   written (upstream prints them canonically).

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "harness/core/quantity.h"
#include "harness/sim/defaulting.h"
#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

const core::GroupVersionResource kLimitRanges{"", "v1", "limitranges"};

bool supports(const AdmissionAttributes& a) {
  if (!a.subresource.empty()) return false;
  if (isKind(a, "", "Pod") && a.operation == kOperationUpdate) return false;
  return isKind(a, "", "Pod") || isKind(a, "", "PersistentVolumeClaim");
}

bool beingDeleted(const AdmissionAttributes& a) {
  if (!a.old_object) return false;
  const nlohmann::json* metadata = objectMember(*a.old_object, "metadata");
  return metadata != nullptr && !isUnset(*metadata, "deletionTimestamp");
}

std::vector<nlohmann::json> limitRanges(const AdmissionAttributes& a, const PluginContext& context) {
  std::vector<nlohmann::json> items = listObjects(context, kLimitRanges, a.namespace_name);
  for (auto& item : items) {
    if (item.is_object()) {
      item["apiVersion"] = "v1";
      item["kind"] = "LimitRange";
      applyDefaults(item);
    }
  }
  return items;
}

std::string quantityText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

// requestLimitEnforcedValues: milli-units.
std::optional<std::int64_t> milli(const nlohmann::json* value) {
  if (value == nullptr) return std::nullopt;
  auto quantity = core::Quantity::parse(quantityText(*value));
  if (!quantity.ok()) return std::nullopt;
  return quantity->milliValue();
}

void mergeContainerResources(nlohmann::json& container, const nlohmann::json& default_requests,
                             const nlohmann::json& default_limits, std::string_view label,
                             std::vector<std::string>& annotations) {
  nlohmann::json* resources = ensureObject(container, "resources");
  if (resources == nullptr) return;
  nlohmann::json* limits = ensureObject(*resources, "limits");
  nlohmann::json* requests = ensureObject(*resources, "requests");
  if (limits == nullptr || requests == nullptr) return;
  std::vector<std::string> set_requests;
  std::vector<std::string> set_limits;
  for (auto it = default_limits.begin(); it != default_limits.end(); ++it) {
    if (!limits->contains(it.key())) {
      (*limits)[it.key()] = it.value();
      set_limits.push_back(it.key());
    }
  }
  for (auto it = default_requests.begin(); it != default_requests.end(); ++it) {
    if (!requests->contains(it.key())) {
      (*requests)[it.key()] = it.value();
      set_requests.push_back(it.key());
    }
  }
  // Go keeps the (empty) maps; JSON readers see them dropped once encoded.
  if (limits->empty()) resources->erase("limits");
  if (requests->empty()) resources->erase("requests");
  const std::string container_name = stringMember(container, "name");
  auto describe = [&](std::vector<std::string>& names, std::string_view what) {
    if (names.empty()) return;
    std::sort(names.begin(), names.end());
    std::string text;
    for (const auto& n : names) {
      if (!text.empty()) text += ", ";
      text += n;
    }
    text += " ";
    text += what;
    text += " for ";
    text += label;
    text += " ";
    text += container_name;
    annotations.push_back(std::move(text));
  };
  describe(set_requests, "request");
  describe(set_limits, "limit");
}

void mutatePod(nlohmann::json& pod, const nlohmann::json& limit_range) {
  nlohmann::json requests = nlohmann::json::object();
  nlohmann::json limits = nlohmann::json::object();
  const nlohmann::json* spec = objectMember(limit_range, "spec");
  if (spec != nullptr) {
    forEachObjectIn(*spec, "limits", [&](const nlohmann::json& item) {
      if (stringMember(item, "type") != "Container") return;
      if (const nlohmann::json* d = objectMember(item, "defaultRequest")) requests.update(*d);
      if (const nlohmann::json* d = objectMember(item, "default")) limits.update(*d);
    });
  }
  nlohmann::json* pod_spec = objectMember(pod, "spec");
  if (pod_spec == nullptr) return;
  std::vector<std::string> annotations;
  forEachObjectIn(*pod_spec, "containers", [&](nlohmann::json& c) {
    mergeContainerResources(c, requests, limits, "container", annotations);
  });
  forEachObjectIn(*pod_spec, "initContainers", [&](nlohmann::json& c) {
    mergeContainerResources(c, requests, limits, "init container", annotations);
  });
  if (annotations.empty()) return;
  std::string value = "LimitRanger plugin set: ";
  for (std::size_t i = 0; i < annotations.size(); ++i) {
    if (i > 0) value += "; ";
    value += annotations[i];
  }
  nlohmann::json* metadata = ensureObject(pod, "metadata");
  if (metadata == nullptr) return;
  if (nlohmann::json* map = ensureObject(*metadata, "annotations")) {
    (*map)["kubernetes.io/limit-ranger"] = value;
  }
}

std::string describeRatio(double ratio) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%f", ratio);
  return buffer;
}

void checkContainer(const nlohmann::json& container, const nlohmann::json& item,
                    std::vector<std::string>& errors) {
  const std::string type = stringMember(item, "type");
  const nlohmann::json* resources = objectMember(container, "resources");
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json* requests = resources != nullptr ? objectMember(*resources, "requests") : nullptr;
  const nlohmann::json* limits = resources != nullptr ? objectMember(*resources, "limits") : nullptr;
  if (requests == nullptr) requests = &kEmpty;
  if (limits == nullptr) limits = &kEmpty;
  if (const nlohmann::json* min = objectMember(item, "min")) {
    for (auto it = min->begin(); it != min->end(); ++it) {
      const std::string& r = it.key();
      const std::string enforced = quantityText(it.value());
      const nlohmann::json* req = member(*requests, r);
      const nlohmann::json* lim = member(*limits, r);
      auto e = milli(&it.value());
      if (req == nullptr) {
        errors.push_back(fmt::format("minimum {} usage per {} is {}.  No request is specified", r,
                                     type, enforced));
      } else if (milli(req) < e) {
        errors.push_back(fmt::format("minimum {} usage per {} is {}, but request is {}", r,
                                     type, enforced, quantityText(*req)));
      } else if (lim != nullptr && milli(lim) < e) {
        errors.push_back(fmt::format("minimum {} usage per {} is {}, but limit is {}", r,
                                     type, enforced, quantityText(*lim)));
      }
    }
  }
  if (const nlohmann::json* max = objectMember(item, "max")) {
    for (auto it = max->begin(); it != max->end(); ++it) {
      const std::string& r = it.key();
      const std::string enforced = quantityText(it.value());
      const nlohmann::json* req = member(*requests, r);
      const nlohmann::json* lim = member(*limits, r);
      auto e = milli(&it.value());
      if (lim == nullptr) {
        errors.push_back(fmt::format("maximum {} usage per {} is {}.  No limit is specified", r,
                                     type, enforced));
      } else if (milli(lim) > e) {
        errors.push_back(fmt::format("maximum {} usage per {} is {}, but limit is {}", r,
                                     type, enforced, quantityText(*lim)));
      } else if (req != nullptr && milli(req) > e) {
        errors.push_back(fmt::format("maximum {} usage per {} is {}, but request is {}", r,
                                     type, enforced, quantityText(*req)));
      }
    }
  }
  if (const nlohmann::json* ratios = objectMember(item, "maxLimitRequestRatio")) {
    for (auto it = ratios->begin(); it != ratios->end(); ++it) {
      const std::string& r = it.key();
      const std::string enforced = quantityText(it.value());
      auto req = milli(member(*requests, r));
      auto lim = milli(member(*limits, r));
      std::string prefix =
          fmt::format("{} max limit to request ratio per {} is {}", r, type, enforced);
      if (!req || *req == 0) {
        errors.push_back(prefix + ", but no request is specified or request is 0");
      } else if (!lim || *lim == 0) {
        errors.push_back(prefix + ", but no limit is specified or limit is 0");
      } else {
        double observed = static_cast<double>(*lim) / static_cast<double>(*req);
        auto max_ratio = milli(&it.value());
        if (max_ratio && observed * 1000 > static_cast<double>(*max_ratio)) {
          errors.push_back(prefix + ", but provided ratio is " + describeRatio(observed));
        }
      }
    }
  }
}

std::vector<std::string> validatePod(const nlohmann::json& pod, const nlohmann::json& limit_range) {
  std::vector<std::string> errors;
  const nlohmann::json* spec = objectMember(limit_range, "spec");
  const nlohmann::json* pod_spec = objectMember(pod, "spec");
  if (spec == nullptr || pod_spec == nullptr) return errors;
  forEachObjectIn(*spec, "limits", [&](const nlohmann::json& item) {
    if (stringMember(item, "type") != "Container") return;
    forEachObjectIn(*pod_spec, "containers",
                    [&](const nlohmann::json& c) { checkContainer(c, item, errors); });
    forEachObjectIn(*pod_spec, "initContainers",
                    [&](const nlohmann::json& c) { checkContainer(c, item, errors); });
  });
  return errors;
}

class LimitRanger final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "LimitRanger"; }
  bool mutating() const override { return true; }
  bool validating() const override { return true; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& context) const override {
    if (!applies(a)) return std::nullopt;
    if (!isResource(a, "", "pods")) return std::nullopt;
    for (const auto& limit_range : limitRanges(a, context)) mutatePod(*a.object, limit_range);
    return std::nullopt;
  }

  std::optional<core::Status> validate(const AdmissionAttributes& a,
                                       const PluginContext& context) const override {
    if (!applies(a)) return std::nullopt;
    if (!isResource(a, "", "pods")) return std::nullopt;
    for (const auto& limit_range : limitRanges(a, context)) {
      auto errors = validatePod(*a.object, limit_range);
      if (!errors.empty()) return admissionForbidden(a, aggregateMessages(errors));
    }
    return std::nullopt;
  }

 private:
  static bool applies(const AdmissionAttributes& a) {
    if (a.operation != kOperationCreate && a.operation != kOperationUpdate) return false;
    if (!supports(a) || beingDeleted(a)) return false;
    return a.object && a.object->is_object();
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makeLimitRanger() { return std::make_unique<LimitRanger>(); }

}  // namespace harness::sim::builtin_internal
