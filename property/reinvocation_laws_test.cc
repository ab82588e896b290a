// Reinvocation safety through the simulated admission chain (docs/admission-chain.md §6): the
// injector (either profile, in process) and other mutating webhooks (mutators.h: an annotation
// adder, an init-container adder, an image-pull-policy setter, label fighters) in random
// configuration orders and reinvocation policies
//   - never leave duplicate containers, init containers or volumes;
//   - end after at most one extra round (every call in round 0 or 1, no webhook called more than
//     twice), and, without fighters, at an object every webhook leaves alone;
//   - reach the same object whatever the configuration order, when every webhook is
//     order-independent (the injector, the annotation adder, the pull-policy setter) and
//     reinvoked if needed.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "harness/core/admission_review.h"
#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/idempotence_check.h"
#include "harness/sim/mutators.h"
#include "harness/sim/store.h"
#include "injectors.h"

namespace harness::property {
namespace {

using nlohmann::json;

// The webhook under test: a profile in one of its layouts.
struct Injector {
  bool istio = false;
  LinkerdLayout linkerd;
  IstioLayout istio_layout;
};

std::ostream& operator<<(std::ostream& os, const Injector& i) {
  if (i.istio) return os << i.istio_layout;
  return os << i.linkerd;
}

rc::Gen<Injector> genInjector() {
  return rc::gen::exec([] {
    Injector i;
    i.istio = *rc::gen::arbitrary<bool>();
    if (i.istio) {
      i.istio_layout = *genIstioLayout();
    } else {
      i.linkerd = *genLinkerdLayout();
    }
    return i;
  });
}

// Istio's webhook configuration matches Pods; Linkerd's injector handles every workload kind.
std::vector<std::string> kindsFor(const Injector& injector) {
  return injector.istio ? std::vector<std::string>{"Pod"} : std::vector<std::string>{};
}

// A webhook in the chain: the injector or a mutator, its configuration name (which sets the
// order: §2.1) and reinvocation policy.
struct Hook {
  std::string mutator;  // "" for the injector
  std::string configuration;
  std::string reinvocation;  // Never | IfNeeded
};

void showValue(const Hook& hook, std::ostream& os) {
  os << hook.configuration << ": " << (hook.mutator.empty() ? "injector" : hook.mutator) << " ("
     << hook.reinvocation << ")";
}

json webhookConfiguration(const Hook& hook, const std::string& kind) {
  const std::string name = hook.mutator.empty() ? "injector" : hook.mutator;
  std::string host = name;
  std::replace(host.begin(), host.end(), '=', '-');
  json rule = {{"operations", {"CREATE"}},
               {"apiGroups", {"", "apps", "batch"}},
               {"apiVersions", {"v1"}},
               {"resources", {resourceOfKind(kind)}}};
  json webhook = {{"name", host + ".example.com"},
                  {"clientConfig", {{"url", "https://" + host + ".example.com/"}}},
                  {"rules", json::array({rule})},
                  {"sideEffects", "None"},
                  {"admissionReviewVersions", {"v1"}},
                  {"reinvocationPolicy", hook.reinvocation},
                  {"failurePolicy", "Fail"}};
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "MutatingWebhookConfiguration"},
          {"metadata", {{"name", hook.configuration}}},
          {"webhooks", json::array({webhook})}};
}

core::AdmissionReview answer(const core::AdmissionReview& review, const json& patch,
                             bool allowed = true, const std::string& message = {}) {
  core::AdmissionResponse response;
  response.uid = review.request->uid;
  response.allowed = allowed;
  if (!allowed) {
    core::Status status;
    status.status = "Failure";
    status.message = message;
    status.code = 400;
    response.status = status;
  }
  if (patch.is_array() && !patch.empty()) {
    response.patch = patch.dump();
    response.patch_type = "JSONPatch";
  }
  return core::AdmissionReview{review.api_version, review.kind, std::nullopt, response};
}

// The injector's answer to an object, in process.
json injectorPatch(const Injector& injector, const json& object, const json& ns,
                   bool& denied) {
  denied = false;
  if (injector.istio) {
    const auto outcome = istioAdmit(injector.istio_layout, object);
    denied = outcome.decision == istio::Decision::kError;
    return core::encodePatch(outcome.patch);
  }
  const auto outcome = linkerdAdmit(injector.linkerd, object, ns);
  denied = outcome.decision == linkerd::Decision::kHandlerError;
  return outcome.patch.is_array() ? outcome.patch : json::array();
}

struct Run {
  sim::AdmissionResult result;
  std::map<std::string, int> calls;  // per webhook host
};

