#include "harness/injector/istio/injector.h"
#include "harness/injector/istio/overlay_cache.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "harness/core/field_errors.h"
#include "harness/core/json.h"
#include "harness/core/quantity.h"
#include "harness/core/strategic_merge.h"
#include "harness/core/yaml.h"
#include "harness/go/json.h"
#include "harness/go/strconv.h"
#include "harness/go/strings.h"
#include "harness/gotemplate/go_json.h"
#include "harness/injector/istio/app_probe.h"
#include "harness/injector/istio/go_patch.h"
#include "harness/injector/istio/inject_required.h"
#include "harness/injector/istio/openshift.h"
#include "harness/injector/istio/pod_decode.h"
#include "harness/injector/istio/proxy_config.h"
#include "harness/injector/istio/validate.h"

// Followed: istio/istio pkg/kube/inject/webhook.go (inject, injectPod, createPatch,
// reapplyOverwrittenContainers, adjustInitContainerUser, parseStatus, reinsertOverrides,
// postProcessPod, overwriteClusterInfo/updateClusterEnvs, applyPrometheusMerge and its helpers,
// applyMetadata, reorderPod/modifyContainers, getInjectionStatus, applyOverlayYAML),
// pkg/kube/inject/inject.go (RunTemplate, selectTemplates, resolveAliases, stripPod, ProxyImage,
// imageURL, InboundTrafficPolicyMode, IntoObject), pkg/kube/util.go (GetDeployMetaFromPod),
// prometheus util/strutil SanitizeLabelName. See docs/istio-injector.md §2-§5.1.

