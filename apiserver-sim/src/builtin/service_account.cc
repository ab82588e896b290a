// ServiceAccount (kubernetes/kubernetes plugin/pkg/admission/serviceaccount/admission.go):
// mutating and validating, for pods (the main resource and pods/ephemeralcontainers).
//   Admit, CREATE only: mirror pods (annotation kubernetes.io/config.mirror) are only
//   validated; spec.serviceAccountName defaults to "default"; the ServiceAccount must exist
//   (403 "error looking up service account <ns>/<name>: serviceaccount "<name>" not found");
//   unless automountServiceAccountToken is false on the pod (which wins) or the ServiceAccount,
//   the projected volume kube-api-access-<5 random characters> (token 3607 s, kube-root-ca.crt,
//   namespace; defaultMode 420) is added and mounted read-only at
//   /var/run/secrets/kubernetes.io/serviceaccount in every init container and container that does
//   not already mount something there (ephemeral containers are not touched); a volume named
//   kube-api-access-* is reused; imagePullSecrets come from the ServiceAccount when the pod has
//   none.
//   Validate: mirror pod restrictions, a service account name is required, the ServiceAccount
//   must exist, and with kubernetes.io/enforce-mountable-secrets=true only its secrets may be
//   referenced; UPDATE of pods/ephemeralcontainers checks the ephemeral containers' secrets.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/go/strconv.h"
#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

constexpr std::string_view kMirrorPodAnnotation = "kubernetes.io/config.mirror";
constexpr std::string_view kEnforceMountableSecrets = "kubernetes.io/enforce-mountable-secrets";
constexpr std::string_view kTokenMountPath = "/var/run/secrets/kubernetes.io/serviceaccount";
constexpr std::string_view kVolumePrefix = "kube-api-access-";
// serviceaccount.WarnOnlyBoundTokenExpirationSeconds: one hour and seven seconds.
constexpr int kTokenExpirationSeconds = 60 * 60 + 7;

bool shouldIgnore(const AdmissionAttributes& a) {
  if (!isResource(a, "", "pods")) return true;
  if (!a.subresource.empty() && a.subresource != "ephemeralcontainers") return true;
  if (!a.object || !a.object->is_object()) return true;
  return !isKind(a, "", "Pod");
}

bool isMirrorPod(const nlohmann::json& pod) {
  const nlohmann::json* metadata = objectMember(pod, "metadata");
  const nlohmann::json* annotations =
      metadata != nullptr ? objectMember(*metadata, "annotations") : nullptr;
  return annotations != nullptr && annotations->contains(kMirrorPodAnnotation);
}

// v1 -> internal conversion reads the deprecated serviceAccount when serviceAccountName is empty.
std::string serviceAccountNameOf(const nlohmann::json& spec) {
  std::string name = stringMember(spec, "serviceAccountName");
  return name.empty() ? stringMember(spec, "serviceAccount") : name;
}

std::string lookupError(const std::string& ns, const std::string& name) {
  std::string message = "error looking up service account ";
  message += ns;
  message += "/";
  message += name;
  message += ": serviceaccount \"";
  message += name;
  message += "\" not found";
  return message;
}

bool shouldAutomount(const nlohmann::json& service_account, const nlohmann::json& spec) {
  if (auto pod_choice = boolMember(spec, "automountServiceAccountToken")) return *pod_choice;
  if (auto sa_choice = boolMember(service_account, "automountServiceAccountToken")) {
    return *sa_choice;
  }
  return true;
}

nlohmann::json tokenVolumeSource() {
  return {
      {"defaultMode", 0644},
      {"sources",
       nlohmann::json::array(
           {{{"serviceAccountToken",
              {{"expirationSeconds", kTokenExpirationSeconds}, {"path", "token"}}}},
            {{"configMap",
              {{"name", "kube-root-ca.crt"},
               {"items", nlohmann::json::array({{{"key", "ca.crt"}, {"path", "ca.crt"}}})}}}},
            {{"downwardAPI",
              {{"items", nlohmann::json::array(
                             {{{"path", "namespace"},
                               {"fieldRef",
                                {{"apiVersion", "v1"}, {"fieldPath", "metadata.namespace"}}}}})}}}}})},
  };
}

