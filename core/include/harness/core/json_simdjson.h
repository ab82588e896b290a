#pragma once

// simdjson DOM elements as nlohmann values, for readers that look at a document with simdjson
// first and build nlohmann values only for the parts they keep (the audit log readers: an event
// of kilobytes of which a command needs a few members).

#include <nlohmann/json.hpp>
#include <simdjson.h>

namespace harness::core {

// `out` becomes the value parseJson builds from the element's text (unsigned for non-negative
// integers, duplicate keys: the last value at the first key's place).
void copyFromSimdjson(simdjson::dom::element element, nlohmann::json& out);

}  // namespace harness::core
