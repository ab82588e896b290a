// JSON Patch application with the semantics of evanphx/json-patch v4 (patch.go, errors.go at
// v4.13.0, as vendored in kubernetes/kubernetes vendor/gopkg.in/evanphx/json-patch.v4), and
// decoding with Go encoding/json's error texts (scanner.go, decode.go).

#include "harness/core/json_patch.h"

#include "harness/core/json_patch_decode.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <utility>

#include "harness/core/field_errors.h"
#include "harness/core/json.h"
#include "harness/core/utf8.h"
#include "harness/go/json.h"
#include "harness/go/strconv.h"

namespace harness::core {

namespace {

using json = nlohmann::json;

// An operation whose path (or from) the document does not have: evanphx/json-patch's
// "<op> operation does not apply: ..." (ErrMissing). Code kNotFound, field the pointer.
Error missingPath(const std::string& pointer, std::string message) {
  return Error{std::move(message), ErrorCode::kNotFound, pointer, {}};
}

std::string goUnmarshalTypeError(const json& value, std::string_view go_type) {
  return "json: cannot unmarshal " + go::jsonValueKind(value) + " into Go value of type " +
         std::string(go_type);
}

// ---------------------------------------------------------------------------------------------
// Small Go library behaviours the engine depends on.

// patch.go decodePatchKey: strings.NewReplacer("~1", "/", "~0", "~"); other "~" are kept.
std::string decodePatchKey(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (std::size_t i = 0; i < key.size(); ++i) {
    if (key[i] == '~' && i + 1 < key.size() && (key[i + 1] == '1' || key[i + 1] == '0')) {
      out.push_back(key[i + 1] == '1' ? '/' : '~');
      ++i;
    } else {
      out.push_back(key[i]);
    }
  }
  return out;
}

// Length of Go's json.Marshal output for a node (compact, HTML-escaped strings). It is what v4
// counts against AccumulatedCopySizeLimit. Floats use nlohmann's shortest form, which can differ
// from the producer's text by a character or two.
std::int64_t goEncodedStringSize(const std::string& s) {
  std::int64_t n = 2;
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t') {
        n += 2;
      } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
        n += 6;
      } else {
        n += 1;
      }
      ++i;
      continue;
    }
    std::size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (len == 3 && i + 2 < s.size() && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      n += 6;  // U+2028 / U+2029 are escaped
    } else {
      n += static_cast<std::int64_t>(len);
    }
    i += len;
  }
  return n;
}

std::int64_t goEncodedSize(const json& value) {
  switch (value.type()) {
    case json::value_t::object: {
      std::int64_t n = 2;
      bool first = true;
      for (const auto& [key, member] : value.items()) {
        n += (first ? 0 : 1) + goEncodedStringSize(key) + 1 + goEncodedSize(member);
        first = false;
      }
      return n;
    }
    case json::value_t::array: {
      std::int64_t n = 2;
      for (std::size_t i = 0; i < value.size(); ++i) n += (i ? 1 : 0) + goEncodedSize(value[i]);
      return n;
    }
    case json::value_t::string:
      return goEncodedStringSize(value.get_ref<const std::string&>());
    default:
      return static_cast<std::int64_t>(value.dump().size());
  }
}

// lazyNode.equal (patch.go). Scalars compare as Go compares their raw JSON text, which we model
// as "same JSON type and value", keeping integers and floats apart ("1" differs from "1.0").
// Returns nullopt where v4 dereferences a nil node (a null array element) and panics.
std::optional<bool> lazyEqual(const json& n, const json& o) {
  if (n.is_object()) {
    if (!o.is_object() || n.size() != o.size()) return false;
    for (const auto& [key, v] : n.items()) {
      auto it = o.find(key);
      if (it == o.end()) return false;
      if (v.is_null() != it->is_null()) return false;
      if (v.is_null()) continue;
      auto eq = lazyEqual(v, *it);
      if (!eq || !*eq) return eq;
    }
    return true;
  }
  if (n.is_array()) {
    if (!o.is_array() || n.size() != o.size()) return false;
    for (std::size_t i = 0; i < n.size(); ++i) {
      if (n[i].is_null() || o[i].is_null()) return std::nullopt;
      auto eq = lazyEqual(n[i], o[i]);
      if (!eq || !*eq) return eq;
    }
    return true;
  }
  if (o.is_object() || o.is_array() || o.is_null()) return false;
  const bool n_int = n.is_number_integer();
  const bool o_int = o.is_number_integer();
  if (n.is_number() && o.is_number() && n_int != o_int) return false;
  return n == o;
}

