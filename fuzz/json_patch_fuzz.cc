// JSON patch as kube-apiserver applies a webhook's patch: input "<document>\n<patch>" (compact
// JSON, one per line; a document that is not JSON is replaced by a small Pod, so that every
// input exercises the patch). Checked: no crash, and for every patch that applies, the patch
// createPatch builds from the document to the result applies to the same result
// (json_patch.h's contract).

#include "fuzz_support.h"
#include "harness/core/json_patch.h"

namespace {

using namespace harness;
using nlohmann::json;

const json& fallbackPod() {
  static const json pod = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web",
    "namespace":"default","labels":{"app":"web"},"annotations":{"a":"b"}},"spec":{"containers":[
    {"name":"app","image":"nginx:1.27","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],
    "ports":[{"containerPort":80}]}],"volumes":[{"name":"data","emptyDir":{}}]}})");
  return pod;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto [document_text, patch_text] = fuzz::splitFirstLine(fuzz::asText(data, size));
  json document = fuzz::parseJsonOrDiscarded(document_text);
  if (document.is_discarded()) document = fallbackPod();

  auto patch = core::decodePatch(patch_text);
  if (!patch.ok()) return 0;
  (void)core::encodePatch(*patch);

  core::JsonPatchOptions strict;
  strict.support_negative_indices = false;
  (void)core::applyPatch(document, *patch, strict);

  auto result = core::applyPatch(document, *patch);
  if (!result.ok() || !(document.is_object() || document.is_array()) ||
      !(result->is_object() || result->is_array())) {
    return 0;
  }
  const core::JsonPatch diff = core::createPatch(document, *result);
  auto replayed = core::applyPatch(document, diff);
  FUZZ_CHECK(replayed.ok(), core::encodePatch(diff).dump() + "\n" + replayed.error().message);
  FUZZ_CHECK(*replayed == *result, core::encodePatch(diff).dump());
  return 0;
}