void mountServiceAccountToken(nlohmann::json& spec, const PluginContext& context) {
  std::string volume_name;
  bool has_volume = false;
  forEachObjectIn(spec, "volumes", [&](const nlohmann::json& volume) {
    if (has_volume) return;
    std::string name = stringMember(volume, "name");
    if (name.starts_with(kVolumePrefix)) {
      volume_name = name;
      has_volume = true;
    }
  });
  if (volume_name.empty()) {
    // names.SimpleNameGenerator: the prefix plus utilrand.String(5).
    volume_name = std::string(kVolumePrefix) +
                  (context.random_suffix ? context.random_suffix() : std::string("bcdfg"));
  }
  const nlohmann::json mount = {
      {"name", volume_name}, {"readOnly", true}, {"mountPath", kTokenMountPath}};
  bool needs_volume = false;
  for (std::string_view list : {"initContainers", "containers"}) {
    forEachObjectIn(spec, list, [&](nlohmann::json& container) {
      bool mounted = false;
      forEachObjectIn(container, "volumeMounts", [&](const nlohmann::json& existing) {
        mounted = mounted || stringMember(existing, "mountPath") == kTokenMountPath;
      });
      if (mounted) return;
      if (nlohmann::json* mounts = ensureArray(container, "volumeMounts")) {
        mounts->push_back(mount);
        needs_volume = true;
      }
    });
  }
  if (!has_volume && needs_volume) {
    if (nlohmann::json* volumes = ensureArray(spec, "volumes")) {
      volumes->push_back({{"name", volume_name}, {"projected", tokenVolumeSource()}});
    }
  }
}

// podutil.VisitPodSecretNames found anything.
bool referencesSecrets(const nlohmann::json& spec) {
  bool found = false;
  forEachObjectIn(spec, "imagePullSecrets", [&](const nlohmann::json&) { found = true; });
  for (std::string_view list : {"initContainers", "containers", "ephemeralContainers"}) {
    forEachObjectIn(spec, list, [&](const nlohmann::json& container) {
      forEachObjectIn(container, "envFrom", [&](const nlohmann::json& from) {
        found = found || !isUnset(from, "secretRef");
      });
      forEachObjectIn(container, "env", [&](const nlohmann::json& env) {
        const nlohmann::json* from = objectMember(env, "valueFrom");
        found = found || (from != nullptr && !isUnset(*from, "secretKeyRef"));
      });
    });
  }
  forEachObjectIn(spec, "volumes", [&](const nlohmann::json& volume) {
    for (std::string_view kind : {"secret", "azureFile"}) found = found || !isUnset(volume, kind);
    for (std::string_view kind :
         {"cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos"}) {
      const nlohmann::json* source = objectMember(volume, kind);
      found = found || (source != nullptr && !isUnset(*source, "secretRef"));
    }
    if (const nlohmann::json* csi = objectMember(volume, "csi")) {
      found = found || !isUnset(*csi, "nodePublishSecretRef");
    }
    if (const nlohmann::json* projected = objectMember(volume, "projected")) {
      forEachObjectIn(*projected, "sources", [&](const nlohmann::json& source) {
        found = found || !isUnset(source, "secret");
      });
    }
  });
  return found;
}

bool enforceMountableSecrets(const nlohmann::json& service_account) {
  const nlohmann::json* metadata = objectMember(service_account, "metadata");
  const nlohmann::json* annotations =
      metadata != nullptr ? objectMember(*metadata, "annotations") : nullptr;
  if (annotations == nullptr) return false;
  const nlohmann::json* value = member(*annotations, kEnforceMountableSecrets);
  if (value == nullptr || !value->is_string()) return false;
  auto parsed = go::parseBool(value->get<std::string>());
  return parsed.ok() && *parsed;
}

