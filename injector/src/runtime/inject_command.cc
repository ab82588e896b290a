#include "inject_command.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "harness/core/json_patch.h"
#include "harness/core/json_patch_decode.h"
#include "harness/core/object.h"
#include "harness/core/yaml.h"
#include "harness/injector/kube_api.h"
#include "harness/injector/istio/injector.h"
#include "harness/injector/linkerd/injector.h"
#include "harness/injector/linkerd/values_text.h"
#include "harness/injector/linkerd/workload.h"
#include "harness/injector/object_files.h"
#include "watched_file.h"

namespace harness::injector {

namespace {

// Used when no trust bundle is given, so that offline output is stable; the hash annotation then
// identifies this placeholder, not a real trust root.
constexpr char kPlaceholderTrustAnchors[] =
    "-----BEGIN CERTIFICATE-----\nplaceholder trust anchors (injector inject "
    "--trust-anchors not given)\n-----END CERTIFICATE-----\n";

core::Result<std::string> readInput(const std::string& name, std::istream& in) {
  if (name == "-") {
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::ifstream file(name, std::ios::binary);
  if (!file) return core::makeError("cannot read " + name);
  std::ostringstream ss;
  ss << file.rdbuf();
  return ss.str();
}

std::string describeObject(const nlohmann::json& obj, const std::string& ns) {
  const std::string kind = obj.is_object() ? obj.value("kind", "<no kind>") : "<not an object>";
  std::string name;
  if (auto n = core::nameOf(obj); n && !n->empty()) {
    name = *n;
  } else if (auto g = core::generateNameOf(obj); g && !g->empty()) {
    name = *g;
  }
  return kind + " " + (ns.empty() ? "" : ns + "/") + name;
}

}  // namespace

namespace {

core::Result<std::vector<nlohmann::json>> readObjects(const std::vector<std::string>& inputs,
                                                      std::istream& in) {
  std::vector<nlohmann::json> objects;
  for (const auto& name : inputs) {
    const std::string where = name == "-" ? "<stdin>" : name;
    auto text = readInput(name, in);
    if (!text) return text.error();
    auto docs = core::parseYamlDocuments(*text);
    if (!docs) return docs.error().within(where);
    for (auto& d : flattenLists(std::move(*docs))) {
      if (!d.is_object()) {
        return core::makeError(where + ": a document is not an object (got " +
                               std::string(core::jsonTypeName(d)) + ")");
      }
      objects.push_back(std::move(d));
    }
  }
  return objects;
}

// Writes results as they are made, so that `inject` holds one result at a time however many
// objects it injects: YAML documents separated by "---" (core::toYamlDocuments of them all), or
// exactly the text nlohmann's dump(indent) of them all would be -- with kObjectOrList one object
// alone, else a List of them; with kArray an array. A JSON item is dumped on its own and indented
// line by line, which is what the nested dump does (JSON strings hold no raw newline).
class ResultWriter {
 public:
  enum class Shape { kYaml, kObjectOrList, kArray };

  ResultWriter(std::ostream& out, Shape shape, int indent)
      : out_(out), shape_(shape), indent_(indent) {}

  void add(const nlohmann::json& value) {
    ++count_;
    switch (shape_) {
      case Shape::kYaml:
        if (count_ > 1) out_ << "---\n";
        out_ << core::toYaml(value);
        return;
      case Shape::kObjectOrList:
        // One result alone is printed as it is: hold the first until a second comes.
        if (count_ == 1) {
          first_ = value;
          return;
        }
        if (first_) {
          const std::string pad(static_cast<std::size_t>(indent_), ' ');
          out_ << "{\n" << pad << "\"apiVersion\": \"v1\",\n" << pad << "\"items\": [";
          item(*first_, 2);
          first_.reset();
        }
        out_ << ",";
        item(value, 2);
        return;
      case Shape::kArray:
        out_ << (count_ == 1 ? "[" : ",");
        item(value, 1);
        return;
    }
  }

