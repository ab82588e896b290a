#include "harness/injector/linkerd/injector.h"

#include <algorithm>
#include <cctype>

#include "harness/core/json.h"
#include "harness/go/base64.h"

#include "harness/injector/linkerd/annotations.h"
#include "harness/injector/linkerd/overrides.h"
#include "harness/injector/linkerd/pod_patch.h"
#include "harness/injector/linkerd/workload.h"

// Followed: controller/proxy-injector/webhook.go (Inject: the order of steps, events, logs and
// metrics), controller/proxy-injector/metrics.go (labels), controller/k8s/metadata_api.go
// (GetOwnerKindAndName, isValidRSParent), pkg/k8s/api.go (GetAPIResource), pkg/inject/inject.go
// (AppendNamespaceAnnotations, HasWorkloadAnnotation, CreateOpaquePortsPatch) and
// pkg/inject/annotation_patch.go. See docs/linkerd-injector.md §1.3, §1.4, §2.5, §4.

namespace harness::injector::linkerd {

namespace {

using nlohmann::json;

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The object's string member `key`, empty when it is absent or not a string.
std::string_view stringView(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                            : std::string_view();
}

std::string stringAt(const json& obj, const char* key) {
  return std::string(stringView(obj, key));
}

const json& metadataOf(const json& obj) {
  static const json kEmpty = json::object();
  if (!obj.is_object()) return kEmpty;
  auto it = obj.find("metadata");
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

// The object's owner references, pointing into it.
std::vector<const json*> ownerReferences(const json& obj) {
  std::vector<const json*> out;
  const json& meta = metadataOf(obj);
  auto it = meta.find("ownerReferences");
  if (it == meta.end() || !it->is_array()) return out;
  for (const auto& r : *it) out.push_back(&r);
  return out;
}

// pkg/k8s GetAPIResource: the kinds the informer cache can be asked about, by lower-case kind.
std::optional<std::string> canonicalKind(std::string_view lower_kind) {
  static const std::map<std::string, std::string, std::less<>> kKinds = {
      {"cronjob", "CronJob"},
      {"daemonset", "DaemonSet"},
      {"deployment", "Deployment"},
      {"job", "Job"},
      {"namespace", "Namespace"},
      {"pod", "Pod"},
      {"replicationcontroller", "ReplicationController"},
      {"replicaset", "ReplicaSet"},
      {"service", "Service"},
      {"statefulset", "StatefulSet"},
  };
  auto it = kKinds.find(lower_kind);
  if (it == kKinds.end()) return std::nullopt;
  return it->second;
}

// The pod label for an owner kind (inject.go populateMeta has no cronjob case).
std::optional<std::string> ownerLabel(std::string_view owner_kind) {
  for (const char* k :
       {"deployment", "replicationcontroller", "replicaset", "job", "daemonset", "statefulset"}) {
    if (owner_kind == k) return "linkerd.io/proxy-" + std::string(k);
  }
  return std::nullopt;
}

StringMap namespaceAnnotations(const json& ns) {
  StringMap out;
  const json& meta = metadataOf(ns);
  auto it = meta.find("annotations");
  if (it == meta.end() || !it->is_object()) return out;
  for (const auto& [k, v] : it->items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
  }
  return out;
}

bool has(const StringMap& m, std::string_view key) { return m.count(std::string(key)) > 0; }

json involvedObject(const json& parent, std::string_view kind, std::string_view ns) {
  const json& meta = metadataOf(parent);
  const std::string_view own_kind = stringView(parent, "kind");
  const std::string_view own_ns = stringView(meta, "namespace");
  json ref = json::object();  // member by member: a braced list copies every value twice
  ref.emplace("kind", own_kind.empty() ? kind : own_kind);
  ref.emplace("name", stringView(meta, "name"));
  ref.emplace("namespace", own_ns.empty() ? ns : own_ns);
  for (const char* key : {"uid", "resourceVersion"}) {
    if (const auto v = stringView(meta, key); !v.empty()) ref.emplace(key, v);
  }
  if (const auto api = stringView(parent, "apiVersion"); !api.empty()) {
    ref.emplace("apiVersion", api);
  }
  return ref;
}

std::string joinComma(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) {
    if (!out.empty()) out += ",";
    out += s;
  }
  return out;
}

void fail(Outcome* out, std::string message) {
  out->decision = Decision::kHandlerError;
  out->error_message = message;
  out->patch = nullptr;
  // server.go logs the handler error before answering allowed=false.
  out->logs.push_back(
      {LogLine::Level::kError, "failed to run webhook handler. Reason: " + std::move(message)});
}

json reportToJson(const Report& r) {
  json reasons = json::array();
  json texts = json::array();
  for (const Reason reason : r.reasons()) {
    reasons.push_back(reasonCode(reason));
    texts.push_back(reasonText(reason));
  }
  return {{"kind", r.kind},
          {"name", r.name},
          {"injectable", r.injectable()},
          {"annotation_at", r.annotation_at},
          {"reasons", reasons},
          {"readable_reasons", texts},
          {"udp", r.udp}};
}

// Everything an injected pod's patch is built from besides the configuration: the pod (template)
// metadata and spec as received (the pod's own annotations and labels included), where the
// template is, the annotations and labels the webhook adds, and the namespace's annotations
// (read by GetOverriddenValues). Each part is length-prefixed, so different inputs never give
// the same key.
std::string patchCacheKey(const Workload& w, const StringMap& added_annotations,
                          const StringMap& labels, const StringMap& ns_annotations) {
  std::string key;
  auto part = [&key](std::string_view text) {
    key += std::to_string(text.size());
    key += ':';
    key += text;
  };
  auto map = [&](const StringMap& m) {
    part(std::to_string(m.size()));
    for (const auto& [k, v] : m) {
      part(k);
      part(v);
    }
  };
  part(w.template_pointer);
  part(core::dumpJson(w.pod_metadata));
  part(core::dumpJson(w.pod_spec));
  map(added_annotations);
  map(labels);
  map(ns_annotations);
  return key;
}

}  // namespace

std::string_view decisionName(Decision decision) {
  switch (decision) {
    case Decision::kInject:
      return "inject";
    case Decision::kAnnotationPatch:
      return "annotation_patch";
    case Decision::kAllow:
      return "allow";
    case Decision::kHandlerError:
      return "handler_error";
  }
  return "";
}

std::string_view logLevelName(LogLine::Level level) {
  switch (level) {
    case LogLine::Level::kDebug:
      return "debug";
    case LogLine::Level::kInfo:
      return "info";
    case LogLine::Level::kWarning:
      return "warning";
    case LogLine::Level::kError:
      return "error";
  }
  return "";
}

json Outcome::toJson() const {
  json events_json = json::array();
  for (const auto& e : events) {
    events_json.push_back({{"type", e.type},
                           {"reason", e.reason},
                           {"message", e.message},
                           {"involved_object", e.involved_object}});
  }
  json logs_json = json::array();
  for (const auto& l : logs) {
    logs_json.push_back({{"level", logLevelName(l.level)}, {"message", l.message}});
  }
  return {{"decision", decisionName(decision)},
          {"report", report ? reportToJson(*report) : json(nullptr)},
          {"owner_kind", owner_kind},
          {"owner_name", owner_name},
          {"patch", patch},
          {"error_message", error_message},
          {"events", events_json},
          {"logs", logs_json},
          {"request_metric", request_metric ? json(*request_metric) : json(nullptr)},
          {"response_metric", response_metric ? json(*response_metric) : json(nullptr)}};
}

namespace {

// The request metric's labels in name order, each with where its value comes from: the
// owner kind, the namespace, where the annotations were, or the pod (template)'s own value of a
// proxy annotation (its label named by metricLabelName). Computed once: building the names for
// every request was a twentieth of its work, and keeping them in a map as much again.
struct RequestLabel {
  enum class Source { kOwnerKind, kNamespace, kAnnotationAt, kAnnotation } source;
  std::string name;
  std::string annotation;  // for kAnnotation
};

const std::vector<RequestLabel>& requestLabels() {
  static const auto kLabels = [] {
    std::vector<RequestLabel> labels = {{RequestLabel::Source::kOwnerKind, "owner_kind", {}},
                                        {RequestLabel::Source::kNamespace, "namespace", {}},
                                        {RequestLabel::Source::kAnnotationAt, "annotation_at", {}}};
    for (const auto key : proxyAnnotations()) {
      labels.push_back({RequestLabel::Source::kAnnotation, metricLabelName(key), std::string(key)});
    }
    // A later label of the same name wins, as when they were assigned in turn.
    std::stable_sort(labels.begin(), labels.end(),
                     [](const auto& a, const auto& b) { return a.name < b.name; });
    std::vector<RequestLabel> unique;
    for (auto& label : labels) {
      if (!unique.empty() && unique.back().name == label.name) unique.pop_back();
      unique.push_back(std::move(label));
    }
    return unique;
  }();
  return kLabels;
}

}  // namespace

std::pair<std::string, std::string> resolvePodOwner(const json& pod, std::string_view ns,
                                                    const OwnerLookup& lookup) {
  const std::string pod_name = stringAt(metadataOf(pod), "name");
  const std::vector<const json*> refs = ownerReferences(pod);
  if (refs.size() != 1) return {"pod", pod_name};
  const std::string kind = stringAt(*refs[0], "kind");
  const std::string name = stringAt(*refs[0], "name");
  if (kind != "Job" && kind != "ReplicaSet") return {lower(kind), name};
  std::shared_ptr<const json> parent;
  if (lookup) parent = lookup(kind, ns, name);
  if (parent) {
    const std::vector<const json*> grand = ownerReferences(*parent);
    if (grand.size() == 1) {
      const std::string grand_kind = stringAt(*grand[0], "kind");
      // isValidRSParent: a ReplicaSet's owner counts only if it is one of these kinds.
      const bool valid = kind == "Job" || grand_kind == "Job" || grand_kind == "StatefulSet" ||
                         grand_kind == "DaemonSet" || grand_kind == "Deployment";
      if (valid) return {lower(grand_kind), stringAt(*grand[0], "name")};
    }
  }
  return {lower(kind), name};
}

Outcome admit(const Values& values, const AdmissionInput& input) {
  Outcome out;
  if (!input.namespace_object) {
    fail(&out, "namespace \"" + input.request_namespace + "\" not found");
    return out;
  }
  const StringMap ns_annotations = namespaceAnnotations(*input.namespace_object);

  auto parsed = parseWorkload(input.object, input.request_kind);
  if (!parsed.ok()) {
    fail(&out, parsed.error().message);
    return out;
  }
  const Workload& w = *parsed;

  // ResourceConfig labels: control-plane namespace, workload namespace, owner label.
  StringMap labels = {{std::string(label::kControlPlaneNs), input.linkerd_namespace}};
  std::optional<std::pair<std::string, std::string>> owner_ref;
  if (w.isPod()) {
    owner_ref = resolvePodOwner(input.object, input.request_namespace, input.owner_lookup);
    if (auto l = ownerLabel(owner_ref->first)) labels[*l] = owner_ref->second;
    labels[std::string(label::kWorkloadNs)] = input.request_namespace;
  } else if (w.has_pod_template) {
    labels["linkerd.io/proxy-" + w.kind] = w.name;
    labels[std::string(label::kWorkloadNs)] = w.object_namespace;
  }

  auto ns_inject = ns_annotations.find(std::string(annotation::kInject));
  const Report report = makeReport(w, ns_inject == ns_annotations.end() ? "" : ns_inject->second,
                                   values.service_account_token_projection);
  out.report = report;
  out.logs.push_back({LogLine::Level::kInfo, "received " + report.resName()});

  // The event parent, looked up in the informer cache.
  std::shared_ptr<const json> parent;
  std::string parent_kind;
  if (owner_ref) {
    out.owner_name = owner_ref->second;
    if (auto kind = canonicalKind(owner_ref->first)) {
      parent_kind = *kind;
      if (input.owner_lookup)
        parent = input.owner_lookup(*kind, input.request_namespace, owner_ref->second);
      if (!parent) {
        out.logs.push_back({LogLine::Level::kWarning,
                            "couldn't retrieve parent object " + input.request_namespace + "-" +
                                owner_ref->first + "-" + owner_ref->second});
      }
      out.owner_kind = owner_ref->first;
    }
  }

  // Metric labels: the pod/template's own config annotations, before inheritance.
  MetricLabels::sequence_type request_labels;
  request_labels.reserve(requestLabels().size());
  for (const auto& label : requestLabels()) {
    switch (label.source) {
      case RequestLabel::Source::kOwnerKind:
        request_labels.emplace_back(label.name, out.owner_kind);
        break;
      case RequestLabel::Source::kNamespace:
        request_labels.emplace_back(label.name, input.request_namespace);
        break;
      case RequestLabel::Source::kAnnotationAt:
        request_labels.emplace_back(label.name, report.annotation_at);
        break;
      case RequestLabel::Source::kAnnotation: {
        auto it = w.pod_annotations.find(label.annotation);
        request_labels.emplace_back(label.name,
                                    it == w.pod_annotations.end() ? "" : it->second);
        break;
      }
    }
  }
  out.request_metric.emplace();
  out.request_metric->adopt_sequence(boost::container::ordered_unique_range,
                                     std::move(request_labels));
  // The response metric: the request's labels and the skip ones.
  auto respond = [&](bool skip, const std::string& reason) {
    MetricLabels labels = *out.request_metric;
    labels.insert_or_assign("skip", skip ? "true" : "false");
    labels.insert_or_assign("skip_reason", reason);
    out.response_metric = std::move(labels);
  };
  auto emit = [&](std::string reason, std::string message) {
    if (!parent) return;
    out.events.push_back({"Normal", std::move(reason), std::move(message),
                          involvedObject(*parent, parent_kind, input.request_namespace)});
  };

  const StringMap& workload_annotations = w.isPod() ? w.pod_annotations : w.annotations;
  auto hasWorkloadAnnotation = [&](const StringMap& collected, std::string_view key) {
    return has(w.annotations, key) || has(w.pod_annotations, key) || has(collected, key);
  };

  if (report.injectable()) {
    StringMap collected = {
        {std::string(annotation::kCreatedBy), "linkerd/proxy-injector " + input.injector_version}};
    for (const auto key : inheritableAnnotations()) {
      auto ns_value = ns_annotations.find(std::string(key));
      if (ns_value == ns_annotations.end()) continue;
      if (!has(workload_annotations, key)) collected[std::string(key)] = ns_value->second;
    }
    if (!hasWorkloadAnnotation(collected, annotation::kOpaquePorts)) {
      const auto filtered = filterPodOpaquePorts(w.pod_spec, splitComma(values.proxy.opaque_ports));
      if (!filtered.empty()) collected[std::string(annotation::kOpaquePorts)] = joinComma(filtered);
    }
    StringMap effective = w.pod_annotations;
    for (const auto& [k, v] : collected) effective[k] = v;

    auto build = [&](std::vector<LogLine>* logs) {
      const Values overridden =
          overriddenValues(values, effective, ns_annotations, w.pod_spec, logs);
      PodPatchInput patch_input;
      patch_input.workload = &w;
      patch_input.values = &overridden;
      patch_input.annotations = collected;
      patch_input.labels = labels;
      patch_input.effective_annotations = effective;
      patch_input.linkerd_namespace = input.linkerd_namespace;
      patch_input.trust_anchors_pem = input.trust_anchors_pem;
      return buildPodPatch(patch_input, logs);
    };
    auto injected = [&] {
      emit("Injected", "Linkerd sidecar proxy injected");
      out.logs.push_back(
          {LogLine::Level::kInfo, "injection patch generated for: " + report.resName()});
    };
    if (input.patch_cache != nullptr && !input.debug_logs) {
      std::vector<LogLine> logs;  // of a build that fails: kept in the outcome
      auto cached = input.patch_cache->get(
          patchCacheKey(w, collected, labels, ns_annotations),
          [&]() -> core::Result<CachedPatch> {
            auto patch = build(&logs);
            if (!patch.ok()) return patch.error();
            std::string text = core::dumpJson(*patch);
            std::string base64 = go::base64Encode(text);
            return CachedPatch{std::move(text), std::move(base64), std::move(logs)};
          });
      if (!cached) {
        out.logs.insert(out.logs.end(), logs.begin(), logs.end());
        fail(&out, cached.error().message);
        return out;
      }
      out.logs.insert(out.logs.end(), (*cached)->logs.begin(), (*cached)->logs.end());
      injected();
      respond(false, "");
      out.decision = Decision::kInject;
      out.patch_text = std::shared_ptr<const std::string>(*cached, &(*cached)->text);
      out.patch_base64 = std::shared_ptr<const std::string>(*cached, &(*cached)->base64);
      return out;
    }
    auto patch = build(&out.logs);
    if (!patch.ok()) {
      fail(&out, patch.error().message);
      return out;
    }
    injected();
    if (input.debug_logs) {
      out.logs.push_back({LogLine::Level::kDebug, "injection patch: " + patch->dump()});
    }
    respond(false, "");
    out.decision = Decision::kInject;
    out.patch = std::move(*patch);
    return out;
  }

  const std::string readable = report.readableReasons();
  emit("InjectionSkipped", "Linkerd sidecar proxy injection skipped: " + readable);

  // CreateOpaquePortsPatch.
  std::optional<std::string> ports;
  if (!hasWorkloadAnnotation({}, annotation::kOpaquePorts)) {
    if (auto ns_ports = ns_annotations.find(std::string(annotation::kOpaquePorts));
        ns_ports != ns_annotations.end()) {
      ports = ns_ports->second;
    } else if (w.isPod()) {
      const auto filtered = filterPodOpaquePorts(w.pod_spec, splitComma(values.proxy.opaque_ports));
      if (!filtered.empty()) ports = joinComma(filtered);
    } else if (w.isService()) {
      const json& spec = input.object.is_object() && input.object.contains("spec")
                             ? input.object["spec"]
                             : json(nullptr);
      const auto filtered = filterServiceOpaquePorts(spec, splitComma(values.proxy.opaque_ports));
      if (!filtered.empty()) ports = joinComma(filtered);
    }
  }
  if (ports) {
    const bool add_root = w.isPod() ? w.pod_annotations.empty() : w.annotations.empty();
    out.patch = buildOpaquePortsPatch(add_root, *ports);
    out.logs.push_back(
        {LogLine::Level::kInfo, "annotation patch generated for: " + report.resName()});
    if (input.debug_logs) {
      out.logs.push_back({LogLine::Level::kDebug, "annotation patch: " + out.patch.dump()});
    }
    respond(false, "");
    out.decision = Decision::kAnnotationPatch;
    return out;
  }
  if (w.isPod()) {
    out.logs.push_back({LogLine::Level::kInfo, "skipped " + report.resName() + ": " + readable});
    respond(true, report.reasonCodes());
  }
  out.decision = Decision::kAllow;
  return out;
}

}  // namespace harness::injector::linkerd
