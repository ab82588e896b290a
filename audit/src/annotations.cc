// Followed: kubernetes/apiserver pkg/admission/attributes.go (AddAnnotationWithLevel,
// getAnnotations, checkKeyFormat), pkg/admission/plugin/webhook/mutating/dispatcher.go
// (newWebhookAnnotator keys, mutationAnnotationValue, jsonPatchAnnotationValue),
// validating/dispatcher.go (failed-open key), apimachinery pkg/util/validation IsQualifiedName.

#include "harness/audit/annotations.h"

#include <cstdio>
#include <map>
#include <utility>
#include <vector>

#include "go_json_writer.h"
#include "harness/core/field_errors.h"
#include "harness/core/json.h"
#include "harness/core/webhook_config.h"
#include "harness/go/strconv.h"
#include "harness/validation/validation.h"

namespace harness::audit {
namespace {

std::string roundIndexKey(std::string_view prefix, int round, std::size_t index) {
  std::string key(prefix);
  key += "round_" + std::to_string(round) + "_index_" + std::to_string(index);
  return key;
}

// Skips JSON whitespace.
std::size_t skipSpace(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}

// End of the string token starting at s[i] == '"'.
std::size_t stringEnd(std::string_view s, std::size_t i) {
  ++i;
  while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
  return i + 1;
}

// End of the (valid) JSON value starting at s[i].
std::size_t valueEnd(std::string_view s, std::size_t i) {
  if (s[i] == '"') return stringEnd(s, i);
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = stringEnd(s, i);
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        --depth;
        if (depth == 0) return i + 1;
      }
      ++i;
    }
    return i;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' &&
         s[i] != '\n' && s[i] != '\r') {
    ++i;
  }
  return i;
}

std::string goLevelValue(const LeveledAnnotation& a) {
  // fmt %v of struct{level Level; value string}: "{Metadata value}".
  return "{" + std::string(toString(a.level)) + " " + a.value + "}";
}

}  // namespace

std::string mutationAnnotationKey(int round, std::size_t index) {
  return roundIndexKey(kMutationAnnotationPrefix, round, index);
}

std::string patchAnnotationKey(int round, std::size_t index) {
  return roundIndexKey(kPatchAnnotationPrefix, round, index);
}

std::string failedOpenAnnotationKey(bool mutating, int round, std::size_t index) {
  return roundIndexKey(
      mutating ? kMutationFailedOpenAnnotationPrefix : kValidatingFailedOpenAnnotationPrefix, round,
      index);
}

std::string webhookAnnotationKey(std::string_view webhook_name, std::string_view key) {
  std::string out(webhook_name);
  out += '/';
  out += key;
  return out;
}

std::string mutationAnnotationValue(std::string_view configuration, std::string_view webhook,
                                    bool mutated) {
  std::string out = "{\"configuration\":";
  go_json::appendString(out, configuration);
  out += ",\"webhook\":";
  go_json::appendString(out, webhook);
  out += ",\"mutated\":";
  out += mutated ? "true" : "false";
  out += '}';
  return out;
}

std::string patchAnnotationValue(std::string_view configuration, std::string_view webhook,
                                 const nlohmann::json& patch_ops) {
  std::string out = "{\"configuration\":";
  go_json::appendString(out, configuration);
  out += ",\"webhook\":";
  go_json::appendString(out, webhook);
  // Patch is an interface{} with omitempty: only a nil interface is omitted, which the dispatcher
  // never passes, so "patch" is always written (a nil Patch as null).
  out += ",\"patch\":";
  go_json::appendValue(out, patch_ops);
  out += ",\"patchType\":\"JSONPatch\"}";
  return out;
}