Run admitThroughChain(const Injector& injector, const std::vector<Hook>& hooks,
                      const AdmissionCase& c, bool plugins) {
  sim::ObjectStore store;
  sim::InProcessWebhookCaller caller;
  core::MetricsRegistry metrics;
  sim::ChainOptions options;
  options.time_scale = 0;
  if (!plugins) options.plugins.clear();
  const std::string ns = c.namespace_object["metadata"]["name"];
  store.put({"", "namespaces"}, c.namespace_object);
  for (const char* sa : {"default", "web", "builder"}) {
    store.put({"", "serviceaccounts"}, {{"apiVersion", "v1"},
                                        {"kind", "ServiceAccount"},
                                        {"metadata", {{"name", sa}, {"namespace", ns}}}});
  }
  const std::string kind = c.object["kind"];
  Run run;
  for (const auto& hook : hooks) {
    store.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
              webhookConfiguration(hook, kind));
    const json config = webhookConfiguration(hook, kind);
    const std::string url = config["webhooks"][0]["clientConfig"]["url"];
    if (hook.mutator.empty()) {
      caller.handle(url, [&run, injector, ns_object = c.namespace_object](
                             const core::AdmissionReview& review) {
        ++run.calls["injector"];
        bool denied = false;
        const json patch = injectorPatch(injector, *review.request->object, ns_object, denied);
        return std::optional(answer(review, patch, !denied, "injection failed"));
      });
    } else {
      const auto mutator = *sim::parseMutator(hook.mutator);
      caller.handle(url, [&run, mutator](const core::AdmissionReview& review) {
        ++run.calls[mutator.text];
        return std::optional(answer(review, sim::mutatorPatch(mutator, *review.request->object)));
      });
    }
  }
  sim::AdmissionChain chain(store, caller, metrics, options);
  sim::WriteRequest request;
  request.operation = "CREATE";
  const std::string api_version = apiVersionOfKind(kind);
  const auto slash = api_version.find('/');
  request.resource = {slash == std::string::npos ? "" : api_version.substr(0, slash), "v1",
                      resourceOfKind(kind)};
  request.namespace_name = ns;
  request.name = c.object["metadata"]["name"];
  request.object = c.object;
  request.dry_run = true;
  run.result = chain.handle(request);
  return run;
}

// 0..n-1 shuffled (Fisher-Yates), as rapidcheck picks so that it shrinks.
std::vector<int> permutation(std::size_t n) {
  std::vector<int> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<int>(i);
  for (std::size_t i = n; i > 1; --i) {
    const auto j = *rc::gen::inRange<std::size_t>(0, i);
    std::swap(out[i - 1], out[j]);
  }
  return out;
}

rc::Gen<std::vector<Hook>> genHooks(bool order_independent_only, bool all_if_needed) {
  return rc::gen::exec([order_independent_only, all_if_needed] {
    // Order-independent (each touches its own fields): the annotation adder and the pull-policy
    // setter. The init-container adder appends to the list the injector also appends to
    // (Linkerd's classic linkerd-init goes to /spec/initContainers/-), and the fighters undo
    // each other: their order decides the result.
    std::vector<std::string> pool = {"add-annotation", "set-image-pull-policy"};
    if (!order_independent_only) {
      pool.push_back("add-init-container");
      pool.push_back("label-fighter=blue");
      pool.push_back("label-fighter=green");
    }
    std::vector<Hook> hooks = {{"", "", ""}};
    for (const auto& m : pool) {
      if (*rc::gen::arbitrary<bool>()) hooks.push_back({m, "", ""});
    }
    // Configuration names set the order: a random permutation of "c0".."cN".
    const auto order = permutation(hooks.size());
    for (std::size_t i = 0; i < hooks.size(); ++i) {
      hooks[i].configuration = "c" + std::to_string(1000 + order[i]);
      hooks[i].reinvocation = all_if_needed || *rc::gen::arbitrary<bool>() ? "IfNeeded" : "Never";
    }
    return hooks;
  });
}

void logHooks(const std::vector<Hook>& hooks) {
  auto sorted = hooks;
  std::sort(sorted.begin(), sorted.end(),
            [](const Hook& a, const Hook& b) { return a.configuration < b.configuration; });
  for (const auto& h : sorted) {
    RC_LOG() << "  " << h.configuration << ": " << (h.mutator.empty() ? "injector" : h.mutator)
             << " (" << h.reinvocation << ")\n";
  }
}