namespace harness::injector::istio {

namespace {

using nlohmann::json;

constexpr char kProxyName[] = "istio-proxy";
constexpr char kInitName[] = "istio-init";
constexpr char kValidationName[] = "istio-validation";
constexpr char kCoreDumpName[] = "enable-core-dump";
constexpr char kStatusKey[] = "sidecar.istio.io/status";
constexpr char kOverridesKey[] = "proxy.istio.io/overrides";
constexpr char kProxyConfigKey[] = "proxy.istio.io/config";

std::string str(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

json& ensureObject(json& parent, const char* key) {
  json& v = parent[key];
  if (!v.is_object()) v = json::object();
  return v;
}

std::map<std::string, std::string> stringMapAt(const json& pod, const char* key) {
  std::map<std::string, std::string> out;
  if (!pod.is_object() || !pod.contains("metadata") || !pod["metadata"].is_object()) return out;
  auto it = pod["metadata"].find(key);
  if (it == pod["metadata"].end() || !it->is_object()) return out;
  for (auto m = it->begin(); m != it->end(); ++m) {
    if (m->is_string()) out[m.key()] = m->get<std::string>();
  }
  return out;
}

json* listOf(json& pod, const char* list) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return nullptr;
  auto it = pod["spec"].find(list);
  return it != pod["spec"].end() && it->is_array() ? &*it : nullptr;
}

const json* findContainer(const json& list, const std::string& name) {
  if (!list.is_array()) return nullptr;
  for (const auto& c : list) {
    if (c.is_object() && str(c, "name") == name) return &c;
  }
  return nullptr;
}

json* findSidecar(json& pod) {
  for (const char* l : {"containers", "initContainers"}) {
    if (json* list = listOf(pod, l)) {
      for (auto& c : *list) {
        if (c.is_object() && str(c, "name") == kProxyName) return &c;
      }
    }
  }
  return nullptr;
}

enum class Move { kFirst, kLast, kRemove };

void modifyContainers(json& pod, const char* list_name, const std::string& name, Move how) {
  json* list = listOf(pod, list_name);
  if (list == nullptr) return;
  // Moved, not copied: reorderPod calls this up to seven times on the injected pod.
  json rest = json::array();
  std::optional<json> match;
  for (auto& c : *list) {
    if (c.is_object() && str(c, "name") == name) {
      match = std::move(c);  // the last of the same name wins, as in Go
    } else {
      rest.push_back(std::move(c));
    }
  }
  if (match && how == Move::kFirst) rest.insert(rest.begin(), std::move(*match));
  if (match && how == Move::kLast) rest.push_back(std::move(*match));
  *list = std::move(rest);
}

std::vector<std::string> names(const json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& c : list) out.push_back(str(c, "name"));
  return out;
}

// parseStatus / injectionStatus: container names from the status annotation.
struct ParsedStatus {
  bool valid = false;
  std::vector<std::string> containers;
  std::vector<std::string> init_containers;
};

ParsedStatus parseStatus(const std::string& text) {
  ParsedStatus s;
  json j = core::parseJsonOrDiscarded(text);
  if (j.is_discarded() || !j.is_object()) return s;
  s.valid = true;
  for (const auto& [key, out] : {std::pair<const char*, std::vector<std::string>*>{
                                     "containers", &s.containers},
                                 {"initContainers", &s.init_containers}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_array()) continue;
    for (const auto& n : *it) {
      if (n.is_string()) out->push_back(n.get<std::string>());
    }
  }
  return s;
}

// prometheus strutil.SanitizeLabelName.
std::string sanitizeLabelName(const std::string& s) {
  std::string out = s;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return out;
}

// webhook.go applyPrometheusMerge's check of a port to scrape (strconv.Atoi, 1..65535, not the
// agent's port, not status.IstioReservedPortReason); the error text, or nullopt when valid. A
// scrape target's port (`target`) and the legacy prometheus.io/port are worded differently.
std::optional<std::string> checkScrapePort(const std::string& port, const std::string& agent,
                                           bool target) {
  static const std::map<std::string, std::string> kReserved = {
      {"15000", "Envoy admin"},
      {"15001", "outbound traffic capture"},
      {"15004", "pilot debug"},
      {"15006", "inbound traffic capture"},
      {"15008", "HBONE tunnel"},
      {"15020", "pilot-agent status / merged Prometheus"},
      {"15021", "Envoy health"},
      {"15053", "DNS proxy"},
      {"15090", "Envoy Prometheus (already merged)"},
  };
  const std::string prefix = target ? "invalid prometheus scrape targets: "
                                    : "invalid prometheus scrape configuration: ";
  const std::string noun = target ? "target port " : "port ";
  auto n = go::parseInt(port, 10, 64);  // strconv.Atoi
  if (!n || *n < 1 || *n > 65535) return prefix + "invalid " + noun + go::quote(port);
  const std::string canon = std::to_string(*n);
  if (canon == agent) return prefix + noun + port + " conflicts with agent port";
  if (auto it = kReserved.find(canon); it != kReserved.end()) {
    return prefix + noun + port + " is reserved for Istio (" + it->second +
           ") and cannot be scraped";
  }
  return std::nullopt;
}

// status.ScrapeTarget.
struct ScrapeTarget {
  std::string port;
  std::string path;
};

// status.ParseScrapeTargets (pilot/cmd/pilot-agent/status/server.go, 1.31): comma-separated
// "port:path" entries, each and both halves trimmed (strings.TrimSpace); empty entries skipped; no
// path or an empty one is "/metrics". An entry with an empty port fails the whole annotation:
// nullopt (getPrometheusScrapeConfiguration then logs it and leaves the targets unset).
std::optional<std::vector<ScrapeTarget>> parseScrapeTargets(std::string_view raw) {
  std::vector<ScrapeTarget> targets;
  std::size_t from = 0;
  while (from <= raw.size()) {
    const std::size_t comma = std::min(raw.find(',', from), raw.size());
    const std::string entry = go::trimSpace(raw.substr(from, comma - from));
    from = comma + 1;
    if (entry.empty()) continue;
    const std::size_t colon = entry.find(':');
    ScrapeTarget t{go::trimSpace(std::string_view(entry).substr(0, colon)), "/metrics"};
    if (t.port.empty()) return std::nullopt;
    if (colon != std::string::npos) {
      if (auto path = go::trimSpace(std::string_view(entry).substr(colon + 1)); !path.empty()) {
        t.path = std::move(path);
      }
    }
    targets.push_back(std::move(t));
  }
  return targets;
}

// The annotations object of the pod (created when missing).
json& annotationsOf(json& pod) { return ensureObject(ensureObject(pod, "metadata"), "annotations"); }

std::optional<std::string> prometheusAnnotation(const json& pod, const std::string& sanitized) {
  auto annotations = stringMapAt(pod, "annotations");
  for (const auto& [k, v] : annotations) {
    if (sanitizeLabelName(k) == sanitized) return v;
  }
  return std::nullopt;
}

// clearPrometheusAnnotations; from 1.31 (`targets`) also prometheus.istio.io/scrape-targets.
void clearPrometheusAnnotations(json& pod, bool targets) {
  json& a = annotationsOf(pod);
  std::vector<std::string> drop;
  for (auto it = a.begin(); it != a.end(); ++it) {
    const auto s = sanitizeLabelName(it.key());
    if (s == "prometheus_io_scrape" || s == "prometheus_io_port" || s == "prometheus_io_path" ||
        (targets && s == "prometheus_istio_io_scrape_targets")) {
      drop.push_back(it.key());
    }
  }
  for (const auto& k : drop) a.erase(k);
}

std::string stringListJson(const std::vector<std::string>& v, bool nil) {
  if (nil) return "null";
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + go::marshalString(v[i]);
  return out + "]";
}

// Go struct field orders (k8s.io/api core/v1 types.go) for json.Marshal of a container, keyed
// by the field that holds the struct; maps (limits, requests) keep Go's sorted keys.
const std::map<std::string, std::vector<std::string>>& goStructOrders() {
  static const std::vector<std::string> kProbe = {
      "exec", "httpGet", "tcpSocket", "grpc", "initialDelaySeconds", "timeoutSeconds",
      "periodSeconds", "successThreshold", "failureThreshold", "terminationGracePeriodSeconds"};
  static const std::vector<std::string> kHandler = {"exec", "httpGet", "tcpSocket", "sleep"};
  static const std::map<std::string, std::vector<std::string>> kOrders = {
      {"", {"name", "image", "command", "args", "workingDir", "ports", "envFrom", "env",
            "resources", "resizePolicy", "restartPolicy", "restartPolicyRules", "volumeMounts",
            "volumeDevices", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle",
            "terminationMessagePath", "terminationMessagePolicy", "imagePullPolicy",
            "securityContext", "stdin", "stdinOnce", "tty"}},
      {"ports", {"name", "hostPort", "containerPort", "protocol", "hostIP"}},
      {"env", {"name", "value", "valueFrom"}},
      {"valueFrom", {"fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef"}},
      {"fieldRef", {"apiVersion", "fieldPath"}},
      {"resourceFieldRef", {"containerName", "resource", "divisor"}},
      {"resources", {"limits", "requests", "claims"}},
      {"volumeMounts", {"name", "readOnly", "recursiveReadOnly", "mountPath", "subPath",
                        "mountPropagation", "subPathExpr"}},
      {"livenessProbe", kProbe},
      {"readinessProbe", kProbe},
      {"startupProbe", kProbe},
      {"lifecycle", {"postStart", "preStop", "stopSignal"}},
      {"postStart", kHandler},
      {"preStop", kHandler},
      {"httpGet", {"path", "port", "host", "scheme", "httpHeaders"}},
      {"securityContext", {"capabilities", "privileged", "seLinuxOptions", "windowsOptions",
                           "runAsUser", "runAsGroup", "runAsNonRoot", "readOnlyRootFilesystem",
                           "allowPrivilegeEscalation", "procMount", "seccompProfile",
                           "appArmorProfile"}},
      {"capabilities", {"add", "drop"}},
  };
  return kOrders;
}

// json.Marshal of a value held by the struct field `field` ("" for the container itself).
std::string goStructJson(const json& v, const std::string& field) {
  const auto& orders = goStructOrders();
  auto order = orders.find(field);
  if (v.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + goStructJson(v[i], field);
    return out + "]";
  }
  if (!v.is_object() || order == orders.end()) {
    auto m = gotemplate::goJsonMarshal(v);
    return m ? *m : v.dump();
  }
  std::string out = "{";
  bool first = true;
  auto add = [&](const std::string& k, const json& value) {
    out += (first ? "" : ",") + go::marshalString(k) + ":" + goStructJson(value, k);
    first = false;
  };
  std::set<std::string> seen;
  for (const auto& k : order->second) {
    seen.insert(k);
    if (field.empty() && k == "resources") {
      add(k, v.contains(k) && v[k].is_object() ? v[k] : json::object());
    } else if (field.empty() && k == "name") {
      add(k, v.contains(k) ? v[k] : json(""));
    } else if (v.contains(k)) {
      add(k, v[k]);
    }
  }
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!seen.count(it.key())) add(it.key(), *it);
  }
  return out + "}";
}

std::string goContainerJson(const json& c) { return goStructJson(c, ""); }


// mesh.ApplyProxyConfig / MergeProxyConfig: the annotation applied over `base`.
core::Result<json> applyProxyConfig(const std::string& yaml, json base) {
  return mergeProxyConfig(yaml, std::move(base));
}

const json& at(const json& j, std::initializer_list<const char*> path) {
  static const json kNull;
  const json* cur = &j;
  for (const char* p : path) {
    if (!cur->is_object()) return kNull;
    auto it = cur->find(p);
    if (it == cur->end()) return kNull;
    cur = &*it;
  }
  return *cur;
}

std::string scalarText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  if (v.is_number_float()) return go::formatFloat(v.get<double>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return {};
}

// inject.go updateImageTypeIfPresent + imageURL.
std::string imageUrl(const std::string& hub, const std::string& image, std::string tag,
                     const std::string& type) {
  if (!type.empty()) {
    for (const char* known : {"distroless", "debug"}) {
      const std::string suffix = std::string("-") + known;
      if (tag.size() >= suffix.size() &&
          tag.compare(tag.size() - suffix.size(), suffix.size(), suffix) == 0) {
        tag.resize(tag.size() - suffix.size());
        break;
      }
    }
    if (type != "default") tag += "-" + type;
  }
  return hub + "/" + image + ":" + tag;
}

