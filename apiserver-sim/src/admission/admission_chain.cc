// The write path of kube-apiserver around admission (docs/admission-chain.md §1.3-§1.6, §6).
// Followed: apiserver pkg/endpoints/handlers/create.go, update.go, delete.go (decode, defaulting,
// admission, dedup of ownerReferences), pkg/registry/rest/create.go BeforeCreate (namespace
// check, name generation, PrepareForCreate, validation), pkg/admission/chain.go and
// reinvocation.go (plugins in order, one reinvocation pass), pkg/admission/plugin/webhook/
// generic/webhook.go Dispatch (exempt kinds).

#include "harness/sim/admission_chain.h"

#include <algorithm>
#include <atomic>
#include <iostream>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "audit_recorder.h"
#include "deletion.h"
#include "dispatch.h"
#include "harness/core/object.h"
#include "harness/core/unstructured.h"
#include "harness/go/strconv.h"
#include "harness/sim/admission_metrics.h"
#include "harness/sim/authorizer.h"
#include "harness/sim/defaulting.h"
#include "harness/sim/object_validation.h"
#include "harness/sim/pod_update_validation.h"
#include "harness/sim/webhook_source.h"
#include "mutating_admission_policy.h"
#include "reinvocation.h"
#include "validating_admission_policy.h"

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

std::string verbFor(const WriteRequest& request) {
  if (!request.verb.empty()) return request.verb;
  if (request.operation == kOperationCreate) return "create";
  if (request.operation == kOperationUpdate) return "update";
  if (request.operation == kOperationDelete) return "delete";
  return "create";  // CONNECT requests are POSTs (verb create on the subresource)
}

