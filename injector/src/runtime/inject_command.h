#pragma once

// `injector inject`: what the webhook would do to objects read from files or stdin, offline
// (like `linkerd inject --manual` / `istioctl kube-inject`, but with the webhook's decision).

#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/injector/object_files.h"

namespace harness::injector {

struct InjectOptions {
  std::vector<std::string> inputs;  // files, or "-" for stdin (the default)
  std::string profile = "linkerd";
  std::filesystem::path values_file;         // optional: chart defaults otherwise
  std::filesystem::path trust_anchors_file;  // optional: a placeholder bundle otherwise
  std::string default_namespace = "default";
  std::vector<std::filesystem::path> namespace_files;  // Namespace objects
  std::vector<std::filesystem::path> object_files;     // owners etc., for lookups
  std::string linkerd_namespace = "linkerd";
  std::string version;
  std::string output = "yaml";  // yaml | json
  bool patch = false;           // print the JSON patches instead of the objects
  bool explain = false;         // print the decision and reasons per object
  IstioWebhookConfig istio;     // --profile istio: the injection config, values and mesh files
};

// Exit code: 0 every object processed, 1 the webhook would deny an object (message on `err`),
// 2 bad input (message on `err`).
int runInject(const InjectOptions& options, std::istream& in, std::ostream& out,
              std::ostream& err);

}  // namespace harness::injector