bool truthy(const json& v) { return v.is_boolean() ? v.get<bool>() : false; }

std::string canonicalPart(const std::string& s) { return canonicalQuantity(s); }

void canonicalizeResources(json& c) {
  if (!c.is_object() || !c.contains("resources") || !c["resources"].is_object()) return;
  for (const char* k : {"requests", "limits"}) {
    auto it = c["resources"].find(k);
    if (it == c["resources"].end() || !it->is_object()) continue;
    for (auto q = it->begin(); q != it->end(); ++q) {
      const std::string text = scalarText(*q);
      if (!text.empty()) *q = canonicalPart(text);
    }
  }
}

bool omitZero(const std::string& key) {
  // Probe timings are omitempty int32s.
  return key == "initialDelaySeconds" || key == "periodSeconds" || key == "timeoutSeconds" ||
         key == "successThreshold" || key == "failureThreshold";
}

bool isContainerList(const std::string& key) {
  return key == "containers" || key == "initContainers" || key == "ephemeralContainers";
}

// The round trip, in place: `key` is the member name `v` is found under (an array's elements
// have their array's). Done on the value itself rather than on a copy: it runs four times per
// injection on the whole pod.
void roundTripInPlace(json& v, const std::string& key) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end();) {
      if (it->is_null()) {
        it = v.erase(it);
        continue;
      }
      roundTripInPlace(*it, it.key());
      // omitempty slices (every PodSpec/Container list but `containers`).
      const bool empty_list = it->is_array() && it->empty() && it.key() != "containers";
      const bool zero =
          it->is_number_integer() && it->get<std::int64_t>() == 0 && omitZero(it.key());
      it = empty_list || zero ? v.erase(it) : std::next(it);
    }
    return;
  }
  if (!v.is_array()) return;
  const bool containers = isContainerList(key);
  const bool env = key == "env";
  for (auto& c : v) {
    roundTripInPlace(c, key);
    if (containers) {
      canonicalizeResources(c);
      if (c.is_object()) {
        for (const char* s : {"image", "imagePullPolicy", "workingDir", "restartPolicy",
                              "terminationMessagePath", "terminationMessagePolicy"}) {
          if (auto f = c.find(s); f != c.end() && *f == "") c.erase(f);
        }
      }
    }
    if (env && c.is_object()) {
      if (auto f = c.find("value"); f != c.end() && *f == "") c.erase(f);
    }
  }
}

std::string policyWarningName(const json& pod) {
  auto ns = str(at(pod, {"metadata"}), "namespace");
  auto name = str(at(pod, {"metadata"}), "name");
  if (name.empty()) {
    auto gen = str(at(pod, {"metadata"}), "generateName");
    if (!gen.empty()) name = gen + "***";
  }
  return ns + "/" + name;
}

}  // namespace

std::string canonicalQuantity(const std::string& text) {
  auto q = core::Quantity::parse(text);
  if (!q) return text;
  auto milli = q->milliValue();
  if (!milli) return text;
  const std::int64_t m = *milli;
  const bool negative = m < 0;
  const std::uint64_t mag = negative ? static_cast<std::uint64_t>(-(m + 1)) + 1
                                     : static_cast<std::uint64_t>(m);
  const std::string sign = negative ? "-" : "";
  if (q->format() == core::Quantity::Format::kBinarySI && mag % 1000 == 0 &&
      mag / 1000 >= 1024) {
    std::uint64_t v = mag / 1000;
    static const char* kSuffix[] = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
    int i = 0;
    while (i < 6 && v % 1024 == 0) {
      v /= 1024;
      ++i;
    }
    return sign + std::to_string(v) + kSuffix[i];
  }
  if (mag == 0) return "0";
  if (mag % 1000 != 0) {
    return sign + std::to_string(mag) +
           (q->format() == core::Quantity::Format::kDecimalExponent ? "e-3" : "m");
  }
  std::uint64_t v = mag / 1000;
  int exp = 0;
  while (exp < 18 && v % 1000 == 0) {
    v /= 1000;
    exp += 3;
  }
  if (q->format() == core::Quantity::Format::kDecimalExponent) {
    return sign + std::to_string(v) + (exp ? "e" + std::to_string(exp) : "");
  }
  static const char* kDecimal[] = {"", "k", "M", "G", "T", "P", "E"};
  return sign + std::to_string(v) + kDecimal[exp / 3];
}

void goPodRoundTripInPlace(json& pod) {
  roundTripInPlace(pod, "");
  if (pod.is_object() && pod.contains("metadata") && pod["metadata"].is_object()) {
    for (const char* k : {"labels", "annotations"}) {
      auto it = pod["metadata"].find(k);
      if (it != pod["metadata"].end() && it->is_object() && it->empty()) pod["metadata"].erase(it);
    }
  }
}

json goPodRoundTrip(const json& pod) {
  json out = pod;
  goPodRoundTripInPlace(out);
  return out;
}

std::string_view decisionName(Decision decision) {
  switch (decision) {
    case Decision::kInject: return "inject";
    case Decision::kSkip: return "skip";
    case Decision::kError: return "error";
  }
  return "skip";
}

json Outcome::toJson() const {
  json logs_json = json::array();
  for (const auto& l : logs) {
    logs_json.push_back({{"level", logLevelName(l.level)}, {"message", l.message}});
  }
  return json{{"decision", decisionName(decision)},
              {"reason", reason},
              {"patch", core::encodePatch(patch)},
              {"error", error_message},
              {"logs", logs_json}};
}

std::pair<json, json> deployMetaFromPod(const json& pod) {
  const json& meta = at(pod, {"metadata"});
  json deploy = {{"name", str(meta, "name")}, {"namespace", str(meta, "namespace")}};
  json type = {{"kind", "Pod"}, {"apiVersion", "v1"}};
  if (!str(meta, "generateName").empty() && meta.contains("ownerReferences") &&
      meta["ownerReferences"].is_array()) {
    const json* controller = nullptr;
    for (const auto& r : meta["ownerReferences"]) {
      if (r.is_object() && truthy(r.value("controller", json()))) {
        controller = &r;
        break;
      }
    }
    if (controller != nullptr) {
      const std::string owner = str(*controller, "name");
      type = {{"kind", str(*controller, "kind")}, {"apiVersion", str(*controller, "apiVersion")}};
      deploy["name"] = owner;
      const json& labels = at(meta, {"labels"});
      auto label = [&](const char* k) { return str(labels, k); };
      auto endsWith = [](const std::string& s, const std::string& suf) {
        return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
      };
      const std::string kind = type["kind"];
      if (kind == "ReplicaSet" && !label("pod-template-hash").empty() &&
          endsWith(owner, label("pod-template-hash"))) {
        const std::string suffix = "-" + label("pod-template-hash");
        deploy["name"] = endsWith(owner, suffix) ? owner.substr(0, owner.size() - suffix.size())
                                                 : owner;
        type = {{"kind", "Deployment"}, {"apiVersion", "apps/v1"}};
      } else if (kind == "ReplicaSet" && !label("rollouts-pod-template-hash").empty() &&
                 endsWith(owner, label("rollouts-pod-template-hash"))) {
        const std::string suffix = "-" + label("rollouts-pod-template-hash");
        deploy["name"] = endsWith(owner, suffix) ? owner.substr(0, owner.size() - suffix.size())
                                                 : owner;
        type = {{"kind", "Rollout"}, {"apiVersion", "argoproj.io/v1alpha1"}};
      } else if (kind == "ReplicationController" && !label("deploymentconfig").empty()) {
        deploy["name"] = label("deploymentconfig");
        type = {{"kind", "DeploymentConfig"}, {"apiVersion", "apps.openshift.io/v1"}};
      } else if (kind == "Job") {
        static const std::regex kCronJobName("^(.+)-\\d{8,10}$");
        std::smatch m;
        if (std::regex_match(owner, m, kCronJobName)) {
          deploy["name"] = m[1].str();
          type = {{"kind", "CronJob"}, {"apiVersion", "batch/v1"}};
        }
      }
    }
  }
  if (deploy["name"] == "") deploy["name"] = str(meta, "name");
  return {deploy, type};
}