std::set<std::string> namesIn(const nlohmann::json& object, std::string_view list) {
  std::set<std::string> names;
  forEachObjectIn(object, list,
                  [&](const nlohmann::json& ref) { names.insert(stringMember(ref, "name")); });
  return names;
}

std::string doubleQuoted(const std::string& s) { return "\"" + s + "\""; }

// The env / envFrom secret references of one container list; "" when all are mountable.
std::string checkContainerSecrets(const nlohmann::json& spec, std::string_view list,
                                  std::string_view label, const std::set<std::string>& mountable,
                                  const std::string& sa_name) {
  std::string error;
  forEachObjectIn(spec, list, [&](const nlohmann::json& container) {
    if (!error.empty()) return;
    const std::string container_name = stringMember(container, "name");
    forEachObjectIn(container, "env", [&](const nlohmann::json& env) {
      if (!error.empty()) return;
      const nlohmann::json* from = objectMember(env, "valueFrom");
      const nlohmann::json* ref = from != nullptr ? objectMember(*from, "secretKeyRef") : nullptr;
      if (ref == nullptr || mountable.count(stringMember(*ref, "name")) > 0) return;
      error = std::string(label) + " " + container_name + " with envVar " +
              stringMember(env, "name") + " referencing secret.secretName=" +
              doubleQuoted(stringMember(*ref, "name")) + " is not allowed because service account " +
              sa_name + " does not reference that secret";
    });
    forEachObjectIn(container, "envFrom", [&](const nlohmann::json& from) {
      if (!error.empty()) return;
      const nlohmann::json* ref = objectMember(from, "secretRef");
      if (ref == nullptr || mountable.count(stringMember(*ref, "name")) > 0) return;
      error = std::string(label) + " " + container_name +
              " with envFrom referencing secret.secretName=" + doubleQuoted(stringMember(*ref, "name")) +
              " is not allowed because service account " + sa_name +
              " does not reference that secret";
    });
  });
  return error;
}

// limitSecretReferences; "" when the pod only references the ServiceAccount's secrets.
std::string limitSecretReferences(const nlohmann::json& service_account,
                                  const nlohmann::json& spec) {
  const std::set<std::string> mountable = namesIn(service_account, "secrets");
  const std::string sa_name = metadataString(service_account, "name");
  std::string error;
  forEachObjectIn(spec, "volumes", [&](const nlohmann::json& volume) {
    if (!error.empty()) return;
    const nlohmann::json* secret = objectMember(volume, "secret");
    if (secret == nullptr) return;
    std::string secret_name = stringMember(*secret, "secretName");
    if (mountable.count(secret_name) == 0) {
      error = "volume with secret.secretName=" + doubleQuoted(secret_name) +
              " is not allowed because service account " + sa_name +
              " does not reference that secret";
    }
  });
  if (!error.empty()) return error;
  error = checkContainerSecrets(spec, "initContainers", "init container", mountable, sa_name);
  if (!error.empty()) return error;
  error = checkContainerSecrets(spec, "containers", "container", mountable, sa_name);
  if (!error.empty()) return error;
  const std::set<std::string> pull_secrets = namesIn(service_account, "imagePullSecrets");
  const nlohmann::json* refs = arrayMember(spec, "imagePullSecrets");
  if (refs == nullptr) return {};
  for (std::size_t i = 0; i < refs->size(); ++i) {
    std::string name = stringMember((*refs)[i], "name");
    if (pull_secrets.count(name) == 0) {
      return "imagePullSecrets[" + std::to_string(i) + "].name=" + doubleQuoted(name) +
             " is not allowed because service account " + sa_name +
             " does not reference that imagePullSecret";
    }
  }
  return {};
}

