// The write path of kube-apiserver around admission (k8s-admission-chain.md §1.3-§1.6, §6).
// Followed: apiserver pkg/endpoints/handlers/create.go, update.go, delete.go (decode, defaulting,
// admission, dedup of ownerReferences), pkg/registry/rest/create.go BeforeCreate (namespace
// check, name generation, PrepareForCreate, validation), pkg/admission/chain.go and
// reinvocation.go (plugins in order, one reinvocation pass), pkg/admission/plugin/webhook/
// generic/webhook.go Dispatch (exempt kinds).

#include "harness/sim/admission_chain.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "audit_recorder.h"
#include "dispatch.h"
#include "harness/sim/admission_metrics.h"
#include "harness/sim/defaulting.h"
#include "harness/sim/object_validation.h"
#include "harness/sim/webhook_source.h"

namespace harness::sim {

using detail::Clock;

std::string_view toString(CallOutcome outcome) {
  switch (outcome) {
    case CallOutcome::kAllowed: return "Allowed";
    case CallOutcome::kPatched: return "Patched";
    case CallOutcome::kDenied: return "Denied";
    case CallOutcome::kCallingError: return "CallingError";
    case CallOutcome::kFailedOpen: return "FailedOpen";
    case CallOutcome::kDryRunUnsupported: return "DryRunUnsupported";
    case CallOutcome::kApplyError: return "ApplyError";
    case CallOutcome::kRequestTimeout: return "RequestTimeout";
  }
  return "Unknown";
}

void createDefaultServiceAccount(ObjectStore& store, const std::string& namespace_name) {
  // pkg/controller/serviceaccount/serviceaccounts_controller.go: syncNamespace creates each of
  // DefaultServiceAccountsControllerOptions' accounts ({Name: "default"}) that is missing; an
  // existing one is left alone.
  if (namespace_name.empty()) return;
  (void)store.create({"", "serviceaccounts"},
                     {{"apiVersion", "v1"},
                      {"kind", "ServiceAccount"},
                      {"metadata", {{"name", "default"}, {"namespace", namespace_name}}}});
}

core::UserInfo defaultAdminUser() {
  // k3s writes an admin kubeconfig whose client certificate is CN=system:admin,
  // O=system:masters; authenticated users also get system:authenticated.
  core::UserInfo user;
  user.username = "system:admin";
  user.groups = {"system:masters", "system:authenticated"};
  return user;
}

namespace {

const core::GroupResource kNamespaces{"", "namespaces"};
const core::GroupResource kMutatingConfigs{std::string(core::kAdmissionRegistrationGroup),
                                           "mutatingwebhookconfigurations"};
const core::GroupResource kValidatingConfigs{std::string(core::kAdmissionRegistrationGroup),
                                             "validatingwebhookconfigurations"};

std::string stringAt(const nlohmann::json& object, const char* section, const char* field) {
  if (!object.is_object()) return {};
  auto s = object.find(section);
  if (s == object.end() || !s->is_object()) return {};
  auto f = s->find(field);
  if (f == s->end() || !f->is_string()) return {};
  return f->get<std::string>();
}

std::string verbFor(const WriteRequest& request) {
  if (!request.verb.empty()) return request.verb;
  if (request.operation == kOperationCreate) return "create";
  if (request.operation == kOperationUpdate) return "update";
  if (request.operation == kOperationDelete) return "delete";
  return "create";  // CONNECT requests are POSTs (verb create on the subresource)
}

nlohmann::json defaultOptions(const std::string& operation, bool dry_run) {
  nlohmann::json options = nlohmann::json::object();
  if (operation == kOperationCreate) {
    options = {{"kind", "CreateOptions"}, {"apiVersion", "meta.k8s.io/v1"}};
  } else if (operation == kOperationUpdate) {
    options = {{"kind", "UpdateOptions"}, {"apiVersion", "meta.k8s.io/v1"}};
  } else if (operation == kOperationDelete) {
    options = {{"kind", "DeleteOptions"}, {"apiVersion", "meta.k8s.io/v1"}};
  }
  if (dry_run) options["dryRun"] = nlohmann::json::array({"All"});
  return options;
}

// pkg/endpoints/handlers/rest.go dedupOwnerReferencesAndAddWarning.
void dedupOwnerReferences(nlohmann::json& object, std::vector<std::string>& warnings) {
  if (!object.is_object() || !object.contains("metadata")) return;
  auto& metadata = object["metadata"];
  if (!metadata.is_object() || !metadata.contains("ownerReferences") ||
      !metadata["ownerReferences"].is_array()) {
    return;
  }
  auto& refs = metadata["ownerReferences"];
  std::set<std::string> seen;
  nlohmann::json unique = nlohmann::json::array();
  std::vector<std::string> duplicates;
  for (const auto& ref : refs) {
    const std::string uid = ref.is_object() && ref.contains("uid") && ref["uid"].is_string()
                                ? ref["uid"].get<std::string>()
                                : ref.dump();
    if (seen.insert(uid).second) {
      unique.push_back(ref);
    } else {
      duplicates.push_back(uid);
    }
  }
  if (duplicates.empty()) return;
  refs = std::move(unique);
  std::string list;
  for (const auto& uid : duplicates) {
    if (!list.empty()) list += ", ";
    list += uid;
  }
  warnings.push_back(fmt::format(
      ".metadata.ownerReferences contains duplicate entries after mutating admission happens; "
      "duplicate entries are removed from the object, the duplicate entries are: [{}]",
      list));
}

}  // namespace

struct AdmissionChain::Impl {
  ObjectStore& store;
  WebhookCaller& caller;
  core::MetricsRegistry& registry;
  AdmissionMetrics metrics;
  std::vector<std::unique_ptr<AdmissionPlugin>> plugins;

