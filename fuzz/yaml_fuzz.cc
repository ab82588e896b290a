// The YAML loader (core::parseYamlDocuments, parseYaml), which reads every untrusted manifest,
// scenario and configuration file. Checked: no crash, and parseYaml(toYaml(j)) == j for every
// document j it returns (yaml.h's contract). yaml_readers_fuzz compares its two readers.

#include "fuzz_support.h"
#include "harness/core/yaml.h"

using namespace harness;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::asText(data, size);
  auto documents = core::parseYamlDocuments(text);
  if (documents.ok()) {
    for (const auto& document : *documents) {
      const std::string yaml = core::toYaml(document);
      auto back = core::parseYaml(yaml);
      FUZZ_CHECK(back.ok(), yaml + "\n" + back.error().message);
      FUZZ_CHECK(*back == document, document.dump() + "\n" + yaml + "\n" + back->dump());
    }
    (void)core::toYamlDocuments(*documents);
  }
  (void)core::parseYaml(text);
  return 0;
}