core::Result<std::string> rawPatchAnnotationValue(std::string_view configuration,
                                                  std::string_view webhook,
                                                  std::string_view patch_json) {
  auto decoded = core::parseJson(patch_json);
  if (!decoded) return core::Error{"invalid patch JSON: " + decoded.error().message};
  const nlohmann::json parsed = std::move(*decoded);
  if (!parsed.is_array() && !parsed.is_null()) {
    return core::Error{"patch is not a JSON array"};
  }
  for (const auto& op : parsed) {
    if (!op.is_object() && !op.is_null()) {
      return core::Error{"patch operation is neither an object nor null"};
    }
  }

  std::string ops;
  if (parsed.is_null()) {
    ops = "null";
  } else {
    // Walk the (now known valid) text: one element per operation, members re-ordered by key (Go
    // map order, the last duplicate wins), each value compacted as a json.RawMessage.
    ops = "[";
    std::size_t i = skipSpace(patch_json, 0) + 1;  // past '['
    bool first_op = true;
    for (;;) {
      i = skipSpace(patch_json, i);
      if (patch_json[i] == ']') break;
      if (patch_json[i] == ',') {
        ++i;
        continue;
      }
      if (!first_op) ops += ',';
      first_op = false;
      if (patch_json[i] == 'n') {  // null operation
        ops += "null";
        i += 4;
        continue;
      }
      std::map<std::string, std::string> members;  // decoded key -> compacted value
      ++i;                                         // past '{'
      for (;;) {
        i = skipSpace(patch_json, i);
        if (patch_json[i] == '}') {
          ++i;
          break;
        }
        if (patch_json[i] == ',') {
          ++i;
          continue;
        }
        const std::size_t key_end = stringEnd(patch_json, i);
        auto key = core::parseJson(patch_json.substr(i, key_end - i))->get<std::string>();
        i = skipSpace(patch_json, key_end) + 1;  // past ':'
        i = skipSpace(patch_json, i);
        const std::size_t end = valueEnd(patch_json, i);
        members[std::move(key)] = go_json::compact(patch_json.substr(i, end - i));
        i = end;
      }
      ops += '{';
      bool first = true;
      for (const auto& [key, value] : members) {
        if (!first) ops += ',';
        first = false;
        go_json::appendString(ops, key);
        ops += ':';
        ops += value;
      }
      ops += '}';
    }
    ops += ']';
  }

  std::string out = "{\"configuration\":";
  go_json::appendString(out, configuration);
  out += ",\"webhook\":";
  go_json::appendString(out, webhook);
  out += ",\"patch\":" + ops + ",\"patchType\":\"JSONPatch\"}";
  return out;
}

core::Result<void> checkAnnotationKey(std::string_view key) {
  std::size_t slashes = 0;
  for (char c : key) slashes += c == '/' ? 1 : 0;
  if (slashes != 1) {
    return core::Error{
        "annotation key has invalid format, the right format is a DNS subdomain prefix and '/' "
        "and key name. (e.g. 'podsecuritypolicy.admission.k8s.io/admit-policy')"};
  }
  const auto messages = validation::isQualifiedName(key);
  if (!messages.empty()) {
    std::string joined;
    for (std::size_t i = 0; i < messages.size(); ++i) {
      if (i > 0) joined += ',';
      joined += messages[i];
    }
    return core::Error{"annotation key has invalid format " + joined +
                       ". A qualified name like 'podsecuritypolicy.admission.k8s.io/admit-policy'"
                       " is required."};
  }
  return {};
}

bool isValidWebhookAnnotationKey(std::string_view key) { return checkAnnotationKey(key).ok(); }

core::Result<void> AnnotationSet::addWithLevel(std::string_view key, std::string_view value,
                                               Level level) {
  if (auto check = checkAnnotationKey(key); !check.ok()) return check.error();
  if (less(level, Level::kMetadata)) {
    return core::Error{
        "admission annotations are not allowed to be set at audit level lower than Metadata, "
        "key: " +
        go::quote(key) + ", level: " + std::string(toString(level))};
  }
  LeveledAnnotation annotation{std::string(value), level};
  if (const auto it = entries_.find(key); it != entries_.end()) {
    if (it->second == annotation) return {};
    return core::Error{
        "admission annotations are not allowd to be overwritten, key:" + go::quote(key) +
        ", old value: " + goLevelValue(it->second) + ", new value: " + goLevelValue(annotation)};
  }
  entries_.emplace(std::string(key), std::move(annotation));
  return {};
}

bool AnnotationSet::add(std::string_view key, std::string_view value, Level level) {
  return addWithLevel(key, value, level).ok();
}

std::map<std::string, std::string> AnnotationSet::forLevel(Level event_level) const {
  std::map<std::string, std::string> out;
  for (const auto& [key, annotation] : entries_) {
    if (!less(event_level, annotation.level)) out.emplace(key, annotation.value);
  }
  return out;
}

std::optional<std::string> AnnotationSet::value(std::string_view key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.value;
}

}  // namespace harness::audit
