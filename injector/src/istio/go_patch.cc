#include "harness/injector/istio/go_patch.h"

#include <string>

// Followed: gomodules/jsonpatch v2/jsonpatch.go (CreatePatch, handleValues, diff, matchesValue,
// makePath and its rfc6901Encoder, Operation.MarshalJSON), istio/istio pkg/kube/inject/webhook.go
// (createPatch), and the json tags of k8s.io/api core/v1 types.go for goTypedPod (which fields
// lack `omitempty`; metav1.Time marshals its zero value as null; resource.Quantity is a struct,
// so `omitempty` never drops it and its zero value is "0").

namespace harness::injector::istio {

namespace {

using nlohmann::json;
using core::JsonPatch;
using core::PatchOperation;

// The kinds Go's encoding/json decodes into interface{}: every number is a float64.
enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };

Kind kindOf(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
    case json::value_t::discarded:
      return Kind::kNull;
    case json::value_t::boolean:
      return Kind::kBool;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return Kind::kNumber;
    case json::value_t::string:
    case json::value_t::binary:
      return Kind::kString;
    case json::value_t::array:
      return Kind::kArray;
    case json::value_t::object:
      return Kind::kObject;
  }
  return Kind::kNull;
}

// rfc6901Encoder: strings.NewReplacer("~", "~0", "/", "~1"), one pass.
void appendPathPart(std::string& path, std::string_view part) {
  path.push_back('/');
  for (char c : part) {
    if (c == '~') {
      path += "~0";
    } else if (c == '/') {
      path += "~1";
    } else {
      path.push_back(c);
    }
  }
}

std::string makePath(const std::string& path, std::string_view part) {
  std::string out = path;
  appendPathPart(out, part);
  return out;
}

std::string makePath(const std::string& path, std::size_t index) {
  return makePath(path, std::to_string(index));
}

// matchesValue for scalars of the same kind.
bool scalarsMatch(const json& a, const json& b) {
  switch (kindOf(a)) {
    case Kind::kBool:
      return a.get<bool>() == b.get<bool>();
    case Kind::kNumber:
      return a.get<double>() == b.get<double>();
    case Kind::kString:
      return a.get_ref<const std::string&>() == b.get_ref<const std::string&>();
    default:
      return false;
  }
}

void handleValues(const json& a, const json& b, const std::string& path, JsonPatch& patch);

void diffObjects(const json& a, const json& b, const std::string& path, JsonPatch& patch) {
  for (auto it = b.begin(); it != b.end(); ++it) {
    const std::string p = makePath(path, it.key());
    auto av = a.find(it.key());
    if (av == a.end()) {
      patch.push_back(PatchOperation::add(p, *it));
      continue;
    }
    handleValues(*av, *it, p, patch);
  }
  for (auto it = a.begin(); it != a.end(); ++it) {
    if (!b.contains(it.key())) patch.push_back(PatchOperation::remove(makePath(path, it.key())));
  }
}

void handleValues(const json& a, const json& b, const std::string& path, JsonPatch& patch) {
  const Kind ka = kindOf(a);
  const Kind kb = kindOf(b);
  if (ka == Kind::kNull && kb == Kind::kNull) return;
  if (ka != kb) {
    // Types changed: replace completely (keeps a null in the destination).
    patch.push_back(PatchOperation::replace(path, b));
    return;
  }
  switch (ka) {
    case Kind::kObject:
      diffObjects(a, b, path, patch);
      break;
    case Kind::kArray: {
      const std::size_t n = std::min(a.size(), b.size());
      for (std::size_t i = a.size(); i > n; --i) {
        patch.push_back(PatchOperation::remove(makePath(path, i - 1)));
      }
      for (std::size_t i = n; i < b.size(); ++i) {
        patch.push_back(PatchOperation::add(makePath(path, i), b[i]));
      }
      for (std::size_t i = 0; i < n; ++i) handleValues(a[i], b[i], makePath(path, i), patch);
      break;
    }
    default:
      if (!scalarsMatch(a, b)) patch.push_back(PatchOperation::replace(path, b));
      break;
  }
}

