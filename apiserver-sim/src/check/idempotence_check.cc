// check-idempotence (idempotence_check.h): the case evaluation, rapidcheck's shrinking driven
// by hand (each evaluation calls a real webhook), and the HTTPS transport.

#include "harness/sim/idempotence_check.h"

#include <atomic>
#include <set>

#include <fmt/format.h>

#include "harness/core/admission_review.h"
#include "harness/core/json_patch.h"
#include "harness/core/json_pointer.h"
#include "harness/core/object.h"
#include "harness/property/workloads.h"
#include "harness/sim/defaulting.h"

namespace harness::sim {

using nlohmann::json;

json asSent(json object) {
  applyDefaults(object);
  normalizeLikeGoEncoding(object);
  return object;
}

// Containers and init containers share one namespace of names (validation.go
// validateContainers/validateInitContainers).
std::string duplicateNames(const json& object) {
  const auto pointer = core::podSpecPointer(object.value("kind", ""));
  if (!pointer) return {};
  auto spec = core::resolvePointer(object, std::string_view(*pointer));
  if (!spec || !(*spec)->is_object()) return {};
  std::vector<std::string> found;
  auto scan = [&](std::initializer_list<const char*> lists, const char* what) {
    std::set<std::string> seen;
    for (const char* list : lists) {
      auto it = (*spec)->find(list);
      if (it == (*spec)->end() || !it->is_array()) continue;
      for (const auto& item : *it) {
        if (!item.is_object()) continue;
        const std::string name = item.value("name", "");
        if (!seen.insert(name).second) found.push_back(fmt::format("{} {}", what, name));
      }
    }
  };
  scan({"initContainers", "containers"}, "container");
  scan({"volumes"}, "volume");
  return fmt::format("{}", fmt::join(found, ", "));
}

namespace {

// The patch applied as kube-apiserver applies a webhook's patch: JSON Patch, then the object
// defaulted again and seen as Go encodes it (docs/admission-chain.md §5 step 11), which is what
// the next webhook is sent.
core::Result<json> applyJsonPatch(const json& object, const json& patch) {
  if (patch.empty()) return object;
  auto decoded = core::decodePatch(patch.dump());
  if (!decoded) return decoded.error();
  auto applied = core::applyPatch(object, *decoded);
  if (!applied) return applied.error();
  return asSent(std::move(*applied));
}

// One case through the laws. nullopt: it passes; an error: the webhook could not be asked.
struct Evaluation {
  std::optional<Counterexample> failure;
  bool patched = false;
  bool denied = false;
};

class Evaluator {
 public:
  Evaluator(const Transport& transport, const std::vector<Mutator>& mutators,
            std::size_t& calls)
      : transport_(transport), mutators_(mutators), calls_(calls) {}

  // `generated` is sent as kube-apiserver would send it (asSent); the report shows it as
  // generated, the shrunk and readable form.
  core::Result<Evaluation> operator()(const json& generated) {
    const json object = asSent(generated);
    Evaluation out;
    auto first = send(object);
    if (!first) return first.error();
    if (!first->allowed) {
      out.denied = true;
      return out;
    }
    Counterexample c;
    c.object = generated;
    c.first_patch = first->patch;
    auto fail = [&](std::string law, std::string message, std::string mutator, json input,
                    json patch) {
      c.law = std::move(law);
      c.message = std::move(message);
      c.mutator = std::move(mutator);
      c.failing_input = std::move(input);
      c.failing_patch = std::move(patch);
      out.failure = c;
      return out;
    };
    auto injected = applyJsonPatch(object, first->patch);
    if (!injected) {
      return fail("patch", "its patch does not apply: " + injected.error().message, "", object,
                  first->patch);
    }
    out.patched = *injected != object;
    if (auto dups = duplicateNames(*injected); !dups.empty()) {
      return fail("reinvocation", "its answer leaves duplicates: " + dups, "", object,
                  first->patch);
    }
    // Idempotence: its own output, again.
    auto second = send(*injected);
    if (!second) return second.error();
    if (!second->allowed) {
      return fail("idempotence", "it denies its own output: " + second->message, "", *injected,
                  json::array());
    }
    auto again = applyJsonPatch(*injected, second->patch);
    if (!again) {
      return fail("patch", "its patch does not apply: " + again.error().message, "", *injected,
                  second->patch);
    }
    if (*again != *injected) {
      return fail("idempotence", "sent its own output, it changes it again", "", *injected,
                  second->patch);
    }
    // Reinvocation: another mutator changed its output; it is called again, and once more.
    for (const Mutator& mutator : mutators_) {
      auto changed = applyJsonPatch(*injected, mutatorPatch(mutator, *injected));
      if (!changed || *changed == *injected) continue;
      auto third = send(*changed);
      if (!third) return third.error();
      if (!third->allowed) {
        return fail("reinvocation", "after " + mutator.text + ", it denies: " + third->message,
                    mutator.text, *changed, json::array());
      }
      auto reinvoked = applyJsonPatch(*changed, third->patch);
      if (!reinvoked) {
        return fail("patch", "its patch does not apply: " + reinvoked.error().message,
                    mutator.text, *changed, third->patch);
      }
      if (auto dups = duplicateNames(*reinvoked); !dups.empty()) {
        return fail("reinvocation",
                    "reinvoked after " + mutator.text + ", it leaves duplicates: " + dups,
                    mutator.text, *changed, third->patch);
      }
      auto fourth = send(*reinvoked);
      if (!fourth) return fourth.error();
      auto settled = fourth->allowed ? applyJsonPatch(*reinvoked, fourth->patch)
                                     : core::Result<json>(core::makeError(fourth->message));
      if (!settled || *settled != *reinvoked) {
        return fail("reinvocation",
                    "reinvoked after " + mutator.text +
                        ", it does not settle: one more call changes the object again",
                    mutator.text, *reinvoked, fourth->patch);
      }
    }
    return out;
  }