std::string injectionStatus(const json& spec, const std::string& revision) {
  auto list = [&](const char* key) {
    const json& l = at(spec, {key});
    const bool nil = !l.is_array() || l.empty();
    return stringListJson(names(l), nil);
  };
  return "{\"initContainers\":" + list("initContainers") + ",\"containers\":" + list("containers") +
         ",\"volumes\":" + list("volumes") + ",\"imagePullSecrets\":" + list("imagePullSecrets") +
         ",\"revision\":" + go::marshalString(revision.empty() ? "default" : revision) + "}";
}

namespace {

// webhook.go InjectionParameters as far as the steps below read it, with the ProxyConfig and
// the proxy envs the webhook derives before RunTemplate.
struct InjectionRequest {
  const InjectorSettings& settings;
  const InjectionParams& params;
  std::map<std::string, std::string> annotations;  // of the original pod
  std::map<std::string, std::string> labels;
  json proxy_config;
  std::map<std::string, std::string> proxy_envs;
  int mesh_status_port = 0;
};

core::Error templateError(const std::string& m) {
  return core::Error{"failed to run injection template: " + m};
}

// The ProxyConfig: mesh defaultConfig < CRs < the pod annotation.
core::Result<json> proxyConfigFor(const InjectorSettings& settings, const InjectionParams& params,
                                  const std::map<std::string, std::string>& annotations) {
  json proxy_config = settings.mesh.defaultConfig();
  if (params.proxy_config_overlay.is_object()) mergeProtoJson(proxy_config, params.proxy_config_overlay);
  if (auto it = annotations.find(kProxyConfigKey); it != annotations.end()) {
    auto pc = applyProxyConfig(it->second, proxy_config);
    if (!pc) return core::Error{pc.error().message};
    proxy_config = std::move(*pc);
  }
  return proxy_config;
}

// extractClusterAndNetwork: values < URL parameters < the pod's topology.istio.io/network label.
std::map<std::string, std::string> proxyEnvsFor(const json& values, const InjectionParams& params,
                                                const std::map<std::string, std::string>& labels) {
  std::map<std::string, std::string> proxy_envs = params.proxy_envs;
  std::string cluster = scalarText(at(values, {"global", "multiCluster", "clusterName"}));
  std::string network = scalarText(at(values, {"global", "network"}));
  if (auto it = proxy_envs.find("ISTIO_META_CLUSTER_ID"); it != proxy_envs.end() && !it->second.empty()) {
    cluster = it->second;
  }
  if (auto it = proxy_envs.find("ISTIO_META_NETWORK"); it != proxy_envs.end() && !it->second.empty()) {
    network = it->second;
  }
  if (auto it = labels.find("topology.istio.io/network"); it != labels.end()) network = it->second;
  if (!cluster.empty()) proxy_envs["ISTIO_META_CLUSTER_ID"] = cluster;
  if (!network.empty()) proxy_envs["ISTIO_META_NETWORK"] = network;
  return proxy_envs;
}

ParsedStatus previousStatus(const InjectionRequest& req) {
  const auto it = req.annotations.find(kStatusKey);
  return it != req.annotations.end() ? parseStatus(it->second) : ParsedStatus{};
}

// The sidecar.istio.io/proxyOverrides annotation; an object, or an error.
core::Result<json> existingOverrides(const InjectionRequest& req) {
  const auto it = req.annotations.find(kOverridesKey);
  if (it == req.annotations.end()) return json::object();
  json overrides = core::parseJsonOrDiscarded(it->second);
  if (overrides.is_discarded() || !overrides.is_object()) {
    return templateError("invalid " + std::string(kOverridesKey) + " annotation: not a JSON object");
  }
  return overrides;
}

// stripPod: the pod without what an earlier injection added.
json stripPod(const InjectionRequest& req) {
  json stripped = req.params.pod;
  const ParsedStatus prev = previousStatus(req);
  if (!prev.valid) return stripped;
  for (const auto& c : prev.containers) modifyContainers(stripped, "containers", c, Move::kRemove);
  for (const auto& c : prev.init_containers) {
    modifyContainers(stripped, "initContainers", c, Move::kRemove);
  }
  if (auto port = prometheusAnnotation(stripped, "prometheus_io_port");
      port && *port == std::to_string(req.mesh_status_port)) {
    clearPrometheusAnnotations(stripped, req.settings.version.atLeast(1, 31));
  }
  annotationsOf(stripped).erase(kStatusKey);
  return stripped;
}

// reinsertOverrides: the user's containers an earlier injection overwrote, back in the pod.
core::Result<json> reinsertOverrides(json stripped, const InjectionRequest& req) {
  auto overrides = existingOverrides(req);
  if (!overrides) return overrides.error();
  for (const char* l : {"containers", "initContainers"}) {
    const json& list = at(*overrides, {l});
    if (!list.is_array()) continue;
    json& spec = ensureObject(stripped, "spec");
    json& target = spec[l];
    if (!target.is_array()) target = json::array();
    for (const auto& c : list) {
      if (findContainer(target, str(c, "name")) == nullptr) target.push_back(c);
    }
  }
  return stripped;
}

// SidecarTemplateData.
json templateData(const InjectionRequest& req, const json& stripped) {
  const json& values = req.settings.values.map;
  // Native sidecars: the global answer, overridden by exactly "true"/"false".
  bool native = req.params.native_sidecars;
  if (auto it = req.annotations.find("sidecar.istio.io/nativeSidecar"); it != req.annotations.end()) {
    if (it->second == "true") native = true;
    if (it->second == "false") native = false;
  }
  // ProxyImage.
  const std::string hub = scalarText(at(values, {"global", "hub"}));
  const std::string tag = scalarText(at(values, {"global", "tag"}));
  std::string image_type = scalarText(at(values, {"global", "variant"}));
  if (auto t = str(at(req.proxy_config, {"image"}), "imageType"); !t.empty()) image_type = t;
  if (auto it = req.annotations.find("sidecar.istio.io/proxyImageType"); it != req.annotations.end()) {
    image_type = it->second;
  }
  std::string proxy_image_name = scalarText(at(values, {"global", "proxy", "image"}));
  if (proxy_image_name.empty()) proxy_image_name = "proxyv2";
  std::string init_image_name = scalarText(at(values, {"global", "proxy_init", "image"}));
  if (init_image_name.empty()) init_image_name = "proxyv2";

  const std::string inbound_mode =
      str(at(req.settings.mesh.config, {"inboundTrafficPolicy"}), "mode");
  const auto [proxy_uid, proxy_gid] = proxyIds(req.params.namespace_object);
  return json{
      {"TypeMeta", req.params.type_meta},
      {"DeploymentMeta", req.params.deploy_meta},
      {"ObjectMeta", at(stripped, {"metadata"}).is_object() ? at(stripped, {"metadata"}) : json::object()},
      {"Spec", at(stripped, {"spec"}).is_object() ? at(stripped, {"spec"}) : json::object()},
      {"ProxyConfig", req.proxy_config},
      {"MeshConfig", req.settings.mesh.config},
      {"Values", values},
      {"Revision", req.settings.revision},
      {"NativeSidecars", native},
      {"ProxyImage", imageUrl(hub, proxy_image_name, tag, image_type)},
      {"ProxyInitImage", imageUrl(hub, init_image_name, tag, image_type)},
      {"ProxyUID", proxy_uid},
      {"ProxyGID", proxy_gid},
      {"InboundTrafficPolicyMode", inbound_mode == "LOCALHOST" ? "localhost" : "passthrough"},
      // istiod's COMPLIANCE_POLICY (pkg/features/security.go), from its environment.
      {"CompliancePolicy", [&] {
         const auto it = req.settings.env.find("COMPLIANCE_POLICY");
         return it == req.settings.env.end() ? std::string() : it->second;
       }()},
  };
}

// resolveAliases.
std::vector<std::string> resolveAliases(const InjectionRequest& req,
                                        const std::vector<std::string>& names) {
  std::vector<std::string> selected;
  for (const auto& n : names) {
    auto al = req.settings.config.aliases.find(n);
    if (req.params.use_aliases && al != req.settings.config.aliases.end()) {
      selected.insert(selected.end(), al->second.begin(), al->second.end());
    } else {
      selected.push_back(n);
    }
  }
  return selected;
}

// selectTemplates: inject.istio.io/templates (comma-separated, each trimmed), else the defaults.
std::vector<std::string> selectTemplates(const InjectionRequest& req) {
  const auto it = req.annotations.find("inject.istio.io/templates");
  if (it == req.annotations.end()) {
    return resolveAliases(req, req.params.default_templates.empty()
                                   ? req.settings.config.default_templates
                                   : req.params.default_templates);
  }
  std::vector<std::string> requested;
  std::size_t start = 0;
  const std::string& a = it->second;
  while (true) {
    const auto pos = a.find(',', start);
    std::string n = a.substr(start, pos == std::string::npos ? std::string::npos : pos - start);
    const auto b = n.find_first_not_of(" \t\r\n\v\f");
    const auto e = n.find_last_not_of(" \t\r\n\v\f");
    requested.push_back(b == std::string::npos ? std::string() : n.substr(b, e - b + 1));
    if (pos == std::string::npos) break;
    start = pos + 1;
  }
  return resolveAliases(req, requested);
}

struct TemplateResult {
  json merged;        // the original pod with every template's overlay applied
  json template_pod;  // the templates' overlays alone
};

// RunTemplate: each selected template rendered and applied as a strategic merge overlay, to the
// original pod and to an empty one.
core::Result<TemplateResult> runTemplate(const InjectionRequest& req) {
  auto stripped = reinsertOverrides(stripPod(req), req);
  if (!stripped) return stripped.error();
  const json data = templateData(req, *stripped);
  const auto options = gotemplate::istioExecOptions();
  const core::StrategicMergeOptions smp{.name_path_in_errors = false};
  TemplateResult out{req.params.pod, json::object()};
  json& merged = out.merged;
  json& template_pod = out.template_pod;
  for (const auto& name : selectTemplates(req)) {
    auto t = req.settings.config.templates.find(name);
    if (t == req.settings.config.templates.end()) {
      std::string have;
      for (const auto& [k, _] : req.settings.config.templates) have += (have.empty() ? "" : ", ") + k;
      return templateError("requested template " + go::marshalString(name) + " not found; have " + have);
    }
    auto rendered = gotemplate::execute(t->second, "inject", data, options);
    if (!rendered) return templateError(rendered.error().message);
    auto parsed = OverlayCache::shared().parse(*rendered);
    const json* overlay = parsed ? parsed->get() : nullptr;
    if (overlay == nullptr || !(overlay->is_object() || overlay->is_null())) {
      return templateError("failed applying injection overlay: strategic merge: invalid JSON document");
    }
    auto tp = core::strategicMerge(template_pod, *overlay, core::podSchema(), smp);
    if (!tp) {
      return templateError("failed applying injection overlay: strategic merge: " +
                           tp.error().message);
    }
    template_pod = std::move(*tp);
    goPodRoundTripInPlace(template_pod);
    if (findContainer(at(template_pod, {"spec", "initContainers"}), kProxyName) != nullptr &&
        findContainer(at(merged, {"spec", "containers"}), kProxyName) != nullptr) {
      // The user's istio-proxy customisation moves to initContainers with a native proxy.
      json proxy = *findContainer(at(merged, {"spec", "containers"}), kProxyName);
      modifyContainers(merged, "containers", kProxyName, Move::kRemove);
      json& inits = ensureObject(merged, "spec")["initContainers"];
      if (!inits.is_array()) inits = json::array();
      inits.push_back(proxy);
    }
    auto mp = core::strategicMerge(merged, *overlay, core::podSchema(), smp);
    if (!mp) {
      return templateError(
          "failed parsing generated injected YAML (check Istio sidecar injector configuration): "
          "strategic merge: " +
          mp.error().message);
    }
    merged = std::move(*mp);
    goPodRoundTripInPlace(merged);
  }
  return out;
}

// adjustInitContainerUser: the user's runAsUser/runAsGroup on istio-proxy carried to the init
// container (and to istio-iptables' -u).
void adjustInitContainerUser(json& final_pod, const json& original, const json& proxy_config) {
  const json* user = findContainer(at(original, {"spec", "containers"}), kProxyName);
  if (user == nullptr) user = findContainer(at(original, {"spec", "initContainers"}), kProxyName);
  if (user == nullptr) return;
  const json& sc = at(*user, {"securityContext"});
  const json& uid = at(sc, {"runAsUser"});
  const json& gid = at(sc, {"runAsGroup"});
  if (uid.is_null() && gid.is_null()) return;
  json* init = nullptr;
  if (json* inits = listOf(final_pod, "initContainers")) {
    for (const char* n : {kInitName, kValidationName}) {
      for (auto& c : *inits) {
        if (init == nullptr && str(c, "name") == n) init = &c;
      }
    }
  }
  if (init == nullptr) return;
  const bool tproxy = str(proxy_config, "interceptionMode") == "TPROXY" ||
                      str(at(final_pod, {"metadata", "annotations"}),
                          "sidecar.istio.io/interceptionMode") == "TPROXY";
  if (tproxy && !uid.is_null()) {
    if (json* sidecar = findSidecar(final_pod)) {
      ensureObject(*sidecar, "securityContext")["runAsUser"] = 0;
    }
  }
  if (!tproxy && str(*init, "name") == kValidationName) {
    json& isc = ensureObject(*init, "securityContext");
    if (!uid.is_null()) isc["runAsUser"] = uid;
    if (!gid.is_null()) isc["runAsGroup"] = gid;
  }
  if (uid.is_number_integer() && uid.get<std::int64_t>() != 0 && init->contains("args") &&
      (*init)["args"].is_array()) {
    json& args = (*init)["args"];
    for (std::size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "-u") {
        args[i + 1] = std::to_string(uid.get<std::int64_t>());
        break;
      }
    }
  }
}