// ---------------------------------------------------------------------------------------------
// The engine.

constexpr std::string_view kMissing = "missing value";
constexpr std::string_view kInvalidIndex = "invalid index referenced";
constexpr std::string_view kTestFailed = "test failed";

std::string invalidIndex(std::int64_t idx) {
  return "Unable to access invalid index: " + std::to_string(idx) + ": " +
         std::string(kInvalidIndex);
}

// Operation.Path()/From(): the member decoded as a Go string.
Result<std::string> operationString(const PatchOperation& op, const char* member,
                                    const std::string& typed, const char* missing_text) {
  if (!op.raw.is_object()) return typed;
  auto it = op.raw.find(member);
  if (it == op.raw.end() || it->is_null()) return Error{std::string(missing_text)};
  if (!it->is_string()) return Error{goUnmarshalTypeError(*it, "string")};
  return it->get<std::string>();
}

Result<std::string> operationPath(const PatchOperation& op) {
  return operationString(op, "path", op.path, "operation missing path field: missing value");
}

Result<std::string> operationFrom(const PatchOperation& op) {
  return operationString(op, "from", op.from, "operation, missing from field: missing value");
}

// op.value(): nullopt when there is no "value" member.
const std::optional<json>& operationValue(const PatchOperation& op) { return op.value; }

class Engine {
 public:
  Engine(json doc, const JsonPatchOptions& options) : root_(std::move(doc)), options_(options) {}

  Result<void> apply(const PatchOperation& op) {
    const std::string& kind = op.op;
    if (kind == "add") return add(op);
    if (kind == "remove") return remove(op);
    if (kind == "replace") return replace(op);
    if (kind == "move") return move(op);
    if (kind == "test") return test(op);
    if (kind == "copy") return copy(op);
    return Error{"Unexpected kind: " + kind};
  }

  // apply() that may move the operation's value into the document instead of copying it.
  Result<void> applyConsuming(PatchOperation& op) {
    consumable_value_ = &op.value;
    auto applied = apply(op);
    consumable_value_ = nullptr;
    return applied;
  }

  json release() { return std::move(root_); }

 private:
  struct Location {
    json* container;
    std::string key;
  };

  // partialArray index handling shared by get/set (replace) and remove.
  Result<std::size_t> existingIndex(const json& array, const std::string& key) {
    auto parsed = go::atoi(key);
    if (!parsed.ok()) return parsed.error();
    std::int64_t idx = *parsed;
    const auto len = static_cast<std::int64_t>(array.size());
    if (idx < 0) {
      if (!options_.support_negative_indices || idx < -len) return Error{invalidIndex(idx)};
      idx += len;
    }
    if (idx >= len) return Error{invalidIndex(idx)};
    return static_cast<std::size_t>(idx);
  }

  // container.get: nullptr for a missing object member or a JSON null (Go's nil *lazyNode).
  Result<const json*> get(const json& container, const std::string& key) {
    if (container.is_object()) {
      auto it = container.find(key);
      if (it == container.end() || it->is_null()) return static_cast<const json*>(nullptr);
      return &*it;
    }
    auto idx = existingIndex(container, key);
    if (!idx.ok()) return idx.error();
    const json& element = container[*idx];
    return element.is_null() ? nullptr : &element;
  }

  // findObject: walks every segment but the last; nullopt when any of them is missing, null,
  // a scalar, or an invalid array index. The text before the first "/" is ignored.
  std::optional<Location> findObject(std::string_view path) {
    std::vector<std::string_view> split;
    std::size_t start = 0;
    while (true) {
      const std::size_t slash = path.find('/', start);
      if (slash == std::string_view::npos) {
        split.push_back(path.substr(start));
        break;
      }
      split.push_back(path.substr(start, slash - start));
      start = slash + 1;
    }
    if (split.size() < 2) return std::nullopt;
    json* doc = &root_;
    for (std::size_t i = 1; i + 1 < split.size(); ++i) {
      auto next = get(*doc, decodePatchKey(split[i]));
      if (!next.ok() || *next == nullptr) return std::nullopt;
      if (!(*next)->is_object() && !(*next)->is_array()) return std::nullopt;
      doc = const_cast<json*>(*next);
    }
    return Location{doc, decodePatchKey(split.back())};
  }

