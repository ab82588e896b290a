#pragma once

// `apiserver-sim check-idempotence`: generated objects (property/workloads.h) sent to any
// mutating webhook, checking what Kubernetes requires of one (the "Idempotence" and
// "Reinvocation" sections of the admission webhook documentation; docs/admission-chain.md §6):
//
//   patch         every patch it answers applies to the object it was sent;
//   idempotence   sent its own output, it changes nothing (no patch, or one that is a no-op);
//   reinvocation  after another mutator changed its output (as a reinvocation round shows it
//                 the object), its answer leaves no duplicate container, init container or
//                 volume, and sent that answer once more, it changes nothing (the chain ends
//                 after at most one extra round).
//
// Objects are sent as kube-apiserver sends them (defaulted, Go-encoded: asSent), and every
// patch is followed by defaulting again, as between two webhooks of a chain.
// The first failing case is shrunk (rapidcheck's shrinks of the generated object) to a minimal
// one and reported with the patches of both calls. The webhook is reached through a Transport:
// over real HTTPS with the simulator's webhook client (HttpsTransport), or any function.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/sim/caller.h"
#include "harness/sim/mutators.h"

namespace harness::sim {

// What a webhook answered.
struct WebhookAnswer {
  bool allowed = true;
  nlohmann::json patch = nlohmann::json::array();  // decoded JSON Patch (empty: none)
  std::string message;                             // status.message when denied
};

// Sends one object (a CREATE in its metadata.namespace) and returns the verified answer; an
// error when the webhook could not be asked or its answer is not a valid AdmissionReview.
using Transport = std::function<core::Result<WebhookAnswer>(const nlohmann::json& object)>;

// The simulator's webhook client (HttpsWebhookCaller) calling `url` with `ca_pem` as the
// caBundle (empty: the system roots), AdmissionReview v1, timeout 10 s per call.
Transport httpsTransport(std::shared_ptr<WebhookCaller> caller, std::string url,
                         std::string ca_pem);

struct IdempotenceOptions {
  std::size_t cases = 100;
  std::uint64_t seed = 0;
  std::vector<std::string> kinds = {"Pod"};  // workloadKinds() names; empty: all
  std::vector<Mutator> mutators;            // run beside the webhook (reinvocation law)
  // Case evaluations spent shrinking a failure (each sends a few requests).
  std::size_t max_shrink_evaluations = 500;
};

struct Counterexample {
  std::string law;      // patch | idempotence | reinvocation
  std::string message;  // what went wrong, one line
  std::size_t case_number = 0;  // 1-based, before shrinking
  std::size_t shrink_steps = 0;
  nlohmann::json object;        // the minimal generated object
  nlohmann::json first_patch;   // the webhook's answer to it
  std::string mutator;          // the mutator run before the failing call ("" for none)
  nlohmann::json failing_input;  // what the failing call was sent
  nlohmann::json failing_patch;  // what it answered
};

struct IdempotenceReport {
  std::uint64_t seed = 0;
  std::string webhook;  // what was checked (a URL, "injector linkerd", "stub append-sidecar")
  std::vector<std::string> mutators;
  std::size_t cases = 0;          // cases evaluated before the first failure (or all)
  std::size_t patched_cases = 0;  // where the first call patched
  std::size_t denied_cases = 0;   // where the first call denied (nothing to check)
  std::size_t calls = 0;          // webhook calls, shrinking included
  std::chrono::nanoseconds duration{0};
  std::optional<Counterexample> counterexample;
  std::optional<std::string> error;  // the webhook could not be asked: exit 2

  [[nodiscard]] int exitCode() const { return error ? 2 : counterexample ? 1 : 0; }
};

// What kube-apiserver sends a webhook for `object`: defaulted (SetObjectDefaults) and encoded
// as Go encodes the typed object (defaulting.h). The checker sends generated objects this way.
nlohmann::json asSent(nlohmann::json object);

// Names that occur twice among a pod's (or pod template's) containers and init containers (one
// namespace of names, as Pod validation checks them) or among its volumes, e.g.
// "container logger, volume certs"; "" when there are none.
std::string duplicateNames(const nlohmann::json& object);

IdempotenceReport checkIdempotence(const IdempotenceOptions& options, const Transport& transport);

// Writes the report: "table" (text), "json" or "junit" (one suite, one test case per law).
void writeIdempotenceReport(const IdempotenceReport& report, const std::string& format,
                            std::ostream& out);

}  // namespace harness::sim
