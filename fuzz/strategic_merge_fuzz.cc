// Strategic merge patch and JSON merge patch (what kubectl and the injectors' overlays use):
// input "<original>\n<patch>" (compact JSON, one per line; an original that is not JSON is
// replaced by a small Pod). The schema is the original's kind's (schemaForKind). Checked: no
// crash, whatever the shapes.

#include "fuzz_support.h"
#include "harness/core/strategic_merge.h"

namespace {

using namespace harness;
using nlohmann::json;

const json& fallbackPod() {
  static const json pod = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web",
    "labels":{"app":"web"}},"spec":{"containers":[{"name":"app","image":"nginx:1.27",
    "env":[{"name":"A","value":"1"}],"ports":[{"containerPort":80,"protocol":"TCP"}],
    "volumeMounts":[{"name":"data","mountPath":"/data"}]}],"volumes":[{"name":"data",
    "emptyDir":{}}],"tolerations":[{"key":"k","operator":"Exists"}]}})");
  return pod;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [original_text, patch_text] = fuzz::splitFirstLine(fuzz::asText(data, size));
  json original = fuzz::parseJsonOrDiscarded(original_text);
  if (original.is_discarded()) original = fallbackPod();
  const json patch = fuzz::parseJsonOrDiscarded(patch_text);
  if (patch.is_discarded()) return 0;

  std::string kind = "Pod";
  if (original.is_object() && original.contains("kind") && original["kind"].is_string()) {
    kind = original["kind"].get<std::string>();
  }
  (void)core::strategicMerge(original, patch, core::schemaForKind(kind));
  (void)core::strategicMerge(original, patch, core::podSchema(), {.name_path_in_errors = false});
  (void)core::strategicMerge(original, patch, core::jsonMergePatchSchema());
  (void)core::jsonMergePatch(original, patch);
  return 0;
}
