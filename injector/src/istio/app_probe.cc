#include "harness/injector/istio/app_probe.h"

#include "harness/core/json.h"
#include "harness/go/json.h"
#include "harness/go/strconv.h"

// Followed: istio/istio pkg/kube/inject/app_probe.go (DumpAppProbers with updateNamedPort,
// convertAppProber*, convertAppLifecycleHandler, patchRewriteProbe),
// pilot/cmd/pilot-agent/status (FormatProberURL, Prober field order, KubeAppProberEnvName),
// pkg/kube/inject/webhook.go (applyRewrite, mergeOrAppendProbers).

namespace harness::injector::istio {

namespace {

using nlohmann::json;

constexpr char kProxyName[] = "istio-proxy";

// Go's encoding/json for an IntOrString (number or string).
std::string intOrString(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_string()) return go::marshalString(v.get<std::string>());
  return "0";
}

// k8s.io/api field order, omitempty as in the Go structs.
std::string httpGetJson(const json& h) {
  std::string out = "{";
  bool first = true;
  auto add = [&](const std::string& kv) {
    if (!first) out += ",";
    first = false;
    out += kv;
  };
  if (h.contains("path") && h["path"].is_string() && !h["path"].get<std::string>().empty()) {
    add("\"path\":" + go::marshalString(h["path"].get<std::string>()));
  }
  add("\"port\":" + intOrString(h.value("port", json(0))));
  if (h.contains("host") && h["host"].is_string() && !h["host"].get<std::string>().empty()) {
    add("\"host\":" + go::marshalString(h["host"].get<std::string>()));
  }
  if (h.contains("scheme") && h["scheme"].is_string() && !h["scheme"].get<std::string>().empty()) {
    add("\"scheme\":" + go::marshalString(h["scheme"].get<std::string>()));
  }
  if (h.contains("httpHeaders") && h["httpHeaders"].is_array() && !h["httpHeaders"].empty()) {
    std::string hs = "[";
    for (std::size_t i = 0; i < h["httpHeaders"].size(); ++i) {
      const json& e = h["httpHeaders"][i];
      if (i > 0) hs += ",";
      hs += "{\"name\":" + go::marshalString(e.value("name", "")) + ",\"value\":" +
            go::marshalString(e.value("value", "")) + "}";
    }
    add("\"httpHeaders\":" + hs + "]");
  }
  return out + "}";
}

std::string tcpJson(const json& t) {
  std::string out = "{\"port\":" + intOrString(t.value("port", json(0)));
  if (t.contains("host") && t["host"].is_string() && !t["host"].get<std::string>().empty()) {
    out += ",\"host\":" + go::marshalString(t["host"].get<std::string>());
  }
  return out + "}";
}

std::string grpcJson(const json& g) {
  std::string out = "{\"port\":" + intOrString(g.value("port", json(0))) + ",\"service\":";
  out += g.contains("service") && g["service"].is_string() ? go::marshalString(g["service"].get<std::string>())
                                                           : std::string("null");
  return out + "}";
}

std::map<std::string, int> portMap(const json& c) {
  std::map<std::string, int> m;
  if (c.contains("ports") && c["ports"].is_array()) {
    for (const auto& p : c["ports"]) {
      if (p.is_object() && p.value("name", "") != "" && p.contains("containerPort") &&
          p["containerPort"].is_number_integer()) {
        m[p["name"].get<std::string>()] = p["containerPort"].get<int>();
      }
    }
  }
  return m;
}

// updateNamedPort + the Prober marshalling. nullopt: nothing to redirect.
std::optional<std::string> proberJson(json handler, const std::map<std::string, int>& ports,
                                      int target_port, bool with_timeout) {
  if (!handler.is_object()) return std::nullopt;
  std::string body;
  if (handler.contains("httpGet") && handler["httpGet"].is_object()) {
    json& port = handler["httpGet"]["port"];
    if (port.is_string()) {
      auto it = ports.find(port.get<std::string>());
      if (it == ports.end()) return std::nullopt;
      port = it->second;
    } else if (port.is_number_integer() && port.get<int>() == target_port) {
      return std::nullopt;  // already rewritten
    }
    body = "\"httpGet\":" + httpGetJson(handler["httpGet"]);
  } else if (handler.contains("tcpSocket") && handler["tcpSocket"].is_object()) {
    json& port = handler["tcpSocket"]["port"];
    if (port.is_string()) {
      auto it = ports.find(port.get<std::string>());
      if (it == ports.end()) return std::nullopt;
      port = it->second;
    } else if (port.is_number_integer() && port.get<int>() == target_port) {
      return std::nullopt;
    }
    body = "\"tcpSocket\":" + tcpJson(handler["tcpSocket"]);
  } else if (with_timeout && handler.contains("grpc") && handler["grpc"].is_object()) {
    body = "\"grpc\":" + grpcJson(handler["grpc"]);
  } else {
    return std::nullopt;
  }
  if (with_timeout && handler.contains("timeoutSeconds") &&
      handler["timeoutSeconds"].is_number_integer() && handler["timeoutSeconds"].get<int>() != 0) {
    body += ",\"timeoutSeconds\":" + std::to_string(handler["timeoutSeconds"].get<int>());
  }
  return "{" + body + "}";
}

// A status.Prober as Go marshals the typed struct: httpGet, tcpSocket, grpc (pointers, omitted
// when nil), timeoutSeconds (omitempty), each action in its k8s.io/api field order. A nil
// *Prober (JSON null, or anything that is not an object) is "null".
std::string typedProberJson(const json& prober) {
  if (!prober.is_object()) return "null";
  std::string body;
  auto add = [&body](const std::string& kv) {
    if (!body.empty()) body += ",";
    body += kv;
  };
  if (prober.contains("httpGet") && prober["httpGet"].is_object()) {
    add("\"httpGet\":" + httpGetJson(prober["httpGet"]));
  }
  if (prober.contains("tcpSocket") && prober["tcpSocket"].is_object()) {
    add("\"tcpSocket\":" + tcpJson(prober["tcpSocket"]));
  }
  if (prober.contains("grpc") && prober["grpc"].is_object()) {
    add("\"grpc\":" + grpcJson(prober["grpc"]));
  }
  if (prober.contains("timeoutSeconds") && prober["timeoutSeconds"].is_number_integer() &&
      prober["timeoutSeconds"].get<std::int64_t>() != 0) {
    add("\"timeoutSeconds\":" + std::to_string(prober["timeoutSeconds"].get<std::int64_t>()));
  }
  return "{" + body + "}";
}

// A KubeAppProbers map (path -> marshalled prober) as Go marshals a map: keys sorted.
std::string marshalProbers(const std::map<std::string, std::string>& probers) {
  std::string s = "{";
  bool first = true;
  for (const auto& [k, v] : probers) {
    if (!first) s += ",";
    first = false;
    s += go::marshalString(k) + ":" + v;
  }
  return s + "}";
}

template <class F>
void forEachAppContainer(json& pod, F&& f) {
  if (!pod.contains("spec") || !pod["spec"].is_object()) return;
  for (const char* list : {"initContainers", "containers"}) {
    auto it = pod["spec"].find(list);
    if (it == pod["spec"].end() || !it->is_array()) continue;
    for (auto& c : *it) {
      if (!c.is_object() || c.value("name", "") == kProxyName) continue;
      f(c);
    }
  }
}

constexpr struct {
  const char* field;
  const char* suffix;
} kProbes[] = {{"readinessProbe", "readyz"}, {"livenessProbe", "livez"}, {"startupProbe", "startupz"}};
constexpr struct {
  const char* field;
  const char* suffix;
} kHooks[] = {{"preStop", "prestopz"}, {"postStart", "poststartz"}};

void rewriteHandler(json& handler, const std::string& url, int status_port) {
  if (!handler.is_object()) return;
  if (handler.contains("httpGet") && handler["httpGet"].is_object()) {
    json& h = handler["httpGet"];
    h["port"] = status_port;
    h["path"] = url;
    if (h.value("scheme", "") == "HTTPS") h["scheme"] = "HTTP";
  } else if (handler.contains("tcpSocket") && handler["tcpSocket"].is_object()) {
    handler.erase("tcpSocket");
    handler["httpGet"] = json{{"path", url}, {"port", status_port}};
  } else if (handler.contains("grpc") && handler["grpc"].is_object()) {
    handler.erase("grpc");
    handler["httpGet"] = json{{"path", url}, {"port", status_port}};
  }
}

}  // namespace

