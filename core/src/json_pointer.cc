#include "harness/core/json_pointer.h"

#include "harness/core/field_errors.h"
#include "harness/go/strconv.h"

namespace harness::core {

namespace {

std::string typeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    default:
      return "an invalid value";
  }
}

std::string pointerPrefix(const std::vector<std::string>& tokens, std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) {
    out.push_back('/');
    out += escapePointerToken(tokens[i]);
  }
  return out;
}

// Shared by the const and non-const overloads.
template <class Json>
Result<Json*> resolveImpl(Json& doc, const JsonPointer& pointer) {
  const auto& tokens = pointer.tokens();
  Json* current = &doc;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    auto fail = [&](const std::string& why) {
      return Error{"json pointer " + go::quote(pointer.toString()) + ": " + why};
    };
    const std::string at = go::quote(pointerPrefix(tokens, i));
    if (current->is_object()) {
      auto it = current->find(token);
      if (it == current->end()) {
        return fail("key " + go::quote(token) + " not found in the object at " + at);
      }
      current = &*it;
    } else if (current->is_array()) {
      if (token == JsonPointer::kAppendToken) {
        return fail(
            "\"-\" refers to the nonexistent element after the last element of the array at " + at);
      }
      auto index = parseArrayIndex(token);
      if (!index.ok()) return fail(index.error().message + " for the array at " + at);
      if (*index >= current->size()) {
        return fail("index " + std::to_string(*index) + " is out of range for the array at " + at +
                    " (size " + std::to_string(current->size()) + ")");
      }
      current = &(*current)[*index];
    } else {
      return fail("the value at " + at + " is " + typeName(*current) +
                  ", not an object or an array, so it has no member " + go::quote(token));
    }
  }
  return current;
}

}  // namespace

std::string escapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

Result<std::string> unescapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] != '~') {
      out.push_back(token[i]);
      continue;
    }
    if (i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out.push_back(token[i + 1] == '0' ? '~' : '/');
      ++i;
      continue;
    }
    return Error{"invalid escape in reference token " + go::quote(token) +
                 ": \"~\" must be followed by \"0\" or \"1\""};
  }
  return out;
}

Result<std::size_t> parseArrayIndex(std::string_view token) {
  auto invalid = [&] { return Error{"invalid array index " + go::quote(token)}; };
  if (token.empty()) return invalid();
  if (token.size() > 1 && token[0] == '0') return invalid();
  std::size_t value = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return invalid();
    const auto digit = static_cast<std::size_t>(c - '0');
    if (value > (static_cast<std::size_t>(-1) - digit) / 10) return invalid();
    value = value * 10 + digit;
  }
  return value;
}

Result<JsonPointer> JsonPointer::parse(std::string_view text) {
  if (text.empty()) return JsonPointer{};
  if (text[0] != '/') {
    return Error{"invalid json pointer " + go::quote(text) +
                 ": it must be empty or start with \"/\""};
  }
  std::vector<std::string> tokens;
  std::size_t start = 1;
  while (true) {
    const std::size_t slash = text.find('/', start);
    const std::string_view raw = text.substr(
        start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    auto token = unescapePointerToken(raw);
    if (!token.ok())
      return Error{"invalid json pointer " + go::quote(text) + ": " + token.error().message};
    tokens.push_back(std::move(*token));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return JsonPointer{std::move(tokens)};
}

JsonPointer JsonPointer::fromTokens(std::vector<std::string> tokens) {
  return JsonPointer{std::move(tokens)};
}

std::string_view JsonPointer::back() const {
  return tokens_.empty() ? std::string_view{} : std::string_view{tokens_.back()};
}

std::string JsonPointer::toString() const { return pointerPrefix(tokens_, tokens_.size()); }

JsonPointer JsonPointer::child(std::string_view token) const {
  auto tokens = tokens_;
  tokens.emplace_back(token);
  return JsonPointer{std::move(tokens)};
}

JsonPointer JsonPointer::child(std::size_t index) const { return child(std::to_string(index)); }

JsonPointer JsonPointer::parent() const {
  if (tokens_.empty()) return *this;
  return JsonPointer{std::vector<std::string>(tokens_.begin(), tokens_.end() - 1)};
}

bool JsonPointer::isPrefixOf(const JsonPointer& other) const {
  if (tokens_.size() > other.tokens_.size()) return false;
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    if (tokens_[i] != other.tokens_[i]) return false;
  }
  return true;
}

Result<const nlohmann::json*> resolvePointer(const nlohmann::json& doc,
                                             const JsonPointer& pointer) {
  return resolveImpl<const nlohmann::json>(doc, pointer);
}

Result<nlohmann::json*> resolvePointer(nlohmann::json& doc, const JsonPointer& pointer) {
  return resolveImpl<nlohmann::json>(doc, pointer);
}

Result<const nlohmann::json*> resolvePointer(const nlohmann::json& doc, std::string_view pointer) {
  auto parsed = JsonPointer::parse(pointer);
  if (!parsed.ok()) return parsed.error();
  return resolvePointer(doc, *parsed);
}

}  // namespace harness::core