class ServiceAccount final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "ServiceAccount"; }
  bool mutating() const override { return true; }
  bool validating() const override { return true; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& context) const override {
    if (shouldIgnore(a) || a.operation != kOperationCreate) return std::nullopt;
    nlohmann::json& pod = *a.object;
    if (isMirrorPod(pod)) return validate(a, context);
    nlohmann::json* spec = ensureObject(pod, "spec");
    if (spec == nullptr) return std::nullopt;
    std::string sa_name = serviceAccountNameOf(*spec);
    if (sa_name.empty()) sa_name = "default";
    (*spec)["serviceAccountName"] = sa_name;
    (*spec)["serviceAccount"] = sa_name;  // the conversion back to v1 mirrors it
    auto service_account =
        getObject(context, {"", "v1", "serviceaccounts"}, a.namespace_name, sa_name);
    if (!service_account) return admissionForbidden(a, lookupError(a.namespace_name, sa_name));
    if (shouldAutomount(*service_account, *spec)) mountServiceAccountToken(*spec, context);
    const nlohmann::json* pull_secrets = arrayMember(*spec, "imagePullSecrets");
    if (pull_secrets == nullptr || pull_secrets->empty()) {
      nlohmann::json names = nlohmann::json::array();
      forEachObjectIn(*service_account, "imagePullSecrets", [&](const nlohmann::json& ref) {
        names.push_back({{"name", stringMember(ref, "name")}});
      });
      if (!names.empty()) (*spec)["imagePullSecrets"] = std::move(names);
    }
    return validate(a, context);
  }

  std::optional<core::Status> validate(const AdmissionAttributes& a,
                                       const PluginContext& context) const override {
    if (shouldIgnore(a)) return std::nullopt;
    const nlohmann::json& pod = *a.object;
    static const nlohmann::json kEmpty = nlohmann::json::object();
    const nlohmann::json* spec_ptr = objectMember(pod, "spec");
    const nlohmann::json& spec = spec_ptr != nullptr ? *spec_ptr : kEmpty;
    const std::string pod_name = metadataString(pod, "name");
    const std::string sa_name = serviceAccountNameOf(spec);

    if (a.operation == kOperationUpdate && a.subresource == "ephemeralcontainers") {
      if (sa_name.empty()) {
        return admissionForbidden(
            a, "no service account specified for pod " + a.namespace_name + "/" + pod_name);
      }
      auto service_account =
          getObject(context, {"", "v1", "serviceaccounts"}, a.namespace_name, sa_name);
      if (!service_account) return admissionForbidden(a, lookupError(a.namespace_name, sa_name));
      if (!enforceMountableSecrets(*service_account)) return std::nullopt;
      std::string error = checkContainerSecrets(spec, "ephemeralContainers", "ephemeral container",
                                                namesIn(*service_account, "secrets"),
                                                metadataString(*service_account, "name"));
      if (!error.empty()) return admissionForbidden(a, error);
      return std::nullopt;
    }
    if (a.operation != kOperationCreate) return std::nullopt;

    if (isMirrorPod(pod)) {
      if (!sa_name.empty()) {
        return admissionForbidden(a, "a mirror pod may not reference service accounts");
      }
      if (referencesSecrets(spec)) {
        return admissionForbidden(a, "a mirror pod may not reference secrets");
      }
      bool token_projection = false;
      forEachObjectIn(spec, "volumes", [&](const nlohmann::json& volume) {
        if (const nlohmann::json* projected = objectMember(volume, "projected")) {
          forEachObjectIn(*projected, "sources", [&](const nlohmann::json& source) {
            token_projection = token_projection || !isUnset(source, "serviceAccountToken");
          });
        }
      });
      if (token_projection) {
        return admissionForbidden(a,
                                  "a mirror pod may not use ServiceAccountToken volume projections");
      }
      return std::nullopt;
    }
    if (sa_name.empty()) {
      return admissionForbidden(
          a, "no service account specified for pod " + a.namespace_name + "/" + pod_name);
    }
    auto service_account =
        getObject(context, {"", "v1", "serviceaccounts"}, a.namespace_name, sa_name);
    if (!service_account) return admissionForbidden(a, lookupError(a.namespace_name, sa_name));
    if (enforceMountableSecrets(*service_account)) {
      std::string error = limitSecretReferences(*service_account, spec);
      if (!error.empty()) return admissionForbidden(a, error);
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makeServiceAccount() { return std::make_unique<ServiceAccount>(); }

}  // namespace harness::sim::builtin_internal