void assertNoDuplicates(const sim::AdmissionResult& result) {
  if (!result.allowed) {
    const std::string message = result.status ? result.status->message : "";
    RC_LOG() << "rejected: " << message << "\n";
    // Duplicate names are the webhooks' doing; other duplicates (two containers with the same
    // port under hostNetwork, whose hostPorts default to it) are the generated pod's.
    RC_ASSERT(message.find(".name: Duplicate value") == std::string::npos);
    return;
  }
  RC_ASSERT(result.object.has_value());
  RC_ASSERT(sim::duplicateNames(*result.object).empty());
}

RC_GTEST_PROP(ReinvocationLaws, NoDuplicatesAndAtMostOneExtraRound, ()) {
  const auto injector = *genInjector();
  const auto c = *genAdmissionCase(kindsFor(injector));
  const auto hooks = *genHooks(false, false);
  RC_LOG() << injector << "\n";
  logHooks(hooks);
  const Run run = admitThroughChain(injector, hooks, c, true);
  RC_TAG(run.result.allowed ? (run.result.reinvoked ? "reinvoked" : "one round") : "rejected");
  assertNoDuplicates(run.result);
  for (const auto& call : run.result.calls) RC_ASSERT(call.round <= 1);
  for (const auto& [name, n] : run.calls) {
    RC_LOG() << name << " called " << n << " times\n";
    RC_ASSERT(n <= 2);
  }
}

// Without fighters, the object the chain admits is one every webhook leaves alone: a further
// round would change nothing, so the chain's single extra round was enough.
RC_GTEST_PROP(ReinvocationLaws, WithoutFightersTheAdmittedObjectIsSettled, ()) {
  const auto injector = *genInjector();
  const auto c = *genAdmissionCase(kindsFor(injector));
  const auto hooks = *genHooks(true, true);
  RC_LOG() << injector << "\n";
  logHooks(hooks);
  const Run run = admitThroughChain(injector, hooks, c, false);
  assertNoDuplicates(run.result);
  if (!run.result.allowed) return;
  const json& admitted = *run.result.object;
  for (const auto& hook : hooks) {
    json patch;
    if (hook.mutator.empty()) {
      bool denied = false;
      patch = injectorPatch(injector, admitted, c.namespace_object, denied);
      RC_ASSERT(!denied);
    } else {
      patch = sim::mutatorPatch(*sim::parseMutator(hook.mutator), admitted);
    }
    const auto again = applyOps(admitted, patch);
    RC_LOG() << (hook.mutator.empty() ? "injector" : hook.mutator)
             << " on the admitted object: " << patch.dump() << "\n";
    RC_ASSERT(again.ok());
    RC_ASSERT(*again == admitted);
  }
}

// Every string equal to `uid` as "<uid>" (a Job's selector and template labels name its uid).
void maskUid(json& value, const std::string& uid) {
  if (value.is_string() && value.get<std::string>() == uid) {
    value = "<uid>";
  } else if (value.is_structured()) {
    for (auto& item : value) maskUid(item, uid);
  }
}

// The server-set fields that differ between two admissions of the same object, and the values
// derived from the uid.
json withoutServerFields(json object) {
  if (object.contains("metadata")) {
    if (object["metadata"].contains("uid") && object["metadata"]["uid"].is_string()) {
      const std::string uid = object["metadata"]["uid"];
      if (!uid.empty()) maskUid(object, uid);
    }
    for (const char* field : {"uid", "creationTimestamp", "resourceVersion"}) {
      object["metadata"].erase(field);
    }
  }
  return object;
}

RC_GTEST_PROP(ReinvocationLaws, OrderIndependentWebhooksReachTheSameObjectInAnyOrder, ()) {
  const auto injector = *genInjector();
  const auto c = *genAdmissionCase(kindsFor(injector));
  const auto hooks = *genHooks(true, true);
  auto reordered = hooks;
  const auto names = permutation(hooks.size());
  for (std::size_t i = 0; i < reordered.size(); ++i) {
    reordered[i].configuration = "c" + std::to_string(1000 + names[i]);
  }
  RC_LOG() << injector << "\norder 1:\n";
  logHooks(hooks);
  RC_LOG() << "order 2:\n";
  logHooks(reordered);
  const Run one = admitThroughChain(injector, hooks, c, false);
  const Run two = admitThroughChain(injector, reordered, c, false);
  RC_ASSERT(one.result.allowed == two.result.allowed);
  if (!one.result.allowed) return;
  const json a = withoutServerFields(*one.result.object);
  const json b = withoutServerFields(*two.result.object);
  RC_LOG() << "difference (order 1 -> order 2): "
           << core::encodePatch(core::createPatch(a, b)).dump() << "\n";
  RC_ASSERT(a == b);
}

}  // namespace
}  // namespace harness::property