  void finish() {
    const std::string pad(static_cast<std::size_t>(indent_), ' ');
    switch (shape_) {
      case Shape::kYaml:
        break;
      case Shape::kObjectOrList:
        if (first_) {
          out_ << first_->dump(indent_) << "\n";
        } else if (count_ == 0) {
          out_ << "{\n" << pad << "\"apiVersion\": \"v1\",\n" << pad << "\"items\": [],\n"
               << pad << "\"kind\": \"List\"\n}\n";
        } else {
          out_ << "\n" << pad << "],\n" << pad << "\"kind\": \"List\"\n}\n";
        }
        break;
      case Shape::kArray:
        out_ << (count_ == 0 ? "[]\n" : "\n]\n");
        break;
    }
    out_.flush();
  }

 private:
  // "\n" then the value's dump, every line indented `depth` levels.
  void item(const nlohmann::json& value, int depth) {
    const std::string pad(static_cast<std::size_t>(indent_ * depth), ' ');
    const std::string text = value.dump(indent_);
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      out_ << "\n" << pad << std::string_view(text).substr(start, end - start);
      start = end + 1;
    }
  }

  std::ostream& out_;
  Shape shape_;
  int indent_;
  std::size_t count_ = 0;
  std::optional<nlohmann::json> first_;
};

ResultWriter::Shape resultShape(const std::string& output) {
  return output == "json" ? ResultWriter::Shape::kObjectOrList : ResultWriter::Shape::kYaml;
}

// The kinds istioctl kube-inject injects (pkg/kube/inject/initializer.go `kinds`). They are
// registered as unversioned types too, and runtime.Scheme.New looks those up by kind alone, so
// "Deployment" of any apiVersion is one of them.
bool kubeInjectKnows(const nlohmann::json& object) {
  static const std::set<std::string, std::less<>> kKinds = {
      "ReplicationController", "Pod",     "Deployment", "DaemonSet", "ReplicaSet",
      "Job",                   "CronJob", "StatefulSet", "List",     "DeploymentConfig"};
  const auto kind = object.find("kind");
  return kind != object.end() && kind->is_string() && kKinds.contains(kind->get<std::string>());
}

// Why kube-inject cannot read a document's TypeMeta (yaml.Unmarshal into metav1.TypeMeta).
std::optional<std::string> typeMetaError(const nlohmann::json& object) {
  if (object.is_null()) return std::nullopt;
  if (!object.is_object()) {
    return "a document is not an object (got " + std::string(core::jsonTypeName(object)) + ")";
  }
  for (const char* field : {"kind", "apiVersion"}) {
    const auto it = object.find(field);
    if (it != object.end() && !it->is_string() && !it->is_null()) {
      return std::string(field) + " is not a string (got " + std::string(core::jsonTypeName(*it)) + ")";
    }
  }
  return std::nullopt;
}

// IntoObject: a List item by item (items kube-inject does not know are kept as they are), any
// other known kind through the webhook's injection path. The List is written as corev1.List
// encodes: its TypeMeta, `metadata` always (ListMeta is a struct), `items`.
core::Result<nlohmann::json> intoObject(const istio::InjectorSettings& settings,
                                        const nlohmann::json& object, bool native_sidecars,
                                        std::vector<std::string>& warnings) {
  if (object.value("kind", "") != "List") {
    return istio::kubeInject(settings, object, &warnings, native_sidecars);
  }
  nlohmann::json list = nlohmann::json::object();
  for (const char* field : {"apiVersion", "kind"}) {
    if (auto it = object.find(field); it != object.end() && it->is_string() && !it->empty()) {
      list[field] = *it;
    }
  }
  nlohmann::json meta = nlohmann::json::object();
  if (auto m = object.find("metadata"); m != object.end() && m->is_object()) {
    for (const char* field : {"selfLink", "resourceVersion", "continue", "remainingItemCount"}) {
      if (auto it = m->find(field); it != m->end() && !it->is_null() && *it != "") {
        meta[field] = *it;
      }
    }
  }
  list["metadata"] = std::move(meta);
  const auto items = object.find("items");
  if (items == object.end() || items->is_null()) {
    list["items"] = nullptr;
    return list;
  }
  if (!items->is_array()) {
    return core::makeError("items is not an array (got " +
                           std::string(core::jsonTypeName(*items)) + ")");
  }
  list["items"] = nlohmann::json::array();
  for (std::size_t i = 0; i < items->size(); ++i) {
    const auto& item = (*items)[i];
    if (auto bad = typeMetaError(item)) {
      return core::makeError("items[" + std::to_string(i) + "]: " + *bad);
    }
    if (!item.is_object() || !kubeInjectKnows(item)) {
      list["items"].push_back(item);
      continue;
    }
    auto injected = intoObject(settings, item, native_sidecars, warnings);
    if (!injected) return injected.error().within("items[" + std::to_string(i) + "]");
    list["items"].push_back(std::move(*injected));
  }
  return list;
}

// istioctl kube-inject's output, byte for byte (pkg/kube/inject/inject.go IntoResourceFile): the
// stream split as apimachinery's YAMLReader splits it; a document of a kind kube-inject knows is
// injected and written as its Go type encodes it (sigs.k8s.io/yaml's Marshal: go-yaml v2 folds
// long strings at column 80, core::kGoYamlMarshal); any other document (a Service, a ConfigMap, a
// comment) is written back exactly as it was read; "---" follows every document. Where
// kube-inject stops at the first object it cannot inject, this goes on, writes that document
// unchanged and exits 1.
int writeAsKubeInject(const istio::InjectorSettings& settings, const InjectOptions& o,
                      std::istream& in, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  for (const auto& name : o.inputs.empty() ? std::vector<std::string>{"-"} : o.inputs) {
    const std::string where = name == "-" ? "<stdin>" : name;
    auto text = readInput(name, in);
    if (!text) {
      err << "injector inject: " << text.error().message << "\n";
      return 2;
    }
    auto raws = core::splitYamlDocuments(*text);
    if (!raws) {
      err << "injector inject: " << where << ": " << raws.error().message << "\n";
      return 2;
    }
    for (std::size_t i = 0; i < raws->size(); ++i) {
      const std::string& raw = (*raws)[i];
      auto object = core::parseYaml(raw);
      std::optional<std::string> bad;
      if (!object) {
        bad = object.error().message;
      } else {
        bad = typeMetaError(*object);
      }
      if (bad) {
        err << "injector inject: " << where << ": document " << i + 1 << ": " << *bad << "\n";
        return 2;
      }
      if (!kubeInjectKnows(*object)) {
        out << raw << "---\n";
        continue;
      }
      auto ns = core::namespaceOf(*object);
      const std::string what =
          describeObject(*object, ns && !ns->empty() ? *ns : o.default_namespace);
      std::vector<std::string> warnings;
      auto injected = intoObject(settings, *object, o.istio.native_sidecars, warnings);
      for (const auto& w : warnings) err << "injector inject: " << what << ": " << w << "\n";
      if (!injected) {
        err << "injector inject: " << what << ": the webhook would deny it: "
            << injected.error().message << "\n";
        exit_code = 1;
        out << raw << "---\n";
        continue;
      }
      out << core::toYaml(*injected, core::kGoYamlMarshal) << "---\n";
    }
  }
  out.flush();
  return exit_code;
}

// istioctl kube-inject: every object through the same injection path as the webhook.
int runIstioInject(const InjectOptions& o, std::istream& in, std::ostream& out,
                   std::ostream& err) {
  auto settings = loadIstioSettings(o.istio);
  if (!settings) {
    err << "injector inject: " << settings.error().message << "\n";
    return 2;
  }
  if (!o.explain && !o.patch && o.output != "json") {
    return writeAsKubeInject(*settings, o, in, out, err);
  }
  auto objects = readObjects(o.inputs.empty() ? std::vector<std::string>{"-"} : o.inputs, in);
  if (!objects) {
    err << "injector inject: " << objects.error().message << "\n";
    return 2;
  }
  ResultWriter results(out, resultShape(o.output), 4);
  ResultWriter patches(out, ResultWriter::Shape::kArray, 2);
  int exit_code = 0;
  for (const auto& obj : *objects) {
    const std::string what = describeObject(obj, obj.value("metadata", nlohmann::json::object())
                                                     .value("namespace", o.default_namespace));
    std::vector<std::string> warnings;
    auto injected = istio::kubeInject(*settings, obj, &warnings, o.istio.native_sidecars);
    if (!injected) {
      err << "injector inject: " << what << ": the webhook would deny it: "
          << injected.error().message << "\n";
      exit_code = 1;
      if (!o.explain && !o.patch) results.add(obj);
      continue;
    }
    const auto patch = core::createPatch(obj, *injected);
    if (o.explain) {
      out << what << ": " << (patch.empty() ? "unchanged" : "injected") << "\n";
      for (const auto& w : warnings) out << "  warning: " << w << "\n";
      if (!patch.empty()) {
        out << "  patch: " << patch.size() << " operation" << (patch.size() == 1 ? "" : "s")
            << "\n";
        for (const auto& op : patch) out << "    " << op.op << " " << op.path << "\n";
      }
      continue;
    }
    if (o.patch) {
      nlohmann::json entry = nlohmann::json::object();
      entry["object"] = what;
      entry["patch"] = core::encodePatch(patch);
      patches.add(entry);
      continue;
    }
    for (const auto& w : warnings) err << "injector inject: " << what << ": " << w << "\n";
    results.add(*injected);
  }
  if (o.explain) return exit_code;
  if (o.patch) {
    patches.finish();
  } else {
    results.finish();
  }
  return exit_code;
}

}  // namespace

namespace {

// The Linkerd profile's configuration: the chart defaults unless a values file (or linkerd-config
// ConfigMap) is given, and the trust bundle (a placeholder unless given). nullopt: bad input,
// said on `err`.
struct LinkerdConfig {
  linkerd::Values values;
  std::string trust_anchors_pem;
};

std::optional<LinkerdConfig> loadLinkerdConfig(const InjectOptions& o, std::ostream& err) {
  LinkerdConfig config;
  auto values = o.values_file.empty()
                    ? linkerd::parseValues(nlohmann::json::object())
                    : [&]() -> core::Result<linkerd::Values> {
                        auto text = readFileText(o.values_file);
                        if (!text) return text.error();
                        return linkerd::parseValuesText(*text, o.values_file.string());
                      }();
  if (!values) {
    err << "injector inject: " << values.error().message << "\n";
    return std::nullopt;
  }
  config.values = std::move(*values);
  config.trust_anchors_pem = kPlaceholderTrustAnchors;
  if (!o.trust_anchors_file.empty()) {
    auto text = readFileText(o.trust_anchors_file);
    if (!text) {
      err << "injector inject: " << text.error().message << "\n";
      return std::nullopt;
    }
    config.trust_anchors_pem = std::move(*text);
  }
  return config;
}

// The objects: --objects, the Namespace files, then the inputs in order, all kept once in the
// lookups (the inputs read back from index `first_input`). Each is read as `linkerd inject` reads
// YAML: unquoted numbers and booleans in string fields (an annotation
// `config.linkerd.io/skip-outbound-ports: 4222`) are strings. false: bad input, said on `err`.
bool loadLinkerdObjects(const InjectOptions& o, std::istream& in, std::ostream& err,
                        LocalKubeApi& kube, std::size_t& first_input) {
  auto read = readObjects(o.inputs.empty() ? std::vector<std::string>{"-"} : o.inputs, in);
  if (!read) {
    err << "injector inject: " << read.error().message << "\n";
    return false;
  }
  auto extra = loadObjectFiles(o.object_files);
  if (!extra) {
    err << "injector inject: " << extra.error().message << "\n";
    return false;
  }
  auto namespaces = loadObjectFiles(o.namespace_files);
  if (!namespaces) {
    err << "injector inject: " << namespaces.error().message << "\n";
    return false;
  }
  for (auto* objects : {&*extra, &*namespaces, &*read}) {
    for (auto& obj : *objects) linkerd::coerceYamlScalars(obj);
  }
  for (auto& obj : *extra) kube.add(std::move(obj));
  for (auto& obj : *namespaces) kube.add(std::move(obj));
  first_input = kube.size();
  for (auto& obj : *read) kube.add(std::move(obj));
  return true;
}

// An object without a kind or with a bad namespace is bad input: true, naming it on `err`.
bool badInput(const nlohmann::json& obj, std::ostream& err) {
  auto kind = core::kindOf(obj);
  if (!kind || kind->empty()) {
    err << "injector inject: " << describeObject(obj, "") << ": kind: "
        << (kind ? std::string("missing") : kind.error().message) << "\n";
    return true;
  }
  if (auto ns_field = core::namespaceOf(obj); !ns_field) {
    err << "injector inject: " << describeObject(obj, "") << ": " << ns_field.error().message
        << "\n";
    return true;
  }
  return false;
}

// What the webhook is given for `obj` in namespace `ns`. `namespace_known`: whether the
// namespace was in the input (offline, an unknown namespace is one without annotations; the
// webhook would fail).
linkerd::AdmissionInput linkerdInput(const InjectOptions& o, const LinkerdConfig& config,
                                     LocalKubeApi& kube, const nlohmann::json& obj,
                                     const std::string& kind, const std::string& ns,
                                     bool& namespace_known) {
  linkerd::AdmissionInput input;
  input.object = obj;
  input.request_kind = kind;
  input.request_namespace = ns;
  input.trust_anchors_pem = config.trust_anchors_pem;
  input.linkerd_namespace = o.linkerd_namespace;
  input.injector_version = o.version;
  input.debug_logs = false;  // --explain prints the patch's operations instead
  namespace_known = true;
  auto found = kube.get({"v1", "Namespace", "", ns});
  if (found && *found) {
    input.namespace_object = **found;
  } else {
    namespace_known = false;
    input.namespace_object = nlohmann::json{{"apiVersion", "v1"},
                                            {"kind", "Namespace"},
                                            {"metadata", {{"name", ns}}}};
  }
  // The webhook looks the event's parent up in its informer cache (controller/proxy-injector
  // webhook.go). A Pod without an owner is its own parent, and it is not in the cache while it
  // is being created: the webhook records no event for it. Offline, the input holds the Pod
  // itself, which must not stand in for what the cache would hold.
  const auto own = core::nameOf(obj);
  input.owner_lookup = [&kube, kind, ns, own_name = own ? *own : std::string()](
                           std::string_view k, std::string_view n,
                           std::string_view name) -> std::shared_ptr<const nlohmann::json> {
    if (k == kind && n == ns && name == own_name) return nullptr;
    auto r = kube.get({"", std::string(k), std::string(n), std::string(name)});
    return r ? *r : nullptr;
  };
  return input;
}

// --explain: the decision for one object and why, its patch's operations, events and logs.
void explainOutcome(std::ostream& out, const std::string& what, const std::string& ns,
                    bool namespace_known, const std::string& own_name,
                    const linkerd::Outcome& outcome) {
  out << what << ": " << linkerd::decisionName(outcome.decision);
  if (outcome.report && !outcome.report->annotation_at.empty()) {
    out << " (inject annotation at " << outcome.report->annotation_at << ")";
  }
  out << "\n";
  if (!namespace_known) {
    out << "  namespace " << ns << " not in the input: treated as having no annotations\n";
  }
  if (!outcome.owner_kind.empty()) {
    out << "  owner: " << outcome.owner_kind << "/" << outcome.owner_name << "\n";
  }
  if (outcome.report) {
    for (auto reason : outcome.report->reasons()) {
      out << "  skipped: " << linkerd::reasonCode(reason) << ": " << linkerd::reasonText(reason)
          << "\n";
    }
  }
  if (outcome.decision == linkerd::Decision::kHandlerError) {
    out << "  error: " << outcome.error_message << "\n";
  }
  if (outcome.patch.is_array()) {
    out << "  patch: " << outcome.patch.size() << " operation"
        << (outcome.patch.size() == 1 ? "" : "s") << "\n";
    for (const auto& op : outcome.patch) {
      out << "    " << op.value("op", "") << " " << op.value("path", "") << "\n";
    }
  }
  for (const auto& e : outcome.events) {
    out << "  event: " << e.type << " " << e.reason << " \"" << e.message << "\" on "
        << e.involved_object.value("kind", "") << "/" << e.involved_object.value("name", "")
        << "\n";
  }
  if (outcome.events.empty() && !outcome.owner_kind.empty()) {
    // The webhook records its event on the parent it finds in its cache, or none.
    out << "  event: none: the webhook records it on the parent object, ";
    if (outcome.owner_kind == "pod" && outcome.owner_name == own_name) {
      out << "and a Pod without an owner is not in its cache while it is being created\n";
    } else {
      out << outcome.owner_kind << "/" << outcome.owner_name
          << ", only when it is in its cache (not in the input here)\n";
    }
  }
  for (const auto& line : outcome.logs) {
    if (line.level == linkerd::LogLine::Level::kDebug) continue;  // the patch, printed above
    out << "  log " << linkerd::logLevelName(line.level) << ": " << line.message << "\n";
  }
}

}  // namespace

int runInject(const InjectOptions& o, std::istream& in, std::ostream& out, std::ostream& err) {
  if (o.profile == "istio") return runIstioInject(o, in, out, err);
  if (o.profile != "linkerd") {
    err << "injector inject: unknown profile \"" << o.profile
        << "\" (available: linkerd, istio)\n";
    return 2;
  }
  const auto config = loadLinkerdConfig(o, err);
  if (!config) return 2;
  LocalKubeApi kube;
  std::size_t first_input = 0;
  if (!loadLinkerdObjects(o, in, err, kube, first_input)) return 2;

  // Results are written as they are made; bad input is found first, so that it still ends the
  // run before anything is written (--explain reports the objects before it, as it goes).
  if (!o.explain) {
    for (std::size_t i = first_input; i < kube.size(); ++i) {
      if (badInput(kube.objectAt(i), err)) return 2;
    }
  }
  ResultWriter results(out, resultShape(o.output), 4);
  ResultWriter patches(out, ResultWriter::Shape::kArray, 2);
  int exit_code = 0;
  for (std::size_t i = first_input; i < kube.size(); ++i) {
    const nlohmann::json& obj = kube.objectAt(i);
    if (badInput(obj, err)) return 2;
    const std::string kind = *core::kindOf(obj);
    const std::string ns_field = *core::namespaceOf(obj);
    if (kind == "Namespace") {
      if (!o.explain && !o.patch) results.add(obj);
      continue;
    }
    const std::string ns = ns_field.empty() ? o.default_namespace : ns_field;
    bool namespace_known = true;
    auto input = linkerdInput(o, *config, kube, obj, kind, ns, namespace_known);
    auto outcome = linkerd::admit(config->values, input);
    const std::string what = describeObject(obj, ns);
    nlohmann::json result = std::move(input.object);  // admit() is done with it
    if (outcome.decision == linkerd::Decision::kHandlerError) {
      err << "injector inject: " << what << ": the webhook would deny it: "
          << outcome.error_message << "\n";
      exit_code = 1;
    } else if (outcome.patch.is_array() && !outcome.patch.empty()) {
      // Only --explain and --patch print the patch itself; else it is applied by moving.
      const bool keep_patch = o.explain || o.patch;
      auto decoded =
          core::decodeParsedPatch(keep_patch ? outcome.patch : std::move(outcome.patch));
      auto applied = decoded ? core::applyPatch(std::move(result), std::move(*decoded))
                             : core::Result<nlohmann::json>(decoded.error());
      if (!applied) {
        err << "injector inject: " << what << ": the patch does not apply: "
            << applied.error().message << "\n";
        return 2;
      }
      result = std::move(*applied);
    }
    if (o.explain) {
      const auto own = core::nameOf(obj);
      explainOutcome(out, what, ns, namespace_known, own ? *own : std::string(), outcome);
      continue;
    }
    if (o.patch) {
      patches.add({{"object", what},
                   {"decision", linkerd::decisionName(outcome.decision)},
                   {"patch", outcome.patch.is_array() ? std::move(outcome.patch)
                                                      : nlohmann::json::array()}});
      continue;
    }
    results.add(result);
  }
  if (o.explain) return exit_code;
  if (o.patch) {
    patches.finish();
  } else {
    results.finish();
  }
  return exit_code;
}

}  // namespace harness::injector
