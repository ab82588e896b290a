#pragma once

// decodePatch on an already parsed patch document, for callers that hold the JSON value (the
// audit replay, offline inject): dumping it and re-parsing the text costs more than applying it.
// A header of its own so that adding it did not rebuild every includer of json_patch.h.

#include <nlohmann/json.hpp>

#include "harness/core/json_patch.h"
#include "harness/core/result.h"

namespace harness::core {

// Exactly decodePatch(parsed.dump()) for any value a JSON parser produced: the same operations
// (`raw` included) and the same errors. It skips only the syntax check and the UTF-8 repair,
// which a parsed value has already passed.
Result<JsonPatch> decodeParsedPatch(nlohmann::json parsed);

}  // namespace harness::core