// reapplyOverwrittenContainers: the user's own version of a container the templates inject
// (not one an earlier injection added) is applied over the injected one, and remembered in
// sidecar.istio.io/proxyOverrides on first injection.
core::Result<json> reapplyOverwrittenContainers(json merged, const json& template_pod,
                                                const InjectionRequest& req) {
  const json& original = req.params.pod;
  const ParsedStatus injected_status = previousStatus(req);
  auto parsed_overrides = existingOverrides(req);  // an error was reported by reinsertOverrides
  const json existing_overrides = parsed_overrides ? *parsed_overrides : json::object();
  const core::StrategicMergeOptions smp{.name_path_in_errors = false};
  json overrides = json::object();
  for (const auto& [list, prev_names] :
       {std::pair<const char*, const std::vector<std::string>*>{"containers",
                                                                &injected_status.containers},
        {"initContainers", &injected_status.init_containers}}) {
    const json& tl = at(template_pod, {"spec", list});
    if (!tl.is_array()) continue;
    for (const auto& c : tl) {
      const std::string cname = str(c, "name");
      if (std::find(prev_names->begin(), prev_names->end(), cname) != prev_names->end()) continue;
      const json* match = findContainer(at(existing_overrides, {list}), cname);
      if (match == nullptr) {
        match = findContainer(at(original, {"spec", "containers"}), cname);
        if (match == nullptr && std::string(list) == "initContainers") {
          match = findContainer(at(original, {"spec", "initContainers"}), cname);
        }
      }
      if (match == nullptr) continue;
      json overlay = *match;
      if (overlay.value("image", "") == "auto" || overlay.value("image", "") == "") {
        overlay.erase("image");
      }
      json& ol = overrides[list];
      if (!ol.is_array()) ol = json::array();
      ol.push_back(overlay);
      json patch = {{"spec", {{list, json::array({overlay})}}}};
      auto r = core::strategicMerge(merged, patch, core::podSchema(), smp);
      if (!r) {
        return core::Error{std::string("failed to re apply container: failed to apply sidecar ") +
                           (std::string(list) == "containers" ? "container" : "init container") +
                           ": strategic merge: " + r.error().message};
      }
      merged = std::move(*r);
      goPodRoundTripInPlace(merged);
    }
  }
  if (!req.annotations.contains(kStatusKey) && !overrides.empty()) {
    std::string js = "{";
    bool first = true;
    for (const char* l : {"containers", "initContainers"}) {
      if (!overrides.contains(l)) continue;
      js += std::string(first ? "" : ",") + "\"" + l + "\":[";
      for (std::size_t i = 0; i < overrides[l].size(); ++i) {
        js += (i ? "," : "") + goContainerJson(overrides[l][i]);
      }
      js += "]";
      first = false;
    }
    annotationsOf(merged)[kOverridesKey] = js + "}";
  }
  adjustInitContainerUser(merged, original, req.proxy_config);
  return merged;
}

