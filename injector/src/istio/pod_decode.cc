#include "harness/injector/istio/pod_decode.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/quantity.h"
#include "harness/go/json.h"

// Followed: src/encoding/json/decode.go (literalStore, array, object, addErrorContext,
// UnmarshalTypeError.Error), the json tags and Go types of k8s.io/api core/v1 types.go and
// k8s.io/apimachinery meta/v1 types.go, and the UnmarshalJSON methods of resource.Quantity
// (quantity.go), intstr.IntOrString (intstr.go) and metav1.Time (time.go).

namespace harness::injector::istio {

namespace {

using nlohmann::json;

// A Go type: "string", "bool", "int32", "int64", "float64", "[]T", "map[string]T", "*T", a struct
// of the table ("v1.PodSpec"), one of the Unmarshalers below, or "raw" (not checked here: the
// injector does not read it and every JSON value decodes into it the same way it would into
// its real type, or the API server would not have sent it).
struct Field {
  std::string_view name;
  std::string_view type;
};

constexpr std::string_view kQuantity = "resource.Quantity";
constexpr std::string_view kIntOrString = "intstr.IntOrString";
constexpr std::string_view kTime = "v1.Time";

const std::map<std::string_view, std::vector<Field>>& structs() {
  static const std::vector<Field> kContainer = {
      {"name", "string"},
      {"image", "string"},
      {"command", "[]string"},
      {"args", "[]string"},
      {"workingDir", "string"},
      {"ports", "[]v1.ContainerPort"},
      {"envFrom", "[]raw"},
      {"env", "[]v1.EnvVar"},
      {"resources", "v1.ResourceRequirements"},
      {"resizePolicy", "[]raw"},
      {"restartPolicy", "*string"},
      {"volumeMounts", "[]v1.VolumeMount"},
      {"volumeDevices", "[]raw"},
      {"livenessProbe", "*v1.Probe"},
      {"readinessProbe", "*v1.Probe"},
      {"startupProbe", "*v1.Probe"},
      {"lifecycle", "*v1.Lifecycle"},
      {"terminationMessagePath", "string"},
      {"terminationMessagePolicy", "string"},
      {"imagePullPolicy", "string"},
      {"securityContext", "*v1.SecurityContext"},
      {"stdin", "bool"},
      {"stdinOnce", "bool"},
      {"tty", "bool"},
  };
  static const std::map<std::string_view, std::vector<Field>> table = {
      {"v1.Pod",
       {{"kind", "string"},
        {"apiVersion", "string"},
        {"metadata", "v1.ObjectMeta"},
        {"spec", "v1.PodSpec"},
        {"status", "raw"}}},
      {"v1.ObjectMeta",
       {{"name", "string"},
        {"generateName", "string"},
        {"namespace", "string"},
        {"selfLink", "string"},
        {"uid", "string"},
        {"resourceVersion", "string"},
        {"generation", "int64"},
        {"creationTimestamp", "v1.Time"},
        {"deletionTimestamp", "*v1.Time"},
        {"deletionGracePeriodSeconds", "*int64"},
        {"labels", "map[string]string"},
        {"annotations", "map[string]string"},
        {"ownerReferences", "[]v1.OwnerReference"},
        {"finalizers", "[]string"},
        {"managedFields", "[]raw"}}},
      {"v1.OwnerReference",
       {{"apiVersion", "string"},
        {"kind", "string"},
        {"name", "string"},
        {"uid", "string"},
        {"controller", "*bool"},
        {"blockOwnerDeletion", "*bool"}}},
      {"v1.PodSpec",
       {{"volumes", "[]v1.Volume"},
        {"initContainers", "[]v1.Container"},
        {"containers", "[]v1.Container"},
        {"ephemeralContainers", "[]raw"},
        {"restartPolicy", "string"},
        {"terminationGracePeriodSeconds", "*int64"},
        {"activeDeadlineSeconds", "*int64"},
        {"dnsPolicy", "string"},
        {"nodeSelector", "map[string]string"},
        {"serviceAccountName", "string"},
        {"serviceAccount", "string"},
        {"automountServiceAccountToken", "*bool"},
        {"nodeName", "string"},
        {"hostNetwork", "bool"},
        {"hostPID", "bool"},
        {"hostIPC", "bool"},
        {"shareProcessNamespace", "*bool"},
        {"securityContext", "*v1.PodSecurityContext"},
        {"imagePullSecrets", "[]v1.LocalObjectReference"},
        {"hostname", "string"},
        {"subdomain", "string"},
        {"affinity", "raw"},
        {"schedulerName", "string"},
        {"tolerations", "[]raw"},
        {"hostAliases", "[]raw"},
        {"priorityClassName", "string"},
        {"priority", "*int32"},
        {"dnsConfig", "raw"},
        {"readinessGates", "[]raw"},
        {"runtimeClassName", "*string"},
        {"enableServiceLinks", "*bool"},
        {"preemptionPolicy", "*string"},
        {"overhead", "map[string]resource.Quantity"},
        {"topologySpreadConstraints", "[]raw"},
        {"setHostnameAsFQDN", "*bool"},
        {"os", "raw"},
        {"hostUsers", "*bool"},
        {"schedulingGates", "[]raw"},
        {"resourceClaims", "[]raw"},
        {"resources", "*v1.ResourceRequirements"}}},
      {"v1.PodSecurityContext",
       {{"seLinuxOptions", "raw"},
        {"windowsOptions", "raw"},
        {"runAsUser", "*int64"},
        {"runAsGroup", "*int64"},
        {"runAsNonRoot", "*bool"},
        {"supplementalGroups", "[]int64"},
        {"supplementalGroupsPolicy", "*string"},
        {"fsGroup", "*int64"},
        {"sysctls", "[]raw"},
        {"fsGroupChangePolicy", "*string"},
        {"seccompProfile", "raw"},
        {"appArmorProfile", "raw"}}},
      {"v1.LocalObjectReference", {{"name", "string"}}},
      {"v1.Volume", {{"name", "string"}}},  // the volume sources are not read by the injector
      {"v1.Container", kContainer},
      {"v1.ContainerPort",
       {{"name", "string"},
        {"hostPort", "int32"},
        {"containerPort", "int32"},
        {"protocol", "string"},
        {"hostIP", "string"}}},
      {"v1.EnvVar", {{"name", "string"}, {"value", "string"}, {"valueFrom", "raw"}}},
      {"v1.ResourceRequirements",
       {{"limits", "map[string]resource.Quantity"},
        {"requests", "map[string]resource.Quantity"},
        {"claims", "[]raw"}}},
      {"v1.VolumeMount",
       {{"name", "string"},
        {"readOnly", "bool"},
        {"recursiveReadOnly", "*string"},
        {"mountPath", "string"},
        {"subPath", "string"},
        {"mountPropagation", "*string"},
        {"subPathExpr", "string"}}},
      {"v1.Probe",
       {{"exec", "*v1.ExecAction"},
        {"httpGet", "*v1.HTTPGetAction"},
        {"tcpSocket", "*v1.TCPSocketAction"},
        {"grpc", "*v1.GRPCAction"},
        {"initialDelaySeconds", "int32"},
        {"timeoutSeconds", "int32"},
        {"periodSeconds", "int32"},
        {"successThreshold", "int32"},
        {"failureThreshold", "int32"},
        {"terminationGracePeriodSeconds", "*int64"}}},
      {"v1.ExecAction", {{"command", "[]string"}}},
      {"v1.HTTPGetAction",
       {{"path", "string"},
        {"port", "intstr.IntOrString"},
        {"host", "string"},
        {"scheme", "string"},
        {"httpHeaders", "[]v1.HTTPHeader"}}},
      {"v1.HTTPHeader", {{"name", "string"}, {"value", "string"}}},
      {"v1.TCPSocketAction", {{"port", "intstr.IntOrString"}, {"host", "string"}}},
      {"v1.GRPCAction", {{"port", "int32"}, {"service", "*string"}}},
      {"v1.Lifecycle",
       {{"postStart", "*v1.LifecycleHandler"}, {"preStop", "*v1.LifecycleHandler"}}},
      {"v1.LifecycleHandler",
       {{"exec", "*v1.ExecAction"},
        {"httpGet", "*v1.HTTPGetAction"},
        {"tcpSocket", "*v1.TCPSocketAction"},
        {"sleep", "raw"}}},
      {"v1.SecurityContext",
       {{"capabilities", "*v1.Capabilities"},
        {"privileged", "*bool"},
        {"seLinuxOptions", "raw"},
        {"windowsOptions", "raw"},
        {"runAsUser", "*int64"},
        {"runAsGroup", "*int64"},
        {"runAsNonRoot", "*bool"},
        {"readOnlyRootFilesystem", "*bool"},
        {"allowPrivilegeEscalation", "*bool"},
        {"procMount", "*string"},
        {"seccompProfile", "raw"},
        {"appArmorProfile", "raw"}}},
      {"v1.Capabilities", {{"add", "[]v1.Capability"}, {"drop", "[]v1.Capability"}}},
  };
  return table;
}

bool fitsInteger(const json& v, std::string_view type) {
  const bool is32 = type == "int32";
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    return u <= static_cast<std::uint64_t>(is32 ? INT32_MAX : INT64_MAX);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<std::int64_t>();
    return !is32 || (i >= INT32_MIN && i <= INT32_MAX);
  }
  return false;
}

// One decoding: the first UnmarshalTypeError is kept and decoding goes on; an Unmarshaler's
// error ends it.
class Decoder {
 public:
  // The result once decode() returned: the Unmarshaler error, else the first type error.
  core::Result<void> result() const {
    if (fatal_) return *fatal_;
    if (first_) return *first_;
    return {};
  }

