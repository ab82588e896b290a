// validateObject: strategy validation of the built-in kinds.
//
// Followed: k8s.io/apimachinery pkg/api/validation/objectmeta.go (ValidateObjectMetaAccessor,
// ValidateObjectMetaUpdate, ValidateAnnotations, name validators with maskTrailingDash),
// pkg/apis/meta/v1/validation/validation.go (ValidateLabels), pkg/util/validation/validation.go
// (IsValidLabelValue, IsValidPortNum, IsValidPortName), kubernetes/kubernetes
// pkg/apis/core/validation/validation.go (ValidatePod*, ValidateNamespace, ValidateService,
// ValidateReplicationController, ValidatePodTemplate), pkg/apis/apps/validation/validation.go
// (ValidateDeploymentSpec, ValidateReplicaSetSpec, ValidateStatefulSetSpec,
// ValidateDaemonSetSpec, ValidatePodTemplateSpecForReplicaSet), pkg/apis/batch/validation/
// validation.go (ValidateJob, ValidateCronJobCreate, ValidateJobTemplateSpec).

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/label_selector.h"
#include "harness/core/webhook_config.h"
#include "harness/go/fmt.h"
#include "harness/go/strconv.h"
#include "harness/sim/defaulting.h"
#include "harness/sim/object_validation.h"
#include "harness/validation/validation.h"
#include "json_access.h"
#include "validation_internal.h"