// overwriteClusterInfo / updateClusterEnvs.
void overwriteClusterInfo(json& pod, const InjectionRequest& req) {
  json* sidecar = findSidecar(pod);
  if (sidecar == nullptr || req.proxy_envs.empty()) return;
  json env = json::array();
  if (sidecar->contains("env") && (*sidecar)["env"].is_array()) {
    for (const auto& e : (*sidecar)["env"]) {
      if (!req.proxy_envs.count(str(e, "name"))) env.push_back(e);
    }
  }
  for (const auto& [k, v] : req.proxy_envs) {
    json e = {{"name", k}};
    if (!v.empty()) e["value"] = v;
    env.push_back(e);
  }
  (*sidecar)["env"] = env;
}

// applyPrometheusMerge (webhook.go). From 1.31 (istio/istio#59924; the reserved ports also in
// commit 2ba573d) the pod may name several ports to scrape in prometheus.istio.io/scrape-targets:
// the first gives the legacy port and path, every one must be a port number that is neither the
// agent's nor one of Istio's reserved ports (pilot/cmd/pilot-agent/status/server.go
// istioReservedPorts), they reach the agent as ISTIO_PROMETHEUS_ANNOTATIONS' "targets", and the
// annotation is cleared with the prometheus.io ones. Without targets, a legacy prometheus.io/port
// is checked the same way. Up to 1.30 the annotation means nothing and no port is checked.
// ISTIO_PROMETHEUS_ANNOTATIONS is status.PrometheusScrapeConfiguration as encoding/json writes it:
// scrape, path, port, then targets when there are any.
core::Result<void> applyPrometheusMerge(json& pod, const InjectionRequest& req) {
  const bool v131 = req.settings.version.atLeast(1, 31);
  bool scrape = true;
  for (const auto& [k, v] : stringMapAt(pod, "annotations")) {
    if (sanitizeLabelName(k) != "prometheus_io_scrape") continue;
    if (auto b = go::parseBool(v); b) {
      scrape = *b;
      break;
    }
  }
  bool merge = true;
  const auto pod_annotations = stringMapAt(pod, "annotations");
  auto mm = pod_annotations.find("prometheus.istio.io/merge-metrics");
  auto parsed = mm != pod_annotations.end() ? go::parseBool(mm->second)
                                            : core::Result<bool>(core::Error{"unset"});
  const json& mesh = req.settings.mesh.config;
  if (parsed) {
    merge = *parsed;
  } else if (at(mesh, {"enablePrometheusMerge"}).is_boolean()) {
    merge = at(mesh, {"enablePrometheusMerge"}).get<bool>();
  }
  const std::string target = std::to_string(req.mesh_status_port);
  const auto cur = prometheusAnnotation(pod, "prometheus_io_port");
  if (!scrape || !merge || (cur && *cur == target)) return {};
  std::string port = cur.value_or("");
  std::string path = prometheusAnnotation(pod, "prometheus_io_path").value_or("");
  const std::string scr = prometheusAnnotation(pod, "prometheus_io_scrape").value_or("");
  std::vector<ScrapeTarget> targets;
  if (v131) {
    if (auto raw = prometheusAnnotation(pod, "prometheus_istio_io_scrape_targets")) {
      targets = parseScrapeTargets(*raw).value_or(std::vector<ScrapeTarget>{});
    }
  }
  if (!targets.empty()) {
    port = targets.front().port;
    path = targets.front().path;
    for (const auto& t : targets) {
      if (auto bad = checkScrapePort(t.port, target, /*target=*/true)) {
        return core::Error{"failed to process pod: " + *bad};
      }
    }
  } else if (!port.empty() && v131) {
    if (auto bad = checkScrapePort(port, target, /*target=*/false)) {
      return core::Error{"failed to process pod: " + *bad};
    }
  }
  json* sidecar = findSidecar(pod);
  if (sidecar != nullptr && !(port.empty() && path.empty() && scr.empty() && targets.empty())) {
    std::string value = "{\"scrape\":" + go::marshalString(scr) + ",\"path\":" +
                        go::marshalString(path) + ",\"port\":" + go::marshalString(port);
    if (!targets.empty()) {
      value += ",\"targets\":[";
      for (std::size_t i = 0; i < targets.size(); ++i) {
        value += std::string(i ? "," : "") + "{\"port\":" + go::marshalString(targets[i].port) +
                 ",\"path\":" + go::marshalString(targets[i].path) + "}";
      }
      value += "]";
    }
    json& env = (*sidecar)["env"];
    if (!env.is_array()) env = json::array();
    env.push_back({{"name", "ISTIO_PROMETHEUS_ANNOTATIONS"}, {"value", value + "}"}});
  }
  clearPrometheusAnnotations(pod, v131);
  json& a = annotationsOf(pod);
  a["prometheus.io/port"] = target;
  a["prometheus.io/path"] = "/stats/prometheus";
  a["prometheus.io/scrape"] = "true";
  return {};
}

