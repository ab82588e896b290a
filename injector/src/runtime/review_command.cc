#include "review_command.h"

#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "harness/core/admission_review.h"
#include "harness/core/object.h"
#include "harness/core/yaml.h"

namespace harness::injector {

namespace {

std::string randomUid() {
  std::random_device rd;
  std::uniform_int_distribution<int> hex(0, 15);
  std::string out = "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx";
  for (char& c : out) {
    if (c == 'x' || c == 'y') {
      int v = hex(rd);
      if (c == 'y') v = (v & 0x3) | 0x8;
      c = "0123456789abcdef"[v];
    }
  }
  return out;
}

}  // namespace

int runReview(const ReviewOptions& o, std::istream& in, std::ostream& out, std::ostream& err) {
  std::string text;
  if (o.input == "-") {
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  } else {
    std::ifstream f(o.input, std::ios::binary);
    if (!f) {
      err << "injector review: cannot read " << o.input << "\n";
      return 2;
    }
    std::ostringstream ss;
    ss << f.rdbuf();
    text = ss.str();
  }
  const std::string where = o.input == "-" ? "<stdin>" : o.input;
  auto object = core::parseYaml(text);
  if (!object) {
    err << "injector review: " << where << ": " << object.error().message << "\n";
    return 2;
  }
  auto gvk = core::groupVersionKindOf(*object);
  if (!gvk || gvk->kind.empty()) {
    err << "injector review: " << where << ": apiVersion/kind: "
        << (gvk ? "kind is missing" : gvk.error().message) << "\n";
    return 2;
  }
  auto info = core::findResourceForKind(*gvk);
  if (!info) {
    err << "injector review: " << where << ": no resource is known for " << gvk->toString()
        << "\n";
    return 2;
  }
  auto version = o.version == "v1beta1" ? core::ReviewVersion::kV1beta1
                                        : core::ReviewVersion::kV1;
  if (o.version != "v1" && o.version != "v1beta1") {
    err << "injector review: --version must be v1 or v1beta1\n";
    return 2;
  }
  core::AdmissionRequest req;
  req.uid = o.uid.empty() ? randomUid() : o.uid;
  req.kind = info->kind;
  req.resource = info->resource;
  req.request_kind = info->kind;
  req.request_resource = info->resource;
  req.name = core::nameOf(*object).ok() ? *core::nameOf(*object) : "";
  const std::string object_ns = core::namespaceOf(*object).ok() ? *core::namespaceOf(*object) : "";
  req.namespace_name = o.namespace_name.empty() ? object_ns : o.namespace_name;
  if (info->namespaced && req.namespace_name.empty()) req.namespace_name = "default";
  req.operation = o.operation;
  req.user_info.username = o.username;
  req.user_info.groups = {"system:masters", "system:authenticated"};
  req.dry_run = o.dry_run;
  if (o.operation == "DELETE") {
    req.old_object = *object;
    req.options = nlohmann::json{{"apiVersion", "meta.k8s.io/v1"}, {"kind", "DeleteOptions"}};
  } else {
    req.object = *object;
    req.options = nlohmann::json{
        {"apiVersion", "meta.k8s.io/v1"},
        {"kind", o.operation == "UPDATE" ? "UpdateOptions" : "CreateOptions"}};
  }
  out << core::encodeAdmissionReview(core::makeRequestReview(version, std::move(req))) << "\n";
  return 0;
}

}  // namespace harness::injector
