#include "inject_command.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "harness/core/json_patch.h"
#include "harness/core/json_patch_decode.h"
#include "harness/core/object.h"
#include "harness/core/yaml.h"
#include "harness/injector/kube_api.h"
#include "harness/injector/istio/injector.h"
#include "harness/injector/linkerd/injector.h"
#include "linkerd_webhook.h"
#include "serve.h"

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

void printObjects(const std::vector<nlohmann::json>& results, const std::string& output,
                  std::ostream& out) {
  if (output == "json") {
    if (results.size() == 1) {
      out << results.front().dump(4) << "\n";
    } else {
      out << nlohmann::json{{"apiVersion", "v1"}, {"kind", "List"}, {"items", results}}.dump(4)
          << "\n";
    }
  } else {
    out << core::toYamlDocuments(results);
  }
}

// istioctl kube-inject: every object through the same injection path as the webhook.
int runIstioInject(const InjectOptions& o, std::istream& in, std::ostream& out,
                   std::ostream& err) {
  auto settings = loadIstioSettings(o.istio);
  if (!settings) {
    err << "injector inject: " << settings.error().message << "\n";
    return 2;
  }
  auto objects = readObjects(o.inputs.empty() ? std::vector<std::string>{"-"} : o.inputs, in);
  if (!objects) {
    err << "injector inject: " << objects.error().message << "\n";
    return 2;
  }
  std::vector<nlohmann::json> results;
  nlohmann::json patches = nlohmann::json::array();
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
      results.push_back(obj);
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
      patches.push_back(std::move(entry));
      continue;
    }
    for (const auto& w : warnings) err << "injector inject: " << what << ": " << w << "\n";
    results.push_back(std::move(*injected));
  }
  if (o.explain) return exit_code;
  if (o.patch) {
    out << patches.dump(2) << "\n";
    return exit_code;
  }
  printObjects(results, o.output, out);
  return exit_code;
}

}  // namespace

