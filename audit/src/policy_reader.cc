// Loading and validating an audit Policy, following kubernetes/apiserver:
//   * pkg/audit/policy/reader.go (LoadPolicyFromBytes): strict decode with a lenient fallback
//     (unknown fields are only warned about), only audit.k8s.io/v1 is accepted, ValidatePolicy,
//     then "loaded illegal policy with 0 rules";
//   * pkg/apis/audit/validation/validation.go (ValidatePolicy, validatePolicyRule,
//     validateLevel, validateNonResourceURLs, validateResources, validateOmitStages) for the
//     field errors and their exact texts and paths;
//   * the JSON names of pkg/apis/audit/v1/types.go (Policy, PolicyRule, GroupResources).
// Field names are matched case-sensitively, as sigs.k8s.io/json does.

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "harness/audit/policy.h"
#include "harness/core/webhook_config.h"
#include "harness/core/yaml.h"
#include "harness/go/fmt.h"
#include "harness/go/strconv.h"
#include "harness/validation/validation.h"

namespace harness::audit {
namespace {

using nlohmann::json;

// A location in the document: object keys and array indices from the root.
using PathToken = std::variant<std::string, std::size_t>;
using Path = std::vector<PathToken>;

Path child(Path path, std::string key) {
  path.emplace_back(std::move(key));
  return path;
}

Path child(Path path, std::size_t index) {
  path.emplace_back(index);
  return path;
}

// "rules[2].resources[0].group"
std::string fieldPath(const Path& path) {
  std::string out;
  for (const auto& token : path) {
    if (const auto* key = std::get_if<std::string>(&token)) {
      if (!out.empty()) out += '.';
      out += *key;
    } else {
      out += '[' + std::to_string(std::get<std::size_t>(token)) + ']';
    }
  }
  return out;
}

// Line:column of document locations, from yaml-cpp's node marks. Locating is best effort: when
// the text does not load as a node tree, or a path goes through a merge key or alias, the nearest
// located ancestor is used. Only built for text core::parseYaml accepted, so its nesting and
// aliasing limits hold here too; find() walks one path, never a whole (alias-expanded) tree.
class Locator {
 public:
  explicit Locator(std::string_view text) {
    try {
      root_ = YAML::Load(std::string(text));
      loaded_ = true;
    } catch (const std::exception&) {
      loaded_ = false;
    }
  }

  // "L:C" of the value at `path` (or its nearest ancestor), or "" when unknown.
  [[nodiscard]] std::string value(const Path& path) const { return find(path, false); }
  // "L:C" of the key naming the last element of `path` (an object member).
  [[nodiscard]] std::string key(const Path& path) const { return find(path, true); }

 private:
  static std::string format(const YAML::Mark& mark) {
    if (mark.line < 0 || mark.column < 0) return "";
    return std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }

  [[nodiscard]] std::string find(const Path& path, bool want_key) const {
    if (!loaded_) return "";
    try {
      // Node::operator= assigns through to the tree; reset() only rebinds the handle.
      YAML::Node node;
      node.reset(root_);
      std::string best = format(node.Mark());
      for (std::size_t i = 0; i < path.size(); ++i) {
        const bool last = i + 1 == path.size();
        YAML::Node next;
        if (const auto* k = std::get_if<std::string>(&path[i])) {
          if (!node.IsMap()) return best;
          bool found = false;
          for (auto it = node.begin(); it != node.end(); ++it) {
            if (it->first.IsScalar() && it->first.Scalar() == *k) {
              if (last && want_key) return format(it->first.Mark());
              next.reset(it->second);
              found = true;
            }
          }
          if (!found) return best;
        } else {
          const std::size_t index = std::get<std::size_t>(path[i]);
          if (!node.IsSequence() || index >= node.size()) return best;
          const YAML::Node& sequence = node;
          next.reset(sequence[index]);
        }
        node.reset(next);
        if (const std::string here = format(node.Mark()); !here.empty()) best = here;
      }
      return best;
    } catch (const std::exception&) {
      return "";
    }
  }