bool shouldRewriteAppHTTPProbers(const std::map<std::string, std::string>& annotations,
                                 bool values_default) {
  auto it = annotations.find("sidecar.istio.io/rewriteAppHTTPProbers");
  if (it != annotations.end()) {
    if (auto b = go::parseBool(it->second); b) return *b;
  }
  return values_default;
}

std::string dumpAppProbers(const json& pod, int status_port) {
  std::map<std::string, std::string> out;  // sorted like Go's map marshalling
  json copy = pod;
  forEachAppContainer(copy, [&](json& c) {
    const std::string name = c.value("name", "");
    const auto ports = portMap(c);
    for (const auto& p : kProbes) {
      if (!c.contains(p.field)) continue;
      if (auto v = proberJson(c[p.field], ports, status_port, true)) {
        out["/app-health/" + name + "/" + p.suffix] = *v;
      }
    }
    if (c.contains("lifecycle") && c["lifecycle"].is_object()) {
      for (const auto& h : kHooks) {
        if (!c["lifecycle"].contains(h.field)) continue;
        if (auto v = proberJson(c["lifecycle"][h.field], ports, status_port, false)) {
          out["/app-lifecycle/" + name + "/" + h.suffix] = *v;
        }
      }
    }
  });
  if (out.empty()) return {};
  return marshalProbers(out);
}