  mutable std::mutex hooks_mutex;
  mutable std::uint64_t hooks_revision = ~std::uint64_t{0};
  mutable std::vector<HookEntry> mutating;
  mutable std::vector<HookEntry> validating;

  Impl(ObjectStore& s, WebhookCaller& c, core::MetricsRegistry& r)
      : store(s), caller(c), registry(r), metrics(r) {}

  void refreshHooks() const {
    std::lock_guard lock(hooks_mutex);
    const std::uint64_t revision = store.revision();
    if (revision == hooks_revision) return;
    std::vector<core::WebhookConfiguration> configs;
    for (const auto* resource : {&kMutatingConfigs, &kValidatingConfigs}) {
      for (const auto& object : store.list(*resource)) {
        auto parsed = core::parseWebhookConfiguration(object);
        if (!parsed.ok()) continue;  // rejected at create time; stored seeds are validated too
        core::applyV1Defaults(*parsed);
        configs.push_back(std::move(parsed).value());
      }
    }
    mutating = orderHooks(configs, core::WebhookKind::kMutating);
    validating = orderHooks(configs, core::WebhookKind::kValidating);
    hooks_revision = revision;
  }

  NamespaceLabelsLookup namespaceLookup() const {
    return [this](const std::string& name) -> std::variant<core::StringMap, core::Status> {
      auto ns = store.get(kNamespaces, "", name);
      if (!ns) return core::newNotFound(kNamespaces, name);
      core::StringMap labels;
      if (ns->contains("metadata") && (*ns)["metadata"].contains("labels") &&
          (*ns)["metadata"]["labels"].is_object()) {
        for (const auto& [key, value] : (*ns)["metadata"]["labels"].items()) {
          if (value.is_string()) labels[key] = value.get<std::string>();
        }
      }
      return labels;
    };
  }

