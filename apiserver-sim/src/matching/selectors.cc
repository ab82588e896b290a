// namespaceSelector and objectSelector: kubernetes/apiserver
// pkg/admission/plugin/webhook/predicates/namespace/matcher.go (MatchNamespaceSelector,
// GetNamespaceLabels, Provider.GetNamespace) and predicates/object/matcher.go
// (MatchObjectSelector, matchObject). See docs/admission-chain.md §3.3, §3.4.

#include <array>
#include <exception>
#include <string>
#include <string_view>

#include "harness/core/field_errors.h"
#include "harness/core/label_selector.h"
#include "harness/go/strconv.h"
#include "harness/sim/matching.h"

namespace harness::sim {
namespace {

using nlohmann::json;

std::string compact(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// As kubectl prints selectors (labels.Selector.String(): "app in (a,b),!key,tier=web"): `{}`
// for the empty selector, `null` for a nil one, the JSON as written when it does not parse.
std::string selectorText(const core::SelectorField& selector) {
  if (!selector.json) return "null";
  if (selector.parse_error) return compact(*selector.json);
  if (selector.selector.matchesEverything()) return "{}";
  return "`" + selector.selector.toString() + "`";
}

// As kubectl prints labels (`kubectl get --show-labels`): "a=b,c=d", "<none>" when empty.
std::string labelsText(const core::StringMap& labels) {
  if (labels.empty()) return "<none>";
  std::string out;
  for (const auto& [key, value] : labels) {
    if (!out.empty()) out += ',';
    out += key;
    out += '=';
    out += value;
  }
  return out;
}

// apimachinery errors.IsNotFound: reason NotFound, or no reason and code 404.
bool isNotFound(const core::Status& status) {
  if (status.reason == core::kReasonNotFound) return true;
  return status.reason.empty() && status.code == 404;
}

// meta.Accessor's error for objects without ObjectMeta (apimachinery pkg/api/meta/meta.go).
constexpr std::string_view kNotAnObject = "object does not implement the Object interfaces";

bool isNamespaceWrite(const AdmissionAttributes& attributes) {
  return attributes.resource.resource == "namespaces" && attributes.subresource.empty() &&
         (attributes.operation == kOperationCreate || attributes.operation == kOperationUpdate);
}

std::string_view verdict(bool matches) { return matches ? "matches" : "no match"; }

// One side of the object selector: "object has labels {...} (matches)", "no oldObject", ...
std::string describeObjectSide(std::string_view side, const std::optional<json>& object,
                               const core::LabelSelector& selector, bool& matched) {
  matched = false;
  std::string out;
  if (!object || object->is_null()) {
    out = "no ";
    out += side;
    return out;
  }
  out = side;
  if (!hasObjectMeta(*object)) {
    out += " has no metadata";
    if (object->is_object()) {
      const auto kind = object->find("kind");
      if (kind != object->end() && kind->is_string()) {
        out += " (";
        out += kind->get<std::string>();
        out += ')';
      }
    }
    return out;
  }
  const auto labels = core::labelsOf(*object);
  if (!labels.ok()) {
    out += " labels unreadable (";
    out += labels.error().message;
    out += ')';
    return out;
  }
  matched = selector.matches(*labels);
  out += " has labels ";
  out += labelsText(*labels);
  out += " (";
  out += verdict(matched);
  out += ')';
  return out;
}

}  // namespace

bool hasObjectMeta(const json& object) {
  if (!object.is_object()) return false;
  // Kinds served without ObjectMeta (connect options, request options, Status), for which
  // meta.Accessor fails. Any other object (typed or unstructured) has an accessor.
  static constexpr std::array<std::string_view, 14> kKindsWithoutObjectMeta = {
      "PodExecOptions", "PodAttachOptions", "PodPortForwardOptions", "PodProxyOptions",
      "PodLogOptions",  "NodeProxyOptions", "ServiceProxyOptions",   "CreateOptions",
      "UpdateOptions",  "PatchOptions",     "DeleteOptions",         "GetOptions",
      "ListOptions",    "Status",
  };
  const auto kind = object.find("kind");
  if (kind == object.end() || !kind->is_string()) return true;
  std::string api_version;
  const auto version = object.find("apiVersion");
  if (version != object.end() && version->is_string()) api_version = version->get<std::string>();
  if (!api_version.empty() && api_version != "v1" && api_version != "meta.k8s.io/v1") return true;
  const auto& name = kind->get_ref<const std::string&>();
  for (const auto candidate : kKindsWithoutObjectMeta) {
    if (name == candidate) return false;
  }
  return true;
}

std::variant<core::StringMap, core::Status> namespaceLabelsFor(
    const AdmissionAttributes& attributes, const NamespaceLabelsLookup& lookup) {
  // A namespace being created or updated is not in the store yet (or not in this version): its
  // own labels count. DELETE (whose object is nil) and subresources use the stored namespace.
  if (isNamespaceWrite(attributes)) {
    if (!attributes.object || !hasObjectMeta(*attributes.object)) {
      return core::newInternalError(kNotAnObject);
    }
    auto labels = core::labelsOf(*attributes.object);
    if (!labels.ok()) return core::newInternalError(labels.error().message);
    return std::move(labels).value();
  }
  if (!lookup) return core::newInternalError("the namespace matcher requires a namespace provider");
  std::variant<core::StringMap, core::Status> found;
  try {
    found = lookup(attributes.namespace_name);
  } catch (const std::exception& e) {
    return core::newInternalError(e.what());
  } catch (...) {
    return core::newInternalError("namespace lookup failed");
  }
  if (auto* status = std::get_if<core::Status>(&found)) {
    // A NotFound goes back to the client unchanged "for backwards compatibility"; any other
    // error becomes NewInternalError(err).
    if (isNotFound(*status)) return *status;
    return core::newInternalError(status->message);
  }
  return found;
}

SelectorMatch matchNamespaceSelector(const core::Webhook& webhook,
                                     const AdmissionAttributes& attributes,
                                     const NamespaceLabelsLookup& lookup) {
  SelectorMatch out;
  const auto& field = webhook.namespace_selector;
  std::string prefix = "namespaceSelector ";
  prefix += selectorText(field);
  prefix += ": ";

  if (attributes.namespace_name.empty() && attributes.resource.resource != "namespaces") {
    out.matches = true;
    out.explanation = "namespaceSelector ignored: ";
    out.explanation += go::quote(attributes.resource.resource);
    out.explanation += " is cluster-scoped and not a namespace";
    return out;
  }
  if (field.parse_error) {
    out.error = core::newInternalError(*field.parse_error);
    out.explanation = prefix;
    out.explanation += "does not parse: ";
    out.explanation += *field.parse_error;
    out.explanation += " (a 500 if the rules match)";
    return out;
  }
  if (field.selector.matchesEverything()) {
    out.matches = true;
    out.explanation = prefix;
    out.explanation += "matches everything";
    return out;
  }

  // A nil selector (Nothing) is not Empty(): the labels are still looked up, so a missing
  // namespace is still an error when the rules match.
  auto labels = namespaceLabelsFor(attributes, lookup);
  std::string subject = "namespace ";
  if (isNamespaceWrite(attributes)) {
    subject += go::quote(attributes.name);
    subject += attributes.operation == kOperationCreate ? " (the object being created)"
                                                        : " (the object being updated)";
  } else {
    subject += go::quote(attributes.namespace_name);
  }
  if (auto* status = std::get_if<core::Status>(&labels)) {
    out.error = *status;
    out.explanation = prefix;
    out.explanation += subject;
    out.explanation += ": ";
    out.explanation += status->message;
    out.explanation += " (returned if the rules match)";
    return out;
  }
  const auto& map = std::get<core::StringMap>(labels);
  out.matches = field.selector.matches(map);
  out.explanation = prefix;
  out.explanation += subject;
  out.explanation += " has labels ";
  out.explanation += labelsText(map);
  out.explanation += ": ";
  out.explanation += verdict(out.matches);
  if (field.isNil()) out.explanation += " (a nil selector matches nothing)";
  return out;
}

SelectorMatch matchObjectSelector(const core::Webhook& webhook,
                                  const AdmissionAttributes& attributes) {
  SelectorMatch out;
  const auto& field = webhook.object_selector;
  out.explanation = "objectSelector ";
  out.explanation += selectorText(field);
  out.explanation += ": ";
  if (field.parse_error) {
    out.error = core::newInternalError(*field.parse_error);
    out.explanation += "does not parse: ";
    out.explanation += *field.parse_error;
    out.explanation += " (a 500 if the rules match)";
    return out;
  }
  if (field.selector.matchesEverything()) {
    out.matches = true;
    out.explanation += "matches everything";
    return out;
  }
  bool object_matches = false;
  bool old_matches = false;
  out.explanation +=
      describeObjectSide("object", attributes.object, field.selector, object_matches);
  out.explanation += ", ";
  out.explanation +=
      describeObjectSide("oldObject", attributes.old_object, field.selector, old_matches);
  out.matches = object_matches || old_matches;
  out.explanation += ": ";
  out.explanation += verdict(out.matches);
  if (field.isNil()) out.explanation += " (a nil selector matches nothing)";
  return out;
}

}  // namespace harness::sim