// applySecurePrometheusAnnotation (webhook.go, 1.31, istio/istio#60430): the proxy's
// ENVOY_SECURE_MERGED_METRICS_PORT (from proxyMetadata, neither empty nor "0") is copied into
// prometheus.istio.io/secure-port unless the pod sets that annotation in any spelling.
void applySecurePrometheusAnnotation(json& pod) {
  if (prometheusAnnotation(pod, "prometheus_istio_io_secure_port")) return;
  const json* sidecar = findSidecar(pod);
  if (sidecar == nullptr) return;
  const json& env = at(*sidecar, {"env"});
  if (!env.is_array()) return;
  for (const auto& e : env) {
    if (!e.is_object() || str(e, "name") != "ENVOY_SECURE_MERGED_METRICS_PORT") continue;
    const std::string value = str(e, "value");
    if (value.empty() || value == "0") continue;
    annotationsOf(pod)["prometheus.istio.io/secure-port"] = value;
    return;
  }
}

// applyMetadata: the network label, the status annotation, the configured injectedAnnotations.
void applyMetadata(json& pod, const json& template_pod, const InjectionRequest& req) {
  if (auto it = req.proxy_envs.find("ISTIO_META_NETWORK"); it != req.proxy_envs.end()) {
    ensureObject(pod["metadata"], "labels")["topology.istio.io/network"] = it->second;
  }
  annotationsOf(pod)[kStatusKey] = injectionStatus(at(template_pod, {"spec"}), req.settings.revision);
  if (req.params.use_injected_annotations) {
    for (const auto& [k, v] : req.settings.config.injected_annotations) annotationsOf(pod)[k] = v;
  }
}

// reorderPod: istio-proxy first (holdApplicationUntilProxyStarts) or last among containers;
// the init containers in Istio's order around a native istio-proxy.
core::Result<void> reorderPod(json& pod, const InjectionRequest& req) {
  json mc = req.settings.mesh.defaultConfig();
  if (auto it = req.annotations.find(kProxyConfigKey); it != req.annotations.end()) {
    auto pc = applyProxyConfig(it->second, mc);
    if (!pc) return core::Error{"failed to process pod: " + pc.error().message};
    mc = std::move(*pc);
  }
  const bool hold =
      truthy(at(mc, {"holdApplicationUntilProxyStarts"})) ||
      truthy(at(req.settings.values.map, {"global", "proxy", "holdApplicationUntilProxyStarts"}));
  std::vector<std::string> before_proxy;
  const std::string extra = str(at(pod, {"metadata", "annotations"}),
                                "sidecar.istio.io/init-containers-before-proxy");
  if (!extra.empty()) {
    std::size_t start = 0;
    while (true) {
      const auto pos = extra.find(',', start);
      std::string n = extra.substr(start, pos == std::string::npos ? pos : pos - start);
      if (std::find(before_proxy.begin(), before_proxy.end(), n) == before_proxy.end()) {
        before_proxy.push_back(n);
      }
      if (pos == std::string::npos) break;
      start = pos + 1;
    }
  }
  modifyContainers(pod, "containers", kProxyName, hold ? Move::kFirst : Move::kLast);
  if (findContainer(at(pod, {"spec", "initContainers"}), kProxyName) != nullptr) {
    modifyContainers(pod, "initContainers", kCoreDumpName, Move::kFirst);
    modifyContainers(pod, "initContainers", kProxyName, Move::kFirst);
    for (auto it = before_proxy.rbegin(); it != before_proxy.rend(); ++it) {
      modifyContainers(pod, "initContainers", *it, Move::kFirst);
    }
    modifyContainers(pod, "initContainers", kValidationName, Move::kFirst);
    modifyContainers(pod, "initContainers", kInitName, Move::kFirst);
  } else {
    modifyContainers(pod, "initContainers", kValidationName, Move::kFirst);
    modifyContainers(pod, "initContainers", kInitName, Move::kLast);
    modifyContainers(pod, "initContainers", kCoreDumpName, Move::kLast);
  }
  return {};
}

// postProcessPod.
core::Result<void> postProcessPod(json& pod, const json& template_pod, const InjectionRequest& req) {
  annotationsOf(pod);
  ensureObject(ensureObject(pod, "metadata"), "labels");
  overwriteClusterInfo(pod, req);
  if (auto r = applyPrometheusMerge(pod, req); !r) return r;
  if (req.settings.version.atLeast(1, 31)) applySecurePrometheusAnnotation(pod);
  applyRewrite(pod, truthy(at(req.settings.values.map, {"sidecarInjectorWebhook", "rewriteAppHTTPProbe"})),
               req.mesh_status_port);
  applyMetadata(pod, template_pod, req);
  return reorderPod(pod, req);
}

}  // namespace

// webhook.go injectPod: RunTemplate, reapplyOverwrittenContainers, postProcessPod (the patch is
// the caller's).
core::Result<json> injectPod(const InjectorSettings& settings, const InjectionParams& params) {
  const auto annotations = stringMapAt(params.pod, "annotations");
  // RunTemplate: validation first.
  if (auto v = validateAnnotations(annotations); !v) return templateError(v.error().message);
  auto proxy_config = proxyConfigFor(settings, params, annotations);
  if (!proxy_config) return proxy_config.error();
  const auto labels = stringMapAt(params.pod, "labels");
  const InjectionRequest req{settings,
                             params,
                             annotations,
                             labels,
                             std::move(*proxy_config),
                             proxyEnvsFor(settings.values.map, params, labels),
                             settings.mesh.statusPort()};
  auto templated = runTemplate(req);
  if (!templated) return templated.error();
  auto merged = reapplyOverwrittenContainers(std::move(templated->merged), templated->template_pod, req);
  if (!merged) return merged.error();
  if (auto r = postProcessPod(*merged, templated->template_pod, req); !r) return r.error();
  goPodRoundTripInPlace(*merged);
  return std::move(*merged);
}

