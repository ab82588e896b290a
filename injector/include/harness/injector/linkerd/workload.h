#pragma once

// The admitted object as pkg/inject/inject.go ResourceConfig.parse sees it: the effective kind,
// the top-level metadata and, for kinds with a pod template, the pod (template) metadata and
// spec. Only the fields the injector reads are type-checked; a wrong type is the decode error
// the webhook returns (worded like Go's encoding/json).

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::injector::linkerd {

using StringMap = std::map<std::string, std::string>;

struct Workload {
  // Lower-cased kind: request.kind.kind, overwritten by the object's own `kind` when present.
  std::string kind;
  std::string name;              // metadata.name
  std::string generate_name;     // metadata.generateName
  std::string object_namespace;  // metadata.namespace
  StringMap annotations;         // top-level metadata.annotations

  // Kinds with a pod template (pod, deployment, replicationcontroller, replicaset, job,
  // daemonset, statefulset, cronjob).
  bool has_pod_template = false;
  // JSON Pointer of the pod (template) inside the object: "" for a Pod, "/spec/template",
  // "/spec/jobTemplate/spec/template" for a CronJob.
  std::string template_pointer;
  nlohmann::json pod_metadata = nlohmann::json::object();  // as received, {} when absent
  nlohmann::json pod_spec = nlohmann::json::object();      // as received, {} when absent
  StringMap pod_annotations;
  StringMap pod_labels;

  [[nodiscard]] bool isPod() const { return kind == "pod"; }
  [[nodiscard]] bool isService() const { return kind == "service"; }
  // Report.ResName(): "<kind>/<name>", Pods falling back to generateName.
  [[nodiscard]] std::string resName() const;
};

// Decodes `object` for a request of kind `request_kind` (request.kind.kind).
core::Result<Workload> parseWorkload(const nlohmann::json& object, std::string_view request_kind);

// What `linkerd inject` does to a YAML document before reading it (cli/cmd/inject.go): it
// decodes it with sigs.k8s.io/yaml.Unmarshal into the typed object, which turns a YAML number or
// boolean into a string where the Go field is a string (`config.linkerd.io/skip-outbound-ports:
// 4222` reads as "4222", `...: true` as "true"), and its uninject pass writes the typed object
// back, so the injected output holds the strings too. Converts, in place, the string fields this
// decoder reads: apiVersion and kind, and the name, generateName, namespace, ownerReferences,
// labels and annotations of the object's metadata and of its pod template's. The webhook never
// needs it: kube-apiserver sends these fields as strings.
void coerceYamlScalars(nlohmann::json& object);

// The pod (template) spec's containers and initContainers in the order upstream iterates them
// (initContainers first).
std::vector<const nlohmann::json*> allContainers(const nlohmann::json& pod_spec);

}  // namespace harness::injector::linkerd