 private:
  core::Result<WebhookAnswer> send(const json& object) {
    ++calls_;
    return transport_(object);
  }

  const Transport& transport_;
  const std::vector<Mutator>& mutators_;
  std::size_t& calls_;
};

}  // namespace

IdempotenceReport checkIdempotence(const IdempotenceOptions& options, const Transport& transport) {
  const auto started = std::chrono::steady_clock::now();
  IdempotenceReport report;
  report.seed = options.seed;
  for (const auto& m : options.mutators) report.mutators.push_back(m.text);
  Evaluator evaluate(transport, options.mutators, report.calls);
  const auto gen = rc::gen::map(property::genAdmissionCase(options.kinds),
                                [](property::AdmissionCase c) { return std::move(c.object); });
  rc::Random random(options.seed);
  for (std::size_t i = 0; i < options.cases; ++i) {
    // Sizes grow over the run as rapidcheck's do (small cases first).
    const int size = options.cases > 1 ? static_cast<int>(i * 100 / (options.cases - 1)) : 100;
    const rc::Shrinkable<json> shrinkable = gen(random.split(), size);
    auto evaluation = evaluate(shrinkable.value());
    if (!evaluation) {
      report.error = evaluation.error().message;
      break;
    }
    ++report.cases;
    if (evaluation->patched) ++report.patched_cases;
    if (evaluation->denied) ++report.denied_cases;
    if (!evaluation->failure) continue;

    // Shrink: take the first shrink that still fails, until none does (or the budget is spent).
    Counterexample smallest = *evaluation->failure;
    smallest.case_number = i + 1;
    rc::Shrinkable<json> current = shrinkable;
    std::size_t budget = options.max_shrink_evaluations;
    bool progressed = true;
    while (progressed && budget > 0) {
      progressed = false;
      auto shrinks = current.shrinks();
      while (auto candidate = shrinks.next()) {
        if (budget-- == 0) break;
        json value;
        try {
          value = candidate->value();
        } catch (const std::exception&) {  // a generator that gave up on this shrink
          continue;
        }
        auto tried = evaluate(value);
        if (!tried) {
          report.error = tried.error().message;
          break;
        }
        if (!tried->failure) continue;
        const std::size_t steps = smallest.shrink_steps + 1;
        smallest = *tried->failure;
        smallest.case_number = i + 1;
        smallest.shrink_steps = steps;
        current = *candidate;
        progressed = true;
        break;
      }
      if (report.error) break;
    }
    report.counterexample = std::move(smallest);
    break;
  }
  report.duration = std::chrono::steady_clock::now() - started;
  return report;
}

Transport httpsTransport(std::shared_ptr<WebhookCaller> caller, std::string url,
                         std::string ca_pem) {
  auto counter = std::make_shared<std::atomic<std::uint64_t>>(0);
  return [caller, url, ca_pem, counter](const json& object) -> core::Result<WebhookAnswer> {
    const std::string kind = object.value("kind", "");
    const auto gvk = core::groupVersionKindOf(object);
    if (!gvk) return gvk.error();
    const auto resource = core::findResourceForKind(*gvk);
    if (!resource) return core::makeError("no resource serves " + gvk->toString());
    core::AdmissionRequest request;
    request.uid = fmt::format("check-idempotence-{:06d}", ++*counter);
    request.kind = *gvk;
    request.resource = resource->resource;
    request.request_kind = request.kind;
    request.request_resource = request.resource;
    const auto meta = object.value("metadata", json::object());
    request.name = meta.value("name", "");
    request.namespace_name = meta.value("namespace", "");
    request.operation = "CREATE";
    request.user_info.username = "system:admin";
    request.user_info.groups = {"system:masters", "system:authenticated"};
    request.object = object;
    request.dry_run = false;
    request.options = json{{"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}};
    WebhookCall call;
    call.webhook_name = "check-idempotence";
    call.client_config.url = url;
    call.client_config.ca_bundle = ca_pem;
    call.body = core::encodeAdmissionReview(
        core::makeRequestReview(core::ReviewVersion::kV1, request));
    call.request_uid = request.uid;
    call.timeout_param = "10s";
    call.budget = std::chrono::seconds(10);
    call.time_scale = 0;
    CallResult result = caller->call(call);
    if (!result.ok()) return core::makeError(result.reason);
    auto verified = core::verifyAdmissionResponse(core::ReviewVersion::kV1, request.uid, true,
                                                  result.review);
    if (!verified) {
      return core::makeError(std::string(core::kInvalidWebhookResponsePrefix) +
                             verified.error().message);
    }
    WebhookAnswer answer;
    answer.allowed = verified->allowed;
    if (verified->status) answer.message = verified->status->message;
    if (!verified->patch.empty()) {
      if (verified->patch_type != "JSONPatch") {
        return core::makeError(fmt::format("unsupported patchType \"{}\"", verified->patch_type));
      }
      auto decoded = core::decodePatch(verified->patch);
      if (!decoded) return decoded.error().within("response.patch");
      answer.patch = core::encodePatch(*decoded);
    }
    return answer;
  };
}

}  // namespace harness::sim