  // container.add
  Result<void> containerAdd(json& container, const std::string& key, json value) {
    if (container.is_object()) {
      container[key] = std::move(value);
      return {};
    }
    if (key == "-") {
      container.push_back(std::move(value));
      return {};
    }
    auto parsed = go::atoi(key);
    if (!parsed.ok()) {
      return Error{"value was not a proper array index: '" + key + "': " + parsed.error().message};
    }
    std::int64_t idx = *parsed;
    const auto size = static_cast<std::int64_t>(container.size()) + 1;
    if (idx >= size) return Error{invalidIndex(idx)};
    if (idx < 0) {
      if (!options_.support_negative_indices || idx < -size) return Error{invalidIndex(idx)};
      idx += size;
    }
    container.insert(container.begin() + idx, std::move(value));
    return {};
  }

  // container.remove
  Result<void> containerRemove(json& container, const std::string& key) {
    if (container.is_object()) {
      auto it = container.find(key);
      if (it == container.end()) {
        return Error{"Unable to remove nonexistent key: " + key + ": " + std::string(kMissing)};
      }
      container.erase(it);
      return {};
    }
    auto idx = existingIndex(container, key);
    if (!idx.ok()) return idx.error();
    container.erase(container.begin() + static_cast<std::ptrdiff_t>(*idx));
    return {};
  }

  json valueOrNull(const PatchOperation& op) {
    if (consumable_value_ != nullptr && *consumable_value_) return std::move(**consumable_value_);
    const auto& value = operationValue(op);
    return value ? *value : json(nullptr);
  }

  Result<void> add(const PatchOperation& op) {
    auto path = operationPath(op);
    if (!path.ok()) return Error{"add operation failed to decode path: missing value"};
    auto loc = findObject(*path);
    if (!loc) {
      return missingPath(*path,
          "add operation does not apply: doc is missing path: \"" + *path + "\": missing value");
    }
    auto added = containerAdd(*loc->container, loc->key, valueOrNull(op));
    if (!added.ok())
      return Error{"error in add for path: '" + *path + "': " + added.error().message};
    return {};
  }

  Result<void> remove(const PatchOperation& op) {
    auto path = operationPath(op);
    if (!path.ok()) return Error{"remove operation failed to decode path: missing value"};
    auto loc = findObject(*path);
    if (!loc) {
      return missingPath(*path,
          "remove operation does not apply: doc is missing path: \"" + *path + "\": missing value");
    }
    auto removed = containerRemove(*loc->container, loc->key);
    if (!removed.ok()) {
      return Error{"error in remove for path: '" + *path + "': " + removed.error().message};
    }
    return {};
  }

  Result<void> replace(const PatchOperation& op) {
    auto path = operationPath(op);
    if (!path.ok())
      return Error{"replace operation failed to decode path: " + path.error().message};
    if (path->empty()) {
      const auto& value = operationValue(op);
      if (!value) {
        // v4 dereferences the nil value node here and panics.
        return Error{
            "replace operation at the document root without a value (evanphx/json-patch "
            "v4 panics: nil pointer dereference)"};
      }
      if (!value->is_object() && !value->is_array()) {
        // v4 wraps a nil error here, which Go prints as %!w(<nil>).
        return Error{"replace operation value must be object or array: %!w(<nil>)"};
      }
      root_ = *value;
      return {};
    }
    auto loc = findObject(*path);
    if (!loc) {
      return missingPath(*path,
          "replace operation does not apply: doc is missing path: " + *path + ": missing value");
    }
    json& container = *loc->container;
    if (container.is_object()) {
      // partialDoc.get never fails, so a missing member is simply added.
      container[loc->key] = valueOrNull(op);
      return {};
    }
    auto idx = existingIndex(container, loc->key);
    if (!idx.ok()) {
      return missingPath(*path,
          "replace operation does not apply: doc is missing key: " + *path + ": missing value");
    }
    container[*idx] = valueOrNull(op);
    return {};
  }

