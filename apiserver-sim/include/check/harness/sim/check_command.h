#pragma once

// `apiserver-sim check-idempotence`: the webhook under test (the real injector, a stub, or an
// external URL with its CA file), started if needed, checked by checkIdempotence, reported.
//
//   apiserver-sim check-idempotence (--injector linkerd|istio [--injector-arg ARG]... |
//                                    --stub FILE | --stub-mutator NAME |
//                                    --url URL [--ca-file FILE])
//                                   [--cases N] [--seed S] [--kinds Pod,Deployment,...|all]
//                                   [--mutator NAME[=VALUE]]... [-o table|json|junit]
//                                   [--work-dir DIR] [--injector-binary PATH]

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace harness::sim {

struct CheckIdempotenceArgs {
  std::size_t cases = 100;
  std::optional<std::uint64_t> seed;  // default: drawn from the clock, reported
  std::string kinds = "Pod";          // comma-separated workload kinds, or "all"
  std::vector<std::string> mutators;  // mutators.h syntax
  std::string output = "table";
  // Exactly one target:
  std::string injector;  // profile: linkerd or istio
  std::vector<std::string> injector_args;
  std::string injector_binary;
  std::string stub_file;    // YAML: a stub ({tls, responses}) or an endpoint with `stub:`
  std::string stub_mutator;  // a stub answering with this mutator's patch
  std::string url;
  std::string ca_file;
  std::string work_dir;  // certificates and logs; default: a temporary folder, removed after
};

// Exit status: 0 every case passed, 1 a counterexample (shown shrunk), 2 bad usage, a target
// that does not start, or a webhook that cannot be asked. Reports go to `out`, progress and
// usage errors to `err`.
int runCheckIdempotence(const CheckIdempotenceArgs& args, std::ostream& out, std::ostream& err);

}  // namespace harness::sim