  YAML::Node root_;
  bool loaded_ = false;
};

std::string kindOf(const json& v) {
  switch (v.type()) {
    case json::value_t::string:
      return "string " + go::quote(v.get_ref<const std::string&>());
    case json::value_t::boolean:
      return v.get<bool>() ? "bool true" : "bool false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "number " + v.dump();
    case json::value_t::array:
      return "list";
    case json::value_t::object:
      return "object";
    default:
      return "null";
  }
}

struct LocatedError {
  std::string message;  // "<path>: <text>"
  Path location;
  bool at_key = false;
  std::string field;  // <path> (empty when the message names none)
  std::string text;   // <text>
};

// An error about the field at `location`, printed as "<field>: <text>".
LocatedError fieldLocated(const std::string& field, std::string text, Path location) {
  return LocatedError{field + ": " + text, std::move(location), false, field, std::move(text)};
}

LocatedError fieldLocated(const core::FieldError& error, Path location) {
  return LocatedError{error.toString(), std::move(location), false, error.field, error.body()};
}

// Decodes the Policy fields with encoding/json semantics: null leaves the zero value, unknown
// fields are recorded as warnings, a value of the wrong type is an error (the first one stops).
class Decoder {
 public:
  std::optional<LocatedError> error;
  std::vector<LocatedError> unknown_fields;

  void typeError(const Path& path, const json& v, std::string_view expected) {
    if (error) return;
    error = fieldLocated(fieldPath(path),
                         "expected " + std::string(expected) + ", got " + kindOf(v), path);
  }

  void checkKnown(const json& object, const Path& path, const std::set<std::string>& known) {
    for (const auto& [key, value] : object.items()) {
      if (known.count(key) == 0) {
        unknown_fields.push_back(LocatedError{
            "unknown field " + go::quote(fieldPath(child(path, key))), child(path, key), true});
      }
    }
  }

  const json* member(const json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }

  void readString(const json& object, const Path& path, const char* key, std::string& out) {
    if (const json* v = member(object, key)) {
      if (v->is_string()) {
        out = v->get<std::string>();
      } else {
        typeError(child(path, key), *v, "a string");
      }
    }
  }

  void readStrings(const json& object, const Path& path, const char* key,
                   std::vector<std::string>& out) {
    const json* v = member(object, key);
    if (v == nullptr) return;
    const Path here = child(path, key);
    if (!v->is_array()) {
      typeError(here, *v, "a list of strings");
      return;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const json& item = (*v)[i];
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      } else if (item.is_null()) {
        out.emplace_back();
      } else {
        typeError(child(here, i), item, "a string");
        return;
      }
    }
  }

  // omitStages: []Stage. Strings are kept as written; validation judges their values.
  void readStages(const json& object, const Path& path, std::vector<std::string>& out) {
    readStrings(object, path, "omitStages", out);
  }

