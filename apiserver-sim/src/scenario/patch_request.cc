// The HTTP request of a PATCH or APPLY step (scenario.h), as kubectl sends it: `kubectl patch
// --type json|merge|strategic` (k8s.io/kubectl pkg/cmd/patch/patch.go: the patch converted from
// YAML to JSON, the Content-Type of its type) and `kubectl apply --server-side`
// (pkg/cmd/apply/apply.go: the object as JSON with application/apply-patch+yaml, fieldManager,
// force). Both backends send it: the simulator to its REST handler, the kube backend to the real
// server.

#include <cctype>

#include <fmt/format.h>

#include "harness/core/object.h"
#include "harness/sim/scenario.h"

namespace harness::sim {

std::string queryEscape(std::string_view text) {
  std::string out;
  for (const unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string warningText(const std::string& header) {
  const auto quote = header.find('"');
  if (quote == std::string::npos) return header;
  std::string out;
  for (std::size_t i = quote + 1; i < header.size() && header[i] != '"'; ++i) {
    if (header[i] == '\\' && i + 1 < header.size()) ++i;
    out += header[i];
  }
  return out;
}

std::string resourcePath(const core::GroupVersionResource& resource, const std::string& ns,
                         const std::string& name, const std::string& subresource) {
  std::string path = resource.group.empty()
                         ? "/api/" + resource.version
                         : fmt::format("/apis/{}/{}", resource.group, resource.version);
  const auto info = core::findResource(resource);
  const bool namespaced = info ? info->namespaced : !ns.empty();
  if (namespaced && !ns.empty()) path += "/namespaces/" + ns;
  path += "/" + resource.resource;
  if (!name.empty()) path += "/" + name;
  if (!subresource.empty()) path += "/" + subresource;
  return path;
}

std::string durationParam(std::chrono::milliseconds duration) {
  if (duration.count() % 1000 == 0) return fmt::format("{}s", duration.count() / 1000);
  return fmt::format("{}ms", duration.count());
}

PatchHttpRequest patchHttpRequest(const RequestSpec& request) {
  PatchHttpRequest out;
  if (request.operation == "APPLY") {
    out.content_type = "application/apply-patch+yaml";
    out.body = request.object ? request.object->dump() : std::string("{}");
  } else {
    out.content_type = request.patch_type == "json"    ? "application/json-patch+json"
                       : request.patch_type == "merge" ? "application/merge-patch+json"
                                                       : "application/strategic-merge-patch+json";
    out.body = request.patch;
  }
  std::vector<std::string> query;
  if (request.dry_run) query.emplace_back("dryRun=All");
  if (!request.field_manager.empty()) {
    query.push_back("fieldManager=" + queryEscape(request.field_manager));
  }
  if (!request.field_validation.empty()) {
    query.push_back("fieldValidation=" + queryEscape(request.field_validation));
  }
  if (request.force) query.emplace_back("force=true");
  if (request.timeout) query.push_back("timeout=" + durationParam(*request.timeout));
  out.path = resourcePath(request.resource, request.namespace_name, request.name,
                          request.subresource);
  for (std::size_t i = 0; i < query.size(); ++i) out.path += (i == 0 ? "?" : "&") + query[i];
  return out;
}

}  // namespace harness::sim
