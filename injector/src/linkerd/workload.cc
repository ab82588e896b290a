#include "harness/injector/linkerd/workload.h"

#include <algorithm>
#include <cctype>

#include "go_decode.h"

// Followed: pkg/inject/inject.go (parse, getFreshWorkloadObj, complete) and the k8s.io/api
// types for the field names used in decode errors.

namespace harness::injector::linkerd {

namespace {

using detail::GoField;
using nlohmann::json;

const json& member(const json& obj, std::string_view key) {
  static const json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(std::string(key));
  return it == obj.end() ? kNull : *it;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

StringMap toStringMap(const json& v) {
  StringMap out;
  if (!v.is_object()) return out;
  for (const auto& [k, val] : v.items()) out[k] = val.is_string() ? val.get<std::string>() : "";
  return out;
}

core::Result<void> checkObjectMeta(const json& meta, const GoField& at) {
  HARNESS_TRY(detail::checkObject(meta, at, "v1.ObjectMeta"));
  if (!meta.is_object()) return {};
  for (const char* key : {"name", "generateName", "namespace"}) {
    HARNESS_TRY(detail::checkString(member(meta, key), at.child("ObjectMeta", key)));
  }
  HARNESS_TRY(
      detail::checkStringMap(member(meta, "annotations"), at.child("ObjectMeta", "annotations")));
  HARNESS_TRY(detail::checkStringMap(member(meta, "labels"), at.child("ObjectMeta", "labels")));
  const json& refs = member(meta, "ownerReferences");
  const GoField refs_at = at.child("ObjectMeta", "ownerReferences");
  HARNESS_TRY(detail::checkArray(refs, refs_at, "[]v1.OwnerReference"));
  if (refs.is_array()) {
    for (const auto& ref : refs) {
      HARNESS_TRY(detail::checkObject(ref, refs_at, "v1.OwnerReference"));
      for (const char* key : {"kind", "name", "apiVersion", "uid"}) {
        HARNESS_TRY(detail::checkString(member(ref, key), refs_at.child("OwnerReference", key)));
      }
    }
  }
  return {};
}

core::Result<void> checkProbe(const json& probe, const GoField& at) {
  HARNESS_TRY(detail::checkObject(probe, at, "v1.Probe"));
  const json& http = member(probe, "httpGet");
  HARNESS_TRY(detail::checkObject(http, at.child("Probe", "httpGet"), "v1.HTTPGetAction"));
  HARNESS_TRY(detail::checkIntOrString(
      member(http, "port"), at.child("Probe", "httpGet").child("HTTPGetAction", "port")));
  return {};
}

core::Result<void> checkContainers(const json& list, const GoField& at) {
  HARNESS_TRY(detail::checkArray(list, at, "[]v1.Container"));
  if (!list.is_array()) return {};
  for (const auto& c : list) {
    HARNESS_TRY(detail::checkObject(c, at, "v1.Container"));
    for (const char* key : {"name", "image"}) {
      HARNESS_TRY(detail::checkString(member(c, key), at.child("Container", key)));
    }
    const GoField ports_at = at.child("Container", "ports");
    const json& ports = member(c, "ports");
    HARNESS_TRY(detail::checkArray(ports, ports_at, "[]v1.ContainerPort"));
    if (ports.is_array()) {
      for (const auto& p : ports) {
        HARNESS_TRY(detail::checkObject(p, ports_at, "v1.ContainerPort"));
        HARNESS_TRY(detail::checkInteger(
            member(p, "containerPort"), ports_at.child("ContainerPort", "containerPort"), "int32"));
        for (const char* key : {"name", "protocol"}) {
          HARNESS_TRY(detail::checkString(member(p, key), ports_at.child("ContainerPort", key)));
        }
      }
    }
    HARNESS_TRY(checkProbe(member(c, "readinessProbe"), at.child("Container", "readinessProbe")));
    HARNESS_TRY(checkProbe(member(c, "livenessProbe"), at.child("Container", "livenessProbe")));
    const GoField sc_at = at.child("Container", "securityContext");
    const json& sc = member(c, "securityContext");
    HARNESS_TRY(detail::checkObject(sc, sc_at, "v1.SecurityContext"));
    const GoField caps_at = sc_at.child("SecurityContext", "capabilities");
    const json& caps = member(sc, "capabilities");
    HARNESS_TRY(detail::checkObject(caps, caps_at, "v1.Capabilities"));
    for (const char* key : {"add", "drop"}) {
      const json& list_v = member(caps, key);
      const GoField list_at = caps_at.child("Capabilities", key);
      HARNESS_TRY(detail::checkArray(list_v, list_at, "[]v1.Capability"));
      if (list_v.is_array()) {
        for (const auto& cap : list_v) {
          if (!cap.is_null() && !cap.is_string()) {
            return detail::goTypeError(cap, list_at, "v1.Capability");
          }
        }
      }
    }
    const GoField mounts_at = at.child("Container", "volumeMounts");
    const json& mounts = member(c, "volumeMounts");
    HARNESS_TRY(detail::checkArray(mounts, mounts_at, "[]v1.VolumeMount"));
    if (mounts.is_array()) {
      for (const auto& m : mounts) {
        HARNESS_TRY(detail::checkObject(m, mounts_at, "v1.VolumeMount"));
        for (const char* key : {"name", "mountPath"}) {
          HARNESS_TRY(detail::checkString(member(m, key), mounts_at.child("VolumeMount", key)));
        }
        HARNESS_TRY(
            detail::checkBool(member(m, "readOnly"), mounts_at.child("VolumeMount", "readOnly")));
      }
    }
  }
  return {};
}

core::Result<void> checkPodSpec(const json& spec, const GoField& at) {
  HARNESS_TRY(detail::checkObject(spec, at, "v1.PodSpec"));
  HARNESS_TRY(detail::checkBool(member(spec, "hostNetwork"), at.child("PodSpec", "hostNetwork")));
  HARNESS_TRY(detail::checkBool(member(spec, "automountServiceAccountToken"),
                                at.child("PodSpec", "automountServiceAccountToken")));
  HARNESS_TRY(checkContainers(member(spec, "containers"), at.child("PodSpec", "containers")));
  HARNESS_TRY(
      checkContainers(member(spec, "initContainers"), at.child("PodSpec", "initContainers")));
  HARNESS_TRY(
      detail::checkArray(member(spec, "volumes"), at.child("PodSpec", "volumes"), "[]v1.Volume"));
  return {};
}

core::Result<void> checkServiceSpec(const json& spec, const GoField& at) {
  HARNESS_TRY(detail::checkObject(spec, at, "v1.ServiceSpec"));
  const GoField ports_at = at.child("ServiceSpec", "ports");
  const json& ports = member(spec, "ports");
  HARNESS_TRY(detail::checkArray(ports, ports_at, "[]v1.ServicePort"));
  if (ports.is_array()) {
    for (const auto& p : ports) {
      HARNESS_TRY(detail::checkObject(p, ports_at, "v1.ServicePort"));
      HARNESS_TRY(
          detail::checkInteger(member(p, "port"), ports_at.child("ServicePort", "port"), "int32"));
      HARNESS_TRY(detail::checkIntOrString(member(p, "targetPort"),
                                           ports_at.child("ServicePort", "targetPort")));
    }
  }
  return {};
}

struct TemplateKind {
  std::string_view kind;
  std::string_view go_type;    // the decoded Go type (error context)
  std::string_view spec_type;  // its spec struct
  std::string_view pointer;    // where the pod template is
};

constexpr TemplateKind kTemplateKinds[] = {
    {"deployment", "Deployment", "DeploymentSpec", "/spec/template"},
    {"replicationcontroller", "ReplicationController", "ReplicationControllerSpec",
     "/spec/template"},
    {"replicaset", "ReplicaSet", "ReplicaSetSpec", "/spec/template"},
    {"job", "Job", "JobSpec", "/spec/template"},
    {"daemonset", "DaemonSet", "DaemonSetSpec", "/spec/template"},
    {"statefulset", "StatefulSet", "StatefulSetSpec", "/spec/template"},
    {"cronjob", "CronJob", "CronJobSpec", "/spec/jobTemplate/spec/template"},
};

}  // namespace

std::string Workload::resName() const {
  std::string n = name;
  if (isPod() && n.empty()) n = generate_name;
  return kind + "/" + n;
}

std::vector<const json*> allContainers(const json& pod_spec) {
  std::vector<const json*> out;
  for (const char* key : {"initContainers", "containers"}) {
    const json& list = member(pod_spec, key);
    if (!list.is_array()) continue;
    for (const auto& c : list) {
      if (c.is_object()) out.push_back(&c);
    }
  }
  return out;
}

namespace {

void coerceMember(json& obj, const char* key) {
  if (!obj.is_object()) return;
  auto it = obj.find(key);
  if (it != obj.end()) detail::coerceScalarToString(*it);
}

void coerceObjectMeta(json& meta) {
  if (!meta.is_object()) return;
  for (const char* key : {"name", "generateName", "namespace"}) coerceMember(meta, key);
  for (const char* map_key : {"labels", "annotations"}) {
    auto it = meta.find(map_key);
    if (it == meta.end() || !it->is_object()) continue;
    for (auto& [key, value] : it->items()) detail::coerceScalarToString(value);
  }
  if (auto refs = meta.find("ownerReferences"); refs != meta.end() && refs->is_array()) {
    for (auto& ref : *refs) {
      for (const char* key : {"kind", "name", "apiVersion", "uid"}) coerceMember(ref, key);
    }
  }
}

}  // namespace

void coerceYamlScalars(json& object) {
  if (!object.is_object()) return;
  coerceMember(object, "apiVersion");
  coerceMember(object, "kind");
  if (auto meta = object.find("metadata"); meta != object.end()) coerceObjectMeta(*meta);
  const json& kind = member(object, "kind");
  if (!kind.is_string()) return;
  const std::string lower_kind = lower(kind.get<std::string>());
  for (const auto& t : kTemplateKinds) {
    if (t.kind != lower_kind) continue;
    const json::json_pointer at(std::string(t.pointer) + "/metadata");
    if (object.contains(at)) coerceObjectMeta(object[at]);
  }
}

core::Result<Workload> parseWorkload(const json& object, std::string_view request_kind) {
  Workload w;
  // yaml.Unmarshal(bytes, &metaType): the object's own kind replaces request.kind.kind.
  if (!object.is_object()) {
    return detail::goTypeError(object, GoField{}, "v1.TypeMeta");
  }
  std::string kind(request_kind);
  for (const char* key : {"apiVersion", "kind"}) {
    HARNESS_TRY(detail::checkString(member(object, key), GoField{"TypeMeta", key}));
  }
  if (const json& k = member(object, "kind"); k.is_string()) kind = k.get<std::string>();
  w.kind = lower(kind);

  const TemplateKind* tk = nullptr;
  for (const auto& t : kTemplateKinds) {
    if (t.kind == w.kind) tk = &t;
  }
  const std::string go_type = w.isPod() ? "Pod" : (tk != nullptr ? std::string(tk->go_type) : "");

  const json& meta = member(object, "metadata");
  HARNESS_TRY(checkObjectMeta(meta, GoField{go_type, "metadata"}));
  if (meta.is_object()) {
    if (const json& v = member(meta, "name"); v.is_string()) w.name = v.get<std::string>();
    if (const json& v = member(meta, "generateName"); v.is_string()) {
      w.generate_name = v.get<std::string>();
    }
    if (const json& v = member(meta, "namespace"); v.is_string()) {
      w.object_namespace = v.get<std::string>();
    }
    w.annotations = toStringMap(member(meta, "annotations"));
  }

  if (w.isPod()) {
    w.has_pod_template = true;
    w.template_pointer = "";
    HARNESS_TRY(checkPodSpec(member(object, "spec"), GoField{"Pod", "spec"}));
    if (meta.is_object()) w.pod_metadata = meta;
    if (const json& spec = member(object, "spec"); spec.is_object()) w.pod_spec = spec;
  } else if (tk != nullptr) {
    w.has_pod_template = true;
    w.template_pointer = std::string(tk->pointer);
    const GoField spec_at{std::string(tk->go_type), "spec"};
    const json& spec = member(object, "spec");
    HARNESS_TRY(detail::checkObject(spec, spec_at, "v1." + std::string(tk->spec_type)));
    const json* tmpl = nullptr;
    GoField tmpl_at;
    if (w.kind == "cronjob") {
      const GoField jt_at = spec_at.child(tk->spec_type, "jobTemplate");
      const json& jt = member(spec, "jobTemplate");
      HARNESS_TRY(detail::checkObject(jt, jt_at, "v1.JobTemplateSpec"));
      const GoField js_at = jt_at.child("JobTemplateSpec", "spec");
      const json& js = member(jt, "spec");
      HARNESS_TRY(detail::checkObject(js, js_at, "v1.JobSpec"));
      tmpl_at = js_at.child("JobSpec", "template");
      tmpl = &member(js, "template");
    } else {
      tmpl_at = spec_at.child(tk->spec_type, "template");
      tmpl = &member(spec, "template");
    }
    HARNESS_TRY(detail::checkObject(*tmpl, tmpl_at, "v1.PodTemplateSpec"));
    const json& tmeta = member(*tmpl, "metadata");
    const json& tspec = member(*tmpl, "spec");
    HARNESS_TRY(checkObjectMeta(tmeta, tmpl_at.child("PodTemplateSpec", "metadata")));
    HARNESS_TRY(checkPodSpec(tspec, tmpl_at.child("PodTemplateSpec", "spec")));
    if (tmeta.is_object()) w.pod_metadata = tmeta;
    if (tspec.is_object()) w.pod_spec = tspec;
  } else if (w.isService()) {
    HARNESS_TRY(checkServiceSpec(member(object, "spec"), GoField{"Service", "spec"}));
  }
  if (w.has_pod_template) {
    w.pod_annotations = toStringMap(member(w.pod_metadata, "annotations"));
    w.pod_labels = toStringMap(member(w.pod_metadata, "labels"));
  }
  return w;
}

}  // namespace harness::injector::linkerd