  void readBool(const json& object, const Path& path, const char* key, std::optional<bool>& out) {
    if (const json* v = member(object, key)) {
      if (v->is_boolean()) {
        out = v->get<bool>();
      } else {
        typeError(child(path, key), *v, "a boolean");
      }
    }
  }
};

// The decoded document before levels and stages are checked (validation reports them with
// field errors, as Go does after decoding them as plain strings).
struct RawRule {
  std::string level;
  PolicyRule rule;
  std::vector<std::string> omit_stages;
};

struct RawPolicy {
  std::vector<RawRule> rules;
  std::vector<std::string> omit_stages;
  bool omit_managed_fields = false;
};

void decodeRule(Decoder& d, const json& v, const Path& path, RawRule& out) {
  if (v.is_null()) return;  // a null element is a zero PolicyRule
  if (!v.is_object()) {
    d.typeError(path, v, "a PolicyRule object");
    return;
  }
  d.checkKnown(v, path,
               {"level", "users", "userGroups", "verbs", "resources", "namespaces",
                "nonResourceURLs", "omitStages", "omitManagedFields"});
  d.readString(v, path, "level", out.level);
  d.readStrings(v, path, "users", out.rule.users);
  d.readStrings(v, path, "userGroups", out.rule.user_groups);
  d.readStrings(v, path, "verbs", out.rule.verbs);
  if (const json* resources = d.member(v, "resources")) {
    const Path here = child(path, "resources");
    if (!resources->is_array()) {
      d.typeError(here, *resources, "a list of GroupResources");
    } else {
      for (std::size_t i = 0; i < resources->size() && !d.error; ++i) {
        const json& item = (*resources)[i];
        GroupResources gr;
        if (item.is_object()) {
          const Path at = child(here, i);
          d.checkKnown(item, at, {"group", "resources", "resourceNames"});
          d.readString(item, at, "group", gr.group);
          d.readStrings(item, at, "resources", gr.resources);
          d.readStrings(item, at, "resourceNames", gr.resource_names);
        } else if (!item.is_null()) {
          d.typeError(child(here, i), item, "a GroupResources object");
        }
        out.rule.resources.push_back(std::move(gr));
      }
    }
  }
  d.readStrings(v, path, "namespaces", out.rule.namespaces);
  d.readStrings(v, path, "nonResourceURLs", out.rule.non_resource_urls);
  d.readStages(v, path, out.omit_stages);
  d.readBool(v, path, "omitManagedFields", out.rule.omit_managed_fields);
}

std::optional<LocatedError> decodePolicy(Decoder& d, const json& doc, RawPolicy& out) {
  const Path root;
  d.checkKnown(doc, root,
               {"apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields"});
  if (const json* metadata = d.member(doc, "metadata"); metadata && !metadata->is_object()) {
    d.typeError(child(root, "metadata"), *metadata, "an ObjectMeta object");
  }
  if (const json* rules = d.member(doc, "rules")) {
    const Path here = child(root, "rules");
    if (!rules->is_array()) {
      d.typeError(here, *rules, "a list of PolicyRule");
    } else {
      for (std::size_t i = 0; i < rules->size() && !d.error; ++i) {
        RawRule rule;
        decodeRule(d, (*rules)[i], child(here, i), rule);
        out.rules.push_back(std::move(rule));
      }
    }
  }
  d.readStages(doc, root, out.omit_stages);
  std::optional<bool> omit_managed_fields;
  d.readBool(doc, root, "omitManagedFields", omit_managed_fields);
  out.omit_managed_fields = omit_managed_fields.value_or(false);
  return d.error;
}

// apiVersion and kind, which the universal decoder reads first to pick the type.
std::optional<LocatedError> checkTypeMeta(const json& doc) {
  const Path api_version_path{std::string("apiVersion")};
  const Path kind_path{std::string("kind")};
  const auto api_version = doc.find("apiVersion");
  const auto kind = doc.find("kind");
  const bool has_api_version = api_version != doc.end() && !api_version->is_null();
  const bool has_kind = kind != doc.end() && !kind->is_null();
  if (has_api_version && !api_version->is_string()) {
    return fieldLocated("apiVersion", "expected a string, got " + kindOf(*api_version),
                        api_version_path);
  }
  if (has_kind && !kind->is_string()) {
    return fieldLocated("kind", "expected a string, got " + kindOf(*kind), kind_path);
  }
  const std::vector<std::string> supported_versions{std::string(kPolicyApiVersion)};
  if (!has_api_version || api_version->get_ref<const std::string&>().empty()) {
    return fieldLocated(
        core::FieldError::required("apiVersion", "an audit policy must have apiVersion " +
                                                     std::string(kPolicyApiVersion) + " and kind " +
                                                     std::string(kPolicyKind)),
        {});
  }
  if (api_version->get_ref<const std::string&>() != kPolicyApiVersion) {
    return fieldLocated(
        core::FieldError::notSupported("apiVersion", api_version->get_ref<const std::string&>(),
                                       supported_versions),
        api_version_path);
  }
  if (!has_kind || kind->get_ref<const std::string&>().empty()) {
    return fieldLocated(core::FieldError::required(
                            "kind", "an audit policy must have kind " + std::string(kPolicyKind)),
                        {});
  }
  if (kind->get_ref<const std::string&>() != kPolicyKind) {
    return fieldLocated(core::FieldError::notSupported("kind", kind->get_ref<const std::string&>(),
                                                       {std::string(kPolicyKind)}),
                        kind_path);
  }
  return std::nullopt;
}

const std::vector<std::string>& validLevels() {
  static const std::vector<std::string> levels{"None", "Metadata", "Request", "RequestResponse"};
  return levels;
}

const std::vector<std::string>& validStages() {
  static const std::vector<std::string> stages{"RequestReceived", "ResponseStarted",
                                               "ResponseComplete", "Panic"};
  return stages;
}

std::string joinComma(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += items[i];
  }
  return out;
}