  // Decodes `v` into a value of Go type `type`, held by the field `path` of struct `owner`
  // (both empty at the top). Returns false when decoding must stop.
  bool decode(const json& v, std::string_view type, std::string_view owner,
              const std::string& path) {
    if (v.is_null() || type == "raw") return true;
    if (type.starts_with('*')) return decode(v, type.substr(1), owner, path);
    if (type.starts_with("[]")) {
      if (!v.is_array()) return mismatch(v, type, owner, path);
      for (const auto& item : v) {
        if (!decode(item, type.substr(2), owner, path)) return false;
      }
      return true;
    }
    if (type.starts_with("map[string]")) {
      if (!v.is_object()) return mismatch(v, type, owner, path);
      for (const auto& [key, item] : v.items()) {
        std::string item_path = path;
        item_path.append(".").append(key);
        if (!decode(item, type.substr(11), owner, item_path)) return false;
      }
      return true;
    }
    if (type == "string" || type == "v1.Capability") {
      return v.is_string() ? true : mismatch(v, type, owner, path);
    }
    if (type == "bool") return v.is_boolean() ? true : mismatch(v, type, owner, path);
    if (type == "int32" || type == "int64") {
      return fitsInteger(v, type) ? true : mismatch(v, type, owner, path);
    }
    if (type == kQuantity) return quantity(v);
    if (type == kIntOrString) return intOrString(v);
    if (type == kTime) return time(v);
    const auto& table = structs();
    const auto it = table.find(type);
    if (it == table.end()) return true;
    if (!v.is_object()) return mismatch(v, type, owner, path);
    const std::string_view name = type.substr(type.find('.') + 1);  // reflect Type.Name()
    for (const Field& field : it->second) {
      const auto member = v.find(std::string(field.name));
      if (member == v.end()) continue;
      const std::string child = path.empty() ? std::string(field.name)
                                             : path + "." + std::string(field.name);
      if (!decode(*member, field.type, name, child)) return false;
    }
    return true;
  }

