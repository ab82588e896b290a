#pragma once

// The yaml-cpp reader behind core::parseYamlDocuments, for tests that compare it with the
// libfyaml reader (kept out of yaml.h so that the many users of yaml.h do not see it).

#include <nlohmann/json.hpp>

#include <string_view>
#include <vector>

#include "harness/core/result.h"

namespace harness::core::detail {

// parseYamlDocuments' YAML path read by yaml-cpp alone. parseYamlDocuments reads with libfyaml
// and falls back to this on any error (so that messages are yaml-cpp's); tests compare the two.
Result<std::vector<nlohmann::json>> parseYamlDocumentsWithYamlCpp(std::string_view text);

// Whether parseYamlDocuments reads this YAML text with libfyaml (true), or hands it to yaml-cpp
// because libfyaml failed or the text holds something libfyaml 0.7.12 reads differently.
bool libfyamlReads(std::string_view text);

}  // namespace harness::core::detail
