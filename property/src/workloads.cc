// Generators of Kubernetes objects (workloads.h). Values are drawn from small vocabularies so
// that cases collide on names and ports the injectors care about (Linkerd's default opaque ports
// 3306 and 11211, Istio's 15000-15090, named ports used by probes).

#include "harness/property/workloads.h"

#include <cctype>
#include <ostream>
#include <utility>

#include "harness/core/yaml.h"

namespace harness::property {

namespace {

using nlohmann::json;

template <typename T>
T pick(std::initializer_list<T> values) {
  return *rc::gen::elementOf(std::vector<T>(values));
}

std::string pickString(std::initializer_list<const char*> values) {
  std::vector<std::string> v(values.begin(), values.end());
  return *rc::gen::elementOf(v);
}

bool maybe() { return *rc::gen::arbitrary<bool>(); }
// Rarer than maybe(): false shrinks first and is three times as likely.
bool sometimes() { return *rc::gen::inRange(0, 4) == 3; }

// Annotations (or labels) drawn from `vocabulary`: each key at most once, each with one of its
// values (valid and invalid ones).
using Entries = std::vector<std::pair<std::string, std::vector<std::string>>>;

json pickEntries(const Entries& vocabulary, int max_entries) {
  json out = json::object();
  const auto chosen = *rc::gen::container<std::vector<std::size_t>>(
      rc::gen::inRange<std::size_t>(0, vocabulary.size()));
  int n = 0;
  for (std::size_t index : chosen) {
    if (n >= max_entries) break;
    const auto& [key, values] = vocabulary[index];
    if (out.contains(key)) continue;
    out[key] = *rc::gen::elementOf(values);
    ++n;
  }
  return out;
}

// Linkerd's pod annotations (pkg/k8s/annotations.go), with values it rejects or ignores.
const Entries& linkerdPodAnnotations() {
  static const Entries kEntries = {
      {"linkerd.io/inject", {"enabled", "disabled", "ingress", "Enabled", ""}},
      {"config.linkerd.io/proxy-enable-native-sidecar", {"true", "false", "yes"}},
      {"config.linkerd.io/skip-inbound-ports", {"3306", "4000-5000", "25,587", "http", "-1"}},
      {"config.linkerd.io/skip-outbound-ports", {"443", "4222,6222", "1-65535", "x"}},
      {"config.linkerd.io/opaque-ports", {"3306", "http", "5000-5010", "8080,mysql", "70000"}},
      {"config.linkerd.io/proxy-cpu-request", {"100m", "1", "lots"}},
      {"config.linkerd.io/proxy-memory-limit", {"250Mi", "1Gi", "-5"}},
      {"config.linkerd.io/proxy-log-level", {"warn,linkerd=info", "debug"}},
      {"config.linkerd.io/proxy-await", {"enabled", "disabled", "maybe"}},
      {"config.linkerd.io/default-inbound-policy",
       {"all-unauthenticated", "cluster-authenticated", "deny", "audit", "open"}},
      {"config.linkerd.io/proxy-uid", {"2102", "0", "-1", "abc"}},
      {"config.linkerd.io/proxy-version", {"edge-24.11.8", "stable-2.14.10"}},
      {"config.alpha.linkerd.io/proxy-wait-before-exit-seconds", {"0", "10", "soon"}},
      {"config.linkerd.io/close-wait-timeout", {"1m", "bogus"}},
      {"config.linkerd.io/enable-debug-sidecar", {"true", "false"}},
      {"linkerd.io/created-by", {"linkerd/cli stable-2.14.10"}},
  };
  return kEntries;
}

// Istio's pod annotations and labels (istio.io/api annotation/annotations.gen.go,
// label/labels.gen.go), with values its validators reject (pkg/kube/inject/validate.go).
const Entries& istioPodAnnotations() {
  static const Entries kEntries = {
      {"sidecar.istio.io/inject", {"true", "false", "yes"}},
      {"sidecar.istio.io/proxyCPU", {"100m", "2", "lots"}},
      {"sidecar.istio.io/proxyMemoryLimit", {"1Gi", "-1"}},
      {"sidecar.istio.io/interceptionMode", {"REDIRECT", "TPROXY", "NONE", "bogus"}},
      {"traffic.sidecar.istio.io/includeOutboundIPRanges", {"*", "10.0.0.0/8", "not-an-ip"}},
      {"traffic.sidecar.istio.io/excludeInboundPorts", {"8080", "9090,3306", "x"}},
      {"traffic.sidecar.istio.io/excludeOutboundPorts", {"443", "70000"}},
      {"sidecar.istio.io/rewriteAppHTTPProbers", {"true", "false"}},
      {"status.sidecar.istio.io/port", {"15020", "0", "port"}},
      {"sidecar.istio.io/logLevel", {"info", "debug", "noisy"}},
      {"proxy.istio.io/config",
       {"holdApplicationUntilProxyStarts: true", "concurrency: 2", "{bogus"}},
      {"sidecar.istio.io/userVolumeMount", {R"({"extra":{"mountPath":"/extra"}})"}},
      {"kubectl.kubernetes.io/default-container", {"app0"}},
  };
  return kEntries;
}

const Entries& istioPodLabels() {
  static const Entries kEntries = {
      {"sidecar.istio.io/inject", {"true", "false", "TRUE"}},
      {"istio.io/rev", {"default", "canary"}},
      {"service.istio.io/canonical-name", {"shop"}},
  };
  return kEntries;
}

const Entries& linkerdNamespaceAnnotations() {
  static const Entries kEntries = {
      {"linkerd.io/inject", {"enabled", "disabled", "ingress", "bogus"}},
      {"config.linkerd.io/proxy-enable-native-sidecar", {"true", "false"}},
      {"config.linkerd.io/opaque-ports", {"5432", "4000-4100"}},
      {"config.linkerd.io/skip-outbound-ports", {"25"}},
  };
  return kEntries;
}

const Entries& istioNamespaceLabels() {
  static const Entries kEntries = {
      {"istio-injection", {"enabled", "disabled"}},
      {"istio.io/rev", {"default", "canary"}},
  };
  return kEntries;
}

const std::vector<std::string> kContainerNames = {"app", "web", "worker", "api", "cache"};
const std::vector<std::string> kInitNames = {"setup", "migrate", "log-shipper", "vault-agent"};

json genPort() {
  json port = {{"containerPort", pick<int>({8080, 80, 443, 3306, 5432, 9090, 11211, 15001, 4143})}};
  if (maybe()) port["name"] = pickString({"http", "https", "mysql", "metrics", "grpc", "admin"});
  if (sometimes()) port["protocol"] = pickString({"TCP", "UDP", "SCTP"});
  return port;
}

// A probe of any kind: httpGet (port number or name, scheme, headers), tcpSocket, grpc, exec.
json genProbe(const json& ports) {
  json probe = json::object();
  json port = json(8080);
  if (!ports.empty() && maybe()) {
    const json& p = ports[*rc::gen::inRange<std::size_t>(0, ports.size())];
    port = p.contains("name") && maybe() ? p["name"] : p["containerPort"];
  } else if (sometimes()) {
    port = json("http");  // a name no port of the container has
  }
  switch (*rc::gen::inRange(0, 4)) {
    case 0:
      probe["httpGet"] = {{"path", pickString({"/healthz", "/ready", "/"})}, {"port", port}};
      if (sometimes()) probe["httpGet"]["scheme"] = pickString({"HTTP", "HTTPS"});
      if (sometimes()) {
        probe["httpGet"]["httpHeaders"] = json::array({{{"name", "X-Probe"}, {"value", "1"}}});
      }
      break;
    case 1:
      probe["tcpSocket"] = {{"port", port}};
      break;
    case 2:
      probe["grpc"] = {{"port", port.is_number() ? port : json(9090)}};
      if (sometimes()) probe["grpc"]["service"] = "liveness";
      break;
    default:
      probe["exec"] = {{"command", json::array({"cat", "/tmp/healthy"})}};
      break;
  }
  if (sometimes()) probe["initialDelaySeconds"] = *rc::gen::inRange(0, 30);
  if (sometimes()) probe["periodSeconds"] = *rc::gen::inRange(1, 60);
  return probe;
}

json genEnv() {
  json env = json::array();
  const int n = *rc::gen::inRange(0, 3);
  for (int i = 0; i < n; ++i) {
    json var = {{"name", pickString({"LOG_LEVEL", "PORT", "POD_IP", "HTTP_PROXY", "ISTIO_META_X"})
                             + std::string(i ? "_" + std::to_string(i) : "")}};
    if (maybe()) {
      var["value"] = pickString({"info", "8080", "", "http://proxy:3128"});
    } else {
      var["valueFrom"] = {{"fieldRef", {{"fieldPath", pickString({"status.podIP",
                                                                   "metadata.name"})}}}};
    }
    env.push_back(std::move(var));
  }
  return env;
}

json genContainerSecurityContext() {
  json sc = json::object();
  if (maybe()) sc["runAsUser"] = pick<int>({1000, 0, 2102, 1337});
  if (maybe()) sc["runAsNonRoot"] = maybe();
  if (sometimes()) sc["readOnlyRootFilesystem"] = true;
  if (sometimes()) sc["allowPrivilegeEscalation"] = false;
  if (sometimes()) sc["privileged"] = maybe();
  if (sometimes()) {
    sc["capabilities"] = {{"drop", json::array({"ALL"})}};
    if (maybe()) sc["capabilities"]["add"] = json::array({"NET_ADMIN", "NET_RAW"});
  }
  return sc;
}

}  // namespace

const std::vector<std::string>& workloadKinds() {
  static const std::vector<std::string> kKinds = {"Pod",     "Deployment", "StatefulSet",
                                                  "DaemonSet", "Job",      "CronJob",
                                                  "ReplicaSet"};
  return kKinds;
}

std::string apiVersionOfKind(std::string_view kind) {
  if (kind == "Pod") return "v1";
  if (kind == "Job" || kind == "CronJob") return "batch/v1";
  return "apps/v1";
}

std::string resourceOfKind(std::string_view kind) {
  std::string out;
  for (char c : kind) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out + "s";
}

rc::Gen<json> genContainer(int index, bool init) {
  return rc::gen::exec([index, init] {
    const auto& names = init ? kInitNames : kContainerNames;
    std::string name = *rc::gen::elementOf(names);
    if (index > 0) name += std::to_string(index);
    json c = {{"name", name},
              {"image", pickString({"nginx:1.27", "ghcr.io/example/app:v2", "busybox",
                                    "registry.example.com:5000/team/api@sha256:"
                                    "3b2c1e6f0a9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b"})}};
    if (init && maybe()) c["restartPolicy"] = "Always";  // a native sidecar
    const bool sidecar = c.contains("restartPolicy");
    if (!init || sidecar) {
      const int n_ports = *rc::gen::inRange(0, 3);
      for (int i = 0; i < n_ports; ++i) c["ports"].push_back(genPort());
      // Port numbers unique within the container, as validation requires of (port, protocol).
      if (c.contains("ports")) {
        json unique = json::array();
        for (auto& p : c["ports"]) {
          bool dup = false;
          for (auto& q : unique) dup = dup || q["containerPort"] == p["containerPort"] ||
                                      (q.contains("name") && q.value("name", "") == p.value("name", "-"));
          if (!dup) unique.push_back(p);
        }
        c["ports"] = std::move(unique);
      }
      const json ports = c.value("ports", json::array());
      if (sometimes()) c["livenessProbe"] = genProbe(ports);
      if (sometimes()) c["readinessProbe"] = genProbe(ports);
      if (sometimes()) c["startupProbe"] = genProbe(ports);
    }
    if (sometimes()) c["command"] = json::array({"/bin/sh", "-c", "exec app"});
    if (sometimes()) c["args"] = json::array({"--port=8080"});
    if (sometimes()) c["env"] = genEnv();
    if (sometimes()) c["imagePullPolicy"] = pickString({"Always", "IfNotPresent", "Never"});
    if (sometimes()) {
      c["resources"] = {{"requests", {{"cpu", pickString({"100m", "1", "250m"})},
                                      {"memory", pickString({"64Mi", "1Gi"})}}}};
      if (maybe()) c["resources"]["limits"] = {{"memory", "512Mi"}};
    }
    if (sometimes()) c["securityContext"] = genContainerSecurityContext();
    return c;
  });
}

rc::Gen<json> genPodSpec(const std::string& restart_policy) {
  return rc::gen::exec([restart_policy] {
    json spec = json::object();
    const int n = *rc::gen::inRange(1, 4);
    for (int i = 0; i < n; ++i) spec["containers"].push_back(*genContainer(i, false));
    const int n_init = *rc::gen::inRange(0, 3);
    for (int i = 0; i < n_init; ++i) spec["initContainers"].push_back(*genContainer(i, true));
    // Volumes, mounted by some containers.
    const int n_volumes = *rc::gen::inRange(0, 3);
    static const std::vector<std::string> kVolumeNames = {"data", "config", "certs"};
    for (int i = 0; i < n_volumes; ++i) {
      json volume = {{"name", kVolumeNames[static_cast<std::size_t>(i)]}};
      switch (*rc::gen::inRange(0, 4)) {
        case 0:
          volume["emptyDir"] = json::object();
          if (sometimes()) volume["emptyDir"]["medium"] = "Memory";
          break;
        case 1:
          volume["configMap"] = {{"name", "app-config"}};
          break;
        case 2:
          volume["secret"] = {{"secretName", "app-tls"}};
          break;
        default:
          volume["projected"] = {
              {"sources", json::array({{{"serviceAccountToken",
                                         {{"path", "token"}, {"expirationSeconds", 3600}}}}})}};
          break;
      }
      spec["volumes"].push_back(volume);
      auto& target = spec["containers"][static_cast<std::size_t>(
          *rc::gen::inRange(0, static_cast<int>(spec["containers"].size())))];
      target["volumeMounts"].push_back(
          {{"name", volume["name"]}, {"mountPath", "/var/" + volume["name"].get<std::string>()}});
    }
    if (sometimes()) spec["hostNetwork"] = true;
    if (maybe()) spec["serviceAccountName"] = pickString({"default", "web", "builder"});
    if (sometimes()) spec["automountServiceAccountToken"] = maybe();
    if (sometimes()) {
      spec["securityContext"] = {{"runAsUser", pick<int>({1000, 0})},
                                 {"fsGroup", pick<int>({2000, 1337})}};
      if (maybe()) spec["securityContext"]["runAsNonRoot"] = true;
    }
    if (!restart_policy.empty()) {
      spec["restartPolicy"] = restart_policy;
    } else if (sometimes()) {
      spec["restartPolicy"] = pickString({"Always", "OnFailure", "Never"});
    }
    if (sometimes()) spec["terminationGracePeriodSeconds"] = pick<int>({30, 5, 0});
    if (sometimes()) spec["nodeSelector"] = {{"kubernetes.io/os", "linux"}};
    return spec;
  });
}

rc::Gen<json> genPodMetadata(Vocabulary vocabulary) {
  return rc::gen::exec([vocabulary] {
    json labels = {{"app", pickString({"web", "api", "shop"})}};
    if (sometimes()) labels["version"] = pickString({"v1", "v2"});
    json annotations = json::object();
    if (vocabulary.linkerd) annotations.update(pickEntries(linkerdPodAnnotations(), 4));
    if (vocabulary.istio) {
      annotations.update(pickEntries(istioPodAnnotations(), 3));
      labels.update(pickEntries(istioPodLabels(), 2));
    }
    if (sometimes()) annotations["example.com/team"] = "payments";
    json meta = {{"labels", labels}};
    if (!annotations.empty()) meta["annotations"] = annotations;
    return meta;
  });
}

rc::Gen<json> genWorkload(std::string kind, std::string ns, Vocabulary vocabulary) {
  return rc::gen::exec([kind, ns, vocabulary] {
    const std::string name = pickString({"web", "api-7d9c", "shop-0"});
    json pod_meta = *genPodMetadata(vocabulary);
    const bool batch = kind == "Job" || kind == "CronJob";
    json spec = *genPodSpec(batch ? pickString({"Never", "OnFailure"}) : std::string());
    json object = {{"apiVersion", apiVersionOfKind(kind)},
                   {"kind", kind},
                   {"metadata", {{"name", name}, {"namespace", ns}}}};
    if (kind == "Pod") {
      pod_meta["name"] = name;
      pod_meta["namespace"] = ns;
      // Pods created by a controller carry an owner reference (the injector looks owners up).
      if (maybe()) {
        const std::string owner_kind =
            pickString({"ReplicaSet", "StatefulSet", "DaemonSet", "Job"});
        pod_meta["ownerReferences"] = json::array(
            {{{"apiVersion", apiVersionOfKind(owner_kind)},
              {"kind", owner_kind},
              {"name", name + "-owner"},
              {"uid", "5f2a7c4e-0000-4000-8000-00000000000" + std::to_string(owner_kind.size() % 10)},
              {"controller", true},
              {"blockOwnerDeletion", true}}});
      }
      object["metadata"] = std::move(pod_meta);
      object["spec"] = std::move(spec);
      return object;
    }
    json tmpl = {{"metadata", pod_meta}, {"spec", spec}};
    const json selector = {{"matchLabels", {{"app", pod_meta["labels"]["app"]}}}};
    if (kind == "CronJob") {
      object["spec"] = {{"schedule", pickString({"*/5 * * * *", "@hourly"})},
                        {"jobTemplate", {{"spec", {{"template", tmpl}}}}}};
    } else if (kind == "Job") {
      object["spec"] = {{"template", tmpl}};
      if (maybe()) object["spec"]["backoffLimit"] = *rc::gen::inRange(0, 6);
    } else {
      object["spec"] = {{"selector", selector}, {"template", tmpl}};
      if (kind != "DaemonSet" && maybe()) object["spec"]["replicas"] = *rc::gen::inRange(0, 5);
      if (kind == "StatefulSet") object["spec"]["serviceName"] = name;
    }
    if (sometimes()) object["metadata"]["labels"] = {{"app", pod_meta["labels"]["app"]}};
    // Workload-level annotations: Linkerd reads the inject annotation from the workload too.
    if (vocabulary.linkerd && sometimes()) {
      object["metadata"]["annotations"] = {
          {"linkerd.io/inject", pickString({"enabled", "disabled"})}};
    }
    return object;
  });
}

rc::Gen<json> genNamespace(std::string name, Vocabulary vocabulary) {
  return rc::gen::exec([name, vocabulary] {
    json meta = {{"name", name},
                 {"labels", {{"kubernetes.io/metadata.name", name}}}};
    if (vocabulary.linkerd) {
      json annotations = pickEntries(linkerdNamespaceAnnotations(), 3);
      if (!annotations.empty()) meta["annotations"] = annotations;
    }
    if (vocabulary.istio) meta["labels"].update(pickEntries(istioNamespaceLabels(), 2));
    if (sometimes()) meta["labels"]["team"] = "payments";
    return json{{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", meta},
                {"status", {{"phase", "Active"}}}};
  });
}

rc::Gen<AdmissionCase> genAdmissionCase(std::vector<std::string> kinds, Vocabulary vocabulary) {
  if (kinds.empty()) kinds = workloadKinds();
  return rc::gen::exec([kinds, vocabulary] {
    const std::string kind = *rc::gen::elementOf(kinds);
    const std::string ns = pickString({"shop", "default", "payments"});
    AdmissionCase c;
    c.namespace_object = *genNamespace(ns, vocabulary);
    c.object = *genWorkload(kind, ns, vocabulary);
    return c;
  });
}

void showValue(const AdmissionCase& c, std::ostream& os) {
  os << "object:\n" << core::toYaml(c.object) << "namespace:\n" << core::toYaml(c.namespace_object);
}

}  // namespace harness::property