namespace harness::sim {
namespace builtin_internal {

using core::FieldError;
using core::FieldErrors;
using nlohmann::json;

namespace {

constexpr std::size_t kLabelValueMaxLength = 63;
constexpr std::size_t kTotalAnnotationSizeLimit = std::size_t{256} * 1024;

// maskTrailingDash: a generateName "abc-" is validated as "aba" (upstream drops two characters).
std::string maskTrailingDash(std::string_view name) {
  if (name.size() > 1 && name.back() == '-') {
    return std::string(name.substr(0, name.size() - 2)) + "a";
  }
  return std::string(name);
}

bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

}  // namespace

std::string indexPath(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string childPath(const std::string& path, std::string_view child) {
  return path.empty() ? std::string(child) : path + "." + std::string(child);
}
std::string keyPath(const std::string& path, std::string_view key) {
  return path + "[" + std::string(key) + "]";
}

std::vector<std::string> nameIsDnsSubdomain(std::string_view name, bool prefix) {
  return validation::isDns1123Subdomain(prefix ? maskTrailingDash(name) : std::string(name));
}
std::vector<std::string> nameIsDnsLabel(std::string_view name, bool prefix) {
  return validation::isDns1123Label(prefix ? maskTrailingDash(name) : std::string(name));
}
std::vector<std::string> nameIsDns1035Label(std::string_view name, bool prefix) {
  return validation::isDns1035Label(prefix ? maskTrailingDash(name) : std::string(name));
}

std::vector<std::string> labelValueErrors(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kLabelValueMaxLength) errs.emplace_back("must be no more than 63 characters");
  bool ok = value.empty() ||
            (isAlnum(value.front()) && isAlnum(value.back()) &&
             std::all_of(value.begin(), value.end(),
                         [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; }));
  if (!ok) {
    errs.emplace_back(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
        "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errs;
}

std::vector<std::string> portNumErrors(std::int64_t port) {
  if (port >= 1 && port <= 65535) return {};
  return {"must be between 1 and 65535, inclusive"};
}

std::vector<std::string> portNameErrors(std::string_view port) {
  std::vector<std::string> errs;
  if (port.size() > 15) errs.emplace_back("must be no more than 15 characters");
  bool alnum_dash = std::all_of(port.begin(), port.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
  if (!alnum_dash) {
    errs.emplace_back("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
  }
  if (std::none_of(port.begin(), port.end(), [](char c) { return c >= 'a' && c <= 'z'; })) {
    errs.emplace_back("must contain at least one letter (a-z)");
  }
  if (port.find("--") != std::string_view::npos) {
    errs.emplace_back("must not contain consecutive hyphens");
  }
  if (!port.empty() && (port.front() == '-' || port.back() == '-')) {
    errs.emplace_back("must not begin or end with a hyphen");
  }
  return errs;
}

std::string goLabelSelectorLiteral(const json& selector) {
  std::string out = "v1.LabelSelector{MatchLabels:" +
                    go::stringMapGoSyntax(objectMember(selector, "matchLabels")) +
                    ", MatchExpressions:";
  const json* expressions = arrayMember(selector, "matchExpressions");
  if (expressions == nullptr) return out + "[]v1.LabelSelectorRequirement(nil)}";
  out += "[]v1.LabelSelectorRequirement{";
  for (std::size_t i = 0; i < expressions->size(); ++i) {
    const json& e = (*expressions)[i];
    if (i > 0) out += ", ";
    out += "v1.LabelSelectorRequirement{Key:" + go::quote(stringMember(e, "key")) +
           ", Operator:" + go::quote(stringMember(e, "operator")) + ", Values:";
    const json* values = arrayMember(e, "values");
    if (values == nullptr) {
      out += "[]string(nil)}";
      continue;
    }
    out += "[]string{";
    for (std::size_t j = 0; j < values->size(); ++j) {
      if (j > 0) out += ", ";
      out += go::quote((*values)[j].is_string() ? (*values)[j].get<std::string>() : "");
    }
    out += "}}";
  }
  return out + "}}";
}

FieldErrors validateLabels(const json* labels, const std::string& path) {
  FieldErrors errs;
  if (labels == nullptr || !labels->is_object()) return errs;
  for (auto it = labels->begin(); it != labels->end(); ++it) {
    for (auto& msg : validation::isQualifiedName(it.key())) {
      errs.push_back(FieldError::invalid(path, it.key(), std::move(msg)));
    }
    const std::string value = it.value().is_string() ? it.value().get<std::string>() : "";
    for (auto& msg : labelValueErrors(value)) {
      errs.push_back(FieldError::invalid(path, value, std::move(msg)));
    }
  }
  return errs;
}

FieldErrors validateAnnotations(const json* annotations, const std::string& path) {
  FieldErrors errs;
  if (annotations == nullptr || !annotations->is_object()) return errs;
  std::size_t total = 0;
  for (auto it = annotations->begin(); it != annotations->end(); ++it) {
    // QualifiedName, except that case does not matter.
    std::string lower = it.key();
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    for (auto& msg : validation::isQualifiedName(lower)) {
      errs.push_back(FieldError::invalid(path, it.key(), std::move(msg)));
    }
    total += it.key().size();
    if (it.value().is_string()) total += it.value().get_ref<const std::string&>().size();
  }
  if (total > kTotalAnnotationSizeLimit) {
    errs.push_back({core::FieldErrorType::kTooLong, path, std::nullopt,
                    "may not be more than 262144 bytes"});
  }
  return errs;
}

}  // namespace builtin_internal

namespace {

using builtin_internal::append;
using builtin_internal::arrayMember;
using builtin_internal::childPath;
using builtin_internal::indexPath;
using builtin_internal::intMember;
using builtin_internal::member;
using builtin_internal::NameValidator;
using builtin_internal::objectMember;
using builtin_internal::stringMember;
using core::FieldError;
using core::FieldErrors;
using nlohmann::json;

const json& emptyObject() {
  static const json kEmpty = json::object();
  return kEmpty;
}

const json& objectOrEmpty(const json& parent, std::string_view key) {
  const json* m = objectMember(parent, key);
  return m != nullptr ? *m : emptyObject();
}

// ValidateObjectMeta (ValidateObjectMetaAccessor) under "metadata".
FieldErrors validateObjectMeta(const json& object, bool namespaced, NameValidator name_fn) {
  FieldErrors errs;
  const json& meta = objectOrEmpty(object, "metadata");
  const std::string generate_name = stringMember(meta, "generateName");
  const std::string name = stringMember(meta, "name");
  if (!generate_name.empty()) {
    for (auto& msg : name_fn(generate_name, true)) {
      errs.push_back(FieldError::invalid("metadata.generateName", generate_name, std::move(msg)));
    }
  }
  // The registry derives the name from generateName before validating (rest.BeforeCreate).
  if (name.empty() && generate_name.empty()) {
    errs.push_back(FieldError::required("metadata.name", "name or generateName is required"));
  } else if (!name.empty()) {
    for (auto& msg : name_fn(name, false)) {
      errs.push_back(FieldError::invalid("metadata.name", name, std::move(msg)));
    }
  }
  const std::string ns = stringMember(meta, "namespace");
  if (namespaced) {
    if (ns.empty()) {
      errs.push_back(FieldError::required("metadata.namespace"));
    } else {
      for (auto& msg : builtin_internal::nameIsDnsLabel(ns, false)) {
        errs.push_back(FieldError::invalid("metadata.namespace", ns, std::move(msg)));
      }
    }
  } else if (!ns.empty()) {
    errs.push_back(FieldError::forbidden("metadata.namespace", "not allowed on this type"));
  }
  if (auto generation = intMember(meta, "generation"); generation && *generation < 0) {
    errs.push_back(FieldError::invalid("metadata.generation", *generation,
                                       "must be greater than or equal to 0"));
  }
  append(errs, builtin_internal::validateLabels(objectMember(meta, "labels"), "metadata.labels"));
  append(errs, builtin_internal::validateAnnotations(objectMember(meta, "annotations"),
                                                     "metadata.annotations"));
  return errs;
}

// ValidateObjectMetaUpdate: the immutable parts of ObjectMeta.
FieldErrors validateObjectMetaUpdate(const json& object, const json& old_object) {
  FieldErrors errs;
  const json& meta = objectOrEmpty(object, "metadata");
  const json& old_meta = objectOrEmpty(old_object, "metadata");
  if (const json* deleted = member(old_meta, "deletionTimestamp");
      deleted != nullptr && !deleted->is_null()) {
    // ValidateNoNewFinalizers: sets.String's sorted List, printed with %#v.
    std::set<std::string> added;
    std::set<std::string> before;
    if (const json* old_finalizers = member(old_meta, "finalizers");
        old_finalizers != nullptr && old_finalizers->is_array()) {
      for (const auto& f : *old_finalizers) {
        if (f.is_string()) before.insert(f.get<std::string>());
      }
    }
    if (const json* finalizers = member(meta, "finalizers");
        finalizers != nullptr && finalizers->is_array()) {
      for (const auto& f : *finalizers) {
        if (f.is_string() && !before.contains(f.get<std::string>())) {
          added.insert(f.get<std::string>());
        }
      }
    }
    if (!added.empty()) {
      errs.push_back(FieldError::forbidden(
          "metadata.finalizers",
          "no new finalizers can be added if the object is being deleted, found new finalizers " +
              go::stringSliceGoSyntax({added.begin(), added.end()})));
    }
  }
  for (const char* key : {"name", "namespace", "uid"}) {
    const std::string value = stringMember(meta, key);
    if (value != stringMember(old_meta, key)) {
      errs.push_back(
          FieldError::invalid(std::string("metadata.") + key, value, "field is immutable"));
    }
  }
  const json* created = member(meta, "creationTimestamp");
  const json* old_created = member(old_meta, "creationTimestamp");
  json none;
  if ((created != nullptr ? *created : none) != (old_created != nullptr ? *old_created : none)) {
    errs.push_back(FieldError{core::FieldErrorType::kInvalid, "metadata.creationTimestamp",
                              created != nullptr && created->is_string()
                                  ? go::quote(created->get<std::string>())
                                  : std::string("null"),
                              "field is immutable"});
  }
  return errs;
}

// The selector / template rules shared by the apps/v1 workloads
// (ValidatePodTemplateSpecForReplicaSet and the selector checks before it).
FieldErrors validateSelectorAndTemplate(const json& spec, std::string_view empty_selector_kind,
                                        const std::vector<std::string>& restart_policies) {
  FieldErrors errs;
  const json* selector_json = member(spec, "selector");
  bool selector_ok = false;
  core::LabelSelector selector = core::LabelSelector::nothing();
  if (selector_json == nullptr || selector_json->is_null()) {
    errs.push_back(FieldError::required("spec.selector"));
  } else {
    append(errs, core::validateLabelSelector(*selector_json, "spec.selector"));
    const json* match_labels = objectMember(*selector_json, "matchLabels");
    const json* expressions = arrayMember(*selector_json, "matchExpressions");
    if ((match_labels == nullptr || match_labels->empty()) &&
        (expressions == nullptr || expressions->empty())) {
      errs.push_back({core::FieldErrorType::kInvalid, "spec.selector",
                      builtin_internal::goLabelSelectorLiteral(*selector_json),
                      "empty selector is invalid for " + std::string(empty_selector_kind)});
    }
    auto parsed = core::LabelSelector::parse(*selector_json);
    if (parsed.ok()) {
      selector = *parsed;
      selector_ok = true;
    } else {
      errs.push_back({core::FieldErrorType::kInvalid, "spec.selector",
                      builtin_internal::goLabelSelectorLiteral(*selector_json),
                      "invalid label selector"});
    }
  }
  const json& tmpl = objectOrEmpty(spec, "template");
  if (selector_ok && !selector.matchesEverything()) {
    const json* labels_json = nullptr;
    if (const json* metadata = objectMember(tmpl, "metadata")) {
      labels_json = objectMember(*metadata, "labels");
    }
    json holder = {{"metadata", {{"labels", labels_json != nullptr ? *labels_json : json()}}}};
    auto labels = core::labelsOf(holder);
    if (!labels.ok() || !selector.matches(*labels)) {
      errs.push_back({core::FieldErrorType::kInvalid, "spec.template.metadata.labels",
                      go::stringMapGoSyntax(labels_json),
                      "`selector` does not match template `labels`"});
    }
  }
  if (selector_ok || selector_json == nullptr || selector_json->is_null()) {
    append(errs, builtin_internal::validatePodTemplateSpec(tmpl, "spec.template"));
    const std::string restart =
        stringMember(objectOrEmpty(tmpl, "spec"), "restartPolicy");
    if (std::find(restart_policies.begin(), restart_policies.end(), restart) ==
        restart_policies.end()) {
      errs.push_back(
          FieldError::notSupported("spec.template.spec.restartPolicy", restart, restart_policies));
    }
  }
  return errs;
}

void validateNonnegativeField(FieldErrors& errs, const json& spec, std::string_view key,
                              const std::string& path) {
  if (auto value = intMember(spec, key); value && *value < 0) {
    errs.push_back(FieldError::invalid(childPath(path, key), *value,
                                       "must be greater than or equal to 0"));
  }
}

FieldErrors validateAppsWorkload(const json& object, std::string_view kind) {
  FieldErrors errs;
  const json& spec = objectOrEmpty(object, "spec");
  validateNonnegativeField(errs, spec, "replicas", "spec");
  const std::string empty_kind = kind == "StatefulSet" ? "statefulset"
                                 : kind == "DaemonSet" ? "daemonset"
                                                       : "deployment";
  append(errs, validateSelectorAndTemplate(spec, empty_kind, {"Always"}));
  validateNonnegativeField(errs, spec, "minReadySeconds", "spec");
  validateNonnegativeField(errs, spec, "revisionHistoryLimit", "spec");
  if (kind == "Deployment") {
    if (auto deadline = intMember(spec, "progressDeadlineSeconds")) {
      validateNonnegativeField(errs, spec, "progressDeadlineSeconds", "spec");
      if (*deadline <= intMember(spec, "minReadySeconds").value_or(0)) {
        errs.push_back(FieldError::invalid("spec.progressDeadlineSeconds", *deadline,
                                           "must be greater than minReadySeconds"));
      }
    }
  }
  return errs;
}

FieldErrors validateJobSpec(const json& spec, const std::string& path, bool require_selector) {
  FieldErrors errs;
  validateNonnegativeField(errs, spec, "parallelism", path);
  validateNonnegativeField(errs, spec, "completions", path);
  validateNonnegativeField(errs, spec, "backoffLimit", path);
  const json& tmpl = objectOrEmpty(spec, "template");
  if (require_selector) {
    const json* selector_json = member(spec, "selector");
    if (selector_json == nullptr || selector_json->is_null()) {
      errs.push_back(FieldError::required(childPath(path, "selector")));
    } else {
      append(errs, core::validateLabelSelector(*selector_json, childPath(path, "selector")));
      auto selector = core::LabelSelector::parse(*selector_json);
      const json* labels_json = nullptr;
      if (const json* metadata = objectMember(tmpl, "metadata")) {
        labels_json = objectMember(*metadata, "labels");
      }
      json holder = {{"metadata", {{"labels", labels_json != nullptr ? *labels_json : json()}}}};
      auto labels = core::labelsOf(holder);
      if (selector.ok() && !selector->matchesEverything() &&
          (!labels.ok() || !selector->matches(*labels))) {
        errs.push_back({core::FieldErrorType::kInvalid, path + ".template.metadata.labels",
                        go::stringMapGoSyntax(labels_json),
                        "`selector` does not match template `labels`"});
      }
    }
  }
  append(errs, builtin_internal::validatePodTemplateSpec(tmpl, childPath(path, "template")));
  const std::string restart = stringMember(objectOrEmpty(tmpl, "spec"), "restartPolicy");
  if (restart != "OnFailure" && restart != "Never") {
    errs.push_back(FieldError::notSupported(path + ".template.spec.restartPolicy", restart,
                                            {"OnFailure", "Never"}));
  }
  return errs;
}

FieldErrors validateService(const json& service) {
  FieldErrors errs;
  const json& spec = objectOrEmpty(service, "spec");
  const std::string type = stringMember(spec, "type");
  const bool headless = stringMember(spec, "clusterIP") == "None";
  const json* ports = arrayMember(spec, "ports");
  if ((ports == nullptr || ports->empty()) && !headless && type != "ExternalName") {
    errs.push_back(FieldError::required("spec.ports"));
  }
  if (ports != nullptr) {
    std::set<std::string> names;
    for (std::size_t i = 0; i < ports->size(); ++i) {
      const json& port = (*ports)[i];
      if (!port.is_object()) continue;
      const std::string path = indexPath("spec.ports", i);
      const std::string name = stringMember(port, "name");
      if (ports->size() > 1 && name.empty()) {
        errs.push_back(FieldError::required(childPath(path, "name")));
      } else if (!name.empty()) {
        for (auto& msg : validation::isDns1123Label(name)) {
          errs.push_back(FieldError::invalid(childPath(path, "name"), name, std::move(msg)));
        }
        if (!names.insert(name).second) {
          errs.push_back(FieldError::duplicate(childPath(path, "name"), name));
        }
      }
      std::int64_t number = intMember(port, "port").value_or(0);
      for (auto& msg : builtin_internal::portNumErrors(number)) {
        errs.push_back(FieldError::invalid(childPath(path, "port"), number, std::move(msg)));
      }
      const std::string protocol = stringMember(port, "protocol");
      if (protocol.empty()) {
        errs.push_back(FieldError::required(childPath(path, "protocol")));
      } else if (protocol != "SCTP" && protocol != "TCP" && protocol != "UDP") {
        errs.push_back(FieldError::notSupported(childPath(path, "protocol"), protocol,
                                                {"SCTP", "TCP", "UDP"}));
      }
      const json* target = member(port, "targetPort");
      if (target != nullptr && target->is_string()) {
        for (auto& msg : builtin_internal::portNameErrors(target->get<std::string>())) {
          errs.push_back(FieldError::invalid(childPath(path, "targetPort"),
                                             target->get<std::string>(), std::move(msg)));
        }
      } else {
        std::int64_t value = target != nullptr && target->is_number_integer()
                                 ? target->get<std::int64_t>()
                                 : 0;
        for (auto& msg : builtin_internal::portNumErrors(value)) {
          errs.push_back(FieldError::invalid(childPath(path, "targetPort"), value, std::move(msg)));
        }
      }
    }
  }
  append(errs, builtin_internal::validateLabels(objectMember(spec, "selector"), "spec.selector"));
  const std::string affinity = stringMember(spec, "sessionAffinity");
  if (affinity.empty()) {
    errs.push_back(FieldError::required("spec.sessionAffinity"));
  } else if (affinity != "ClientIP" && affinity != "None") {
    errs.push_back(
        FieldError::notSupported("spec.sessionAffinity", affinity, {"ClientIP", "None"}));
  }
  if (type.empty()) {
    errs.push_back(FieldError::required("spec.type"));
  } else if (type != "ClusterIP" && type != "ExternalName" && type != "LoadBalancer" &&
             type != "NodePort") {
    errs.push_back(FieldError::notSupported("spec.type", type,
                                            {"ClusterIP", "ExternalName", "LoadBalancer",
                                             "NodePort"}));
  }
  return errs;
}

FieldErrors validateReplicationController(const json& rc) {
  FieldErrors errs;
  const json& spec = objectOrEmpty(rc, "spec");
  validateNonnegativeField(errs, spec, "replicas", "spec");
  const json* selector = objectMember(spec, "selector");
  if (selector == nullptr || selector->empty()) {
    errs.push_back(FieldError::required("spec.selector"));
  } else {
    append(errs, builtin_internal::validateLabels(selector, "spec.selector"));
  }
  const json* tmpl = objectMember(spec, "template");
  if (tmpl == nullptr) {
    errs.push_back(FieldError::required("spec.template"));
    return errs;
  }
  if (selector != nullptr && !selector->empty()) {
    const json& metadata = objectOrEmpty(*tmpl, "metadata");
    const json* labels = objectMember(metadata, "labels");
    bool matches = true;
    for (auto it = selector->begin(); it != selector->end(); ++it) {
      const json* value = labels != nullptr ? member(*labels, it.key()) : nullptr;
      matches = matches && value != nullptr && *value == it.value();
    }
    if (!matches) {
      errs.push_back({core::FieldErrorType::kInvalid, "spec.template.metadata.labels",
                      go::stringMapGoSyntax(labels),
                      "`selector` does not match template `labels`"});
    }
  }
  append(errs, builtin_internal::validatePodTemplateSpec(*tmpl, "spec.template"));
  const std::string restart = stringMember(objectOrEmpty(*tmpl, "spec"), "restartPolicy");
  if (restart != "Always") {
    errs.push_back(FieldError::notSupported("spec.template.spec.restartPolicy", restart, {"Always"}));
  }
  return errs;
}

FieldErrors validateKind(const json& object, const std::string& type) {
  using builtin_internal::nameIsDns1035Label;
  using builtin_internal::nameIsDnsLabel;
  using builtin_internal::nameIsDnsSubdomain;
  FieldErrors errs;
  if (type == "v1/Pod") {
    errs = validateObjectMeta(object, true, nameIsDnsSubdomain);
    append(errs, builtin_internal::validatePodSpec(objectOrEmpty(object, "spec"), "spec"));
  } else if (type == "v1/PodTemplate") {
    errs = validateObjectMeta(object, true, nameIsDnsSubdomain);
    append(errs, builtin_internal::validatePodTemplateSpec(objectOrEmpty(object, "template"),
                                                           "template"));
  } else if (type == "v1/ReplicationController") {
    errs = validateObjectMeta(object, true, nameIsDnsSubdomain);
    append(errs, validateReplicationController(object));
  } else if (type == "v1/Namespace") {
    errs = validateObjectMeta(object, false, nameIsDnsLabel);
  } else if (type == "v1/Service") {
    errs = validateObjectMeta(object, true, nameIsDns1035Label);
    append(errs, validateService(object));
  } else if (type == "v1/Secret" || type == "v1/ConfigMap" || type == "v1/ServiceAccount") {
    errs = validateObjectMeta(object, true, nameIsDnsSubdomain);
  } else if (type == "apps/v1/Deployment" || type == "apps/v1/ReplicaSet" ||
             type == "apps/v1/DaemonSet") {
    errs = validateObjectMeta(object, true, nameIsDnsSubdomain);
    append(errs, validateAppsWorkload(object, stringMember(object, "kind")));
  } else if (type == "apps/v1/StatefulSet") {
    errs = validateObjectMeta(object, true, nameIsDnsLabel);
    append(errs, validateAppsWorkload(object, "StatefulSet"));
  } else if (type == "batch/v1/Job") {
    errs = validateObjectMeta(object, true, nameIsDnsSubdomain);
    append(errs, validateJobSpec(objectOrEmpty(object, "spec"), "spec", true));
  } else if (type == "batch/v1/CronJob") {
    errs = validateObjectMeta(object, true, nameIsDnsSubdomain);
    const json& spec = objectOrEmpty(object, "spec");
    if (stringMember(spec, "schedule").empty()) {
      errs.push_back(FieldError::required("spec.schedule"));
    }
    const json& job_spec = objectOrEmpty(objectOrEmpty(spec, "jobTemplate"), "spec");
    append(errs, validateJobSpec(job_spec, "spec.jobTemplate.spec", false));
    if (!builtin_internal::isUnset(job_spec, "selector")) {
      errs.push_back({core::FieldErrorType::kInvalid, "spec.jobTemplate.spec.selector",
                      builtin_internal::goLabelSelectorLiteral(*member(job_spec, "selector")),
                      "`selector` will be auto-generated"});
    }
    const std::string name = stringMember(objectOrEmpty(object, "metadata"), "name");
    // The controller appends an 11-character suffix; Job names are at most 63 characters.
    if (name.size() > 52) {
      errs.push_back(FieldError::invalid("metadata.name", name, "must be no more than 52 characters"));
    }
  }
  return errs;
}

bool isKnownType(const std::string& type) {
  static const std::set<std::string> kKnown = {
      "v1/Pod", "v1/PodTemplate", "v1/ReplicationController", "v1/Namespace", "v1/Service",
      "v1/Secret", "v1/ConfigMap", "v1/ServiceAccount", "apps/v1/Deployment",
      "apps/v1/ReplicaSet", "apps/v1/DaemonSet", "apps/v1/StatefulSet", "batch/v1/Job",
      "batch/v1/CronJob"};
  return kKnown.count(type) > 0;
}

FieldErrors validateUpdate(const json& object, const json& old_object, const std::string& type) {
  FieldErrors errs = validateObjectMetaUpdate(object, old_object);
  append(errs, validateKind(object, type));
  if (type == "v1/Pod") {
    append(errs, builtin_internal::validatePodSpecUpdate(objectOrEmpty(object, "spec"),
                                                         objectOrEmpty(old_object, "spec")));
  } else if (type.starts_with("apps/v1/")) {
    // apps/v1 selectors are immutable.
    json new_view = object;
    json old_view = old_object;
    normalizeLikeGoEncoding(new_view);
    normalizeLikeGoEncoding(old_view);
    const json& selector = objectOrEmpty(objectOrEmpty(new_view, "spec"), "selector");
    const json& old_selector = objectOrEmpty(objectOrEmpty(old_view, "spec"), "selector");
    if (selector != old_selector) {
      errs.push_back({core::FieldErrorType::kInvalid, "spec.selector",
                      builtin_internal::goLabelSelectorLiteral(selector), "field is immutable"});
    }
  }
  return errs;
}

}  // namespace

std::vector<std::string> warningsOnCreate(const json& object) {
  std::vector<std::string> warnings;
  if (!object.is_object() || builtin_internal::typeKey(object) != "v1/Pod") return warnings;
  const json& meta = object.value("metadata", json::object());
  const auto problems = validation::isDns1123Label(builtin_internal::stringMember(meta, "name"));
  if (!problems.empty()) {
    // fmt.Sprintf("...: %v", msgs) prints a []string as [a b].
    std::string list;
    for (const auto& p : problems) list += (list.empty() ? "" : " ") + p;
    warnings.push_back(
        "metadata.name: this is used in the Pod's hostname, which can result in surprising "
        "behavior; a DNS label is recommended: [" + list + "]");
  }
  return warnings;
}

FieldErrors validateObject(const json& object, const json* old_object) {
  if (!object.is_object()) return {};
  const std::string type = builtin_internal::typeKey(object);
  if (!isKnownType(type)) return {};
  try {
    if (old_object != nullptr && old_object->is_object()) {
      return validateUpdate(object, *old_object, type);
    }
    return validateKind(object, type);
  } catch (const json::exception& e) {
    return {FieldError{core::FieldErrorType::kInternal, "", std::nullopt, e.what()}};
  }
}

}  // namespace harness::sim
