// applyDefaults: SetObjectDefaults_<Kind> of the versioned built-in kinds.
//
// Followed: kubernetes/kubernetes pkg/apis/core/v1/defaults.go and zz_generated.defaults.go
// (which nested structs get which SetDefaults_ function; PodTemplate-bearing kinds get
// SetDefaults_PodSpec and the container/volume defaults but not SetDefaults_Pod),
// pkg/apis/apps/v1/defaults.go, pkg/apis/batch/v1/defaults.go. Feature gates at their 1.30-1.33
// defaults: StatefulSetAutoDeletePVC and JobPodReplacementPolicy on, ImageVolume and
// PodLevelResources off. SetDefaults_ResourceList's rounding to milli-units is not modelled.

#include <string>
#include <string_view>

#include "harness/go/base64.h"
#include "harness/sim/defaulting.h"

#include "json_access.h"

namespace harness::sim {
namespace {

using builtin_internal::arrayMember;
using builtin_internal::defaultInt;
using builtin_internal::defaultPointer;
using builtin_internal::defaultString;
using builtin_internal::ensureObject;
using builtin_internal::forEachObjectIn;
using builtin_internal::isUnset;
using builtin_internal::json;
using builtin_internal::member;
using builtin_internal::objectMember;
using builtin_internal::stringMember;

// v1.SecretVolumeSourceDefaultMode & co: 0644.
constexpr int kDefaultVolumeMode = 0644;

// The fields of v1.VolumeSource (a volume with none of them set becomes an emptyDir).
constexpr std::string_view kVolumeSourceKeys[] = {
    "hostPath",  "emptyDir",     "gcePersistentDisk", "awsElasticBlockStore", "gitRepo",
    "secret",    "nfs",          "iscsi",             "glusterfs",            "persistentVolumeClaim",
    "rbd",       "flexVolume",   "cinder",            "cephfs",               "flocker",
    "downwardAPI", "fc",         "azureFile",         "configMap",            "vsphereVolume",
    "quobyte",   "azureDisk",    "photonPersistentDisk", "projected",         "portworxVolume",
    "scaleIO",   "storageos",    "csi",               "ephemeral",            "image",
};

void defaultObjectFieldSelector(json& selector) { defaultString(selector, "apiVersion", "v1"); }

void defaultHttpGetAction(json& action) {
  defaultString(action, "path", "/");
  defaultString(action, "scheme", "HTTP");
}

void defaultProbe(json& probe) {
  defaultInt(probe, "timeoutSeconds", 1);
  defaultInt(probe, "periodSeconds", 10);
  defaultInt(probe, "successThreshold", 1);
  defaultInt(probe, "failureThreshold", 3);
  if (json* http = objectMember(probe, "httpGet")) defaultHttpGetAction(*http);
  // GRPCAction.Service is `+default=""`.
  if (json* grpc = objectMember(probe, "grpc")) defaultPointer(*grpc, "service", "");
}

void defaultLifecycleHandler(json& lifecycle, std::string_view key) {
  if (json* handler = objectMember(lifecycle, key)) {
    if (json* http = objectMember(*handler, "httpGet")) defaultHttpGetAction(*http);
  }
}

// SetDefaults_Container plus the generated defaults of its nested structs.
void defaultContainer(json& container) {
  defaultString(container, "imagePullPolicy",
                defaultImagePullPolicy(stringMember(container, "image")));
  defaultString(container, "terminationMessagePath", "/dev/termination-log");
  defaultString(container, "terminationMessagePolicy", "File");
  forEachObjectIn(container, "ports", [](json& port) { defaultString(port, "protocol", "TCP"); });
  forEachObjectIn(container, "env", [](json& env) {
    if (json* from = objectMember(env, "valueFrom")) {
      if (json* ref = objectMember(*from, "fieldRef")) defaultObjectFieldSelector(*ref);
    }
  });
  for (std::string_view probe : {"livenessProbe", "readinessProbe", "startupProbe"}) {
    if (json* p = objectMember(container, probe)) defaultProbe(*p);
  }
  if (json* lifecycle = objectMember(container, "lifecycle")) {
    defaultLifecycleHandler(*lifecycle, "postStart");
    defaultLifecycleHandler(*lifecycle, "preStop");
  }
}

void defaultDownwardApiItems(json& source) {
  forEachObjectIn(source, "items", [](json& item) {
    if (json* ref = objectMember(item, "fieldRef")) defaultObjectFieldSelector(*ref);
  });
}

void defaultPersistentVolumeClaimSpec(json& spec) { defaultPointer(spec, "volumeMode", "Filesystem"); }

void defaultPersistentVolumeClaim(json& claim) {
  if (json* status = ensureObject(claim, "status")) defaultString(*status, "phase", "Pending");
  if (json* spec = ensureObject(claim, "spec")) defaultPersistentVolumeClaimSpec(*spec);
}

// SetDefaults_Volume and the defaults of the volume sources.
void defaultVolume(json& volume) {
  bool has_source = false;
  for (std::string_view key : kVolumeSourceKeys) has_source = has_source || !isUnset(volume, key);
  if (!has_source) volume["emptyDir"] = json::object();
  if (json* host_path = objectMember(volume, "hostPath")) defaultPointer(*host_path, "type", "");
  if (json* secret = objectMember(volume, "secret")) {
    defaultPointer(*secret, "defaultMode", kDefaultVolumeMode);
  }
  if (json* iscsi = objectMember(volume, "iscsi")) defaultString(*iscsi, "iscsiInterface", "default");
  if (json* rbd = objectMember(volume, "rbd")) {
    defaultString(*rbd, "pool", "rbd");
    defaultString(*rbd, "user", "admin");
    defaultString(*rbd, "keyring", "/etc/ceph/keyring");
  }
  if (json* downward = objectMember(volume, "downwardAPI")) {
    defaultPointer(*downward, "defaultMode", kDefaultVolumeMode);
    defaultDownwardApiItems(*downward);
  }
  if (json* config_map = objectMember(volume, "configMap")) {
    defaultPointer(*config_map, "defaultMode", kDefaultVolumeMode);
  }
  if (json* azure_disk = objectMember(volume, "azureDisk")) {
    defaultPointer(*azure_disk, "cachingMode", "ReadWrite");
    defaultPointer(*azure_disk, "fsType", "ext4");
    defaultPointer(*azure_disk, "readOnly", false);
    defaultPointer(*azure_disk, "kind", "Shared");
  }
  if (json* projected = objectMember(volume, "projected")) {
    defaultPointer(*projected, "defaultMode", kDefaultVolumeMode);
    forEachObjectIn(*projected, "sources", [](json& source) {
      if (json* downward = objectMember(source, "downwardAPI")) defaultDownwardApiItems(*downward);
      if (json* token = objectMember(source, "serviceAccountToken")) {
        defaultPointer(*token, "expirationSeconds", 3600);  // one hour
      }
    });
  }
  if (json* scale_io = objectMember(volume, "scaleIO")) {
    defaultString(*scale_io, "storageMode", "ThinProvisioned");
    defaultString(*scale_io, "fsType", "xfs");
  }
  if (json* ephemeral = objectMember(volume, "ephemeral")) {
    if (json* claim = objectMember(*ephemeral, "volumeClaimTemplate")) {
      if (json* spec = objectMember(*claim, "spec")) defaultPersistentVolumeClaimSpec(*spec);
    }
  }
}

// SetDefaults_PodSpec, then the generated defaults of volumes and containers.
void defaultPodSpec(json& spec) {
  defaultString(spec, "dnsPolicy", "ClusterFirst");
  defaultString(spec, "restartPolicy", "Always");
  defaultPointer(spec, "securityContext", json::object());
  defaultPointer(spec, "terminationGracePeriodSeconds", 30);
  defaultString(spec, "schedulerName", "default-scheduler");
  forEachObjectIn(spec, "volumes", defaultVolume);
  forEachObjectIn(spec, "initContainers", defaultContainer);
  forEachObjectIn(spec, "containers", defaultContainer);
  forEachObjectIn(spec, "ephemeralContainers", defaultContainer);
}

// SetDefaults_Pod: requests default to limits (Pods only, not templates), enableServiceLinks,
// host ports for hostNetwork pods.
void defaultPodOnly(json& spec) {
  for (std::string_view list : {"containers", "initContainers"}) {
    forEachObjectIn(spec, list, [](json& container) {
      json* resources = objectMember(container, "resources");
      if (resources == nullptr) return;
      json* limits = objectMember(*resources, "limits");
      if (limits == nullptr) return;
      json* requests = ensureObject(*resources, "requests");
      if (requests == nullptr) return;
      for (auto it = limits->begin(); it != limits->end(); ++it) {
        if (!requests->contains(it.key())) (*requests)[it.key()] = it.value();
      }
    });
  }
  defaultPointer(spec, "enableServiceLinks", true);
  if (builtin_internal::boolMember(spec, "hostNetwork").value_or(false)) {
    for (std::string_view list : {"containers", "initContainers"}) {
      forEachObjectIn(spec, list, [](json& container) {
        forEachObjectIn(container, "ports", [](json& port) {
          auto host_port = builtin_internal::intMember(port, "hostPort");
          if (!host_port || *host_port == 0) {
            if (const json* container_port = member(port, "containerPort")) {
              port["hostPort"] = *container_port;
            }
          }
        });
      });
    }
  }
}

void defaultPod(json& pod) {
  json* spec = ensureObject(pod, "spec");
  if (spec == nullptr) return;
  defaultPodOnly(*spec);
  defaultPodSpec(*spec);
}

void defaultPodTemplateSpec(json& parent, std::string_view key) {
  json* tmpl = objectMember(parent, key);
  if (tmpl == nullptr) return;
  if (json* spec = ensureObject(*tmpl, "spec")) defaultPodSpec(*spec);
}

// The labels of spec.template.metadata, when that map is non-nil.
const json* templateLabels(const json& spec) {
  const json* tmpl = objectMember(spec, "template");
  if (tmpl == nullptr) return nullptr;
  const json* metadata = objectMember(*tmpl, "metadata");
  if (metadata == nullptr) return nullptr;
  return objectMember(*metadata, "labels");
}

bool emptyMap(const json& object, std::string_view key) {
  const json* m = member(object, key);
  return m == nullptr || m->is_null() || (m->is_object() && m->empty());
}

void defaultReplicationController(json& rc) {
  json* spec = ensureObject(rc, "spec");
  if (spec == nullptr) return;
  if (const json* labels = templateLabels(*spec)) {
    json copy = *labels;
    if (emptyMap(*spec, "selector")) (*spec)["selector"] = copy;
    if (json* metadata = ensureObject(rc, "metadata"); metadata != nullptr &&
                                                        emptyMap(*metadata, "labels")) {
      (*metadata)["labels"] = copy;
    }
  }
  defaultPointer(*spec, "replicas", 1);  // +default=1
  defaultPodTemplateSpec(*spec, "template");
}

bool isExternallyAccessible(const json& spec) {
  std::string type = stringMember(spec, "type");
  const json* external_ips = arrayMember(spec, "externalIPs");
  return type == "LoadBalancer" || type == "NodePort" ||
         (type == "ClusterIP" && external_ips != nullptr && !external_ips->empty());
}

void defaultService(json& service) {
  json* spec = ensureObject(service, "spec");
  if (spec == nullptr) return;
  defaultString(*spec, "sessionAffinity", "None");
  std::string affinity = stringMember(*spec, "sessionAffinity");
  if (affinity == "None") {
    spec->erase("sessionAffinityConfig");
  } else if (affinity == "ClientIP") {
    const json* config = objectMember(*spec, "sessionAffinityConfig");
    const json* client_ip = config != nullptr ? objectMember(*config, "clientIP") : nullptr;
    if (client_ip == nullptr || isUnset(*client_ip, "timeoutSeconds")) {
      (*spec)["sessionAffinityConfig"] = {{"clientIP", {{"timeoutSeconds", 10800}}}};
    }
  }
  defaultString(*spec, "type", "ClusterIP");
  forEachObjectIn(*spec, "ports", [](json& port) {
    defaultString(port, "protocol", "TCP");
    const json* target = member(port, "targetPort");
    bool zero = target == nullptr || target->is_null() || (target->is_number() && *target == 0) ||
                (target->is_string() && target->get_ref<const std::string&>().empty());
    if (zero) port["targetPort"] = port.contains("port") ? port["port"] : json(0);
  });
  if (isExternallyAccessible(*spec)) defaultString(*spec, "externalTrafficPolicy", "Cluster");
  std::string type = stringMember(*spec, "type");
  if (type == "NodePort" || type == "LoadBalancer" || type == "ClusterIP") {
    defaultPointer(*spec, "internalTrafficPolicy", "Cluster");
  }
  if (type == "LoadBalancer") {
    defaultPointer(*spec, "allocateLoadBalancerNodePorts", true);
    if (json* status = objectMember(service, "status")) {
      if (json* lb = objectMember(*status, "loadBalancer")) {
        forEachObjectIn(*lb, "ingress", [](json& ingress) {
          if (!stringMember(ingress, "ip").empty()) defaultPointer(ingress, "ipMode", "VIP");
        });
      }
    }
  }
}

void defaultNamespace(json& ns) {
  json* metadata = objectMember(ns, "metadata");
  std::string name = metadata != nullptr ? stringMember(*metadata, "name") : std::string();
  if (!name.empty()) {
    if (json* labels = ensureObject(*metadata, "labels")) {
      (*labels)["kubernetes.io/metadata.name"] = name;
    }
  }
  if (json* status = ensureObject(ns, "status")) defaultString(*status, "phase", "Active");
}

void defaultLimitRange(json& limit_range) {
  json* spec = objectMember(limit_range, "spec");
  if (spec == nullptr) return;
  forEachObjectIn(*spec, "limits", [](json& item) {
    if (stringMember(item, "type") != "Container") return;
    json* defaults = ensureObject(item, "default");
    json* default_requests = ensureObject(item, "defaultRequest");
    if (defaults == nullptr || default_requests == nullptr) return;
    auto fill = [](json& target, const json* source) {
      if (source == nullptr || !source->is_object()) return;
      for (auto it = source->begin(); it != source->end(); ++it) {
        if (!target.contains(it.key())) target[it.key()] = it.value();
      }
    };
    fill(*defaults, objectMember(item, "max"));
    fill(*default_requests, defaults);
    fill(*default_requests, objectMember(item, "min"));
  });
}

void defaultPersistentVolume(json& volume) {
  if (json* status = ensureObject(volume, "status")) defaultString(*status, "phase", "Pending");
  json* spec = ensureObject(volume, "spec");
  if (spec == nullptr) return;
  defaultString(*spec, "persistentVolumeReclaimPolicy", "Retain");
  defaultPointer(*spec, "volumeMode", "Filesystem");
  if (json* host_path = objectMember(*spec, "hostPath")) defaultPointer(*host_path, "type", "");
}

void defaultDeployment(json& deployment) {
  json* spec = ensureObject(deployment, "spec");
  if (spec == nullptr) return;
  defaultPointer(*spec, "replicas", 1);
  if (json* strategy = ensureObject(*spec, "strategy")) {
    defaultString(*strategy, "type", "RollingUpdate");
    if (stringMember(*strategy, "type") == "RollingUpdate") {
      if (json* rolling = ensureObject(*strategy, "rollingUpdate")) {
        defaultPointer(*rolling, "maxUnavailable", "25%");
        defaultPointer(*rolling, "maxSurge", "25%");
      }
    }
  }
  defaultPointer(*spec, "revisionHistoryLimit", 10);
  defaultPointer(*spec, "progressDeadlineSeconds", 600);
  defaultPodTemplateSpec(*spec, "template");
}

void defaultDaemonSet(json& daemon_set) {
  json* spec = ensureObject(daemon_set, "spec");
  if (spec == nullptr) return;
  if (json* strategy = ensureObject(*spec, "updateStrategy")) {
    defaultString(*strategy, "type", "RollingUpdate");
    if (stringMember(*strategy, "type") == "RollingUpdate") {
      if (json* rolling = ensureObject(*strategy, "rollingUpdate")) {
        defaultPointer(*rolling, "maxUnavailable", 1);
        defaultPointer(*rolling, "maxSurge", 0);
      }
    }
  }
  defaultPointer(*spec, "revisionHistoryLimit", 10);
  defaultPodTemplateSpec(*spec, "template");
}

void defaultStatefulSet(json& stateful_set) {
  json* spec = ensureObject(stateful_set, "spec");
  if (spec == nullptr) return;
  defaultString(*spec, "podManagementPolicy", "OrderedReady");
  if (json* strategy = ensureObject(*spec, "updateStrategy")) {
    if (isUnset(*strategy, "type") || stringMember(*strategy, "type").empty()) {
      (*strategy)["type"] = "RollingUpdate";
      ensureObject(*strategy, "rollingUpdate");
    }
    if (stringMember(*strategy, "type") == "RollingUpdate") {
      if (json* rolling = objectMember(*strategy, "rollingUpdate")) {
        defaultPointer(*rolling, "partition", 0);
      }
    }
  }
  if (json* policy = ensureObject(*spec, "persistentVolumeClaimRetentionPolicy")) {
    defaultString(*policy, "whenDeleted", "Retain");
    defaultString(*policy, "whenScaled", "Retain");
  }
  defaultPointer(*spec, "replicas", 1);
  defaultPointer(*spec, "revisionHistoryLimit", 10);
  defaultPodTemplateSpec(*spec, "template");
  forEachObjectIn(*spec, "volumeClaimTemplates", defaultPersistentVolumeClaim);
}

void defaultReplicaSet(json& replica_set) {
  json* spec = ensureObject(replica_set, "spec");
  if (spec == nullptr) return;
  defaultPointer(*spec, "replicas", 1);
  defaultPodTemplateSpec(*spec, "template");
}

void defaultPodFailurePolicy(json& job_spec) {
  json* policy = objectMember(job_spec, "podFailurePolicy");
  if (policy == nullptr) return;
  forEachObjectIn(*policy, "rules", [](json& rule) {
    forEachObjectIn(rule, "onPodConditions",
                    [](json& pattern) { defaultString(pattern, "status", "True"); });
  });
}

void defaultJob(json& job) {
  json* spec = ensureObject(job, "spec");
  if (spec == nullptr) return;
  if (isUnset(*spec, "completions") && isUnset(*spec, "parallelism")) {
    (*spec)["completions"] = 1;
    (*spec)["parallelism"] = 1;
  }
  defaultPointer(*spec, "parallelism", 1);
  if (isUnset(*spec, "backoffLimit")) {
    (*spec)["backoffLimit"] = isUnset(*spec, "backoffLimitPerIndex") ? 6 : 2147483647;
  }
  if (const json* labels = templateLabels(*spec)) {
    if (json* metadata = ensureObject(job, "metadata");
        metadata != nullptr && emptyMap(*metadata, "labels")) {
      (*metadata)["labels"] = *labels;
    }
  }
  defaultPointer(*spec, "completionMode", "NonIndexed");
  defaultPointer(*spec, "suspend", false);
  defaultPodFailurePolicy(*spec);
  if (isUnset(*spec, "podReplacementPolicy")) {
    (*spec)["podReplacementPolicy"] =
        isUnset(*spec, "podFailurePolicy") ? "TerminatingOrFailed" : "Failed";
  }
  defaultPointer(*spec, "manualSelector", false);
  defaultPodTemplateSpec(*spec, "template");
}

void defaultCronJob(json& cron_job) {
  json* spec = ensureObject(cron_job, "spec");
  if (spec == nullptr) return;
  defaultString(*spec, "concurrencyPolicy", "Allow");
  defaultPointer(*spec, "suspend", false);
  defaultPointer(*spec, "successfulJobsHistoryLimit", 3);
  defaultPointer(*spec, "failedJobsHistoryLimit", 1);
  if (json* job_template = objectMember(*spec, "jobTemplate")) {
    if (json* job_spec = objectMember(*job_template, "spec")) {
      defaultPodFailurePolicy(*job_spec);
      defaultPodTemplateSpec(*job_spec, "template");
    }
  }
}

void defaultEndpoints(json& endpoints) {
  forEachObjectIn(endpoints, "subsets", [](json& subset) {
    forEachObjectIn(subset, "ports", [](json& port) { defaultString(port, "protocol", "TCP"); });
  });
}

void applyDefaultsUnchecked(json& object) {
  const std::string type = builtin_internal::typeKey(object);
  if (type == "v1/Pod") {
    defaultPod(object);
  } else if (type == "v1/PodTemplate") {
    defaultPodTemplateSpec(object, "template");
  } else if (type == "v1/ReplicationController") {
    defaultReplicationController(object);
  } else if (type == "v1/Service") {
    defaultService(object);
  } else if (type == "v1/Namespace") {
    defaultNamespace(object);
  } else if (type == "v1/Secret") {
    defaultString(object, "type", "Opaque");
    // stringData is write-only: the conversion to the internal Secret merges it into data,
    // overwriting equal keys (pkg/apis/core/v1/conversion.go Convert_v1_Secret_To_core_Secret),
    // and the internal type has no stringData, so no stored or admitted object shows it.
    if (auto string_data = object.find("stringData"); string_data != object.end()) {
      if (string_data->is_object()) {
        if (!object.contains("data") || !object["data"].is_object()) object["data"] = json::object();
        for (const auto& [key, value] : string_data->items()) {
          if (value.is_string()) object["data"][key] = go::base64Encode(value.get<std::string>());
        }
      }
      object.erase("stringData");
    }
  } else if (type == "v1/ConfigMap") {
    defaultPointer(object, "data", json::object());
  } else if (type == "v1/LimitRange") {
    defaultLimitRange(object);
  } else if (type == "v1/PersistentVolumeClaim") {
    defaultPersistentVolumeClaim(object);
  } else if (type == "v1/PersistentVolume") {
    defaultPersistentVolume(object);
  } else if (type == "v1/Endpoints") {
    defaultEndpoints(object);
  } else if (type == "apps/v1/Deployment") {
    defaultDeployment(object);
  } else if (type == "apps/v1/ReplicaSet") {
    defaultReplicaSet(object);
  } else if (type == "apps/v1/StatefulSet") {
    defaultStatefulSet(object);
  } else if (type == "apps/v1/DaemonSet") {
    defaultDaemonSet(object);
  } else if (type == "batch/v1/Job") {
    defaultJob(object);
  } else if (type == "batch/v1/CronJob") {
    defaultCronJob(object);
  }
}

}  // namespace

void applyDefaults(json& object) {
  if (!object.is_object()) return;
  // Work on a copy so that an unexpected shape can never leave a half-defaulted object.
  json copy = object;
  try {
    applyDefaultsUnchecked(copy);
  } catch (const json::exception&) {
    return;
  }
  object = std::move(copy);
}

}  // namespace harness::sim