  PluginContext pluginContext() const {
    PluginContext context;
    context.get_object = [this](const core::GroupVersionResource& resource, const std::string& ns,
                                const std::string& name) {
      return store.get(core::GroupResource{resource.group, resource.resource}, ns, name);
    };
    context.random_suffix = [this] { return store.randomSuffix(); };
    return context;
  }
};

AdmissionChain::AdmissionChain(ObjectStore& store, WebhookCaller& caller,
                               core::MetricsRegistry& metrics, ChainOptions options)
    : impl_(std::make_unique<Impl>(store, caller, metrics)), options_(std::move(options)) {
  auto plugins = makePlugins(options_.plugins);
  if (plugins.ok()) impl_->plugins = std::move(plugins).value();
}

AdmissionChain::~AdmissionChain() = default;

core::Result<void> AdmissionChain::setPlugins(const std::vector<std::string>& names) {
  auto plugins = makePlugins(names);
  if (!plugins.ok()) return plugins.error();
  impl_->plugins = std::move(plugins).value();
  options_.plugins = names;
  return {};
}

std::vector<HookEntry> AdmissionChain::mutatingHooks() const {
  impl_->refreshHooks();
  std::lock_guard lock(impl_->hooks_mutex);
  return impl_->mutating;
}

std::vector<HookEntry> AdmissionChain::validatingHooks() const {
  impl_->refreshHooks();
  std::lock_guard lock(impl_->hooks_mutex);
  return impl_->validating;
}

namespace {

struct Failure {
  core::Status status;
  std::string stage;
};

}  // namespace

AdmissionResult AdmissionChain::handle(const WriteRequest& request) {
  const auto started = Clock::now();
  AdmissionResult result;
  result.audit_id = impl_->store.newUid();
  const std::string verb = verbFor(request);

  detail::RequestState state;
  state.result = &result;
  state.time_scale = options_.time_scale >= 0 ? options_.time_scale : 1.0;
  auto timeout = options_.request_timeout;
  if (request.timeout && *request.timeout < timeout) timeout = *request.timeout;
  state.timeout = timeout;
  state.caller = &impl_->caller;
  state.metrics = &impl_->metrics;
  state.namespaces = impl_->namespaceLookup();
  state.match_conditions = options_.match_conditions ? &options_.match_conditions : nullptr;
  state.new_uid = [this] { return impl_->store.newUid(); };

  AdmissionAttributes& attributes = state.attributes;
  attributes.operation = request.operation;
  attributes.resource = request.resource;
  attributes.subresource = request.subresource;
  attributes.namespace_name = request.namespace_name;
  attributes.name = request.name;
  attributes.dry_run = request.dry_run;
  attributes.user_info = request.user_info.username.empty() ? defaultAdminUser() : request.user_info;
  attributes.options = request.options ? request.options
                                       : std::optional<nlohmann::json>(
                                             defaultOptions(request.operation, request.dry_run));
  if (request.operation == kOperationConnect) attributes.options.reset();

  const core::GroupResource group_resource{request.resource.group, request.resource.resource};
  const auto info = core::findResource(request.resource, request.subresource);
  const bool namespaced = info ? info->namespaced : !request.namespace_name.empty();
  // RequestInfo gives a request on namespaces/<n> the namespace <n>; cluster-scoped objects are
  // stored without one.
  const std::string storage_namespace = namespaced ? request.namespace_name : std::string();

  AuditRecorder audit(options_, result, verb, request, attributes);
  audit.requestReceived();

  auto finish = [&](std::optional<Failure> failure) -> AdmissionResult {
    if (failure) {
      result.allowed = false;
      result.status = failure->status.withTypeMeta();
      result.code = failure->status.code;
      result.stage = failure->stage;
    } else {
      result.allowed = true;
      result.stage = "done";
    }
    result.duration = Clock::now() - started;
    audit.responseComplete(result);
    return std::move(result);
  };

  // --- decode and defaulting of the body ---
  if (request.operation == kOperationCreate || request.operation == kOperationUpdate) {
    if (!request.object || !request.object->is_object()) {
      return finish(Failure{core::newBadRequest("the body of the request was not a JSON object"),
                            "decode"});
    }
    nlohmann::json object = *request.object;
    auto gvk = core::groupVersionKindOf(object);
    if (!gvk.ok()) return finish(Failure{core::newBadRequest(gvk.error().message), "decode"});
    if (info && (gvk->kind != info->kind.kind || gvk->group != info->kind.group)) {
      // The codec refuses a body of another kind (serializer/versioning: "<kind> in version
      // <v> cannot be handled as a <kind>").
      return finish(Failure{
          core::newBadRequest(fmt::format("{} in version {} cannot be handled as a {}: no kind "
                                          "{} is registered for the resource",
                                          gvk->kind, core::goQuote(gvk->version), info->kind.kind,
                                          core::goQuote(gvk->kind))),
          "decode"});
    }
    attributes.kind = *gvk;
    const std::string object_namespace = stringAt(object, "metadata", "namespace");
    if (namespaced) {
      if (object_namespace.empty() && !request.namespace_name.empty()) {
        object["metadata"]["namespace"] = request.namespace_name;
      } else if (!object_namespace.empty() && object_namespace != request.namespace_name) {
        // pkg/registry/rest/meta.go EnsureObjectNamespaceMatchesRequestNamespace.
        return finish(Failure{core::newBadRequest("the namespace of the provided object does not "
                                                  "match the namespace sent on the request"),
                              "decode"});
      }
    }
    if (attributes.name.empty()) attributes.name = stringAt(object, "metadata", "name");
    applyDefaults(object);
    normalizeLikeGoEncoding(object);
    attributes.object = std::move(object);
    if (request.operation == kOperationUpdate) {
      if (request.old_object) {
        attributes.old_object = *request.old_object;
      } else {
        auto stored = impl_->store.get(group_resource, storage_namespace, attributes.name);
        if (!stored) {
          return finish(Failure{core::newNotFound(group_resource, attributes.name), "decode"});
        }
        attributes.old_object = std::move(*stored);
      }
    }
  } else if (request.operation == kOperationDelete) {
    auto stored = request.old_object
                      ? request.old_object
                      : impl_->store.get(group_resource, storage_namespace, request.name);
    if (!stored) return finish(Failure{core::newNotFound(group_resource, request.name), "decode"});
    attributes.old_object = std::move(*stored);
    if (auto gvk = core::groupVersionKindOf(*attributes.old_object); gvk.ok()) {
      attributes.kind = *gvk;
    }
  } else if (request.operation == kOperationConnect) {
    attributes.object = request.object;
    if (info) attributes.kind = info->kind;
  } else {
    return finish(Failure{core::newBadRequest(fmt::format("unsupported operation {}",
                                                          core::goQuote(request.operation))),
                          "decode"});
  }
  if (attributes.kind.kind.empty() && info) attributes.kind = info->kind;
  audit.setRequestObject(attributes.object);

  const bool exempt = isExemptFromWebhooks(attributes);
  PluginContext plugin_context = impl_->pluginContext();
  plugin_context.add_audit_annotation = [&state](const std::string& key, const std::string& value) {
    state.addAnnotation(key, value, audit::Level::kMetadata);
  };

  // --- mutating admission: in-tree plugins, then the webhooks; one reinvocation pass ---
  {
    // The step's time: its plugins' measured time plus its webhooks' simulated time.
    std::chrono::nanoseconds step_time{0};
    detail::WebhookReinvocation reinvocation;
    bool changed_any = false;
    std::optional<Failure> failure;
    for (int round = 0; round < 2 && !failure; ++round) {
      if (round == 1 && !changed_any) break;
      attributes.reinvoke = round == 1;
      result.reinvoked = round == 1;
      for (const auto& plugin : impl_->plugins) {
        if (!plugin->mutating()) continue;
        const auto before = attributes.object;
        const auto plugin_started = Clock::now();
        auto rejection = plugin->admit(attributes, plugin_context);
        PluginRecord record{std::string(plugin->name()), round, false, false, rejection};
        record.changed = before.has_value() != attributes.object.has_value() ||
                         (before && !detail::semanticEqual(*before, *attributes.object));
        const std::chrono::nanoseconds took = Clock::now() - plugin_started;
        step_time += took;
        impl_->metrics.observeController(plugin->name(), "admit", attributes.operation, took,
                                         rejection.has_value());
        result.plugins.push_back(std::move(record));
        if (rejection) {
          failure = Failure{*rejection, "mutating"};
          break;
        }
      }
      if (failure || exempt) continue;
      impl_->refreshHooks();
      std::vector<HookEntry> hooks;
      {
        std::lock_guard lock(impl_->hooks_mutex);
        hooks = impl_->mutating;
      }
      const auto webhooks_started = state.elapsed;
      auto error = detail::dispatchMutating(state, hooks, round, reinvocation, changed_any);
      step_time += state.elapsed - webhooks_started;
      impl_->metrics.observeController("MutatingAdmissionWebhook", "admit", attributes.operation,
                                       state.elapsed - webhooks_started, error.has_value());
      if (error) failure = Failure{*error, "mutating"};
    }
    audit.copyAnnotations();
    impl_->metrics.observeStep("admit", attributes.operation, step_time, failure.has_value());
    if (failure) return finish(failure);
  }

  // --- after mutation: ownerReferences, namespace, name generation, validation ---
  if (attributes.object && (request.operation == kOperationCreate ||
                            request.operation == kOperationUpdate)) {
    nlohmann::json& object = *attributes.object;
    std::vector<std::string> warnings;
    dedupOwnerReferences(object, warnings);
    for (const auto& warning : warnings) state.addWarning(warning);
    const std::string object_namespace = stringAt(object, "metadata", "namespace");
    if (namespaced && object_namespace != request.namespace_name) {
      return finish(Failure{core::newBadRequest("the namespace of the provided object does not "
                                                "match the namespace sent on the request"),
                            "validation"});
    }
    if (request.operation == kOperationCreate) {
      if (stringAt(object, "metadata", "name").empty() &&
          !stringAt(object, "metadata", "generateName").empty()) {
        object["metadata"]["name"] =
            stringAt(object, "metadata", "generateName") + impl_->store.randomSuffix();
      }
      prepareForCreate(object);
    } else if (request.subresource == "status") {
      prepareForStatusUpdate(object, *attributes.old_object);
    } else {
      prepareForUpdate(object, *attributes.old_object);
    }
    core::FieldErrors errors = validateObject(object, attributes.old_object
                                                          ? &*attributes.old_object
                                                          : nullptr);
    auto is = [&](const core::GroupResource& r) {
      return group_resource.group == r.group && group_resource.resource == r.resource;
    };
    if (is(kMutatingConfigs) || is(kValidatingConfigs)) {
      if (auto parsed = core::parseWebhookConfiguration(object); parsed.ok()) {
        core::applyV1Defaults(*parsed);
        object = core::toJson(*parsed);
        std::optional<core::WebhookConfiguration> old;
        if (attributes.old_object) {
          if (auto o = core::parseWebhookConfiguration(*attributes.old_object); o.ok()) {
            core::applyV1Defaults(*o);
            old = std::move(o).value();
          }
        }
        auto config_errors = core::validateWebhookConfiguration(
            *parsed, old ? core::ValidationMode::kUpdate : core::ValidationMode::kCreate,
            old ? &*old : nullptr);
        if (!config_errors.empty()) {
          return finish(Failure{core::invalidConfigurationStatus(*parsed, config_errors),
                                "validation"});
        }
      } else {
        return finish(Failure{core::newBadRequest(parsed.error().message), "decode"});
      }
    }
    if (!errors.empty()) {
      const std::string name = stringAt(object, "metadata", "name");
      return finish(Failure{
          core::newInvalid(core::GroupKind{attributes.kind.group, attributes.kind.kind}, name,
                           errors),
          "validation"});
    }
    if (request.operation == kOperationCreate && request.subresource.empty()) {
      for (const auto& warning : warningsOnCreate(object)) state.addWarning(warning);
    }
  }

  // --- validating admission: in-tree validators, then the webhooks in parallel ---
  {
    std::chrono::nanoseconds step_time{0};  // as for the mutating step
    std::optional<Failure> failure;
    for (const auto& plugin : impl_->plugins) {
      if (!plugin->validating()) continue;
      const auto plugin_started = Clock::now();
      auto rejection = plugin->validate(attributes, plugin_context);
      const std::chrono::nanoseconds took = Clock::now() - plugin_started;
      step_time += took;
      impl_->metrics.observeController(plugin->name(), "validate", attributes.operation, took,
                                       rejection.has_value());
      result.plugins.push_back(PluginRecord{std::string(plugin->name()), 0, true, false, rejection});
      if (rejection) {
        failure = Failure{*rejection, "validating"};
        break;
      }
    }
    if (!failure && !exempt) {
      const auto hooks = validatingHooks();
      const auto webhooks_started = state.elapsed;
      auto error = detail::dispatchValidating(state, hooks);
      step_time += state.elapsed - webhooks_started;
      impl_->metrics.observeController("ValidatingAdmissionWebhook", "validate",
                                       attributes.operation, state.elapsed - webhooks_started,
                                       error.has_value());
      if (error) failure = Failure{*error, "validating"};
    }
    audit.copyAnnotations();
    impl_->metrics.observeStep("validate", attributes.operation, step_time,
                               failure.has_value());
    if (failure) return finish(failure);
  }

  // --- storage ---
  if (request.operation == kOperationCreate) {
    result.code = 201;
    if (request.dry_run) {
      result.object = attributes.object;
    } else {
      auto stored = impl_->store.create(group_resource, *attributes.object);
      if (auto* status = std::get_if<core::Status>(&stored)) {
        return finish(Failure{*status, "storage"});
      }
      result.object = std::get<nlohmann::json>(stored);
      if (options_.default_service_accounts && group_resource.group.empty() &&
          group_resource.resource == "namespaces" && request.subresource.empty()) {
        if (auto name = core::nameOf(*result.object); name.ok()) {
          createDefaultServiceAccount(impl_->store, *name);
        }
      }
    }
  } else if (request.operation == kOperationUpdate) {
    result.code = 200;
    if (request.dry_run) {
      result.object = attributes.object;
    } else {
      auto stored = impl_->store.update(group_resource, *attributes.object);
      if (auto* status = std::get_if<core::Status>(&stored)) {
        return finish(Failure{*status, "storage"});
      }
      result.object = std::get<nlohmann::json>(stored);
    }
  } else if (request.operation == kOperationDelete) {
    result.code = 200;
    if (request.dry_run) {
      result.object = attributes.old_object;
    } else {
      auto removed = impl_->store.remove(group_resource, storage_namespace, request.name);
      if (auto* status = std::get_if<core::Status>(&removed)) {
        return finish(Failure{*status, "storage"});
      }
      result.object = std::get<nlohmann::json>(removed);
    }
  } else {
    result.code = 200;
    result.object = attributes.object;
  }
  return finish(std::nullopt);
}

void AdmissionChain::auditRead(const std::string& verb, const core::GroupVersionResource& resource,
                               const std::string& namespace_name, const std::string& name,
                               const core::UserInfo& user, const std::string& request_uri,
                               int code, const std::optional<nlohmann::json>& response_object) {
  auditReadRequest(options_, impl_->store.newUid(), verb, resource, namespace_name, name, user,
                   request_uri, code, response_object);
}

}  // namespace harness::sim