int runInject(const InjectOptions& o, std::istream& in, std::ostream& out, std::ostream& err) {
  if (o.profile == "istio") return runIstioInject(o, in, out, err);
  if (o.profile != "linkerd") {
    err << "injector inject: unknown profile \"" << o.profile
        << "\" (available: linkerd, istio)\n";
    return 2;
  }
  // Values: the chart defaults unless a values file (or linkerd-config ConfigMap) is given.
  linkerd::Values values;
  if (!o.values_file.empty()) {
    auto text = readFileText(o.values_file);
    if (!text) {
      err << "injector inject: " << text.error().message << "\n";
      return 2;
    }
    auto parsed = parseLinkerdValuesText(*text, o.values_file.string());
    if (!parsed) {
      err << "injector inject: " << parsed.error().message << "\n";
      return 2;
    }
    values = std::move(*parsed);
  } else {
    auto defaults = linkerd::parseValues(nlohmann::json::object());
    if (!defaults) {
      err << "injector inject: " << defaults.error().message << "\n";
      return 2;
    }
    values = std::move(*defaults);
  }
  std::string trust = kPlaceholderTrustAnchors;
  if (!o.trust_anchors_file.empty()) {
    auto text = readFileText(o.trust_anchors_file);
    if (!text) {
      err << "injector inject: " << text.error().message << "\n";
      return 2;
    }
    trust = std::move(*text);
  }

  // Objects: the inputs in order; Namespace objects and --objects feed the lookups.
  auto read = readObjects(o.inputs.empty() ? std::vector<std::string>{"-"} : o.inputs, in);
  if (!read) {
    err << "injector inject: " << read.error().message << "\n";
    return 2;
  }
  std::vector<nlohmann::json> objects = std::move(*read);
  auto extra = loadObjectFiles(o.object_files);
  if (!extra) {
    err << "injector inject: " << extra.error().message << "\n";
    return 2;
  }
  auto namespaces = loadObjectFiles(o.namespace_files);
  if (!namespaces) {
    err << "injector inject: " << namespaces.error().message << "\n";
    return 2;
  }
  LocalKubeApi kube;
  for (const auto& obj : *extra) kube.add(obj);
  for (const auto& obj : *namespaces) kube.add(obj);
  for (const auto& obj : objects) kube.add(obj);

  std::vector<nlohmann::json> results;
  nlohmann::json patches = nlohmann::json::array();
  int exit_code = 0;
  for (const auto& obj : objects) {
    auto kind = core::kindOf(obj);
    if (!kind || kind->empty()) {
      err << "injector inject: " << describeObject(obj, "") << ": kind: "
          << (kind ? std::string("missing") : kind.error().message) << "\n";
      return 2;
    }
    auto ns_field = core::namespaceOf(obj);
    if (!ns_field) {
      err << "injector inject: " << describeObject(obj, "") << ": " << ns_field.error().message
          << "\n";
      return 2;
    }
    if (*kind == "Namespace") {
      results.push_back(obj);
      continue;
    }
    const std::string ns = ns_field->empty() ? o.default_namespace : *ns_field;
    linkerd::AdmissionInput input;
    input.object = obj;
    input.request_kind = *kind;
    input.request_namespace = ns;
    input.trust_anchors_pem = trust;
    input.linkerd_namespace = o.linkerd_namespace;
    input.injector_version = o.version;
    bool namespace_known = true;
    auto found = kube.get({"v1", "Namespace", "", ns});
    if (found && *found) {
      input.namespace_object = **found;
    } else {
      // Offline, an unknown namespace is one without annotations (the webhook would fail).
      namespace_known = false;
      input.namespace_object = nlohmann::json{{"apiVersion", "v1"},
                                              {"kind", "Namespace"},
                                              {"metadata", {{"name", ns}}}};
    }
    input.owner_lookup = [&kube](std::string_view k, std::string_view n,
                                 std::string_view name) -> std::optional<nlohmann::json> {
      auto r = kube.get({"", std::string(k), std::string(n), std::string(name)});
      return r ? *r : std::nullopt;
    };
    auto outcome = linkerd::admit(values, input);
    const std::string what = describeObject(obj, ns);
    nlohmann::json result = obj;
    if (outcome.decision == linkerd::Decision::kHandlerError) {
      err << "injector inject: " << what << ": the webhook would deny it: "
          << outcome.error_message << "\n";
      exit_code = 1;
    } else if (outcome.patch.is_array() && !outcome.patch.empty()) {
      auto decoded = core::decodeParsedPatch(outcome.patch);
      auto applied = decoded ? core::applyPatch(obj, *decoded)
                             : core::Result<nlohmann::json>(decoded.error());
      if (!applied) {
        err << "injector inject: " << what << ": the patch does not apply: "
            << applied.error().message << "\n";
        return 2;
      }
      result = std::move(*applied);
    }
    if (o.explain) {
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
          out << "  skipped: " << linkerd::reasonCode(reason) << ": "
              << linkerd::reasonText(reason) << "\n";
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
      for (const auto& line : outcome.logs) {
        if (line.level == linkerd::LogLine::Level::kDebug) continue;  // the patch, printed above
        out << "  log " << linkerd::logLevelName(line.level) << ": " << line.message << "\n";
      }
      continue;
    }
    if (o.patch) {
      patches.push_back({{"object", what},
                         {"decision", linkerd::decisionName(outcome.decision)},
                         {"patch", outcome.patch.is_array() ? outcome.patch
                                                            : nlohmann::json::array()}});
      continue;
    }
    results.push_back(std::move(result));
  }
  if (o.explain) return exit_code;
  if (o.patch) {
    out << patches.dump(2) << "\n";
    return exit_code;
  }
  printObjects(results, o.output, out);
  return exit_code;
}

}  // namespace harness::injector
