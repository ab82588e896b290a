#pragma once

// `injector review`: builds the AdmissionReview kube-apiserver would send for an object, so a
// webhook can be called by hand (curl --data @review.json).

#include <iosfwd>
#include <string>

namespace harness::injector {

struct ReviewOptions {
  std::string input = "-";
  std::string operation = "CREATE";
  std::string version = "v1";  // v1 or v1beta1
  std::string namespace_name;  // default: the object's
  std::string uid;             // default: generated
  std::string username = "kubernetes-admin";
  bool dry_run = false;
};

int runReview(const ReviewOptions& options, std::istream& in, std::ostream& out,
              std::ostream& err);

}  // namespace harness::injector