void patchRewriteProbe(json& pod, int mesh_status_port) {
  int status_port = mesh_status_port;
  const json* annotations = nullptr;
  if (pod.contains("metadata") && pod["metadata"].contains("annotations")) {
    annotations = &pod["metadata"]["annotations"];
  }
  if (annotations != nullptr && annotations->is_object()) {
    auto it = annotations->find("status.sidecar.istio.io/port");
    if (it != annotations->end() && it->is_string()) {
      if (auto p = go::parseInt(it->get<std::string>(), 10, 32); p) {
        status_port = static_cast<int>(*p);
      }
    }
  }
  forEachAppContainer(pod, [&](json& c) {
    const std::string name = c.value("name", "");
    for (const auto& p : kProbes) {
      if (c.contains(p.field)) {
        rewriteHandler(c[p.field], "/app-health/" + name + "/" + p.suffix, status_port);
      }
    }
    if (c.contains("lifecycle") && c["lifecycle"].is_object()) {
      for (const auto& h : kHooks) {
        if (c["lifecycle"].contains(h.field) && !c["lifecycle"][h.field].contains("grpc")) {
          rewriteHandler(c["lifecycle"][h.field], "/app-lifecycle/" + name + "/" + h.suffix,
                         status_port);
        }
      }
    }
  });
}

void applyRewrite(json& pod, bool values_rewrite_default, int mesh_status_port) {
  json* sidecar = nullptr;
  for (const char* list : {"containers", "initContainers"}) {
    if (sidecar != nullptr) break;
    if (!pod.contains("spec") || !pod["spec"].contains(list) || !pod["spec"][list].is_array()) continue;
    for (auto& c : pod["spec"][list]) {
      if (c.is_object() && c.value("name", "") == kProxyName) {
        sidecar = &c;
        break;
      }
    }
  }
  if (sidecar == nullptr) return;
  std::map<std::string, std::string> annotations;
  bool previously_injected = false;
  if (pod.contains("metadata") && pod["metadata"].contains("annotations") &&
      pod["metadata"]["annotations"].is_object()) {
    for (auto it = pod["metadata"]["annotations"].begin(); it != pod["metadata"]["annotations"].end(); ++it) {
      if (it->is_string()) annotations[it.key()] = it->get<std::string>();
    }
    previously_injected = annotations.count("sidecar.istio.io/status") > 0;
  }
  if (!shouldRewriteAppHTTPProbers(annotations, values_rewrite_default)) return;
  const std::string probers = dumpAppProbers(pod, mesh_status_port);
  if (!probers.empty()) {
    json& env = (*sidecar)["env"];
    if (!env.is_array()) env = json::array();
    bool merged = false;
    if (previously_injected) {
      for (auto& e : env) {
        if (!e.is_object() || e.value("name", "") != kKubeAppProberEnvName) continue;
        // mergeOrAppendProbers: old keys win; the entry keeps its position.
        json old = core::parseJsonOrDiscarded(e.value("value", ""));
        json fresh = core::parseJsonOrDiscarded(probers);
        merged = true;
        if (old.is_discarded() || fresh.is_discarded() || !old.is_object() || !fresh.is_object()) break;
        for (auto it = old.begin(); it != old.end(); ++it) fresh[it.key()] = *it;
        // Marshalled from the typed KubeAppProbers (map[string]*Prober), so each prober keeps
        // its struct field order: the same text as the first injection wrote, which keeps
        // re-injection idempotent.
        std::map<std::string, std::string> merged_probers;
        for (auto it = fresh.begin(); it != fresh.end(); ++it) {
          merged_probers[it.key()] = typedProberJson(*it);
        }
        e = json{{"name", kKubeAppProberEnvName}, {"value", marshalProbers(merged_probers)}};
        break;
      }
    }
    if (!merged) env.push_back(json{{"name", kKubeAppProberEnvName}, {"value", probers}});
  }
  patchRewriteProbe(pod, mesh_status_port);
}

}  // namespace harness::injector::istio
