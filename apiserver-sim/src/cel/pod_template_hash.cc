// What only Kubernetes' Go types give, through kube-cel: controller.ComputeHash
// (kube/cmd/kube-cel/pod_template_hash.go), protobuf request bodies (protobuf.go), the
// unknown fields of a body (strict_decode.go) or of a patch (strict_patch.go), and the field
// manager (managed_fields.go).

#include "harness/sim/cel.h"
#include "harness/sim/go_types.h"

#include <fmt/format.h>

#include "harness/go/base64.h"

namespace harness::sim::cel {
namespace {

// A list of strings kube-cel answered under `key` (none when absent).
core::Result<std::vector<std::string>> stringsOf(const nlohmann::json& response,
                                                 const char* key, const char* op) {
  std::vector<std::string> out;
  auto it = response.find(key);
  if (it == response.end()) return out;
  if (!it->is_array()) {
    return core::makeError(fmt::format("kube-cel answered {} with {} that are no list: {}", op,
                                       key, response.dump()));
  }
  for (const auto& value : *it) {
    if (!value.is_string()) {
      return core::makeError(fmt::format("kube-cel answered {} with {} that are no strings: {}",
                                         op, key, response.dump()));
    }
    out.push_back(value.get<std::string>());
  }
  return out;
}

}  // namespace

PodTemplateHasher podTemplateHasher(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const nlohmann::json& template_spec,
                                std::optional<std::int32_t> collision_count)
             -> core::Result<std::string> {
    nlohmann::json request = {{"op", "podTemplateHash"}, {"object", template_spec}};
    if (collision_count) request["collisionCount"] = *collision_count;
    auto response = cel->call(request);
    if (!response) return response.error();
    if (auto it = response->find("hash"); it != response->end() && it->is_string()) {
      return it->get<std::string>();
    }
    return core::makeError("kube-cel answered podTemplateHash without a hash: " +
                           response->dump());
  };
}

std::function<core::Result<nlohmann::json>(const std::string& body)> protobufDecoder(
    std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const std::string& body) -> core::Result<nlohmann::json> {
    // Go's encoding/json carries []byte as standard base64.
    auto response = cel->call({{"op", "decodeProtobuf"}, {"data", go::base64Encode(body)}});
    if (!response) return response.error();
    if (auto it = response->find("decodeError"); it != response->end() && it->is_string()) {
      return core::makeError(it->get<std::string>(), core::ErrorCode::kDecode);
    }
    if (auto it = response->find("object"); it != response->end() && it->is_object()) {
      return *it;
    }
    return core::makeError("kube-cel answered decodeProtobuf without an object: " +
                           response->dump());
  };
}

std::function<core::Result<std::vector<std::string>>(const std::string& body,
                                                     const core::GroupVersionKind& kind)>
strictFieldChecker(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const std::string& body, const core::GroupVersionKind& kind)
             -> core::Result<std::vector<std::string>> {
    auto response = cel->call(
        {{"op", "strictDecode"},
         {"data", go::base64Encode(body)},
         {"invocationKind",
          {{"group", kind.group}, {"version", kind.version}, {"kind", kind.kind}}}});
    if (!response) return response.error();
    return stringsOf(*response, "strictErrors", "strictDecode");
  };
}

std::function<core::Result<std::pair<std::vector<std::string>, std::optional<core::Status>>>(
    const nlohmann::json& current, const std::string& patch, std::string_view patch_type,
    std::string_view directive, const core::GroupVersionKind& kind)>
strictPatchChecker(std::shared_ptr<KubeCel> cel) {
  using Answer = std::pair<std::vector<std::string>, std::optional<core::Status>>;
  return [cel = std::move(cel)](const nlohmann::json& current, const std::string& patch,
                                std::string_view patch_type, std::string_view directive,
                                const core::GroupVersionKind& kind) -> core::Result<Answer> {
    auto response = cel->call(
        {{"op", "strictPatch"},
         {"object", current},
         {"data", go::base64Encode(patch)},
         {"contentType", std::string(patch_type)},
         {"fieldValidation", std::string(directive)},
         {"invocationKind",
          {{"group", kind.group}, {"version", kind.version}, {"kind", kind.kind}}}});
    if (!response) return response.error();
    Answer answer;
    if (auto it = response->find("status"); it != response->end()) {
      auto status = core::statusFromJson(*it, "strictPatch.status");
      if (!status) return status.error();
      answer.second = std::move(*status);
    }
    auto warnings = stringsOf(*response, "warnings", "strictPatch");
    if (!warnings) return warnings.error();
    answer.first = std::move(*warnings);
    return answer;
  };
}

namespace {

nlohmann::json kindJson(const core::GroupVersionKind& kind) {
  return {{"group", kind.group}, {"version", kind.version}, {"kind", kind.kind}};
}

}  // namespace

std::function<core::Result<ApplyOutcome>(
    const std::optional<nlohmann::json>& live, const std::string& patch,
    const std::string& manager, bool force, const std::string& subresource,
    const core::GroupVersionKind& kind)>
fieldManagerApply(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const std::optional<nlohmann::json>& live,
                                const std::string& patch, const std::string& manager, bool force,
                                const std::string& subresource,
                                const core::GroupVersionKind& kind) -> core::Result<ApplyOutcome> {
    nlohmann::json request = {{"op", "applyFields"},
                              {"data", go::base64Encode(patch)},
                              {"manager", manager},
                              {"force", force},
                              {"subresource", subresource},
                              {"invocationKind", kindJson(kind)}};
    if (live) request["object"] = *live;
    auto response = cel->call(request);
    if (!response) return response.error();
    if (auto it = response->find("status"); it != response->end()) {
      auto status = core::statusFromJson(*it, "applyFields.status");
      if (!status) return status.error();
      return ApplyOutcome(nullptr, std::move(*status));
    }
    if (auto it = response->find("object"); it != response->end() && it->is_object()) {
      return ApplyOutcome(std::move(*it), std::nullopt);
    }
    return core::makeError("kube-cel answered applyFields without an object: " +
                           response->dump());
  };
}

std::function<core::Result<nlohmann::json>(
    const nlohmann::json& object, const std::optional<nlohmann::json>& live,
    const std::string& manager, const std::string& subresource,
    const core::GroupVersionKind& kind)>
fieldManagerUpdate(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const nlohmann::json& object,
                                const std::optional<nlohmann::json>& live,
                                const std::string& manager, const std::string& subresource,
                                const core::GroupVersionKind& kind)
             -> core::Result<nlohmann::json> {
    nlohmann::json request = {{"op", "updateFields"},
                              {"object", object},
                              {"manager", manager},
                              {"subresource", subresource},
                              {"invocationKind", kindJson(kind)}};
    if (live) request["oldObject"] = *live;
    auto response = cel->call(request);
    if (!response) return response.error();
    if (auto it = response->find("managedFields"); it != response->end() && it->is_array()) {
      return std::move(*it);
    }
    return core::makeError("kube-cel answered updateFields without managedFields: " +
                           response->dump());
  };
}

}  // namespace harness::sim::cel