  Result<void> move(const PatchOperation& op) {
    auto from = operationFrom(op);
    if (!from.ok()) return Error{"move operation failed to decode from: " + from.error().message};
    auto loc = findObject(*from);
    if (!loc) {
      return missingPath(*from,
          "move operation does not apply: doc is missing from path: " + *from + ": missing value");
    }
    json value;
    {
      json& container = *loc->container;
      auto got = get(container, loc->key);
      if (!got.ok()) {
        return Error{"error in move for path: '" + loc->key + "': " + got.error().message};
      }
      if (*got != nullptr) value = std::move(*const_cast<json*>(*got));
      auto removed = containerRemove(container, loc->key);
      if (!removed.ok()) {
        return Error{"error in move for path: '" + loc->key + "': " + removed.error().message};
      }
    }
    auto path = operationPath(op);
    if (!path.ok()) return Error{"move operation failed to decode path: " + path.error().message};
    auto dest = findObject(*path);
    if (!dest) {
      return missingPath(*path,
          "move operation does not apply: doc is missing destination path: " + *path +
              ": missing value");
    }
    auto added = containerAdd(*dest->container, dest->key, std::move(value));
    if (!added.ok()) {
      return Error{"error in move for path: '" + *path + "': " + added.error().message};
    }
    return {};
  }

  Result<void> test(const PatchOperation& op) {
    auto path = operationPath(op);
    if (!path.ok()) return Error{"test operation failed to decode path: " + path.error().message};
    const auto& value = operationValue(op);
    const std::string failed = "testing value " + *path + " failed: " + std::string(kTestFailed);
    if (path->empty()) {
      if (!value) {
        return Error{
            "test operation at the document root without a value (evanphx/json-patch v4 "
            "panics: nil pointer dereference)"};
      }
      auto eq = lazyEqual(root_, *value);
      if (!eq) return nilElementPanic("test");
      if (*eq) return {};
      return Error{failed};
    }
    auto loc = findObject(*path);
    if (!loc) {
      return missingPath(
          *path, "test operation does not apply: is missing path: " + *path + ": missing value");
    }
    auto got = get(*loc->container, loc->key);
    if (!got.ok()) return Error{"error in test for path: '" + *path + "': " + got.error().message};
    if (*got == nullptr) {
      if (!value || value->is_null()) return {};
      return Error{failed};
    }
    if (!value) return Error{failed};
    auto eq = lazyEqual(**got, *value);
    if (!eq) return nilElementPanic("test");
    if (*eq) return {};
    return Error{failed};
  }

  Result<void> copy(const PatchOperation& op) {
    auto from = operationFrom(op);
    if (!from.ok()) return Error{"copy operation failed to decode from: " + from.error().message};
    auto loc = findObject(*from);
    if (!loc) {
      return missingPath(*from,
          "copy operation does not apply: doc is missing from path: " + *from + ": missing value");
    }
    auto got = get(*loc->container, loc->key);
    if (!got.ok()) return Error{"error in copy for from: '" + *from + "': " + got.error().message};
    json value = *got == nullptr ? json(nullptr) : **got;
    const std::int64_t size = *got == nullptr ? 0 : goEncodedSize(value);

    auto path = operationPath(op);
    if (!path.ok()) return Error{"copy operation failed to decode path: missing value"};
    auto dest = findObject(*path);
    if (!dest) {
      return missingPath(*path,
          "copy operation does not apply: doc is missing destination path: " + *path +
              ": missing value");
    }
    accumulated_copy_size_ += size;
    if (options_.accumulated_copy_size_limit > 0 &&
        accumulated_copy_size_ > options_.accumulated_copy_size_limit) {
      return Error{"Unable to complete the copy, the accumulated size increase of copy is " +
                   std::to_string(accumulated_copy_size_) + ", exceeding the limit " +
                   std::to_string(options_.accumulated_copy_size_limit)};
    }
    auto added = containerAdd(*dest->container, dest->key, std::move(value));
    if (!added.ok()) {
      return Error{"error while adding value during copy: " + added.error().message};
    }
    return {};
  }

  static Error nilElementPanic(const char* op) {
    return Error{std::string(op) +
                 " operation compares an array holding null (evanphx/json-patch v4 panics: nil "
                 "pointer dereference)"};
  }

  json root_;
  const JsonPatchOptions& options_;
  // The value of the operation applyConsuming() is applying, which may be moved from.
  std::optional<json>* consumable_value_ = nullptr;
  std::int64_t accumulated_copy_size_ = 0;
};

json opObject(std::string_view op, const std::string& path) {
  return json{{"op", op}, {"path", path}};
}

}  // namespace

