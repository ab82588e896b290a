// The two readers behind core::parseYamlDocuments: YAML goes to libfyaml first and to yaml-cpp
// when libfyaml fails or the text holds something libfyaml 0.7.12 reads differently (yaml.cc
// fastReaderAgrees, fyTagAgrees, FyLayout, fyTextAgrees). Checked: the documents are yaml-cpp's
// own, or both readers fail. Text starting with "{" is JSON, read by the JSON reader: skipped.
// Not in scripts/fuzz.sh's default list: each difference it finds is a new libfyaml quirk to
// route to yaml-cpp, found in minutes rather than in CI's seconds (FUZZ_SECONDS=600
// scripts/fuzz.sh yaml_readers); its seeds, replayed by CTest, are the quirks found so far.

#include "fuzz_support.h"
#include "harness/core/yaml.h"
#include "harness/core/yaml_reference.h"

using namespace harness;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::asText(data, size);
  const std::size_t first = text.find_first_not_of(" \t\r\n\f\v");
  if (first != std::string_view::npos && text[first] == '{') return 0;
  const auto documents = core::parseYamlDocuments(text);
  const auto reference = core::detail::parseYamlDocumentsWithYamlCpp(text);
  FUZZ_CHECK(documents.ok() == reference.ok(), documents.ok()
                                                   ? "yaml-cpp: " + reference.error().message
                                                   : documents.error().message);
  if (documents.ok()) {
    const auto dump = [](const auto& docs) {
      return nlohmann::json(docs).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    FUZZ_CHECK(nlohmann::json(*documents) == nlohmann::json(*reference),
               dump(*documents) + "\n" + dump(*reference));
  }
  return 0;
}