 private:
  static std::string goTypeName(std::string_view type) {
    return std::string(type.starts_with('*') ? type.substr(1) : type);
  }

  bool mismatch(const json& v, std::string_view type, std::string_view owner,
                const std::string& path) {
    if (first_) return true;
    const bool integer = type == "int32" || type == "int64";
    std::string text = "json: cannot unmarshal " + go::jsonValueKind(v, integer) + " into ";
    if (owner.empty()) {
      text += "Go value of type " + goTypeName(type);
    } else {
      text += "Go struct field " + std::string(owner) + "." + path + " of type " + goTypeName(type);
    }
    first_ = core::Error{std::move(text)};
    return true;
  }

  bool stop(std::string message) {
    fatal_ = core::Error{std::move(message)};
    return false;
  }

  // quantity.go UnmarshalJSON: the text between the quotes (or the raw JSON) must parse.
  bool quantity(const json& v) {
    auto parsed = core::Quantity::parse(v.is_string() ? v.get<std::string>() : v.dump());
    return parsed ? true : stop(parsed.error().message);
  }

  // intstr.go UnmarshalJSON: a JSON string, else json.Unmarshal into an int32 (no context).
  bool intOrString(const json& v) {
    if (v.is_string() || fitsInteger(v, "int32")) return true;
    return stop("json: cannot unmarshal " + go::jsonValueKind(v, true) +
                " into Go value of type int32");
  }

  // time.go UnmarshalJSON: json.Unmarshal into a string first (the RFC 3339 layout is not
  // checked here).
  bool time(const json& v) {
    if (v.is_string()) return true;
    return stop("json: cannot unmarshal " + go::jsonValueKind(v) +
                " into Go value of type string");
  }

  std::optional<core::Error> first_;
  std::optional<core::Error> fatal_;
};

}  // namespace

core::Result<void> checkPodDecodes(const nlohmann::json& pod) {
  Decoder decoder;
  decoder.decode(pod, "v1.Pod", "", "");
  return decoder.result();
}

}  // namespace harness::injector::istio
