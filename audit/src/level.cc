#include "harness/audit/level.h"

#include <array>
#include <string>
#include <utility>

#include "harness/core/field_errors.h"
#include "harness/go/strconv.h"

namespace harness::audit {
namespace {

constexpr std::array<std::pair<Level, std::string_view>, 4> kLevels = {{
    {Level::kNone, "None"},
    {Level::kMetadata, "Metadata"},
    {Level::kRequest, "Request"},
    {Level::kRequestResponse, "RequestResponse"},
}};

constexpr std::array<std::pair<Stage, std::string_view>, 4> kStages = {{
    {Stage::kRequestReceived, "RequestReceived"},
    {Stage::kResponseStarted, "ResponseStarted"},
    {Stage::kResponseComplete, "ResponseComplete"},
    {Stage::kPanic, "Panic"},
}};

}  // namespace

std::string_view toString(Level level) {
  for (const auto& [value, name] : kLevels) {
    if (value == level) return name;
  }
  return "";
}

std::string_view toString(Stage stage) {
  for (const auto& [value, name] : kStages) {
    if (value == stage) return name;
  }
  return "";
}

core::Result<Level> parseLevel(std::string_view text) {
  for (const auto& [value, name] : kLevels) {
    if (name == text) return value;
  }
  return core::Error{"unknown level " + go::quote(text)};
}

core::Result<Stage> parseStage(std::string_view text) {
  for (const auto& [value, name] : kStages) {
    if (name == text) return value;
  }
  return core::Error{"unknown stage " + go::quote(text)};
}

}  // namespace harness::audit