// ---- goTypedPod ----------------------------------------------------------------------------

void defaultMember(json& obj, const char* key, const json& value) {
  if (obj.is_object() && !obj.contains(key)) obj[key] = value;
}

// Applies `fn` to every object element of obj[key] when it is an array.
template <typename Fn>
void eachObject(json& obj, const char* key, Fn fn) {
  if (!obj.is_object()) return;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return;
  for (auto& e : *it) {
    if (e.is_object()) fn(e);
  }
}

template <typename Fn>
void member(json& obj, const char* key, Fn fn) {
  if (!obj.is_object()) return;
  auto it = obj.find(key);
  if (it != obj.end() && it->is_object()) fn(*it);
}

void typedKeyToPath(json& item) {
  defaultMember(item, "key", "");
  defaultMember(item, "path", "");
}

void typedResourceFieldRef(json& r) {
  defaultMember(r, "resource", "");
  defaultMember(r, "divisor", "0");
}

void typedFieldRef(json& r) { defaultMember(r, "fieldPath", ""); }

void typedDownwardApiFile(json& f) {
  defaultMember(f, "path", "");
  member(f, "fieldRef", typedFieldRef);
  member(f, "resourceFieldRef", typedResourceFieldRef);
}

// ProbeHandler / LifecycleHandler.
void typedHandler(json& h) {
  member(h, "httpGet", [](json& g) {
    defaultMember(g, "port", 0);
    eachObject(g, "httpHeaders", [](json& hh) {
      defaultMember(hh, "name", "");
      defaultMember(hh, "value", "");
    });
  });
  member(h, "tcpSocket", [](json& t) { defaultMember(t, "port", 0); });
  member(h, "grpc", [](json& g) {
    defaultMember(g, "port", 0);
    defaultMember(g, "service", nullptr);  // `json:"service"`: a nil pointer is null
  });
  member(h, "sleep", [](json& s) { defaultMember(s, "seconds", 0); });
}

void typedSecurityProfile(json& sc) {
  member(sc, "seccompProfile", [](json& p) { defaultMember(p, "type", ""); });
  member(sc, "appArmorProfile", [](json& p) { defaultMember(p, "type", ""); });
}

void typedContainer(json& c) {
  defaultMember(c, "name", "");
  defaultMember(c, "resources", json::object());
  eachObject(c, "ports", [](json& p) { defaultMember(p, "containerPort", 0); });
  eachObject(c, "env", [](json& e) {
    defaultMember(e, "name", "");
    member(e, "valueFrom", [](json& vf) {
      member(vf, "fieldRef", typedFieldRef);
      member(vf, "resourceFieldRef", typedResourceFieldRef);
      member(vf, "configMapKeyRef", [](json& r) { defaultMember(r, "key", ""); });
      member(vf, "secretKeyRef", [](json& r) { defaultMember(r, "key", ""); });
    });
  });
  eachObject(c, "volumeMounts", [](json& m) {
    defaultMember(m, "name", "");
    defaultMember(m, "mountPath", "");
  });
  eachObject(c, "volumeDevices", [](json& d) {
    defaultMember(d, "name", "");
    defaultMember(d, "devicePath", "");
  });
  eachObject(c, "resizePolicy", [](json& r) {
    defaultMember(r, "resourceName", "");
    defaultMember(r, "restartPolicy", "");
  });
  for (const char* probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    member(c, probe, typedHandler);
  }
  member(c, "lifecycle", [](json& l) {
    member(l, "postStart", typedHandler);
    member(l, "preStop", typedHandler);
  });
  member(c, "securityContext", typedSecurityProfile);
}

