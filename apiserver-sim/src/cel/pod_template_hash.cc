// What only Kubernetes' Go types give, through kube-cel: controller.ComputeHash
// (kube/cmd/kube-cel/pod_template_hash.go), protobuf request bodies (protobuf.go) and the
// unknown fields of a body (strict_decode.go).

#include "harness/sim/cel.h"
#include "harness/sim/go_types.h"

#include "harness/go/base64.h"

namespace harness::sim::cel {

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
    std::vector<std::string> errors;
    if (auto it = response->find("strictErrors"); it != response->end()) {
      if (!it->is_array()) {
        return core::makeError("kube-cel answered strictDecode with strictErrors that are no list: " +
                               response->dump());
      }
      for (const auto& error : *it) {
        if (!error.is_string()) {
          return core::makeError("kube-cel answered strictDecode with an error that is no string: " +
                                 response->dump());
        }
        errors.push_back(error.get<std::string>());
      }
    }
    return errors;
  };
}

}  // namespace harness::sim::cel
