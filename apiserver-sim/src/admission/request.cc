// AdmissionReview request building, the Status of denials, timeouts and semantic equality.
// Followed: apiserver pkg/admission/plugin/webhook/request/admissionreview.go
// (CreateAdmissionObjects), errors/statuserror.go (ToStatusErr, NewDryRunUnsupportedErr),
// util/webhook/error.go (ErrCallingWebhook.Error), mutating/dispatcher.go (timeout rounding),
// apimachinery pkg/api/equality/semantic.go.

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "dispatch.h"
#include "harness/core/field_errors.h"
#include "harness/core/quantity.h"
#include "harness/go/strconv.h"
#include "harness/go/time.h"

namespace harness::sim::detail {

void RequestState::addWarning(const std::string& text) {
  std::lock_guard lock(mutex);
  auto& warnings = result->warnings;
  // pkg/endpoints/filters/warning.go: identical texts are recorded once.
  if (std::find(warnings.begin(), warnings.end(), text) == warnings.end()) {
    warnings.push_back(text);
  }
}

bool RequestState::addAnnotation(const std::string& key, const std::string& value,
                                 audit::Level level) {
  std::lock_guard lock(mutex);
  return result->annotations.add(key, value, level);
}

nlohmann::json convertTo(const nlohmann::json& object, const core::GroupVersionKind& kind) {
  nlohmann::json converted = object;
  if (converted.is_object()) {
    converted["apiVersion"] = kind.apiVersion();
    converted["kind"] = kind.kind;
  }
  return converted;
}

core::AdmissionRequest buildAdmissionRequest(const AdmissionAttributes& attributes,
                                             const Invocation& invocation,
                                             const std::string& uid) {
  core::AdmissionRequest request;
  request.uid = uid;
  request.kind = invocation.kind;
  request.resource = invocation.resource;
  request.sub_resource = invocation.subresource;
  request.request_kind = attributes.kind;
  request.request_resource = attributes.resource;
  request.request_sub_resource = attributes.subresource;
  request.name = attributes.name;
  request.namespace_name = attributes.namespace_name;
  request.operation = attributes.operation;
  request.user_info = attributes.user_info;
  if (attributes.object) request.object = convertTo(*attributes.object, invocation.kind);
  if (attributes.old_object) request.old_object = convertTo(*attributes.old_object, invocation.kind);
  request.dry_run = attributes.dry_run;
  request.options = attributes.options;
  return request;
}

core::Status toStatusErr(const std::string& webhook_name,
                         const std::optional<core::Status>& result) {
  const std::string denied_by =
      fmt::format("admission webhook {} denied the request", go::quote(webhook_name));
  core::Status status;
  if (result) {
    status = *result;
  } else {
    status.status = std::string(core::kStatusFailure);
  }
  if (status.code < 400) status.code = 400;
  if (status.status.empty() || status.status == core::kStatusSuccess) {
    status.status = std::string(core::kStatusFailure);
  }
  if (!status.message.empty()) {
    status.message = fmt::format("{}: {}", denied_by, status.message);
  } else if (!status.reason.empty()) {
    status.message = fmt::format("{}: {}", denied_by, status.reason);
  } else {
    status.message = fmt::format("{} without explanation", denied_by);
  }
  return status;
}

core::Status dryRunUnsupported(const std::string& webhook_name) {
  return core::newBadRequest(
      fmt::format("admission webhook {} does not support dry run", go::quote(webhook_name)));
}

std::string callingErrorText(const std::string& webhook_name, const std::string& reason) {
  return fmt::format("failed calling webhook {}: {}", go::quote(webhook_name), reason);
}

std::string timeoutParam(std::chrono::nanoseconds budget) {
  if (budget.count() <= 0) return "";
  // dispatcher.go: the whole seconds, plus one when a fraction is left.
  constexpr std::int64_t kSecond = 1'000'000'000;
  auto secs = budget.count() / kSecond;
  if (budget.count() % kSecond != 0) ++secs;
  return go::durationString(std::chrono::seconds(secs));
}

namespace {

bool isEmptyValue(const nlohmann::json& value) {
  return value.is_null() || (value.is_object() && value.empty()) ||
         (value.is_array() && value.empty());
}

const std::set<std::string, std::less<>> kQuantityMaps = {
    "limits", "requests", "capacity", "allocatable", "hard", "used", "overhead"};

bool quantitiesEqual(const nlohmann::json& a, const nlohmann::json& b) {
  if (!a.is_string() || !b.is_string()) return a == b;
  auto qa = core::Quantity::parse(a.get<std::string>());
  auto qb = core::Quantity::parse(b.get<std::string>());
  if (!qa.ok() || !qb.ok()) return a == b;
  const auto ma = qa->milliValue();
  const auto mb = qb->milliValue();
  if (!ma || !mb) return a == b;
  return *ma == *mb;
}

bool equalIn(const nlohmann::json& a, const nlohmann::json& b, std::string_view parent_key) {
  if (a.is_object() && b.is_object()) {
    const bool quantity_map = kQuantityMaps.count(parent_key) != 0;
    // One recursive comparison per key of `a`; keys only `b` has must hold empty values. (Not
    // a symmetric check per level, which would compare each subtree 2^depth times.)
    for (const auto& [key, value] : a.items()) {
      auto other = b.find(key);
      if (other == b.end()) {
        if (!isEmptyValue(value)) return false;
        continue;
      }
      if (quantity_map || key == "sizeLimit") {
        if (!quantitiesEqual(value, *other)) return false;
      } else if (!equalIn(value, *other, key)) {
        return false;
      }
    }
    for (const auto& [key, value] : b.items()) {
      if (!a.contains(key) && !isEmptyValue(value)) return false;
    }
    return true;
  }
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!equalIn(a[i], b[i], "")) return false;
    }
    return true;
  }
  if (isEmptyValue(a) && isEmptyValue(b)) return true;
  return a == b;
}

}  // namespace

bool semanticEqual(const nlohmann::json& a, const nlohmann::json& b) { return equalIn(a, b, ""); }

}  // namespace harness::sim::detail