void typedVolume(json& v) {
  defaultMember(v, "name", "");
  member(v, "configMap", [](json& s) { eachObject(s, "items", typedKeyToPath); });
  member(v, "secret", [](json& s) { eachObject(s, "items", typedKeyToPath); });
  member(v, "downwardAPI", [](json& s) { eachObject(s, "items", typedDownwardApiFile); });
  member(v, "persistentVolumeClaim", [](json& s) { defaultMember(s, "claimName", ""); });
  member(v, "hostPath", [](json& s) { defaultMember(s, "path", ""); });
  member(v, "csi", [](json& s) { defaultMember(s, "driver", ""); });
  member(v, "nfs", [](json& s) {
    defaultMember(s, "server", "");
    defaultMember(s, "path", "");
  });
  member(v, "projected", [](json& p) {
    defaultMember(p, "sources", nullptr);  // `json:"sources"`
    eachObject(p, "sources", [](json& src) {
      member(src, "serviceAccountToken", [](json& t) { defaultMember(t, "path", ""); });
      member(src, "configMap", [](json& s) { eachObject(s, "items", typedKeyToPath); });
      member(src, "secret", [](json& s) { eachObject(s, "items", typedKeyToPath); });
      member(src, "downwardAPI", [](json& s) { eachObject(s, "items", typedDownwardApiFile); });
      member(src, "clusterTrustBundle", [](json& s) { defaultMember(s, "path", ""); });
    });
  });
}

}  // namespace

JsonPatch createPatchGomodules(const json& original, const json& modified) {
  JsonPatch patch;
  if (original == modified) return patch;  // CreatePatch's byte-equality shortcut
  handleValues(original, modified, "", patch);
  return patch;
}

namespace {

// The members of a corev1.PodSpec that json.Marshal writes even when unset.
void typedPodSpec(json& spec) {
  defaultMember(spec, "containers", nullptr);  // `json:"containers"`: a nil slice is null
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    eachObject(spec, list, typedContainer);
  }
  eachObject(spec, "volumes", typedVolume);
  eachObject(spec, "hostAliases", [](json& h) { defaultMember(h, "ip", ""); });
  eachObject(spec, "readinessGates", [](json& g) { defaultMember(g, "conditionType", ""); });
  eachObject(spec, "topologySpreadConstraints", [](json& t) {
    defaultMember(t, "maxSkew", 0);
    defaultMember(t, "topologyKey", "");
    defaultMember(t, "whenUnsatisfiable", "");
  });
  member(spec, "securityContext", [](json& sc) {
    typedSecurityProfile(sc);
    eachObject(sc, "sysctls", [](json& s) {
      defaultMember(s, "name", "");
      defaultMember(s, "value", "");
    });
  });
}

json& objectMember(json& parent, const char* key) {
  if (!parent.contains(key) || !parent[key].is_object()) parent[key] = json::object();
  return parent[key];
}

// A member at its Go zero value under `omitempty` is not written.
void omitZero(json& obj, const char* key, const json& zero) {
  if (obj.contains(key) && obj[key] == zero) obj.erase(key);
}

// OpenShift's DeploymentConfigSpec as json.Marshal writes it (github.com/openshift/api apps/v1
// types.go): strategy is a struct whose resources (a struct) is always written; triggers,
// replicas and test have no omitempty; minReadySeconds, paused and the triggers' `automatic`
// do, so their zero values go.
void typedDeploymentConfigSpec(json& spec) {
  json& strategy = objectMember(spec, "strategy");
  defaultMember(strategy, "resources", json::object());
  defaultMember(spec, "triggers", nullptr);
  defaultMember(spec, "replicas", 0);
  defaultMember(spec, "test", false);
  omitZero(spec, "minReadySeconds", 0);
  omitZero(spec, "paused", false);
  eachObject(spec, "triggers", [](json& trigger) {
    member(trigger, "imageChangeParams", [](json& p) {
      omitZero(p, "automatic", false);
      defaultMember(p, "from", json::object());  // corev1.ObjectReference, no omitempty
    });
  });
}

}  // namespace

