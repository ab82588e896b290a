// Pod spec validation: the subset of ValidatePodSpec / ValidatePodTemplateSpec /
// ValidatePodUpdate (kubernetes/kubernetes pkg/apis/core/validation/validation.go) that a sidecar
// injector's output can break, in upstream's order and with its messages and field paths.
// Feature gates at their 1.32/1.33 defaults (relaxed environment variable names, sidecar
// containers). Go map iteration is random; maps are visited in sorted key order here.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/quantity.h"
#include "harness/core/webhook_config.h"
#include "harness/go/strconv.h"
#include "harness/sim/defaulting.h"
#include "harness/validation/validation.h"
#include "json_access.h"
#include "validation_internal.h"

namespace harness::sim::builtin_internal {
namespace {

using core::FieldError;
using core::FieldErrors;
using core::FieldErrorType;

constexpr std::string_view kFileModeErrorMsg =
    "must be a number between 0 and 0777 (octal), both inclusive";
constexpr std::int64_t kMaxInt32 = 2147483647;

FieldError notFound(std::string path, std::string_view value) {
  return {FieldErrorType::kNotFound, std::move(path), go::quote(value), {}};
}

void dns1123Label(FieldErrors& errs, std::string_view value, const std::string& path) {
  for (auto& msg : validation::isDns1123Label(value)) {
    errs.push_back(FieldError::invalid(path, value, std::move(msg)));
  }
}

// A string member as Go reads it (non-strings read as "").
std::string str(const nlohmann::json& object, std::string_view key) {
  return stringMember(object, key);
}

// ValidatePortNumOrName for an intstr.IntOrString held in JSON.
void validatePortNumOrName(FieldErrors& errs, const nlohmann::json* port, const std::string& path) {
  if (port == nullptr || port->is_null() || port->is_number()) {
    std::int64_t value = 0;
    if (port != nullptr && port->is_number_integer()) value = port->get<std::int64_t>();
    for (auto& msg : portNumErrors(value)) {
      errs.push_back(FieldError::invalid(path, value, std::move(msg)));
    }
  } else if (port->is_string()) {
    const auto& name = port->get_ref<const std::string&>();
    for (auto& msg : portNameErrors(name)) {
      errs.push_back(FieldError::invalid(path, name, std::move(msg)));
    }
  }
}

void validateNonnegative(FieldErrors& errs, const nlohmann::json& object, std::string_view key,
                         const std::string& path) {
  auto value = intMember(object, key);
  if (value && *value < 0) {
    errs.push_back(FieldError::invalid(childPath(path, key), *value,
                                       "must be greater than or equal to 0"));
  }
}

// validateHandler for the handler structs of probes and lifecycle hooks.
void validateHandler(FieldErrors& errs, const nlohmann::json& handler, const std::string& path,
                     bool allow_sleep) {
  int handlers = 0;
  auto count = [&](std::string_view key) {
    if (isUnset(handler, key)) return false;
    if (handlers > 0) {
      errs.push_back(FieldError::forbidden(childPath(path, key),
                                           "may not specify more than 1 handler type"));
      return false;
    }
    ++handlers;
    return true;
  };
  if (count("exec")) {
    const nlohmann::json* exec = objectMember(handler, "exec");
    const nlohmann::json* command = exec != nullptr ? arrayMember(*exec, "command") : nullptr;
    if (command == nullptr || command->empty()) {
      errs.push_back(FieldError::required(childPath(childPath(path, "exec"), "command")));
    }
  }
  if (count("httpGet")) {
    if (const nlohmann::json* http = objectMember(handler, "httpGet")) {
      const std::string http_path = childPath(path, "httpGet");
      if (str(*http, "path").empty()) {
        errs.push_back(FieldError::required(childPath(http_path, "path")));
      }
      validatePortNumOrName(errs, member(*http, "port"), childPath(http_path, "port"));
      std::string scheme = str(*http, "scheme");
      if (scheme != "HTTP" && scheme != "HTTPS") {
        errs.push_back(
            FieldError::notSupported(childPath(http_path, "scheme"), scheme, {"HTTP", "HTTPS"}));
      }
    }
  }
  if (count("tcpSocket")) {
    if (const nlohmann::json* tcp = objectMember(handler, "tcpSocket")) {
      validatePortNumOrName(errs, member(*tcp, "port"),
                            childPath(childPath(path, "tcpSocket"), "port"));
    }
  }
  if (count("grpc")) {
    if (const nlohmann::json* grpc = objectMember(handler, "grpc")) {
      std::int64_t port = intMember(*grpc, "port").value_or(0);
      for (auto& msg : portNumErrors(port)) {
        errs.push_back(FieldError::invalid(childPath(childPath(path, "grpc"), "port"), port,
                                           std::move(msg)));
      }
    }
  }
  if (allow_sleep && count("sleep")) {
    // The sleep duration is checked against the grace period; not modelled.
  }
  if (handlers == 0) errs.push_back(FieldError::required(path, "must specify a handler type"));
}

// validateProbe + the liveness/readiness/startup specific rules.
void validateProbe(FieldErrors& errs, const nlohmann::json& container, std::string_view kind,
                   const std::string& container_path) {
  const nlohmann::json* probe = objectMember(container, kind);
  if (probe == nullptr) return;
  const std::string path = childPath(container_path, kind);
  validateHandler(errs, *probe, path, false);
  for (std::string_view field : {"initialDelaySeconds", "timeoutSeconds", "periodSeconds",
                                 "successThreshold", "failureThreshold"}) {
    validateNonnegative(errs, *probe, field, path);
  }
  auto grace = intMember(*probe, "terminationGracePeriodSeconds");
  if (grace && *grace <= 0) {
    errs.push_back(FieldError::invalid(childPath(path, "terminationGracePeriodSeconds"), *grace,
                                       "must be greater than 0"));
  }
  if (kind == "readinessProbe") {
    if (grace) {
      errs.push_back(FieldError::invalid(childPath(path, "terminationGracePeriodSeconds"), *grace,
                                         "must not be set for readinessProbes"));
    }
  } else {
    std::int64_t success = intMember(*probe, "successThreshold").value_or(0);
    if (success != 1) {
      errs.push_back(FieldError::invalid(childPath(path, "successThreshold"), success, "must be 1"));
    }
  }
}

void validateLifecycle(FieldErrors& errs, const nlohmann::json& container,
                       const std::string& container_path) {
  const nlohmann::json* lifecycle = objectMember(container, "lifecycle");
  if (lifecycle == nullptr) return;
  const std::string path = childPath(container_path, "lifecycle");
  for (std::string_view hook : {"postStart", "preStop"}) {
    if (const nlohmann::json* handler = objectMember(*lifecycle, hook)) {
      validateHandler(errs, *handler, childPath(path, hook), true);
    }
  }
}

void validateContainerPorts(FieldErrors& errs, const nlohmann::json& container,
                            const std::string& path) {
  std::set<std::string> names;
  const nlohmann::json* ports = arrayMember(container, "ports");
  if (ports == nullptr) return;
  for (std::size_t i = 0; i < ports->size(); ++i) {
    const nlohmann::json& port = (*ports)[i];
    if (!port.is_object()) continue;
    const std::string idx = indexPath(path, i);
    const std::string name = str(port, "name");
    if (!name.empty()) {
      auto msgs = portNameErrors(name);
      if (!msgs.empty()) {
        for (auto& msg : msgs) {
          errs.push_back(FieldError::invalid(childPath(idx, "name"), name, std::move(msg)));
        }
      } else if (!names.insert(name).second) {
        errs.push_back(FieldError::duplicate(childPath(idx, "name"), name));
      }
    }
    std::int64_t container_port = intMember(port, "containerPort").value_or(0);
    if (container_port == 0) {
      errs.push_back(FieldError::required(childPath(idx, "containerPort")));
    } else {
      for (auto& msg : portNumErrors(container_port)) {
        errs.push_back(
            FieldError::invalid(childPath(idx, "containerPort"), container_port, std::move(msg)));
      }
    }
    std::int64_t host_port = intMember(port, "hostPort").value_or(0);
    if (host_port != 0) {
      for (auto& msg : portNumErrors(host_port)) {
        errs.push_back(FieldError::invalid(childPath(idx, "hostPort"), host_port, std::move(msg)));
      }
    }
    std::string protocol = str(port, "protocol");
    if (protocol.empty()) {
      errs.push_back(FieldError::required(childPath(idx, "protocol")));
    } else if (protocol != "SCTP" && protocol != "TCP" && protocol != "UDP") {
      errs.push_back(
          FieldError::notSupported(childPath(idx, "protocol"), protocol, {"SCTP", "TCP", "UDP"}));
    }
  }
}

// IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, on by default since 1.32).
void validateEnv(FieldErrors& errs, const nlohmann::json& container, const std::string& path) {
  const nlohmann::json* env = arrayMember(container, "env");
  if (env == nullptr) return;
  for (std::size_t i = 0; i < env->size(); ++i) {
    const nlohmann::json& var = (*env)[i];
    if (!var.is_object()) continue;
    const std::string idx = indexPath(path, i);
    const std::string name = str(var, "name");
    if (name.empty()) {
      errs.push_back(FieldError::required(childPath(idx, "name")));
    } else {
      bool printable = true;
      for (char c : name) printable = printable && c >= ' ' && c <= '~' && c != '=';
      if (!printable) {
        errs.push_back(FieldError::invalid(
            childPath(idx, "name"), name,
            "a valid environment variable name must consist only of printable ASCII characters "
            "other than '='"));
      }
    }
    const nlohmann::json* from = objectMember(var, "valueFrom");
    if (from == nullptr) continue;
    int sources = 0;
    for (std::string_view key : {"fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef"}) {
      if (!isUnset(*from, key)) ++sources;
    }
    const std::string from_path = childPath(idx, "valueFrom");
    if (sources == 0) {
      errs.push_back(FieldError::invalid(from_path, "",
                                         "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                         "`configMapKeyRef` or `secretKeyRef`"));
    } else if (!str(var, "value").empty()) {
      errs.push_back(
          FieldError::invalid(from_path, "", "may not be specified when `value` is not empty"));
    } else if (sources > 1) {
      errs.push_back(FieldError::invalid(from_path, "",
                                         "may not have more than one field specified at a time"));
    }
  }
}

void validateVolumeMounts(FieldErrors& errs, const nlohmann::json& container,
                          const std::set<std::string>& volumes, const std::string& path) {
  const nlohmann::json* mounts = arrayMember(container, "volumeMounts");
  if (mounts == nullptr) return;
  std::set<std::string> mount_points;
  for (std::size_t i = 0; i < mounts->size(); ++i) {
    const nlohmann::json& mount = (*mounts)[i];
    if (!mount.is_object()) continue;
    const std::string idx = indexPath(path, i);
    const std::string name = str(mount, "name");
    if (name.empty()) errs.push_back(FieldError::required(childPath(idx, "name")));
    if (volumes.count(name) == 0) errs.push_back(notFound(childPath(idx, "name"), name));
    const std::string mount_path = str(mount, "mountPath");
    if (mount_path.empty()) errs.push_back(FieldError::required(childPath(idx, "mountPath")));
    if (!mount_points.insert(mount_path).second) {
      errs.push_back(FieldError::invalid(childPath(idx, "mountPath"), mount_path, "must be unique"));
    }
  }
}

std::optional<core::Quantity> quantityOf(const nlohmann::json& value) {
  std::string text = value.is_string() ? value.get<std::string>()
                                       : (value.is_number() ? value.dump() : std::string());
  auto parsed = core::Quantity::parse(text);
  if (!parsed.ok()) return std::nullopt;
  return *parsed;
}

std::string quantityText(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

bool isStandardContainerResource(std::string_view name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" ||
         name.starts_with("hugepages-");
}

// ValidateResourceRequirements for a container.
void validateResources(FieldErrors& errs, const nlohmann::json& container,
                       const std::string& container_path) {
  const nlohmann::json* resources = objectMember(container, "resources");
  if (resources == nullptr) return;
  const std::string path = childPath(container_path, "resources");
  const nlohmann::json* limits = objectMember(*resources, "limits");
  const nlohmann::json* requests = objectMember(*resources, "requests");
  auto check_entry = [&](const std::string& key, const nlohmann::json& value,
                         const std::string& list_path) {
    const std::string entry_path = keyPath(list_path, key);
    if (key.find('/') == std::string::npos && !isStandardContainerResource(key)) {
      errs.push_back(
          FieldError::invalid(entry_path, key, "must be a standard resource for containers"));
    }
    auto quantity = quantityOf(value);
    if (quantity && quantity->sign() < 0) {
      errs.push_back(FieldError::invalid(entry_path, quantityText(value),
                                         "must be greater than or equal to 0"));
    }
  };
  if (limits != nullptr) {
    for (auto it = limits->begin(); it != limits->end(); ++it) {
      check_entry(it.key(), it.value(), childPath(path, "limits"));
    }
  }
  if (requests == nullptr) return;
  for (auto it = requests->begin(); it != requests->end(); ++it) {
    check_entry(it.key(), it.value(), childPath(path, "requests"));
    const nlohmann::json* limit = limits != nullptr ? member(*limits, it.key()) : nullptr;
    if (limit == nullptr) continue;
    auto request_q = quantityOf(it.value());
    auto limit_q = quantityOf(*limit);
    if (!request_q || !limit_q) continue;
    auto request_milli = request_q->milliValue();
    auto limit_milli = limit_q->milliValue();
    if (request_milli && limit_milli && *request_milli > *limit_milli) {
      errs.push_back(FieldError::invalid(
          childPath(path, "requests"), quantityText(it.value()),
          "must be less than or equal to " + it.key() + " limit of " + quantityText(*limit)));
    }
  }
}

// validateContainerCommon.
void validateContainerCommon(FieldErrors& errs, const nlohmann::json& container,
                             const std::set<std::string>& volumes, const std::string& path) {
  const std::string name = str(container, "name");
  if (name.empty()) {
    errs.push_back(FieldError::required(childPath(path, "name")));
  } else {
    dns1123Label(errs, name, childPath(path, "name"));
  }
  if (str(container, "image").empty()) errs.push_back(FieldError::required(childPath(path, "image")));
  const std::string policy = str(container, "terminationMessagePolicy");
  if (policy.empty()) {
    errs.push_back(FieldError::required(childPath(path, "terminationMessagePolicy")));
  } else if (policy != "File" && policy != "FallbackToLogsOnError") {
    errs.push_back(FieldError::notSupported(childPath(path, "terminationMessagePolicy"), policy,
                                            {"File", "FallbackToLogsOnError"}));
  }
  validateContainerPorts(errs, container, childPath(path, "ports"));
  validateEnv(errs, container, childPath(path, "env"));
  validateVolumeMounts(errs, container, volumes, childPath(path, "volumeMounts"));
  const std::string pull = str(container, "imagePullPolicy");
  if (pull.empty()) {
    errs.push_back(FieldError::required(childPath(path, "imagePullPolicy")));
  } else if (pull != "Always" && pull != "IfNotPresent" && pull != "Never") {
    errs.push_back(FieldError::notSupported(childPath(path, "imagePullPolicy"), pull,
                                            {"Always", "IfNotPresent", "Never"}));
  }
  validateResources(errs, container, path);
}

// AccumulateUniqueHostPorts: "<hostIP>/<protocol>/<hostPort>" must be unique.
void checkHostPortConflicts(FieldErrors& errs, const nlohmann::json& container,
                            const std::string& container_path, std::set<std::string>& seen) {
  const nlohmann::json* ports = arrayMember(container, "ports");
  if (ports == nullptr) return;
  for (std::size_t i = 0; i < ports->size(); ++i) {
    const nlohmann::json& port = (*ports)[i];
    if (!port.is_object()) continue;
    std::int64_t host_port = intMember(port, "hostPort").value_or(0);
    if (host_port == 0) continue;
    std::string key = str(port, "hostIP") + "/" + str(port, "protocol") + "/" +
                      std::to_string(host_port);
    if (!seen.insert(key).second) {
      errs.push_back(FieldError::duplicate(
          childPath(indexPath(childPath(container_path, "ports"), i), "hostPort"), key));
    }
  }
}

void validateContainers(FieldErrors& errs, const nlohmann::json& spec,
                        const std::set<std::string>& volumes, const std::string& spec_path) {
  const std::string path = childPath(spec_path, "containers");
  const nlohmann::json* containers = arrayMember(spec, "containers");
  if (containers == nullptr || containers->empty()) {
    errs.push_back(FieldError::required(path));
    return;
  }
  std::set<std::string> names;
  for (std::size_t i = 0; i < containers->size(); ++i) {
    const nlohmann::json& container = (*containers)[i];
    if (!container.is_object()) continue;
    const std::string idx = indexPath(path, i);
    validateContainerCommon(errs, container, volumes, idx);
    const std::string name = str(container, "name");
    if (!names.insert(name).second) {
      errs.push_back(FieldError::duplicate(childPath(idx, "name"), name));
    }
    validateLifecycle(errs, container, idx);
    validateProbe(errs, container, "livenessProbe", idx);
    validateProbe(errs, container, "readinessProbe", idx);
    validateProbe(errs, container, "startupProbe", idx);
    if (!isUnset(container, "restartPolicy")) {
      errs.push_back(FieldError::forbidden(childPath(idx, "restartPolicy"),
                                           "may not be set for non-init containers"));
    }
  }
  std::set<std::string> host_ports;
  for (std::size_t i = 0; i < containers->size(); ++i) {
    checkHostPortConflicts(errs, (*containers)[i], indexPath(path, i), host_ports);
  }
}

void validateInitContainers(FieldErrors& errs, const nlohmann::json& spec,
                            const std::set<std::string>& volumes, const std::string& spec_path) {
  const nlohmann::json* init = arrayMember(spec, "initContainers");
  if (init == nullptr) return;
  const std::string path = childPath(spec_path, "initContainers");
  std::set<std::string> names;
  forEachObjectIn(spec, "containers",
                  [&names](const nlohmann::json& c) { names.insert(stringMember(c, "name")); });
  for (std::size_t i = 0; i < init->size(); ++i) {
    const nlohmann::json& container = (*init)[i];
    if (!container.is_object()) continue;
    const std::string idx = indexPath(path, i);
    validateContainerCommon(errs, container, volumes, idx);
    bool restart_always = false;
    if (!isUnset(container, "restartPolicy")) {
      std::string policy = str(container, "restartPolicy");
      if (policy != "Always") {
        errs.push_back(FieldError::notSupported(childPath(idx, "restartPolicy"), policy, {"Always"}));
      }
      restart_always = policy == "Always";
    }
    const std::string name = str(container, "name");
    if (names.count(name) > 0) {
      errs.push_back(FieldError::duplicate(childPath(idx, "name"), name));
    } else if (!name.empty()) {
      names.insert(name);
    }
    std::set<std::string> host_ports;  // init containers run one by one
    checkHostPortConflicts(errs, container, idx, host_ports);
    if (restart_always) {
      validateLifecycle(errs, container, idx);
      validateProbe(errs, container, "livenessProbe", idx);
      validateProbe(errs, container, "readinessProbe", idx);
      validateProbe(errs, container, "startupProbe", idx);
    } else {
      constexpr std::string_view kWithoutAlways =
          "may not be set for init containers without restartPolicy=Always";
      if (!isUnset(container, "lifecycle")) {
        errs.push_back(FieldError::forbidden(childPath(idx, "lifecycle"), std::string(kWithoutAlways)));
      }
      if (!isUnset(container, "livenessProbe")) {
        errs.push_back(
            FieldError::forbidden(childPath(idx, "livenessProbe"), std::string(kWithoutAlways)));
      }
      if (!isUnset(container, "readinessProbe")) {
        errs.push_back(FieldError::forbidden(childPath(idx, "readinessProbe"),
                                             "may not be set for init containers"));
      }
      if (!isUnset(container, "startupProbe")) {
        errs.push_back(
            FieldError::forbidden(childPath(idx, "startupProbe"), std::string(kWithoutAlways)));
      }
    }
  }
}

// The volume sources in validateVolumeSource's order.
constexpr std::string_view kVolumeSourceOrder[] = {
    "emptyDir", "hostPath", "gitRepo", "gcePersistentDisk", "awsElasticBlockStore", "secret",
    "nfs", "iscsi", "glusterfs", "flocker", "persistentVolumeClaim", "rbd", "cinder", "cephfs",
    "quobyte", "downwardAPI", "fc", "flexVolume", "configMap", "azureFile", "vsphereVolume",
    "photonPersistentDisk", "portworxVolume", "azureDisk", "storageos", "projected", "scaleIO",
    "csi", "ephemeral", "image",
};

void validateMode(FieldErrors& errs, const nlohmann::json& source, std::string_view key,
                  const std::string& path) {
  auto mode = intMember(source, key);
  if (mode && (*mode > 0777 || *mode < 0)) {
    errs.push_back(FieldError::invalid(childPath(path, key), *mode, std::string(kFileModeErrorMsg)));
  }
}

void validateSource(FieldErrors& errs, std::string_view kind, const nlohmann::json& source,
                    const std::string& path) {
  if (kind == "hostPath") {
    if (str(source, "path").empty()) errs.push_back(FieldError::required(childPath(path, "path")));
  } else if (kind == "secret") {
    if (str(source, "secretName").empty()) {
      errs.push_back(FieldError::required(childPath(path, "secretName")));
    }
    validateMode(errs, source, "defaultMode", path);
  } else if (kind == "configMap") {
    if (str(source, "name").empty()) errs.push_back(FieldError::required(childPath(path, "name")));
    validateMode(errs, source, "defaultMode", path);
  } else if (kind == "persistentVolumeClaim") {
    if (str(source, "claimName").empty()) {
      errs.push_back(FieldError::required(childPath(path, "claimName")));
    }
  } else if (kind == "downwardAPI") {
    validateMode(errs, source, "defaultMode", path);
  } else if (kind == "projected") {
    validateMode(errs, source, "defaultMode", path);
    const nlohmann::json* sources = arrayMember(source, "sources");
    if (sources == nullptr) return;
    for (std::size_t i = 0; i < sources->size(); ++i) {
      const nlohmann::json& projection = (*sources)[i];
      if (!projection.is_object()) continue;
      const std::string projection_path = indexPath(childPath(path, "sources"), i);
      int count = 0;
      for (std::string_view key :
           {"secret", "configMap", "downwardAPI", "serviceAccountToken", "clusterTrustBundle"}) {
        if (isUnset(projection, key)) continue;
        if (++count > 1) {
          errs.push_back(FieldError::forbidden(projection_path,
                                               "may not specify more than 1 volume type per source"));
        }
      }
      if (const nlohmann::json* token = objectMember(projection, "serviceAccountToken")) {
        const std::string token_path = childPath(projection_path, "serviceAccountToken");
        auto expiration = intMember(*token, "expirationSeconds");
        if (expiration && *expiration < 600) {
          errs.push_back(FieldError::invalid(childPath(token_path, "expirationSeconds"),
                                             *expiration,
                                             "may not specify a duration less than 10 minutes"));
        } else if (expiration && *expiration > (std::int64_t{1} << 32)) {
          errs.push_back(FieldError::invalid(childPath(token_path, "expirationSeconds"),
                                             *expiration,
                                             "may not specify a duration larger than 2^32 seconds"));
        }
        if (str(*token, "path").empty()) {
          errs.push_back(FieldError::required(childPath(token_path, "path")));
        }
      }
    }
  }
}

// ValidateVolumes: returns the names of the valid volumes (the ones mounts may refer to).
std::set<std::string> validateVolumes(FieldErrors& errs, const nlohmann::json& spec,
                                      const std::string& spec_path) {
  std::set<std::string> names;
  const nlohmann::json* volumes = arrayMember(spec, "volumes");
  if (volumes == nullptr) return names;
  const std::string path = childPath(spec_path, "volumes");
  for (std::size_t i = 0; i < volumes->size(); ++i) {
    const nlohmann::json& volume = (*volumes)[i];
    if (!volume.is_object()) continue;
    const std::string idx = indexPath(path, i);
    FieldErrors volume_errs;
    int sources = 0;
    for (std::string_view kind : kVolumeSourceOrder) {
      if (isUnset(volume, kind)) continue;
      if (sources > 0) {
        volume_errs.push_back(FieldError::forbidden(childPath(idx, kind),
                                                    "may not specify more than 1 volume type"));
        continue;
      }
      ++sources;
      if (const nlohmann::json* source = objectMember(volume, kind)) {
        validateSource(volume_errs, kind, *source, childPath(idx, kind));
      }
    }
    if (sources == 0) volume_errs.push_back(FieldError::required(idx, "must specify a volume type"));
    const std::string name = str(volume, "name");
    if (name.empty()) {
      volume_errs.push_back(FieldError::required(childPath(idx, "name")));
    } else {
      dns1123Label(volume_errs, name, childPath(idx, "name"));
    }
    if (names.count(name) > 0) volume_errs.push_back(FieldError::duplicate(childPath(idx, "name"), name));
    if (volume_errs.empty()) {
      names.insert(name);
    } else {
      append(errs, std::move(volume_errs));
    }
  }
  return names;
}

void validateTolerations(FieldErrors& errs, const nlohmann::json& spec, const std::string& spec_path) {
  const nlohmann::json* tolerations = arrayMember(spec, "tolerations");
  if (tolerations == nullptr) return;
  const std::string path = childPath(spec_path, "tolerations");
  for (std::size_t i = 0; i < tolerations->size(); ++i) {
    const nlohmann::json& t = (*tolerations)[i];
    if (!t.is_object()) continue;
    const std::string idx = indexPath(path, i);
    const std::string key = str(t, "key");
    const std::string op = str(t, "operator");
    const std::string value = str(t, "value");
    const std::string effect = str(t, "effect");
    if (!key.empty()) {
      for (auto& msg : validation::isQualifiedName(key)) {
        errs.push_back(FieldError::invalid(childPath(idx, "key"), key, std::move(msg)));
      }
    }
    if (key.empty() && op != "Exists") {
      errs.push_back(FieldError::invalid(
          childPath(idx, "operator"), op,
          "operator must be Exists when `key` is empty, which means \"match all values and all "
          "keys\""));
    }
    if (!isUnset(t, "tolerationSeconds") && effect != "NoExecute") {
      errs.push_back(FieldError::invalid(childPath(idx, "effect"), effect,
                                         "effect must be 'NoExecute' when `tolerationSeconds` is set"));
    }
    if (op == "Equal" || op.empty()) {
      for (auto& msg : labelValueErrors(value)) {
        errs.push_back(FieldError::invalid(childPath(idx, "operator"), value, std::move(msg)));
      }
    } else if (op == "Exists") {
      if (!value.empty()) {
        errs.push_back(FieldError::invalid(childPath(idx, "operator"), value,
                                           "value must be empty when `operator` is 'Exists'"));
      }
    } else {
      errs.push_back(FieldError::notSupported(childPath(idx, "operator"), op, {"Equal", "Exists"}));
    }
    if (!effect.empty() && effect != "NoSchedule" && effect != "PreferNoSchedule" &&
        effect != "NoExecute") {
      errs.push_back(FieldError::notSupported(childPath(idx, "effect"), effect,
                                              {"NoSchedule", "PreferNoSchedule", "NoExecute"}));
    }
  }
}

// Go's field names of core.PodSpec for the update diff summary.
std::string changedFields(const nlohmann::json& munged, const nlohmann::json& old) {
  std::set<std::string> keys;
  for (auto it = munged.begin(); it != munged.end(); ++it) keys.insert(it.key());
  for (auto it = old.begin(); it != old.end(); ++it) keys.insert(it.key());
  std::string out;
  for (const auto& key : keys) {
    const nlohmann::json* a = member(munged, key);
    const nlohmann::json* b = member(old, key);
    if (a != nullptr && b != nullptr && *a == *b) continue;
    out += "\n  spec." + key + ": changed";
  }
  return out;
}

}  // namespace

FieldErrors validatePodSpec(const nlohmann::json& spec, const std::string& path) {
  FieldErrors errs;
  if (!spec.is_object()) return errs;
  const std::set<std::string> volumes = validateVolumes(errs, spec, path);
  validateContainers(errs, spec, volumes, path);
  validateInitContainers(errs, spec, volumes, path);
  const std::string restart = str(spec, "restartPolicy");
  if (restart.empty()) {
    errs.push_back(FieldError::required(childPath(path, "restartPolicy")));
  } else if (restart != "Always" && restart != "OnFailure" && restart != "Never") {
    errs.push_back(FieldError::notSupported(childPath(path, "restartPolicy"), restart,
                                            {"Always", "OnFailure", "Never"}));
  }
  const std::string dns = str(spec, "dnsPolicy");
  if (dns.empty()) {
    errs.push_back(FieldError::required(childPath(path, "dnsPolicy")));
  } else if (dns != "ClusterFirstWithHostNet" && dns != "ClusterFirst" && dns != "Default" &&
             dns != "None") {
    errs.push_back(FieldError::notSupported(childPath(path, "dnsPolicy"), dns,
                                            {"ClusterFirstWithHostNet", "ClusterFirst", "Default",
                                             "None"}));
  }
  append(errs, validateLabels(objectMember(spec, "nodeSelector"), childPath(path, "nodeSelector")));
  const std::string service_account = str(spec, "serviceAccountName");
  if (!service_account.empty()) {
    for (auto& msg : nameIsDnsSubdomain(service_account, false)) {
      errs.push_back(
          FieldError::invalid(childPath(path, "serviceAccountName"), service_account, std::move(msg)));
    }
  }
  const std::string node_name = str(spec, "nodeName");
  if (!node_name.empty()) {
    for (auto& msg : nameIsDnsSubdomain(node_name, false)) {
      errs.push_back(FieldError::invalid(childPath(path, "nodeName"), node_name, std::move(msg)));
    }
  }
  if (auto deadline = intMember(spec, "activeDeadlineSeconds");
      deadline && (*deadline < 1 || *deadline > kMaxInt32)) {
    errs.push_back(FieldError::invalid(childPath(path, "activeDeadlineSeconds"), *deadline,
                                       "must be between 1 and 2147483647, inclusive"));
  }
  for (std::string_view key : {"hostname", "subdomain"}) {
    const std::string value = str(spec, key);
    if (!value.empty()) dns1123Label(errs, value, childPath(path, key));
  }
  validateTolerations(errs, spec, path);
  const std::string priority_class = str(spec, "priorityClassName");
  if (!priority_class.empty()) {
    for (auto& msg : nameIsDnsSubdomain(priority_class, false)) {
      errs.push_back(
          FieldError::invalid(childPath(path, "priorityClassName"), priority_class, std::move(msg)));
    }
  }
  return errs;
}

FieldErrors validatePodTemplateSpec(const nlohmann::json& tmpl, const std::string& path) {
  FieldErrors errs;
  if (!tmpl.is_object()) return errs;
  const std::string metadata_path = childPath(path, "metadata");
  if (const nlohmann::json* metadata = objectMember(tmpl, "metadata")) {
    append(errs, validateLabels(objectMember(*metadata, "labels"), childPath(metadata_path, "labels")));
    append(errs, validateAnnotations(objectMember(*metadata, "annotations"),
                                     childPath(metadata_path, "annotations")));
  }
  static const nlohmann::json kEmpty = nlohmann::json::object();
  const nlohmann::json* spec = objectMember(tmpl, "spec");
  append(errs, validatePodSpec(spec != nullptr ? *spec : kEmpty, childPath(path, "spec")));
  return errs;
}

FieldErrors validatePodSpecUpdate(const nlohmann::json& spec, const nlohmann::json& old_spec) {
  FieldErrors errs;
  if (!spec.is_object() || !old_spec.is_object()) return errs;
  // ValidatePodUpdate munges the updatable fields from the old spec before comparing.
  nlohmann::json munged = spec;
  for (std::string_view list : {"containers", "initContainers"}) {
    nlohmann::json* containers = arrayMember(munged, list);
    const nlohmann::json* old_containers = arrayMember(old_spec, list);
    if (containers == nullptr || old_containers == nullptr) continue;
    for (std::size_t i = 0; i < containers->size() && i < old_containers->size(); ++i) {
      nlohmann::json& container = (*containers)[i];
      const nlohmann::json& old_container = (*old_containers)[i];
      if (!container.is_object() || !old_container.is_object()) continue;
      if (const nlohmann::json* image = member(old_container, "image")) {
        container["image"] = *image;
      } else {
        container.erase("image");
      }
    }
  }
  for (std::string_view key : {"activeDeadlineSeconds", "tolerations", "schedulingGates"}) {
    if (const nlohmann::json* value = member(old_spec, key)) {
      munged[std::string(key)] = *value;
    } else {
      munged.erase(std::string(key));
    }
  }
  auto old_grace = intMember(old_spec, "terminationGracePeriodSeconds");
  auto new_grace = intMember(spec, "terminationGracePeriodSeconds");
  if (old_grace && *old_grace < 0 && new_grace && *new_grace == 1) {
    munged["terminationGracePeriodSeconds"] = *old_grace;
  }
  nlohmann::json munged_pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", munged}};
  nlohmann::json old_pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", old_spec}};
  normalizeLikeGoEncoding(munged_pod);
  normalizeLikeGoEncoding(old_pod);
  if (munged_pod["spec"] != old_pod["spec"]) {
    // Upstream appends a cmp.Diff of the internal PodSpec; a list of changed fields stands in.
    errs.push_back(FieldError::forbidden(
        "spec",
        "pod updates may not change fields other than `spec.containers[*].image`,"
        "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only "
        "additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be "
        "set to 1 if it was previously negative)" +
            changedFields(munged_pod["spec"], old_pod["spec"])));
  }
  return errs;
}

}  // namespace harness::sim::builtin_internal