Outcome admit(const InjectorSettings& settings, const AdmissionInput& input) {
  Outcome out;
  // webhook.go inject: json.Unmarshal(req.Object.Raw, &pod), answered with err.Error().
  if (auto decoded = checkPodDecodes(input.pod); !decoded) {
    out.decision = Decision::kError;
    out.error_message = decoded.error().message;
    out.logs.push_back({LogLine::Level::kError, "Could not unmarshal raw object: " +
                                                    out.error_message + " " +
                                                    core::dumpJson(input.pod)});
    return out;
  }
  json pod = input.pod;
  json& meta = ensureObject(pod, "metadata");
  meta.erase("managedFields");
  if (str(meta, "namespace").empty() && !input.request_namespace.empty()) {
    meta["namespace"] = input.request_namespace;
  }
  out.logs.push_back({LogLine::Level::kInfo, "Process sidecar injection request"});
  auto decision = injectRequired(ignoredNamespaces(), settings.config, at(pod, {"spec"}), meta);
  out.logs.insert(out.logs.end(), decision.logs.begin(), decision.logs.end());
  out.reason = decision.reason;
  if (!decision.required) {
    out.logs.push_back({LogLine::Level::kInfo, "Skipping due to policy check"});
    out.decision = Decision::kSkip;
    return out;
  }
  const std::string dns = str(at(pod, {"spec"}), "dnsPolicy");
  if (!dns.empty() && dns != "ClusterFirst") {
    out.logs.push_back({LogLine::Level::kWarning,
                        "\"" + policyWarningName(pod) +
                            "\"'s DNSPolicy is not \"ClusterFirst\". The Envoy sidecar may not "
                            "able to connect to Istio Pilot"});
  }
  InjectionParams params;
  params.pod = goPodRoundTrip(pod);
  std::tie(params.deploy_meta, params.type_meta) = deployMetaFromPod(pod);
  params.proxy_envs = input.proxy_envs;
  params.native_sidecars = input.native_sidecars;
  if (input.openshift) {
    params.namespace_object = input.namespace_object;
    resetSidecarUserMatchingApp(params.pod, &out.logs);
  }
  auto injected = injectPod(settings, params);
  if (!injected) {
    out.decision = Decision::kError;
    out.error_message = injected.error().message;
    out.logs.push_back({LogLine::Level::kError, "Pod injection failed: " + out.error_message});
    return out;
  }
  out.decision = Decision::kInject;
  out.injected_pod = *injected;
  // webhook.go createPatch: jsonpatch.CreatePatch(json.Marshal(original), json.Marshal(pod)).
  out.patch = createPatchGomodules(goTypedPod(params.pod), goTypedPod(*injected));
  return out;
}

core::Result<json> kubeInject(const InjectorSettings& settings, const json& object,
                              std::vector<std::string>* warnings, bool native_sidecars) {
  if (!object.is_object()) return object;
  // Istio 1.29 is the first release known to build with apimachinery 0.35 (istio.io/client-go
  // v1.29.0's go.mod), where an unset creationTimestamp is omitted; 1.28's is not known here.
  const bool timestamp_null = !settings.version.atLeast(1, 29);
  const std::string kind = str(object, "kind");
  json out = object;
  json* metadata = nullptr;
  json* spec = nullptr;
  json deployment_meta = at(object, {"metadata"});
  json type_meta = {{"kind", kind}, {"apiVersion", str(object, "apiVersion")}};
  std::pair<json, json> pod_meta;
  if (kind == "Pod") {
    metadata = &ensureObject(out, "metadata");
    spec = &ensureObject(out, "spec");
    pod_meta = deployMetaFromPod(object);
    deployment_meta = pod_meta.first;
    type_meta = pod_meta.second;
  } else if (kind == "CronJob") {
    // The CronJob quirk: labels and annotations come from spec.jobTemplate.metadata.
    json& jt = ensureObject(ensureObject(out, "spec"), "jobTemplate");
    metadata = &ensureObject(jt, "metadata");
    spec = &ensureObject(ensureObject(ensureObject(jt, "spec"), "template"), "spec");
  } else if (kind == "Deployment" || kind == "DaemonSet" || kind == "ReplicaSet" ||
             kind == "StatefulSet" || kind == "Job" || kind == "ReplicationController" ||
             kind == "DeploymentConfig") {
    if (!at(object, {"spec", "template"}).is_object()) {
      if (kind == "ReplicationController" || kind == "DeploymentConfig") {
        return core::Error{"spec.template is required value"};
      }
    }
    json& tmpl = ensureObject(ensureObject(out, "spec"), "template");
    metadata = &ensureObject(tmpl, "metadata");
    spec = &ensureObject(tmpl, "spec");
  } else {
    return object;  // not registered: passed through
  }
  std::string name = str(*metadata, "name");
  if (name.empty()) name = str(deployment_meta, "name");
  const std::string dep_ns = str(deployment_meta, "namespace");
  const std::string full = dep_ns.empty() ? name : dep_ns + "/" + name;
  const std::string kind_prefix = kind.empty() ? "" : kind + " ";
  if (truthy(at(*spec, {"hostNetwork"}))) {
    if (warnings) {
      warnings->push_back("===> Skipping injection because " + kind_prefix + go::marshalString(full) +
                          " has host networking enabled\n");
    }
    return goTypedWorkload(out, timestamp_null);
  }
  InjectorConfig enabled;
  enabled.policy = std::string(kPolicyEnabled);
  json meta_copy = *metadata;
  auto d = injectRequired(ignoredNamespaces(), enabled, *spec, meta_copy);
  if (!d.required) {
    if (warnings) {
      warnings->push_back("===> Skipping injection because " + kind_prefix + go::marshalString(full) +
                          " has sidecar injection disabled\n");
    }
    return goTypedWorkload(out, timestamp_null);
  }
  InjectionParams params;
  params.pod = json{{"metadata", *metadata}, {"spec", *spec}};
  goPodRoundTripInPlace(params.pod);
  params.deploy_meta = {{"name", str(deployment_meta, "name")},
                        {"namespace", str(deployment_meta, "namespace")}};
  params.type_meta = type_meta;
  params.native_sidecars = native_sidecars;
  params.default_templates = {std::string(kSidecarTemplateName)};
  params.use_aliases = false;
  params.use_injected_annotations = false;
  auto injected = injectPod(settings, params);
  if (!injected) return injected.error();
  *metadata = at(*injected, {"metadata"}).is_object() ? (*injected)["metadata"] : json::object();
  *spec = at(*injected, {"spec"}).is_object() ? (*injected)["spec"] : json::object();
  // IntoResourceFile writes the typed object back with yaml.Marshal.
  return goTypedWorkload(out, timestamp_null);
}

}  // namespace harness::injector::istio