struct LocatedFieldError {
  core::FieldError error;
  Path location;
};

void validateOmitStages(const std::vector<std::string>& stages, const std::string& path,
                        const Path& location, std::vector<LocatedFieldError>& out) {
  for (std::size_t i = 0; i < stages.size(); ++i) {
    bool valid = false;
    for (const auto& s : validStages()) valid = valid || s == stages[i];
    if (!valid) {
      out.push_back({core::FieldError::invalid(path + "[" + std::to_string(i) + "]", stages[i],
                                               "allowed stages are " + joinComma(validStages())),
                     child(location, i)});
    }
  }
}

void validateRule(const PolicyRule& rule, const std::string& level,
                  const std::vector<std::string>& omit_stages, const std::string& path,
                  const Path& location, std::vector<LocatedFieldError>& out) {
  // validateLevel
  if (level.empty()) {
    out.push_back({core::FieldError::required(path + ".level"), location});
  } else {
    bool valid = false;
    for (const auto& l : validLevels()) valid = valid || l == level;
    if (!valid) {
      out.push_back({core::FieldError::notSupported(path + ".level", level, validLevels()),
                     child(location, "level")});
    }
  }
  // validateNonResourceURLs
  const Path urls_location = child(location, "nonResourceURLs");
  for (std::size_t i = 0; i < rule.non_resource_urls.size(); ++i) {
    const std::string& url = rule.non_resource_urls[i];
    if (url == "*") continue;
    const std::string at = path + ".nonResourceURLs[" + std::to_string(i) + "]";
    if (url.empty() || url.front() != '/') {
      out.push_back({core::FieldError::invalid(
                         at, url, "non-resource URL rules must begin with a '/' character"),
                     child(urls_location, i)});
    }
    if (!url.empty() && url.substr(0, url.size() - 1).find('*') != std::string::npos) {
      out.push_back(
          {core::FieldError::invalid(
               at, url, "non-resource URL wildcards '*' must be the final character of the rule"),
           child(urls_location, i)});
    }
  }
  // validateResources: Go's paths carry no index here ("rules[0].resources.group").
  const Path resources_location = child(location, "resources");
  for (std::size_t i = 0; i < rule.resources.size(); ++i) {
    const GroupResources& gr = rule.resources[i];
    if (!gr.group.empty()) {
      if (auto msgs = validation::isDns1123Subdomain(gr.group); !msgs.empty()) {
        out.push_back(
            {core::FieldError::invalid(path + ".resources.group", gr.group, joinComma(msgs)),
             child(child(resources_location, i), "group")});
      }
    }
    if (!gr.resource_names.empty() && gr.resources.empty()) {
      core::FieldError e{core::FieldErrorType::kInvalid, path + ".resources.resourceNames",
                         go::stringSliceGoSyntax(gr.resource_names),
                         "using resourceNames requires at least one resource"};
      out.push_back({std::move(e), child(child(resources_location, i), "resourceNames")});
    }
  }
  validateOmitStages(omit_stages, path + ".omitStages", child(location, "omitStages"), out);
  if (!rule.non_resource_urls.empty() && (!rule.resources.empty() || !rule.namespaces.empty())) {
    core::FieldError e{core::FieldErrorType::kInvalid, path + ".nonResourceURLs",
                       go::stringSliceGoSyntax(rule.non_resource_urls),
                       "rules cannot apply to both regular resources and non-resource URLs"};
    out.push_back({std::move(e), urls_location});
  }
}