json goTypedPod(const json& pod) {
  if (!pod.is_object()) return pod;
  json out = pod;
  json& meta = objectMember(out, "metadata");
  defaultMember(meta, "creationTimestamp", nullptr);
  eachObject(meta, "ownerReferences", [](json& r) {
    for (const char* k : {"apiVersion", "kind", "name", "uid"}) defaultMember(r, k, "");
  });
  typedPodSpec(objectMember(out, "spec"));
  if (!out.contains("status") || out["status"].is_null()) out["status"] = json::object();
  return out;
}

json goTypedWorkload(const json& object, bool creation_timestamp_null) {
  if (!object.is_object()) return object;
  const std::string kind = object.value("kind", "");
  // The members each kind's Status struct has without omitempty (k8s.io/api apps/v1, batch/v1,
  // core/v1 types.go); the other kinds' statuses are all omitempty.
  json status_zero = json::object();
  if (kind == "ReplicaSet" || kind == "ReplicationController") {
    status_zero = {{"replicas", 0}};
  } else if (kind == "StatefulSet") {
    status_zero = {{"replicas", 0}, {"availableReplicas", 0}};
  } else if (kind == "DaemonSet") {
    status_zero = {{"currentNumberScheduled", 0},
                   {"numberMisscheduled", 0},
                   {"desiredNumberScheduled", 0},
                   {"numberReady", 0}};
  } else if (kind == "DeploymentConfig") {
    // OpenShift's apps/v1 DeploymentConfigStatus (github.com/openshift/api apps/v1 types.go).
    status_zero = {{"latestVersion", 0},     {"observedGeneration", 0},
                   {"replicas", 0},          {"updatedReplicas", 0},
                   {"availableReplicas", 0}, {"unavailableReplicas", 0}};
  } else if (kind != "Pod" && kind != "Deployment" && kind != "Job" && kind != "CronJob") {
    return object;  // not a kind kube-inject decodes into a typed object
  }
  json out = object;
  // metav1.ObjectMeta.CreationTimestamp: `omitempty` only (a struct, so an unset one is
  // written as null) up to apimachinery 0.33, `omitempty,omitzero` (left out) since 0.34.
  auto typedMeta = [creation_timestamp_null](json& meta) {
    if (creation_timestamp_null) {
      defaultMember(meta, "creationTimestamp", nullptr);
    } else if (meta.contains("creationTimestamp") && meta["creationTimestamp"].is_null()) {
      meta.erase("creationTimestamp");
    }
  };
  typedMeta(objectMember(out, "metadata"));
  json& status = objectMember(out, "status");
  for (auto& [k, v] : status_zero.items()) defaultMember(status, k.c_str(), v);
  if (kind == "Pod") {
    typedPodSpec(objectMember(out, "spec"));
    return out;
  }
  json& spec = objectMember(out, "spec");
  // DeploymentSpec.Strategy, DaemonSetSpec/StatefulSetSpec.UpdateStrategy: structs, no pointer.
  if (kind == "Deployment") defaultMember(spec, "strategy", json::object());
  if (kind == "DaemonSet" || kind == "StatefulSet") {
    defaultMember(spec, "updateStrategy", json::object());
  }
  if (kind == "DeploymentConfig") typedDeploymentConfigSpec(spec);
  // PodTemplateSpec.ObjectMeta is a struct too: an unset one is `metadata: {}`.
  if (kind == "CronJob") typedMeta(objectMember(objectMember(spec, "jobTemplate"), "metadata"));
  json& job_spec = kind == "CronJob" ? objectMember(objectMember(spec, "jobTemplate"), "spec") : spec;
  json& tmpl = objectMember(job_spec, "template");
  typedMeta(objectMember(tmpl, "metadata"));
  typedPodSpec(objectMember(tmpl, "spec"));
  eachObject(spec, "volumeClaimTemplates", [&](json& pvc) { typedMeta(objectMember(pvc, "metadata")); });
  return out;
}

}  // namespace harness::injector::istio