AuthorizationAttributes authorizationAttributes(const WriteRequest& request) {
  AuthorizationAttributes attributes;
  attributes.user = request.user_info.username.empty() ? defaultAdminUser() : request.user_info;
  attributes.verb = verbFor(request);
  attributes.namespace_name = request.namespace_name;
  attributes.api_group = request.resource.group;
  attributes.api_version = request.resource.version;
  attributes.resource = request.resource.resource;
  attributes.subresource = request.subresource;
  // A create's request names no object (the body does), except on a subresource.
  if (request.operation != kOperationCreate || !request.subresource.empty()) {
    attributes.name = request.name;
  }
  return attributes;
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

namespace detail {

// Where a request stopped ("decode", "mutating", "validation", "validating", "storage") and the
// Status its client gets.
struct Failure {
  core::Status status;
  std::string stage;
};

// One write request on its way through the chain: what its phases share.
struct ChainRequest {
  ChainRequest(const WriteRequest& r, const ChainOptions& o) : request(r), options(o) {}

  const WriteRequest& request;
  const ChainOptions& options;
  Clock::time_point started = Clock::now();
  AdmissionResult result;
  std::string verb;
  RequestState state;  // state.attributes: the object as admission sees and changes it
  core::GroupResource group_resource;
  std::optional<core::ResourceInfo> info;  // the resource as served (nullopt: unknown)
  // The CustomResourceDefinition serving the resource (a custom resource's status included).
  std::optional<nlohmann::json> crd;
  // The paths of the fields the CRD's decoding pruned (fieldValidation's unknown fields).
  std::vector<std::string> unknown_fields;
  bool namespaced = false;
  // RequestInfo gives a request on namespaces/<n> the namespace <n>; cluster-scoped objects are
  // stored without one.
  std::string storage_namespace;
  bool exempt = false;  // never sent to webhooks (IsExemptAdmissionConfigurationResource)
  // kube-cel holds MutatingAdmissionPolicy state for the request: a round-0 pass was evaluated
  // and no reinvocation pass (which releases it) followed.
  bool mutating_policies_open = false;
  PluginContext plugin_context;
  std::optional<AuditRecorder> audit;

  AdmissionAttributes& attributes() { return state.attributes; }
};

}  // namespace detail

using detail::ChainRequest;
using detail::Failure;

struct AdmissionChain::Impl {
  ObjectStore& store;
  WebhookCaller& caller;
  core::MetricsRegistry& registry;
  AdmissionMetrics metrics;
  std::vector<std::unique_ptr<AdmissionPlugin>> plugins;

  mutable std::mutex hooks_mutex;
  // Bumped by the store after each write of a webhook configuration (shared with the store's
  // listener, which may outlive the chain); the hooks below are those of generation
  // hooks_generation_seen. Other writes (most of a scenario's) leave the parsed hooks be.
  std::shared_ptr<std::atomic<std::uint64_t>> hooks_generation =
      std::make_shared<std::atomic<std::uint64_t>>(0);
  mutable std::uint64_t hooks_generation_seen = ~std::uint64_t{0};
  mutable std::vector<HookEntry> mutating;
  mutable std::vector<HookEntry> validating;

  Impl(ObjectStore& s, WebhookCaller& c, core::MetricsRegistry& r)
      : store(s), caller(c), registry(r), metrics(r) {
    store.onChange([generation = hooks_generation](const core::GroupResource& resource) {
      for (const auto* configs : {&kMutatingConfigs, &kValidatingConfigs}) {
        if (resource.group == configs->group && resource.resource == configs->resource) {
          generation->fetch_add(1);
        }
      }
    });
  }

  void refreshHooks() const {
    std::lock_guard lock(hooks_mutex);
    // Read before listing: a write racing with the listing bumps it again.
    const std::uint64_t generation = hooks_generation->load();
    if (generation == hooks_generation_seen) return;
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
    hooks_generation_seen = generation;
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

  std::vector<HookEntry> hooks(core::WebhookKind kind) const {
    refreshHooks();
    std::lock_guard lock(hooks_mutex);
    return kind == core::WebhookKind::kMutating ? mutating : validating;
  }

  // The phases of AdmissionChain::handle, in order. Each returns where and why the request
  // stopped, or nullopt to go on.
  void receive(detail::ChainRequest& run);
  std::optional<detail::Failure> decode(detail::ChainRequest& run);
  std::optional<detail::Failure> admitMutating(detail::ChainRequest& run);
  detail::DispatchError mutatingPass(detail::ChainRequest& run,
                                     detail::ReinvocationContext& context,
                                     std::chrono::nanoseconds& step_time);
  std::optional<detail::Failure> validateObject(detail::ChainRequest& run);
  std::optional<detail::Failure> admitValidating(detail::ChainRequest& run);
  std::optional<detail::Failure> persist(detail::ChainRequest& run);
  std::optional<detail::Failure> admitDeletion(detail::ChainRequest& run);
  std::optional<detail::Failure> deleteGracefully(detail::ChainRequest& run,
                                                  detail::GracefulDeletion deletion);
  AdmissionResult respond(detail::ChainRequest& run, std::optional<detail::Failure> failure);
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
  return impl_->hooks(core::WebhookKind::kMutating);
}

std::vector<HookEntry> AdmissionChain::validatingHooks() const {
  return impl_->hooks(core::WebhookKind::kValidating);
}

namespace {

bool isCustomResourceDefinitions(const core::GroupResource& resource) {
  return resource.group == kCustomResourceDefinitions.group &&
         resource.resource == kCustomResourceDefinitions.resource;
}

// One call of apiextensions-apiserver's code for the request (ChainOptions::custom_resources):
// "definition" (the CRD registry strategy) or a step of the custom resource's write against
// run.crd. Its answer, or the Status the client gets: the code's refusal, or a 500 when kube-cel
// is missing or failed.
std::variant<CustomResourceAnswer, core::Status> customResourceCode(const ChainRequest& run,
                                                                    std::string_view step,
                                                                    const nlohmann::json& object,
                                                                    const nlohmann::json* old) {
  const CustomResourceCode& code = run.options.custom_resources;
  const bool definition = step == "definition";
  if (definition ? !code.definition : !code.resource) {
    return core::newInternalError(fmt::format(
        "{} need apiextensions-apiserver's code, which the simulator runs in kube-cel: {}",
        definition ? "CustomResourceDefinitions" : "custom resources",
        code.unavailable.empty() ? "none is installed" : code.unavailable));
  }
  try {
    return definition ? code.definition(object, old, run.request.subresource)
                      : code.resource(step, *run.crd, object, old, run.request.subresource);
  } catch (const std::exception& e) {
    return core::newInternalError(e.what());
  }
}

}  // namespace

// The request path (create.go/update.go/delete.go createHandler & co.): one phase after the
// other, then the response and its audit event.
AdmissionResult AdmissionChain::handle(const WriteRequest& request) {
  ChainRequest run(request, options_);
  impl_->receive(run);
  std::optional<Failure> failure;
  if (options_.authorize && !request.authorized) {
    // WithAuthorization, before admission (pkg/endpoints/filters/authorization.go).
    const AuthorizationAttributes attributes = authorizationAttributes(request);
    const Authorization decision = authorize(impl_->store, attributes);
    run.audit->setAuthorization(decision.allowed(), decision.reason);
    if (!decision.allowed()) {
      failure = Failure{forbidden(attributes, decision.reason), "authorization"};
    }
  }
  if (!failure) failure = impl_->decode(run);
  if (!failure && request.operation == kOperationDelete) {
    const AdmissionAttributes& attributes = run.attributes();
    detail::GracefulDeletion deletion = detail::gracefulDeletion(
        run.group_resource, *attributes.old_object,
        attributes.options.value_or(nlohmann::json::object()), std::chrono::system_clock::now());
    if (deletion.kind == detail::GracefulDeletion::Kind::kGraceful) {
      // updateForGracefulDeletionAndFinalizers: the propagation's finalizers are set before the
      // object is marked, so a Pod deleted with Orphan or Foreground stays until the garbage
      // collector removes them.
      if (auto finalizers = detail::deletionFinalizersForGarbageCollection(
              request.resource, deletion.marked,
              attributes.options.value_or(nlohmann::json::object()))) {
        deletion.marked = detail::withFinalizers(std::move(deletion.marked), *finalizers);
      }
    }
    if (deletion.kind != detail::GracefulDeletion::Kind::kNotGraceful) {
      failure = impl_->deleteGracefully(run, std::move(deletion));
      return impl_->respond(run, std::move(failure));
    }
  }
  if (!failure) failure = impl_->admitMutating(run);
  if (!failure) failure = impl_->validateObject(run);
  if (!failure) failure = impl_->admitValidating(run);
  if (!failure) failure = impl_->persist(run);
  return impl_->respond(run, std::move(failure));
}

core::Result<nlohmann::json> AdmissionChain::admitStartingObject(
    const core::GroupVersionResource& resource, nlohmann::json object) {
  auto gvk = core::groupVersionKindOf(object);
  if (!gvk.ok()) return gvk.error();
  applyDefaults(object);
  normalizeLikeGoEncoding(object);
  AdmissionAttributes attributes;
  attributes.operation = kOperationCreate;
  attributes.resource = resource;
  attributes.kind = *gvk;
  const auto info = core::findResource(resource);
  if (!info || info->namespaced) {
    attributes.namespace_name = core::nestedString(object, {"metadata", "namespace"});
  }
  attributes.name = core::nestedString(object, {"metadata", "name"});
  attributes.user_info = defaultAdminUser();
  attributes.options = defaultOptions(std::string(kOperationCreate), false);
  attributes.object = std::move(object);
  const PluginContext context = impl_->pluginContext();
  for (const auto& plugin : impl_->plugins) {
    if (!plugin->mutating()) continue;
    if (auto rejection = plugin->admit(attributes, context)) {
      return core::makeError(fmt::format("the {} admission plugin refuses it ({}): {}",
                                         plugin->name(), rejection->code, rejection->message));
    }
  }
  nlohmann::json admitted = std::move(*attributes.object);
  prepareForCreate(admitted);
  return admitted;
}

// The request as received: its deadline, attributes and resource, and the RequestReceived audit
// stage.
void AdmissionChain::Impl::receive(ChainRequest& run) {
  const WriteRequest& request = run.request;
  const ChainOptions& options = run.options;
  run.result.audit_id = store.newUid();
  run.verb = verbFor(request);

  detail::RequestState& state = run.state;
  state.result = &run.result;
  state.time_scale = options.time_scale >= 0 ? options.time_scale : 1.0;
  auto timeout = options.request_timeout;
  if (request.timeout && *request.timeout < timeout) timeout = *request.timeout;
  state.timeout = timeout;
  state.caller = &caller;
  state.metrics = &metrics;
  state.namespaces = namespaceLookup();
  state.match_conditions = options.match_conditions ? &options.match_conditions : nullptr;
  state.new_uid = [this] { return store.newUid(); };

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

  run.group_resource = {request.resource.group, request.resource.resource};
  run.info = core::findResource(request.resource, request.subresource);
  if (!run.info) {
    if (auto served = findCustomResource(store, request.resource, request.subresource)) {
      run.info = served->info;
      if (request.subresource.empty() || request.subresource == "status") {
        run.crd = *served->definition;
      }
    }
  }
  run.namespaced = run.info ? run.info->namespaced : !request.namespace_name.empty();
  run.storage_namespace = run.namespaced ? request.namespace_name : std::string();

  run.audit.emplace(options, run.result, run.verb, request, attributes);
  run.audit->requestReceived();
}

// Decoding and defaulting of the body, the client's namespace against the object's, the old
// object of an UPDATE or DELETE; then LogRequestObject.
std::optional<Failure> AdmissionChain::Impl::decode(ChainRequest& run) {
  const WriteRequest& request = run.request;
  AdmissionAttributes& attributes = run.attributes();
  const auto& info = run.info;
  auto fail = [](core::Status status) { return Failure{std::move(status), "decode"}; };
  if (request.operation == kOperationCreate || request.operation == kOperationUpdate) {
    if (!request.object || !request.object->is_object()) {
      return fail(core::newBadRequest("the body of the request was not a JSON object"));
    }
    nlohmann::json object = *request.object;
    auto gvk = core::groupVersionKindOf(object);
    if (!gvk.ok()) return fail(core::newBadRequest(gvk.error().message));
    if (info && !run.crd && (gvk->kind != info->kind.kind || gvk->group != info->kind.group)) {
      // The codec refuses a body of another kind (serializer/versioning: "<kind> in version
      // <v> cannot be handled as a <kind>").
      return fail(core::newBadRequest(fmt::format("{} in version {} cannot be handled as a {}: no "
                                                  "kind {} is registered for the resource",
                                                  gvk->kind, go::quote(gvk->version),
                                                  info->kind.kind, go::quote(gvk->kind))));
    }
    attributes.kind = *gvk;
    const std::string object_namespace = core::nestedString(object, {"metadata", "namespace"});
    if (run.namespaced) {
      if (object_namespace.empty() && !request.namespace_name.empty()) {
        object["metadata"]["namespace"] = request.namespace_name;
      } else if (!object_namespace.empty() && object_namespace != request.namespace_name) {
        // pkg/registry/rest/meta.go EnsureObjectNamespaceMatchesRequestNamespace.
        return fail(core::newBadRequest("the namespace of the provided object does not match the "
                                        "namespace sent on the request"));
      }
    }
    if (attributes.name.empty()) {
      attributes.name = core::nestedString(object, {"metadata", "name"});
    }
    if (run.crd) {
      // The CRD's codec (customresource_handler.go schemaCoercingDecoder, then the structural
      // defaults): unknown fields pruned, ObjectMeta coerced, defaults applied.
      auto decoded = customResourceCode(run, "decode", object, nullptr);
      if (auto* status = std::get_if<core::Status>(&decoded)) return fail(std::move(*status));
      auto& answer = std::get<CustomResourceAnswer>(decoded);
      object = std::move(answer.object);
      run.unknown_fields = std::move(answer.unknown_fields);
      // fieldValidation (create.go/update.go): the unknown fields the decoding pruned are the
      // Strict 400 (transformDecodeError) or one Warning each (Warn, the default).
      const std::string directive =
          request.options && request.options->is_object()
              ? request.options->value("fieldValidation", std::string("Warn"))
              : std::string("Warn");
      if (!run.unknown_fields.empty() && directive != "Ignore") {
        std::string list;
        for (const auto& path : run.unknown_fields) {
          const std::string error = fmt::format("unknown field \"{}\"", path);
          if (directive == "Warn") run.state.addWarning(error);
          list += (list.empty() ? "" : ", ") + error;
        }
        if (directive == "Strict") {
          return fail(core::newBadRequest(fmt::format(
              "{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}",
              gvk->kind, gvk->version, info ? info->kind.kind : gvk->kind, list)));
        }
      }
      run.state.default_object = [&run](nlohmann::json& patched) -> std::optional<core::Status> {
        auto defaulted = customResourceCode(run, "default", patched, nullptr);
        if (auto* status = std::get_if<core::Status>(&defaulted)) return std::move(*status);
        patched = std::move(std::get<CustomResourceAnswer>(defaulted).object);
        return std::nullopt;
      };
    } else {
      applyDefaults(object);
      normalizeLikeGoEncoding(object);
    }
    attributes.object = std::move(object);
    if (request.operation == kOperationUpdate) {
      if (request.old_object) {
        attributes.old_object = *request.old_object;
      } else {
        auto stored = store.get(run.group_resource, run.storage_namespace, attributes.name);
        if (!stored) return fail(core::newNotFound(run.group_resource, attributes.name));
        attributes.old_object = std::move(*stored);
      }
    }
  } else if (request.operation == kOperationDelete) {
    auto stored = request.old_object
                      ? request.old_object
                      : store.get(run.group_resource, run.storage_namespace, request.name);
    if (!stored) return fail(core::newNotFound(run.group_resource, request.name));
    attributes.old_object = std::move(*stored);
    if (auto gvk = core::groupVersionKindOf(*attributes.old_object); gvk.ok()) {
      attributes.kind = *gvk;
    }
  } else if (request.operation == kOperationConnect) {
    attributes.object = request.object;
    if (info) attributes.kind = info->kind;
  } else {
    return fail(core::newBadRequest(
        fmt::format("unsupported operation {}", go::quote(request.operation))));
  }
  if (attributes.kind.kind.empty() && info) attributes.kind = info->kind;
  run.audit->setRequestObject(attributes.object);

  run.exempt = isExemptFromWebhooks(attributes);
  run.plugin_context = pluginContext();
  run.plugin_context.add_audit_annotation = [&state = run.state](const std::string& key,
                                                                 const std::string& value) {
    state.addAnnotation(key, value, audit::Level::kMetadata);
  };
  return std::nullopt;
}

// Mutating admission: the in-tree mutating plugins, then the mutating webhooks, in round 0 and,
// when a webhook changed the object, once more (reinvocation.h).
std::optional<Failure> AdmissionChain::Impl::admitMutating(ChainRequest& run) {
  // The step's time: its plugins' measured time plus its webhooks' simulated time.
  std::chrono::nanoseconds step_time{0};
  detail::ReinvocationContext reinvocation;
  detail::DispatchError error = detail::admitWithReinvocation(
      reinvocation, [&](detail::ReinvocationContext& context) {
        return mutatingPass(run, context, step_time);
      });
  if (run.mutating_policies_open && run.options.mutating_policies.release) {
    // No reinvocation pass of the plugin: kube-cel's state for the request is not needed.
    run.options.mutating_policies.release(run.result.audit_id);
  }
  std::optional<Failure> failure;
  if (error) failure = Failure{*error, "mutating"};
  run.audit->copyAnnotations();
  metrics.observeStep("admit", run.attributes().operation, step_time, failure.has_value());
  return failure;
}

// One pass of the mutating chain (chain.go chainAdmissionHandler.Admit over the mutating plugins,
// the MutatingAdmissionWebhook plugin last).
detail::DispatchError AdmissionChain::Impl::mutatingPass(ChainRequest& run,
                                                         detail::ReinvocationContext& context,
                                                         std::chrono::nanoseconds& step_time) {
  AdmissionAttributes& attributes = run.attributes();
  const int round = context.round();
  attributes.reinvoke = context.is_reinvoke;
  run.result.reinvoked = context.is_reinvoke;
  for (const auto& plugin : plugins) {
    if (!plugin->mutating()) continue;
    const auto before = attributes.object;
    const auto plugin_started = Clock::now();
    auto rejection = plugin->admit(attributes, run.plugin_context);
    PluginRecord record{std::string(plugin->name()), round, false, false, rejection};
    record.changed = before.has_value() != attributes.object.has_value() ||
                     (before && !detail::semanticEqual(*before, *attributes.object));
    const std::chrono::nanoseconds took = Clock::now() - plugin_started;
    step_time += took;
    metrics.observeController(plugin->name(), "admit", attributes.operation, took,
                              rejection.has_value());
    run.result.plugins.push_back(std::move(record));
    if (rejection) return rejection;
  }
  {
    // MutatingAdmissionPolicy, before MutatingAdmissionWebhook (AllOrderedPlugins).
    const auto policies_started = Clock::now();
    bool evaluated = false;
    bool changed = false;
    detail::DispatchError error = detail::dispatchMutatingPolicies(
        run.state, store, run.options.mutating_policies, context, run.result.audit_id, evaluated,
        changed);
    const std::chrono::nanoseconds took = Clock::now() - policies_started;
    step_time += took;
    if (attributes.operation != kOperationDelete) {
      // The plugin handles CREATE, UPDATE and CONNECT (its handler), so only they are measured.
      metrics.observeController("MutatingAdmissionPolicy", "admit", attributes.operation, took,
                                error.has_value());
    }
    if (evaluated) {
      run.mutating_policies_open = !context.is_reinvoke;
      run.result.plugins.push_back(
          PluginRecord{"MutatingAdmissionPolicy", round, false, changed, error});
    }
    if (error) return error;
  }
  if (run.exempt) return std::nullopt;
  const std::vector<HookEntry> webhooks = hooks(core::WebhookKind::kMutating);
  detail::RequestState& state = run.state;
  const auto webhooks_started = state.elapsed;
  detail::DispatchError error = detail::dispatchMutating(state, webhooks, context);
  step_time += state.elapsed - webhooks_started;
  metrics.observeController("MutatingAdmissionWebhook", "admit", attributes.operation,
                            state.elapsed - webhooks_started, error.has_value());
  return error;
}

// The strategies whose AllowUnconditionalUpdate is false (k8s.io/kubernetes pkg/registry:
// admissionregistration's webhook configurations and policies, coordination leases,
// node runtimeclasses, policy poddisruptionbudgets, storage csidrivers, csinodes,
// csistoragecapacities and volumeattachments, certificates clustertrustbundles).
static bool allowsUnconditionalUpdate(const core::GroupResource& resource) {
  static const std::set<std::pair<std::string, std::string>> kConditional = {
      {"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
      {"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
      {"admissionregistration.k8s.io", "validatingadmissionpolicies"},
      {"admissionregistration.k8s.io", "validatingadmissionpolicybindings"},
      {"admissionregistration.k8s.io", "mutatingadmissionpolicies"},
      {"admissionregistration.k8s.io", "mutatingadmissionpolicybindings"},
      {"coordination.k8s.io", "leases"},
      {"node.k8s.io", "runtimeclasses"},
      {"policy", "poddisruptionbudgets"},
      {"storage.k8s.io", "csidrivers"},
      {"storage.k8s.io", "csinodes"},
      {"storage.k8s.io", "csistoragecapacities"},
      {"storage.k8s.io", "volumeattachments"},
      {"certificates.k8s.io", "clustertrustbundles"},
  };
  return !kConditional.contains({resource.group, resource.resource});
}

// Without kube-cel a refused Pod spec change lists the changed fields (validatePodSpecUpdate)
// where kube-apiserver prints apimachinery's diff of the internal PodSpecs: said once a process.
namespace {
void noteOwnPodUpdateMessage(const core::FieldErrors& errors) {
  const bool spec_forbidden = std::any_of(errors.begin(), errors.end(), [](const auto& e) {
    return e.type == core::FieldErrorType::kForbidden && e.field == "spec";
  });
  if (!spec_forbidden) return;
  static std::once_flag once;
  std::call_once(once, [] {
    std::cerr << "apiserver-sim: a refused Pod update's message lists the changed spec fields, "
                 "not kube-apiserver's diff of the PodSpecs (that text needs kube-cel: bash "
                 "scripts/build-kube.sh)\n";
  });
}
}  // namespace

// Object validation after mutation (rest.BeforeCreate / BeforeUpdate): duplicate ownerReferences
// removed, the namespace checked again, name generation, PrepareForCreate/Update, the resource's
// validation (422) and, on a valid create, the strategy's warnings.
std::optional<Failure> AdmissionChain::Impl::validateObject(ChainRequest& run) {
  const WriteRequest& request = run.request;
  AdmissionAttributes& attributes = run.attributes();
  if (!attributes.object ||
      (request.operation != kOperationCreate && request.operation != kOperationUpdate)) {
    return std::nullopt;
  }
  auto fail = [](core::Status status) { return Failure{std::move(status), "validation"}; };
  nlohmann::json& object = *attributes.object;
  if (request.operation == kOperationUpdate && !allowsUnconditionalUpdate(run.group_resource)) {
    // registry/generic/registry/store.go Store.Update: after the mutating admission
    // (UpdatedObject) and before BeforeUpdate, an update without a resourceVersion is refused
    // when the strategy's AllowUnconditionalUpdate is false.
    const std::string given = core::nestedString(object, {"metadata", "resourceVersion"});
    if (given.empty() || given == "0") {
      return fail(core::newInvalid(
          core::GroupKind{run.group_resource.group, run.group_resource.resource},
          core::nestedString(object, {"metadata", "name"}),
          {core::FieldError::invalid("metadata.resourceVersion", std::int64_t{0},
                                     "must be specified for an update")}));
    }
  }
  std::vector<std::string> warnings;
  dedupOwnerReferences(object, warnings);
  for (const auto& warning : warnings) run.state.addWarning(warning);
  const std::string object_namespace = core::nestedString(object, {"metadata", "namespace"});
  if (run.namespaced && object_namespace != request.namespace_name) {
    return fail(core::newBadRequest(
        "the namespace of the provided object does not match the namespace sent on the request"));
  }
  if (request.operation == kOperationCreate) {
    if (core::nestedString(object, {"metadata", "name"}).empty() &&
        !core::nestedString(object, {"metadata", "generateName"}).empty()) {
      object["metadata"]["name"] =
          core::nestedString(object, {"metadata", "generateName"}) + store.randomSuffix();
    }
    // BeforeCreate (registry/rest/create.go) FillObjectMetaSystemFields: a new uid and the
    // creation time, before the strategy's PrepareForCreate (the Job selector names the uid) and
    // so before validating admission, which sees them.
    object["metadata"]["uid"] = store.newUid();
    object["metadata"]["creationTimestamp"] = rfc3339Now();
    prepareForCreate(object);
  } else if (request.subresource == "status" && !run.crd &&
             !isCustomResourceDefinitions(run.group_resource)) {
    prepareForStatusUpdate(object, *attributes.old_object);
  } else if (request.subresource == "finalize") {
    prepareForFinalizeUpdate(object, *attributes.old_object);
  } else {
    // (A custom resource's or CRD's status too: rest.BeforeUpdate's part here, the status
    // strategy is apiextensions-apiserver's, below.)
    prepareForUpdate(object, *attributes.old_object);
  }
  core::FieldErrors errors =
      sim::validateObject(object, attributes.old_object ? &*attributes.old_object : nullptr);
  auto is = [&](const core::GroupResource& r) {
    return run.group_resource.group == r.group && run.group_resource.resource == r.resource;
  };
  if (is(kMutatingConfigs) || is(kValidatingConfigs)) {
    auto parsed = core::parseWebhookConfiguration(object);
    if (!parsed.ok()) return Failure{core::newBadRequest(parsed.error().message), "decode"};
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
      return fail(core::invalidConfigurationStatus(*parsed, config_errors));
    }
  }
  if (isAdmissionPolicyObject(object) && run.options.admit_policy_object &&
      request.subresource.empty()) {
    // The registry strategy of the policy kinds, by Kubernetes' code (its validation covers the
    // metadata too: its 422 is the only one). A binding's paramRef check reads its policy from
    // storage (validatingadmissionpolicybinding/storage/storage.go DefaultPolicyGetter).
    const std::string kind = object.value("kind", "");
    std::optional<nlohmann::json> bound_policy;
    if (kind == kValidatingAdmissionPolicyBindingKind ||
        kind == kMutatingAdmissionPolicyBindingKind) {
      const std::string policy_name = core::nestedString(object, {"spec", "policyName"});
      if (!policy_name.empty()) {
        bound_policy = store.get(
            {std::string(core::kAdmissionRegistrationGroup),
             kind == kValidatingAdmissionPolicyBindingKind ? "validatingadmissionpolicies"
                                                           : "mutatingadmissionpolicies"},
            "", policy_name);
      }
    }
    const PolicyObjectWriter writer{attributes.user_info, bound_policy ? &*bound_policy : nullptr};
    try {
      auto admitted = run.options.admit_policy_object(
          kind, object, attributes.old_object ? &*attributes.old_object : nullptr, &writer);
      if (auto* status = std::get_if<core::Status>(&admitted)) return fail(*status);
      object = std::get<nlohmann::json>(std::move(admitted));
      errors.clear();
    } catch (const std::exception& e) {
      return fail(core::newInternalError(e.what()));
    }
  }
  const bool main_or_status = request.subresource.empty() || request.subresource == "status";
  if ((isCustomResourceDefinitions(run.group_resource) || run.crd) && main_or_status) {
    // The registry strategy of CustomResourceDefinitions or of the custom resource's CRD, by
    // apiextensions-apiserver's code: its validation covers the metadata, its 422 is the only one.
    auto admitted = customResourceCode(run, run.crd ? "validate" : "definition", object,
                                       attributes.old_object ? &*attributes.old_object : nullptr);
    if (auto* status = std::get_if<core::Status>(&admitted)) return fail(std::move(*status));
    auto& answer = std::get<CustomResourceAnswer>(admitted);
    object = std::move(answer.object);
    for (const auto& warning : answer.warnings) run.state.addWarning(warning);
    errors.clear();
  }
  if (request.operation == kOperationUpdate && request.subresource.empty() &&
      is(core::GroupResource{"", "pods"})) {
    if (const PodUpdateValidator validate = installedPodUpdateValidator()) {
      // The pod strategy's whole update validation by Kubernetes' code: its 422 is the only one.
      try {
        // store.go Update: an unconditional update (no resourceVersion) is given the stored
        // object's before BeforeUpdate validates it.
        nlohmann::json validated = object;
        if (core::nestedString(validated, {"metadata", "resourceVersion"}).empty()) {
          validated["metadata"]["resourceVersion"] =
              core::nestedString(*attributes.old_object, {"metadata", "resourceVersion"});
        }
        if (auto status = validate(validated, *attributes.old_object)) {
          return fail(*std::move(status));
        }
        errors.clear();
      } catch (const std::exception& e) {
        return fail(core::newInternalError(e.what()));
      }
    } else {
      noteOwnPodUpdateMessage(errors);
    }
  }
  if (!errors.empty()) {
    const std::string name = core::nestedString(object, {"metadata", "name"});
    return fail(core::newInvalid(core::GroupKind{attributes.kind.group, attributes.kind.kind},
                                 name, errors));
  }
  if (request.operation == kOperationCreate && request.subresource.empty()) {
    for (const auto& warning : warningsOnCreate(object)) run.state.addWarning(warning);
  }
  return std::nullopt;
}

// Validating admission: the in-tree validating plugins, then the validating webhooks in parallel.
std::optional<Failure> AdmissionChain::Impl::admitValidating(ChainRequest& run) {
  AdmissionAttributes& attributes = run.attributes();
  std::chrono::nanoseconds step_time{0};  // as for the mutating step
  std::optional<Failure> failure;
  for (const auto& plugin : plugins) {
    if (!plugin->validating()) continue;
    const auto plugin_started = Clock::now();
    auto rejection = plugin->validate(attributes, run.plugin_context);
    const std::chrono::nanoseconds took = Clock::now() - plugin_started;
    step_time += took;
    metrics.observeController(plugin->name(), "validate", attributes.operation, took,
                              rejection.has_value());
    run.result.plugins.push_back(
        PluginRecord{std::string(plugin->name()), 0, true, false, rejection});
    if (rejection) {
      failure = Failure{*rejection, "validating"};
      break;
    }
  }
  if (!failure) {
    // ValidatingAdmissionPolicy, before ValidatingAdmissionWebhook (AllOrderedPlugins).
    const auto policies_started = Clock::now();
    bool evaluated = false;
    detail::DispatchError error = detail::dispatchValidatingPolicies(
        run.state, store, run.options.validating_policies, evaluated);
    const std::chrono::nanoseconds took = Clock::now() - policies_started;
    step_time += took;
    metrics.observeController("ValidatingAdmissionPolicy", "validate", attributes.operation, took,
                              error.has_value());
    if (evaluated) {
      run.result.plugins.push_back(
          PluginRecord{"ValidatingAdmissionPolicy", 0, true, false, error});
    }
    if (error) failure = Failure{*error, "validating"};
  }
  if (!failure && !run.exempt) {
    const std::vector<HookEntry> webhooks = hooks(core::WebhookKind::kValidating);
    detail::RequestState& state = run.state;
    const auto webhooks_started = state.elapsed;
    detail::DispatchError error = detail::dispatchValidating(state, webhooks);
    step_time += state.elapsed - webhooks_started;
    metrics.observeController("ValidatingAdmissionWebhook", "validate", attributes.operation,
                              state.elapsed - webhooks_started, error.has_value());
    if (error) failure = Failure{*error, "validating"};
  }
  run.audit->copyAnnotations();
  metrics.observeStep("validate", attributes.operation, step_time, failure.has_value());
  return failure;
}

// Persisting (the registry's Create/Update/Delete on the store, which stands for etcd), unless
// dry run; the response code and object.
std::optional<Failure> AdmissionChain::Impl::persist(ChainRequest& run) {
  const WriteRequest& request = run.request;
  const AdmissionAttributes& attributes = run.attributes();
  AdmissionResult& result = run.result;
  // The stored object, or the store's Status as the request's failure.
  auto stored = [&result](StoreResult written) -> std::optional<Failure> {
    if (auto* status = std::get_if<core::Status>(&written)) return Failure{*status, "storage"};
    result.object = std::get<nlohmann::json>(std::move(written));
    return std::nullopt;
  };
  // A custom resource as storage encodes it (the storage codec prunes what admission added
  // outside the schema) and as a read decodes it (defaults): what is stored and answered.
  std::optional<nlohmann::json> encoded;
  if (run.crd && attributes.object &&
      (request.operation == kOperationCreate || request.operation == kOperationUpdate)) {
    auto answer = customResourceCode(run, "store", *attributes.object, nullptr);
    if (auto* status = std::get_if<core::Status>(&answer)) return Failure{*status, "storage"};
    encoded = std::move(std::get<CustomResourceAnswer>(answer).object);
  }
  const std::optional<nlohmann::json>& object = encoded ? encoded : attributes.object;
  if (request.operation == kOperationCreate) {
    result.code = 201;
    if (request.dry_run) {
      result.object = object;
      return std::nullopt;
    }
    if (auto failure = stored(store.create(run.group_resource, *object))) {
      return failure;
    }
    if (run.options.default_service_accounts && run.group_resource.group.empty() &&
        run.group_resource.resource == "namespaces" && request.subresource.empty()) {
      if (auto name = core::nameOf(*result.object); name.ok()) {
        createDefaultServiceAccount(store, *name);
      }
    }
    return std::nullopt;
  }
  result.code = 200;
  if (request.operation == kOperationUpdate) {
    if (detail::shouldDeleteDuringUpdate(run.group_resource, *attributes.object,
                                         *attributes.old_object)) {
      // Store.Update with ShouldDeleteDuringUpdate: the last finalizer removed from an object
      // being deleted deletes it (deleteWithoutFinalizers answers the object as it was stored).
      if (request.dry_run) {
        result.object = attributes.old_object;
        return std::nullopt;
      }
      return stored(store.remove(run.group_resource, run.storage_namespace, attributes.name));
    }
    if (request.dry_run) {
      result.object = object;
      return std::nullopt;
    }
    if (detail::unchangedByUpdate(*object, *attributes.old_object)) {
      // etcd3 store GuaranteedUpdate: an update whose encoding equals the stored one is not
      // written (resourceVersion stays: kubectl then prints "patched (no change)").
      result.object = attributes.old_object;
      return std::nullopt;
    }
    return stored(store.update(run.group_resource, *object));
  }
  if (request.operation == kOperationDelete) {
    if (auto kept = detail::deletionKeeps(
            request.resource, *attributes.old_object,
            attributes.options.value_or(nlohmann::json::object()), rfc3339Now())) {
      result.deleted = false;
      if (request.dry_run || *kept == *attributes.old_object) {
        result.object = std::move(*kept);
        return std::nullopt;
      }
      return stored(store.update(run.group_resource, std::move(*kept)));
    }
    result.deleted = true;
    if (request.dry_run) {
      result.object = attributes.old_object;
      return std::nullopt;
    }
    return stored(store.remove(run.group_resource, run.storage_namespace, request.name));
  }
  result.object = attributes.object;
  return std::nullopt;
}

// rest.AdmissionToValidateObjectDeleteFunc: the admission of a DELETE, run by the registry for
// the object it is about to change or remove (attributes.old_object): mutating, then validating.
std::optional<Failure> AdmissionChain::Impl::admitDeletion(ChainRequest& run) {
  if (auto failure = admitMutating(run)) return failure;
  return admitValidating(run);
}

// A Pod's DELETE (registry/generic/registry/store.go Store.Delete with a graceful strategy). No
// admission when a graceful deletion is pending (finalizeDelete of the stored object). Else
// updateForGracefulDeletionAndFinalizers admits the DELETE of the stored object and writes it
// marked (deletionTimestamp, deletionGracePeriodSeconds); it stays when the period is not 0 or
// finalizers are pending. Otherwise the storage's delete (etcd3 store.go conditionalDelete)
// admits it again before removing it: first the stale copy the watch cache still holds (the
// object before the update: the cacher passes it as cachedExistingObject), then, after etcd
// reports a newer revision, the marked object. So each DELETE webhook is called three times; the
// answer is the marked object.
std::optional<Failure> AdmissionChain::Impl::deleteGracefully(ChainRequest& run,
                                                              detail::GracefulDeletion deletion) {
  const WriteRequest& request = run.request;
  AdmissionAttributes& attributes = run.attributes();
  AdmissionResult& result = run.result;
  result.code = 200;
  result.deleted = false;
  if (deletion.kind == detail::GracefulDeletion::Kind::kPending) {
    result.object = attributes.old_object;
    return std::nullopt;
  }
  if (deletion.options_period && attributes.options && attributes.options->is_object()) {
    (*attributes.options)["gracePeriodSeconds"] = *deletion.options_period;
  }
  const nlohmann::json existing = *attributes.old_object;
  if (auto failure = admitDeletion(run)) return failure;
  const bool now = deletion.period == 0 && detail::finalizersOf(deletion.marked).empty();
  if (request.dry_run) {
    // Store.Delete answers the dry-run update's object.
    result.deleted = now;
    result.object = std::move(deletion.marked);
    return std::nullopt;
  }
  StoreResult updated = store.update(run.group_resource, std::move(deletion.marked));
  if (auto* status = std::get_if<core::Status>(&updated)) return Failure{*status, "storage"};
  nlohmann::json marked = std::get<nlohmann::json>(std::move(updated));
  if (!now) {
    result.object = std::move(marked);
    return std::nullopt;
  }
  // The stale copy's admission: when it fails, conditionalDelete reads the current object and
  // admits that instead (a newer revision than the cached one), as it does when it passes.
  attributes.old_object = existing;
  (void)admitDeletion(run);
  attributes.old_object = marked;
  if (auto failure = admitDeletion(run)) return failure;
  StoreResult removed = store.remove(run.group_resource, run.storage_namespace, request.name);
  if (auto* status = std::get_if<core::Status>(&removed)) return Failure{*status, "storage"};
  result.deleted = true;
  result.object = std::move(marked);
  return std::nullopt;
}

// The response and the ResponseComplete audit event.
AdmissionResult AdmissionChain::Impl::respond(ChainRequest& run,
                                              std::optional<Failure> failure) {
  AdmissionResult& result = run.result;
  if (failure) {
    result.allowed = false;
    result.status = failure->status.withTypeMeta();
    result.code = failure->status.code;
    result.stage = failure->stage;
  } else {
    result.allowed = true;
    result.stage = "done";
  }
  result.duration = Clock::now() - run.started;
  run.audit->responseComplete(result);
  return std::move(result);
}

void AdmissionChain::auditRead(const std::string& verb, const core::GroupVersionResource& resource,
                               const std::string& namespace_name, const std::string& name,
                               const core::UserInfo& user, const std::string& request_uri,
                               int code, const std::optional<nlohmann::json>& response_object) {
  auditReadRequest(options_, impl_->store.newUid(), verb, resource, namespace_name, name, user,
                   request_uri, code, response_object);
}

}  // namespace harness::sim