PatchOperation PatchOperation::add(std::string path, json value) {
  return PatchOperation{"add", std::move(path), "", std::move(value), nullptr};
}
PatchOperation PatchOperation::remove(std::string path) {
  return PatchOperation{"remove", std::move(path), "", std::nullopt, nullptr};
}
PatchOperation PatchOperation::replace(std::string path, json value) {
  return PatchOperation{"replace", std::move(path), "", std::move(value), nullptr};
}
PatchOperation PatchOperation::move(std::string from, std::string path) {
  return PatchOperation{"move", std::move(path), std::move(from), std::nullopt, nullptr};
}
PatchOperation PatchOperation::copy(std::string from, std::string path) {
  return PatchOperation{"copy", std::move(path), std::move(from), std::nullopt, nullptr};
}
PatchOperation PatchOperation::test(std::string path, json value) {
  return PatchOperation{"test", std::move(path), "", std::move(value), nullptr};
}

Result<JsonPatch> decodePatch(std::string_view text) {
  if (std::string syntax = go::jsonSyntaxError(text); !syntax.empty()) return Error{syntax};
  // Go replaces invalid UTF-8 with U+FFFD when decoding; nlohmann rejects it. Do as Go does.
  auto decoded = parseJson(replaceInvalidUtf8(text));
  if (!decoded) {
    // Only reachable for input Go accepts but nlohmann does not (lone UTF-16 surrogates).
    return Error{"undecodable JSON: " + decoded.error().message};
  }
  return decodeParsedPatch(std::move(*decoded));
}

Result<JsonPatch> decodeParsedPatch(json parsed) {
  if (parsed.is_null()) return JsonPatch{};
  if (!parsed.is_array()) return Error{goUnmarshalTypeError(parsed, "jsonpatch.Patch")};
  // Go keeps decoding after a type error and reports the first one.
  for (const json& element : parsed) {
    if (!element.is_object() && !element.is_null()) {
      return Error{goUnmarshalTypeError(element, "jsonpatch.Operation")};
    }
  }
  JsonPatch patch;
  patch.reserve(parsed.size());
  for (json& element : parsed) {
    PatchOperation op;
    op.op = "unknown";
    if (element.is_object()) {
      if (auto it = element.find("op"); it != element.end() && it->is_string()) {
        op.op = it->get<std::string>();
      }
      if (auto it = element.find("path"); it != element.end() && it->is_string()) {
        op.path = it->get<std::string>();
      }
      if (auto it = element.find("from"); it != element.end() && it->is_string()) {
        op.from = it->get<std::string>();
      }
      if (auto it = element.find("value"); it != element.end()) op.value = *it;
    }
    op.raw = std::move(element);
    patch.push_back(std::move(op));
  }
  return patch;
}

namespace {

// ApplyIndent unmarshals a document not starting with '[' into a partialDoc.
std::optional<Error> undecodableDocument(const json& doc) {
  if (doc.is_object() || doc.is_array()) return std::nullopt;
  if (doc.is_null()) return Error{"cannot apply a JSON patch to a null document"};
  return Error{goUnmarshalTypeError(doc, "jsonpatch.partialDoc")};
}

}  // namespace

Result<json> applyPatch(const json& doc, const JsonPatch& patch, const JsonPatchOptions& options) {
  if (auto error = undecodableDocument(doc)) return *error;
  try {
    Engine engine(doc, options);
    for (const PatchOperation& op : patch) {
      auto applied = engine.apply(op);
      if (!applied.ok()) return applied.error();
    }
    return engine.release();
  } catch (const std::exception& e) {
    return Error{std::string("applying JSON patch: ") + e.what()};
  }
}

Result<json> applyPatch(json&& doc, JsonPatch&& patch, const JsonPatchOptions& options) {
  if (auto error = undecodableDocument(doc)) return *error;
  try {
    Engine engine(std::move(doc), options);
    for (PatchOperation& op : patch) {
      auto applied = engine.applyConsuming(op);
      if (!applied.ok()) return applied.error();
    }
    return engine.release();
  } catch (const std::exception& e) {
    return Error{std::string("applying JSON patch: ") + e.what()};
  }
}

json encodePatch(const JsonPatch& patch) {
  json out = json::array();
  for (const PatchOperation& op : patch) {
    if (op.raw.is_object()) {
      out.push_back(op.raw);
      continue;
    }
    if (op.op == "unknown" && op.path.empty() && op.from.empty() && !op.value) {
      out.push_back(nullptr);  // a decoded `null` element
      continue;
    }
    json encoded = opObject(op.op, op.path);
    if (op.op == "move" || op.op == "copy") encoded["from"] = op.from;
    if (op.value) encoded["value"] = *op.value;
    out.push_back(std::move(encoded));
  }
  return out;
}

}  // namespace harness::core
