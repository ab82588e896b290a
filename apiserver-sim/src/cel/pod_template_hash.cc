// controller.ComputeHash through kube-cel (kube/cmd/kube-cel/pod_template_hash.go).

#include "harness/sim/cel.h"

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

}  // namespace harness::sim::cel
