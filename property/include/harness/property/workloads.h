#pragma once

// rapidcheck generators of realistic Kubernetes objects for the injection properties and for
// `apiserver-sim check-idempotence`: Pods and every pod-template workload (Deployment,
// StatefulSet, DaemonSet, Job, CronJob, ReplicaSet) with the Linkerd and Istio annotation and
// label vocabularies (valid and invalid values), containers and init containers (some native
// sidecars: restartPolicy Always), named and numbered ports, probes of every kind, volumes, env,
// security contexts, hostNetwork, service accounts and owner references; and the Namespace the
// object is admitted in, with its labels and annotations.
//
// Every choice is a separate rapidcheck pick, and every optional part shrinks to "absent", so a
// failing case shrinks to a small, readable object: one container, no probes, no annotations but
// the one that matters.

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <rapidcheck.h>

#include <nlohmann/json.hpp>

namespace harness::property {

// The kinds genWorkload makes, in this order: Pod first (what the webhooks see most).
const std::vector<std::string>& workloadKinds();

// An object and the namespace it is admitted in.
// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct AdmissionCase {
  nlohmann::json object;
  nlohmann::json namespace_object;  // a v1 Namespace named like object.metadata.namespace
};

// Which annotation and label vocabularies the generators draw from.
struct Vocabulary {
  bool linkerd = true;
  bool istio = true;
};

// A container (init: an init container; some are native sidecars with restartPolicy Always).
// `index` makes the name unique within the pod.
rc::Gen<nlohmann::json> genContainer(int index, bool init);
// A pod spec: 1-3 containers, 0-2 init containers, volumes they mount, and the pod-level fields.
// `restart_policy` is the only one allowed (Jobs: "Never" or "OnFailure"), "" for any.
rc::Gen<nlohmann::json> genPodSpec(const std::string& restart_policy = {});
// Pod (template) labels and annotations from the vocabularies.
rc::Gen<nlohmann::json> genPodMetadata(Vocabulary vocabulary = {});
// An object of `kind` (one of workloadKinds()) in namespace `ns`.
rc::Gen<nlohmann::json> genWorkload(std::string kind, std::string ns, Vocabulary vocabulary = {});
// A Namespace with injection labels and annotations from the vocabularies.
rc::Gen<nlohmann::json> genNamespace(std::string name, Vocabulary vocabulary = {});
// An object of one of `kinds` (empty: every workload kind) and its namespace.
rc::Gen<AdmissionCase> genAdmissionCase(std::vector<std::string> kinds = {},
                                        Vocabulary vocabulary = {});

// The plural resource and API version of a workload kind ("Deployment" -> apps/v1
// deployments).
std::string apiVersionOfKind(std::string_view kind);
std::string resourceOfKind(std::string_view kind);

}  // namespace harness::property

namespace harness::property {
// How rapidcheck prints a case in a counterexample: both objects as YAML.
void showValue(const AdmissionCase& c, std::ostream& os);
}  // namespace harness::property
