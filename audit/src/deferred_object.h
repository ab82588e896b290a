#pragma once

// An object of an audit event kept as simdjson parsed it instead of as a nlohmann::json tree, for
// readers that only compare with it (`audit chains` replays every Pod chain against its
// responseObject: building that tree, then freeing it, was a third of what reading a log cost).

#include <optional>

#include <nlohmann/json.hpp>
#include <simdjson.h>

namespace harness::audit {

struct DeferredObject {
  simdjson::dom::document document;  // what the event's line parsed into
  simdjson::dom::element value;      // the object, in `document`

  // The value parseJson builds from the object's text (core::copyFromSimdjson).
  [[nodiscard]] nlohmann::json tree() const;
};

}  // namespace harness::audit