std::vector<LocatedFieldError> validateRaw(const RawPolicy& policy) {
  std::vector<LocatedFieldError> out;
  validateOmitStages(policy.omit_stages, "omitStages", Path{std::string("omitStages")}, out);
  for (std::size_t i = 0; i < policy.rules.size(); ++i) {
    const auto& raw = policy.rules[i];
    validateRule(raw.rule, raw.level, raw.omit_stages, "rules[" + std::to_string(i) + "]",
                 Path{std::string("rules"), i}, out);
  }
  return out;
}

std::vector<std::string> stageNames(const std::vector<Stage>& stages) {
  std::vector<std::string> names;
  names.reserve(stages.size());
  for (Stage s : stages) names.emplace_back(toString(s));
  return names;
}

std::string prefixed(std::string_view file_name, const std::string& where,
                     const std::string& message) {
  std::string out(file_name);
  if (!where.empty()) out += ":" + where;
  return out + ": " + message;
}

std::vector<Stage> toStages(const std::vector<std::string>& names) {
  std::vector<Stage> stages;
  for (const auto& name : names) {
    if (auto stage = parseStage(name); stage.ok()) stages.push_back(*stage);
  }
  return stages;
}

}  // namespace

core::FieldErrors validatePolicy(const Policy& policy) {
  RawPolicy raw;
  raw.omit_stages = stageNames(policy.omit_stages);
  raw.omit_managed_fields = policy.omit_managed_fields;
  for (const auto& rule : policy.rules) {
    raw.rules.push_back(
        RawRule{std::string(toString(rule.level)), rule, stageNames(rule.omit_stages)});
  }
  core::FieldErrors errors;
  for (auto& located : validateRaw(raw)) errors.push_back(std::move(located.error));
  return errors;
}

core::Result<Policy> parsePolicy(std::string_view text, std::string_view file_name) {
  auto parsed = core::parseYaml(text);
  if (!parsed.ok()) return parsed.error().within(std::string(file_name));
  const json& doc = *parsed;
  // Every error carries the policy's field it is about and its text without the file and
  // position, so that a caller that placed the policy inside another file (a scenario) can
  // locate it there.
  if (doc.is_null()) {
    return core::makeError("empty document, expected an " + std::string(kPolicyApiVersion) + " " +
                               std::string(kPolicyKind),
                           core::ErrorCode::kInvalid)
        .within(std::string(file_name));
  }
  const Locator locator(text);
  const auto located = [&](const LocatedError& error, core::ErrorCode code) {
    return core::Error{prefixed(file_name, locator.value(error.location), error.message), code,
                       error.field, error.text.empty() ? error.message : error.text};
  };
  if (!doc.is_object()) {
    return located(LocatedError{"expected a Policy object, got " + kindOf(doc), {}},
                   core::ErrorCode::kDecode);
  }
  if (auto error = checkTypeMeta(doc)) return located(*error, core::ErrorCode::kInvalid);

  Decoder decoder;
  RawPolicy raw;
  if (auto error = decodePolicy(decoder, doc, raw)) {
    return located(*error, core::ErrorCode::kDecode);
  }

  if (const auto errors = validateRaw(raw); !errors.empty()) {
    // All of them in one message; the field is the first one's, the text what follows it.
    core::Error out = located(fieldLocated(errors.front().error, errors.front().location),
                              core::ErrorCode::kInvalid);
    for (std::size_t i = 1; i < errors.size(); ++i) {
      const std::string next = "; " + prefixed(file_name, locator.value(errors[i].location),
                                               errors[i].error.toString());
      out.message += next;
      out.detail += next;
    }
    return out;
  }
  if (raw.rules.empty()) {
    return core::makeError("loaded illegal policy with 0 rules", core::ErrorCode::kInvalid)
        .within(std::string(file_name));
  }

  Policy policy;
  policy.omit_managed_fields = raw.omit_managed_fields;
  policy.omit_stages = toStages(raw.omit_stages);
  for (auto& r : raw.rules) {
    PolicyRule rule = std::move(r.rule);
    rule.level = *parseLevel(r.level);
    rule.omit_stages = toStages(r.omit_stages);
    policy.rules.push_back(std::move(rule));
  }
  for (const auto& w : decoder.unknown_fields) {
    policy.warnings.push_back(prefixed(file_name, locator.key(w.location), w.message));
  }
  return policy;
}

}  // namespace harness::audit
