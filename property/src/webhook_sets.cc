#include "harness/property/webhook_sets.h"

#include <algorithm>
#include <ostream>
#include <utility>

#include "harness/core/yaml.h"

namespace harness::property {

using nlohmann::json;

namespace {

const std::vector<std::string> kNamespaceNames = {"gen-a", "gen-b", "gen-c"};
const std::vector<std::string> kNamespaceKeys = {"env", "team", "kubernetes.io/metadata.name"};
const std::vector<std::string> kNamespaceValues = {"prod", "dev", "x", "gen-a", "gen-b"};
const std::vector<std::string> kObjectKeys = {"app", "env"};
const std::vector<std::string> kObjectValues = {"web", "db", "prod", "dev"};

// Labels from `keys` x `values`, each key present or not (so that they shrink to none).
rc::Gen<json> genLabels(const std::vector<std::string>& keys,
                        const std::vector<std::string>& values) {
  return rc::gen::exec([keys, values] {
    json labels = json::object();
    for (const auto& key : keys) {
      if (*rc::gen::inRange(0, 3) == 0) labels[key] = *rc::gen::elementOf(values);
    }
    return labels;
  });
}

// A non-empty subset of `items`, in their order.
rc::Gen<std::vector<std::string>> genSubset(const std::vector<std::string>& items) {
  return rc::gen::exec([items] {
    std::vector<std::string> out;
    for (const auto& item : items) {
      if (*rc::gen::arbitrary<bool>()) out.push_back(item);
    }
    if (out.empty()) out.push_back(*rc::gen::elementOf(items));
    return out;
  });
}

// CEL expressions of matchConditions: some depend on the request, some on the object (and
// fail where there is none: DELETE has no object, so `object.metadata` is an error there, which
// failurePolicy then decides).
const std::vector<std::string> kConditions = {
    "request.operation == 'CREATE'",
    "request.namespace != 'gen-b'",
    "has(object.metadata.labels) && 'app' in object.metadata.labels",
    "object.metadata.name.startsWith('cm')",
};

rc::Gen<json> genWebhook(std::string name, bool mutating, WebhookSetOptions options) {
  return rc::gen::exec([name, mutating, options] {
    json webhook = {{"name", name}};
    webhook["rules"] = *rc::gen::resize(
        2, rc::gen::nonEmpty(rc::gen::container<std::vector<json>>(genRule(options))));
    if (auto selector = *genLabelSelector(kNamespaceKeys, kNamespaceValues); !selector.is_null()) {
      webhook["namespaceSelector"] = selector;
    }
    if (auto selector = *genLabelSelector(kObjectKeys, kObjectValues); !selector.is_null()) {
      webhook["objectSelector"] = selector;
    }
    if (*rc::gen::arbitrary<bool>()) {
      webhook["matchPolicy"] = *rc::gen::element<std::string>("Exact", "Equivalent");
    }
    if (*rc::gen::arbitrary<bool>()) {
      webhook["failurePolicy"] = *rc::gen::element<std::string>("Fail", "Ignore");
    }
    if (mutating && *rc::gen::arbitrary<bool>()) {
      webhook["reinvocationPolicy"] = *rc::gen::element<std::string>("Never", "IfNeeded");
    }
    if (*rc::gen::arbitrary<bool>()) webhook["timeoutSeconds"] = *rc::gen::inRange(1, 31);
    if (options.match_conditions && *rc::gen::inRange(0, 3) == 0) {
      const auto expressions = *rc::gen::resize(
          2, rc::gen::nonEmpty(rc::gen::container<std::vector<std::string>>(
                 rc::gen::elementOf(kConditions))));
      json conditions = json::array();
      for (const auto& expression : expressions) {
        conditions.push_back(
            {{"name", "c" + std::to_string(conditions.size())}, {"expression", expression}});
      }
      webhook["matchConditions"] = conditions;
    }
    webhook["sideEffects"] = "None";
    webhook["admissionReviewVersions"] = {"v1"};
    return webhook;
  });
}

json objectMeta(const std::string& name, const std::string& ns, const json& labels) {
  json meta = {{"name", name}};
  if (!ns.empty()) meta["namespace"] = ns;
  if (!labels.empty()) meta["labels"] = labels;
  return meta;
}

json container() { return {{"name", "app"}, {"image", "nginx:1.27"}}; }

// A valid object of `resource` named `name` in `ns` with `labels`, as a client writes it.
json makeObject(const std::string& resource, const std::string& name, const std::string& ns,
                const json& labels) {
  if (resource == "configmaps") {
    return {{"apiVersion", "v1"},
            {"kind", "ConfigMap"},
            {"metadata", objectMeta(name, ns, labels)},
            {"data", {{"key", "value"}}}};
  }
  if (resource == "secrets") {
    return {{"apiVersion", "v1"},
            {"kind", "Secret"},
            {"metadata", objectMeta(name, ns, labels)},
            {"type", "Opaque"},
            {"stringData", {{"key", "value"}}}};
  }
  if (resource == "pods") {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", objectMeta(name, ns, labels)},
            {"spec", {{"containers", json::array({container()})}}}};
  }
  if (resource == "deployments") {
    json template_labels = labels;
    template_labels["gen"] = name;
    return {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", objectMeta(name, ns, labels)},
            {"spec",
             {{"replicas", 1},
              {"selector", {{"matchLabels", {{"gen", name}}}}},
              {"template",
               {{"metadata", {{"labels", template_labels}}},
                {"spec", {{"containers", json::array({container()})}}}}}}}};
  }
  if (resource == "namespaces") {
    return {{"apiVersion", "v1"},
            {"kind", "Namespace"},
            {"metadata", objectMeta(name, "", labels)}};
  }
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", objectMeta(name, "", labels)}};
}

std::string groupOf(const std::string& resource) {
  return resource == "deployments" ? "apps" : "";
}

// The resources of a rule as ValidatingWebhookConfiguration validation accepts them
// (k8s.io/kubernetes pkg/apis/admissionregistration/validation/validation.go validateResources):
// "*/*" alone; "*" without other resources lacking a subresource; "x/*" without "x/y"; no
// duplicates.
std::vector<std::string> validResources(std::vector<std::string> resources) {
  auto has = [&](const std::string& r) {
    return std::find(resources.begin(), resources.end(), r) != resources.end();
  };
  if (has("*/*")) return {"*/*"};
  std::vector<std::string> out;
  for (const auto& r : resources) {
    const auto slash = r.find('/');
    if (std::find(out.begin(), out.end(), r) != out.end()) continue;
    if (slash == std::string::npos && r != "*" && has("*")) continue;
    if (slash != std::string::npos && r.substr(slash) != "/*" && has(r.substr(0, slash) + "/*")) {
      continue;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace

rc::Gen<json> genRule(WebhookSetOptions options) {
  return rc::gen::exec([options] {
    json rule;
    rule["operations"] = *rc::gen::oneOf(
        rc::gen::just(std::vector<std::string>{"*"}),
        genSubset({"CREATE", "UPDATE", "DELETE"}));
    std::vector<std::vector<std::string>> groups = {{""}, {"apps"}, {"*"}, {"", "apps"}};
    std::vector<std::vector<std::string>> versions = {{"v1"}, {"*"}};
    if (options.legacy_versions) {
      groups.push_back({"extensions"});
      versions.push_back({"v1beta1"});
    }
    rule["apiGroups"] = *rc::gen::elementOf(groups);
    rule["apiVersions"] = *rc::gen::elementOf(versions);
    rule["resources"] = validResources(*rc::gen::resize(
        2, rc::gen::nonEmpty(rc::gen::container<std::vector<std::string>>(rc::gen::element<
                                                                          std::string>(
            // Wildcards twice: about half the webhooks then match a given request's resource.
            "pods", "configmaps", "deployments", "namespaces", "nodes", "secrets", "*", "*", "*/*",
            "*/*", "pods/*", "pods/status", "deployments/scale")))));
    if (*rc::gen::arbitrary<bool>()) {
      rule["scope"] = *rc::gen::element<std::string>("*", "Namespaced", "Cluster");
    }
    return rule;
  });
}

rc::Gen<json> genLabelSelector(const std::vector<std::string>& keys,
                               const std::vector<std::string>& values) {
  return rc::gen::exec([keys, values] {
    switch (*rc::gen::inRange(0, 5)) {
      case 0:
      case 1:
        return json();  // defaulted to {}: matches everything
      case 2:
        return json::object();
      case 3:
        return json{{"matchLabels", {{*rc::gen::elementOf(keys), *rc::gen::elementOf(values)}}}};
      default:
        break;
    }
    json expression = {{"key", *rc::gen::elementOf(keys)}};
    const auto op = *rc::gen::element<std::string>("In", "NotIn", "Exists", "DoesNotExist");
    expression["operator"] = op;
    if (op == "In" || op == "NotIn") {
      expression["values"] = *rc::gen::resize(
          2, rc::gen::nonEmpty(
                 rc::gen::container<std::vector<std::string>>(rc::gen::elementOf(values))));
    }
    return json{{"matchExpressions", json::array({expression})}};
  });
}

rc::Gen<WebhookSet> genWebhookSet(WebhookSetOptions options) {
  return rc::gen::exec([options] {
    WebhookSet set;
    for (const auto& name : kNamespaceNames) {
      set.namespaces.push_back(
          makeObject("namespaces", name, "", *genLabels({"env", "team"}, kNamespaceValues)));
    }
    const int configurations = *rc::gen::inRange(1, 4);
    // Configuration names in random byte order: the mutating phase calls configurations sorted
    // by name, so the generated order and the calling order differ.
    std::vector<std::string> names = {"cfg-a", "cfg-b", "cfg-c", "cfg-z"};
    for (std::size_t i = names.size(); i > 1; --i) {
      std::swap(names[i - 1], names[*rc::gen::inRange<std::size_t>(0, i)]);
    }
    int webhook_number = 0;
    for (int c = 0; c < configurations; ++c) {
      const bool mutating = *rc::gen::inRange(0, 3) != 0;
      json configuration = {
          {"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration"},
          {"metadata", {{"name", names[c]}}},
          {"webhooks", json::array()}};
      const int webhooks = *rc::gen::inRange(1, 4);
      for (int w = 0; w < webhooks; ++w) {
        const std::string name = "w" + std::to_string(webhook_number++) + ".gen.example.com";
        configuration["webhooks"].push_back(*genWebhook(name, mutating, options));
        set.endpoint_of[name] =
            options.varied_endpoints ? *rc::gen::elementOf(endpointBehaviours()) : "allow";
      }
      set.configurations.push_back(std::move(configuration));
    }
    return set;
  });
}

rc::Gen<std::vector<GeneratedRequest>> genRequests(const WebhookSet& set,
                                                   bool create_namespaces) {
  std::vector<std::string> namespaces;
  namespaces.reserve(set.namespaces.size());
  for (const auto& ns : set.namespaces) namespaces.push_back(ns["metadata"]["name"]);
  std::vector<std::string> creatable = {"configmaps", "secrets", "pods", "deployments", "nodes"};
  if (create_namespaces) creatable.push_back("namespaces");
  return rc::gen::exec([namespaces, creatable, stored_namespaces = set.namespaces] {
    std::vector<GeneratedRequest> requests;
    std::vector<json> created;  // objects still stored, updatable and deletable
    const int count = *rc::gen::inRange(2, 9);
    for (int i = 0; i < count; ++i) {
      const int action = created.empty() ? 0 : *rc::gen::inRange(0, 4);
      GeneratedRequest request;
      if (action <= 1) {  // create
        request.operation = "CREATE";
        request.resource = *rc::gen::elementOf(creatable);
        const bool cluster_scoped = request.resource == "namespaces" || request.resource == "nodes";
        const std::string prefix = request.resource == "configmaps"    ? "cm"
                                   : request.resource == "secrets"     ? "secret"
                                   : request.resource == "pods"        ? "pod"
                                   : request.resource == "deployments" ? "deploy"
                                   : request.resource == "namespaces"  ? "gen-new"
                                                                       : "node";
        request.name = prefix + "-" + std::to_string(i);
        const std::string ns = cluster_scoped ? "" : *rc::gen::elementOf(namespaces);
        json labels = request.resource == "namespaces"
                          ? *genLabels({"env", "team"}, kNamespaceValues)
                          : *genLabels(kObjectKeys, kObjectValues);
        request.object = makeObject(request.resource, request.name, ns, labels);
        request.namespace_name = request.resource == "namespaces" ? request.name : ns;
        created.push_back(request.object);
      } else if (action == 2) {  // update the labels of a stored object or namespace
        const bool of_namespace = *rc::gen::inRange(0, 3) == 0;
        const json old = of_namespace ? *rc::gen::elementOf(stored_namespaces)
                                      : *rc::gen::elementOf(created);
        request.operation = "UPDATE";
        request.old_object = old;
        request.object = old;
        json labels = old["metadata"].value("labels", json::object());
        const std::string kind = old["kind"];
        const bool ns_kind = kind == "Namespace";
        const std::vector<std::string> keys =
            ns_kind ? std::vector<std::string>{"env", "team"} : kObjectKeys;
        labels[*rc::gen::elementOf(keys)] =
            *rc::gen::elementOf(ns_kind ? kNamespaceValues : kObjectValues);
        request.object["metadata"]["labels"] = labels;
      } else {  // delete a stored object other than a namespace
        std::vector<json> deletable;
        for (const auto& object : created) {
          if (object["kind"] != "Namespace") deletable.push_back(object);
        }
        if (deletable.empty()) {
          --i;
          continue;
        }
        const json old = *rc::gen::elementOf(deletable);
        request.operation = "DELETE";
        request.old_object = old;
        created.erase(std::find(created.begin(), created.end(), old));
      }
      const json& target = request.object.is_null() ? request.old_object : request.object;
      const std::string kind = target["kind"];
      request.resource = kind == "ConfigMap"    ? "configmaps"
                         : kind == "Secret"     ? "secrets"
                         : kind == "Pod"        ? "pods"
                         : kind == "Deployment" ? "deployments"
                         : kind == "Namespace"  ? "namespaces"
                                                : "nodes";
      request.group = groupOf(request.resource);
      request.version = "v1";
      request.name = target["metadata"]["name"];
      request.namespace_name = request.resource == "namespaces"
                                   ? request.name
                                   : target["metadata"].value("namespace", std::string());
      if (request.operation == "UPDATE") {
        // The stored copy changes with the update.
        for (auto& object : created) {
          if (object["kind"] == target["kind"] && object["metadata"]["name"] == request.name &&
              object["metadata"].value("namespace", "") == request.namespace_name) {
            object = request.object;
          }
        }
      }
      requests.push_back(std::move(request));
    }
    return requests;
  });
}

void showValue(const WebhookSet& set, std::ostream& os) {
  for (const auto& ns : set.namespaces) os << core::toYaml(ns) << "---\n";
  for (const auto& configuration : set.configurations) os << core::toYaml(configuration) << "---\n";
  for (const auto& [webhook, behaviour] : set.endpoint_of) {
    os << "# " << webhook << " -> " << behaviour << "\n";
  }
}

void showValue(const GeneratedRequest& request, std::ostream& os) {
  os << request.operation << " " << (request.group.empty() ? "" : request.group + "/")
     << request.version << " " << request.resource << " " << request.namespace_name << "/"
     << request.name << "\n";
  if (!request.object.is_null()) os << core::toYaml(request.object);
}

}  // namespace harness::property
