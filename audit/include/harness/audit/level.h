#pragma once

// Audit levels and stages of audit.k8s.io/v1 (kubernetes/apiserver pkg/apis/audit/v1/types.go),
// with the ordering of pkg/apis/audit/helpers.go (Level.Less / GreaterOrEqual).

#include <optional>
#include <string_view>

#include "harness/core/result.h"

namespace harness::audit {

// Ordered: kNone < kMetadata < kRequest < kRequestResponse.
enum class Level { kNone, kMetadata, kRequest, kRequestResponse };

enum class Stage { kRequestReceived, kResponseStarted, kResponseComplete, kPanic };

// "None", "Metadata", "Request", "RequestResponse".
std::string_view toString(Level level);
// "RequestReceived", "ResponseStarted", "ResponseComplete", "Panic".
std::string_view toString(Stage stage);

// Exact, case-sensitive names as above. Errors: `unknown level "Verbose"`, `unknown stage "x"`.
core::Result<Level> parseLevel(std::string_view text);
core::Result<Stage> parseStage(std::string_view text);

// Level.Less: a strictly lower level.
inline bool less(Level a, Level b) { return static_cast<int>(a) < static_cast<int>(b); }
// Level.GreaterOrEqual.
inline bool greaterOrEqual(Level a, Level b) { return !less(a, b); }

}  // namespace harness::audit
