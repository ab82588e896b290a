// Mutation chains from audit annotations. The key and value formats read here are those written
// by kubernetes/apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go (webhookAnnotator:
// mutation/patch/failed-open keys "<prefix>round_<r>_index_<i>", MutationAuditAnnotation and
// PatchAuditAnnotation values) and validating/dispatcher.go (failed-open.validating keys); see
// docs/admission-chain.md §7.1.

#include "harness/audit/chain.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <initializer_list>
#include <map>
#include <set>
#include <utility>

#include "harness/core/json.h"
#include "harness/core/json_patch.h"
#include "harness/core/json_patch_decode.h"
#include "harness/core/json_pointer.h"
#include "harness/core/json_simdjson.h"
#include "deferred_object.h"

namespace harness::audit {
namespace {

using nlohmann::json;

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// "round_<r>_index_<i>" -> {r, i}.
std::optional<std::pair<int, std::size_t>> parseRoundIndex(std::string_view suffix) {
  auto number = [](std::string_view& s) -> std::optional<std::size_t> {
    std::size_t value = 0;
    std::size_t n = 0;
    while (n < s.size() && s[n] >= '0' && s[n] <= '9' && n < 9) {
      value = value * 10 + static_cast<std::size_t>(s[n] - '0');
      ++n;
    }
    if (n == 0) return std::nullopt;
    s.remove_prefix(n);
    return value;
  };
  if (!startsWith(suffix, "round_")) return std::nullopt;
  suffix.remove_prefix(6);
  const auto round = number(suffix);
  if (!round || !startsWith(suffix, "_index_")) return std::nullopt;
  suffix.remove_prefix(7);
  const auto index = number(suffix);
  if (!index || !suffix.empty()) return std::nullopt;
  return std::make_pair(static_cast<int>(*round), *index);
}

bool isStepKey(std::string_view key) {
  return startsWith(key, kMutationAnnotationPrefix) || startsWith(key, kPatchAnnotationPrefix) ||
         startsWith(key, kMutationFailedOpenAnnotationPrefix);
}

bool isAdmissionKey(std::string_view key) {
  return isStepKey(key) || startsWith(key, kValidatingFailedOpenAnnotationPrefix);
}

std::optional<json> parseObject(std::string_view text) {
  auto value = core::parseJson(text);
  if (value && value->is_object()) return std::move(*value);
  return std::nullopt;
}

std::string stringOf(const json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The member `key` of a simdjson object as parseJson reads it (the last of repeated keys).
std::optional<simdjson::dom::element> lastMember(simdjson::dom::element object,
                                                 std::string_view key) {
  std::optional<simdjson::dom::element> out;
  if (!object.is_object()) return out;
  for (const auto field : simdjson::dom::object(object)) {
    if (field.key == key) out = field.value;
  }
  return out;
}

std::string stepLabel(const MutationStep& step) {
  return "round " + std::to_string(step.round) + " index " + std::to_string(step.index);
}

// chainOf, with the event's objects given apart (ChainReader reads them as json).
MutationChain chainWith(const Event& event, std::optional<json> request_object,
                        std::optional<json> response_object,
                        std::shared_ptr<const DeferredObject> deferred_response = nullptr) {
  MutationChain chain;
  chain.audit_id = event.audit_id;
  chain.verb = event.verb;
  chain.level = event.level;
  chain.stage = event.stage;
  chain.user = event.user.username;
  chain.received = event.request_received_timestamp;
  chain.completed = event.stage_timestamp;
  chain.outcome = outcomeOf(event);
  if (event.object_ref) {
    const ObjectReference& ref = *event.object_ref;
    chain.resource = ref.resource;
    chain.namespace_name = ref.namespace_name;
    chain.name = ref.name;
    chain.api_group = ref.api_group;
    chain.api_version = ref.api_version;
    chain.subresource = ref.subresource;
  }
  chain.request_object = std::move(request_object);
  chain.response_object = std::move(response_object);
  chain.deferred_response = std::move(deferred_response);
  if (chain.name.empty() && chain.response_object && chain.response_object->is_object()) {
    const auto metadata = chain.response_object->find("metadata");
    if (metadata != chain.response_object->end() && metadata->is_object()) {
      chain.name = stringOf(*metadata, "name");
    }
  }
  if (chain.name.empty() && chain.deferred_response) {
    // As above: parseJson keeps the last of repeated keys.
    const auto metadata = lastMember(chain.deferred_response->value, "metadata");
    if (metadata && metadata->is_object()) {
      if (const auto name = lastMember(*metadata, "name"); name && name->is_string()) {
        chain.name = std::string(std::string_view(*name));
      }
    }
  }

  std::map<std::pair<int, std::size_t>, MutationStep> steps;
  auto stepAt = [&](std::pair<int, std::size_t> at) -> MutationStep& {
    MutationStep& step = steps[at];
    step.round = at.first;
    step.index = at.second;
    return step;
  };
  for (const auto& [key, value] : event.annotations) {
    if (startsWith(key, "authorization.k8s.io/")) continue;
    if (!isStepKey(key)) {
      chain.webhook_annotations.emplace_back(key, value);
      continue;
    }
    std::string_view prefix;
    if (startsWith(key, kMutationFailedOpenAnnotationPrefix)) {
      prefix = kMutationFailedOpenAnnotationPrefix;
    } else if (startsWith(key, kMutationAnnotationPrefix)) {
      prefix = kMutationAnnotationPrefix;
    } else {
      prefix = kPatchAnnotationPrefix;
    }
    const auto at = parseRoundIndex(std::string_view(key).substr(prefix.size()));
    if (!at) {
      chain.problems.push_back(key + ": key does not end in round_<r>_index_<i>");
      continue;
    }
    if (prefix == kMutationFailedOpenAnnotationPrefix) {
      MutationStep& step = stepAt(*at);
      step.failed_open = true;
      if (step.webhook.empty()) step.webhook = value;
      continue;
    }
    auto parsed = parseObject(value);
    if (!parsed) {
      chain.problems.push_back(
          std::string(key).append(": value is not a JSON object: ").append(value));
      continue;
    }
    MutationStep& step = stepAt(*at);
    const std::string configuration = stringOf(*parsed, "configuration");
    const std::string webhook = stringOf(*parsed, "webhook");
    if (prefix == kMutationAnnotationPrefix) {
      step.configuration = configuration;
      step.webhook = webhook;
      const auto mutated = parsed->find("mutated");
      if (mutated != parsed->end() && mutated->is_boolean()) {
        step.mutated = mutated->get<bool>();
      } else {
        chain.problems.push_back(
            std::string(key).append(": no boolean \"mutated\" in ").append(value));
      }
    } else {
      if (step.configuration.empty()) step.configuration = configuration;
      if (step.webhook.empty()) step.webhook = webhook;
      const auto patch = parsed->find("patch");
      if (patch != parsed->end()) {
        step.patch = std::move(*patch);
      } else {
        chain.problems.push_back(std::string(key).append(": no \"patch\" in ").append(value));
      }
    }
  }
  for (auto& [at, step] : steps) chain.steps.push_back(std::move(step));
  return chain;
}

}  // namespace

MutationChain chainOf(EventObjectsApart read) {
  return chainWith(read.event, std::move(read.request_object), std::move(read.response_object),
                   std::move(read.deferred_response));
}

std::optional<json> responseObjectOf(const MutationChain& chain) {
  if (chain.deferred_response) return chain.deferred_response->tree();
  return chain.response_object;
}

MutationChain chainOf(const Event& event) {
  std::optional<json> request_object;
  std::optional<json> response_object;
  if (event.request_object) request_object = json(*event.request_object);
  if (event.response_object) response_object = json(*event.response_object);
  return chainWith(event, std::move(request_object), std::move(response_object));
}

namespace {

// Removes the member at `pointer` if it is there.
void erasePointer(json& doc, const std::string& pointer) {
  const auto parsed = core::JsonPointer::parse(pointer);
  if (!parsed.ok() || parsed->isRoot()) return;
  json* node = &doc;
  const auto& tokens = parsed->tokens();
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (node->is_object()) {
      const auto it = node->find(tokens[i]);
      if (it == node->end()) return;
      node = &*it;
    } else if (node->is_array()) {
      const auto index = core::parseArrayIndex(tokens[i]);
      if (!index.ok() || *index >= node->size()) return;
      node = &(*node)[*index];
    } else {
      return;
    }
  }
  if (node->is_object()) {
    node->erase(tokens.back());
  } else if (node->is_array()) {
    const auto index = core::parseArrayIndex(tokens.back());
    if (index.ok() && *index < node->size()) node->erase(*index);
  }
}

bool hasPointer(const json& doc, const std::string& pointer) {
  const auto parsed = core::JsonPointer::parse(pointer);
  if (!parsed.ok()) return false;
  const json* node = &doc;
  for (const auto& token : parsed->tokens()) {
    if (!node->is_object()) return false;
    const auto it = node->find(token);
    if (it == node->end()) return false;
    node = &*it;
  }
  return true;
}

struct Difference {
  std::string pointer;
  std::string detail;
};

// A response value as the replay reads it: a nlohmann::json (`const json*`), or a simdjson element
// (a deferred responseObject). The overloads below read both as the json the same text parses
// into (core::parseJson: objects in key order, the last of repeated keys; non-negative integers
// unsigned), so the replay says the same of either.
using Element = simdjson::dom::element;

template <class R>
using Members = std::vector<std::pair<std::string_view, R>>;

bool isObject(const json* v) { return v->is_object(); }
bool isObject(Element v) { return v.is_object(); }
bool isArray(const json* v) { return v->is_array(); }
bool isArray(Element v) { return v.is_array(); }

json toJson(const json* v) { return *v; }
json toJson(Element v) {
  json out;
  core::copyFromSimdjson(v, out);
  return out;
}

// The members of an object in key order.
void membersOf(const json* object, Members<const json*>& out) {
  out.clear();
  for (const auto& [key, value] : object->items()) out.emplace_back(key, &value);
}
void membersOf(Element object, Members<Element>& out) {
  out.clear();
  for (const auto field : simdjson::dom::object(object)) out.emplace_back(field.key, field.value);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Of repeated keys, the last.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i + 1 < out.size() && out[i + 1].first == out[i].first) continue;
    out[kept++] = out[i];
  }
  out.resize(kept);
}

template <class R>
std::optional<R> findMember(const Members<R>& members, std::string_view key) {
  const auto it = std::lower_bound(members.begin(), members.end(), key,
                                   [](const auto& member, std::string_view k) {
                                     return member.first < k;
                                   });
  if (it == members.end() || it->first != key) return std::nullopt;
  return it->second;
}

std::optional<const json*> member(const json* object, std::string_view key) {
  if (!object->is_object()) return std::nullopt;
  const auto it = object->find(key);
  if (it == object->end()) return std::nullopt;
  return &*it;
}
std::optional<Element> member(Element object, std::string_view key) {
  return lastMember(object, key);
}

std::vector<const json*> elementsOf(const json* array) {
  std::vector<const json*> out;
  for (const auto& element : *array) out.push_back(&element);
  return out;
}
std::vector<Element> elementsOf(Element array) {
  std::vector<Element> out;
  for (const auto element : simdjson::dom::array(array)) out.push_back(element);
  return out;
}

// `replayed == response`.
bool equal(const json& replayed, const json* response) { return replayed == *response; }
bool equal(const json& replayed, Element response);

// True when the objects are equal member by member in the response's order, each key once
// (most objects: no sorting of the response's members needed); false also when that cannot be
// told this way (repeated keys: the last counts).
bool equalWithoutSorting(const json& replayed, Element response) {
  constexpr std::size_t kMostMembers = 32;
  std::array<const json*, kMostMembers> matched{};
  std::size_t count = 0;
  for (const auto field : simdjson::dom::object(response)) {
    if (count == kMostMembers || count == replayed.size()) return false;
    const auto it = replayed.find(field.key);
    if (it == replayed.end() || !equal(*it, field.value)) return false;
    matched[count++] = &*it;
  }
  if (count != replayed.size()) return false;
  // Each member of `replayed` matched once: no key was repeated.
  std::sort(matched.begin(), matched.begin() + static_cast<std::ptrdiff_t>(count));
  return std::adjacent_find(matched.begin(), matched.begin() + static_cast<std::ptrdiff_t>(count)) ==
         matched.begin() + static_cast<std::ptrdiff_t>(count);
}

bool equal(const json& replayed, Element response) {
  switch (response.type()) {
    case simdjson::dom::element_type::OBJECT: {
      if (!replayed.is_object()) return false;
      if (equalWithoutSorting(replayed, response)) return true;
      // Repeated keys, or a difference: as the json of the same text (sorted, the last of
      // repeated keys) says.
      Members<Element> members;
      membersOf(response, members);
      if (members.size() != replayed.size()) return false;
      auto a = replayed.items().begin();
      for (const auto& [key, value] : members) {
        if (std::string_view(a.key()) != key || !equal(a.value(), value)) return false;
        ++a;
      }
      return true;
    }
    case simdjson::dom::element_type::ARRAY: {
      if (!replayed.is_array()) return false;
      std::size_t i = 0;
      for (const auto element : simdjson::dom::array(response)) {
        if (i >= replayed.size() || !equal(replayed[i], element)) return false;
        ++i;
      }
      return i == replayed.size();
    }
    case simdjson::dom::element_type::STRING:
      return replayed.is_string() &&
             replayed.get_ref<const std::string&>() == std::string_view(response);
    default:
      return replayed == toJson(response);  // numbers compare as nlohmann's do
  }
}

// What Go decodes a JSON null into a typed field as, encoded again: {}, [], "", 0 or false.
bool isZeroValue(const json& value) {
  return (value.is_object() || value.is_array()) ? value.empty()
         : value.is_string()                     ? value.get_ref<const std::string&>().empty()
         : value.is_boolean()                    ? !value.get<bool>()
         : value.is_number()                     ? value == 0
                                                 : value.is_null();
}
bool isZeroValue(const json* value) { return isZeroValue(*value); }
bool isZeroValue(Element value) {
  if (value.is_object()) return simdjson::dom::object(value).size() == 0;
  if (value.is_array()) return simdjson::dom::array(value).size() == 0;
  if (value.is_string()) return std::string_view(value).empty();
  return isZeroValue(toJson(value));
}

// The ignored pointers that continue below one member: their tokens, and how many of them the
// path to the member used.
struct Ignored {
  std::vector<const std::vector<std::string>*> paths;
  std::size_t depth = 0;

  // The paths through member `key`; `ends` when one of them ends there (the member is ignored).
  [[nodiscard]] Ignored below(std::string_view key, bool& ends) const {
    Ignored out;
    out.depth = depth + 1;
    ends = false;
    for (const auto* path : paths) {
      if ((*path)[depth] != key) continue;
      if (path->size() == out.depth) {
        ends = true;
      } else {
        out.paths.push_back(path);
      }
    }
    return out;
  }
};

// The first difference between the two documents with the members at `ignored` left out of
// both, as if erased (see replayChain: it is used only when no ignored pointer goes through an
// array or a scalar, where erasing would mean something else).
template <class R>
std::optional<Difference> firstDifference(const json& replayed, R response,
                                          const std::string& pointer, bool ignore_response_only,
                                          const Ignored& ignored) {
  if (replayed.is_object() && isObject(response)) {
    // Both members in key order: one merge, and a pointer built only for members that differ
    // (`apiserver-sim audit` replays every chain).
    Members<R> theirs;
    membersOf(response, theirs);
    auto a = replayed.items().begin();
    const auto a_end = replayed.items().end();
    auto b = theirs.begin();
    const auto b_end = theirs.end();
    auto at = [&pointer](std::string_view key) {
      return pointer + "/" + core::escapePointerToken(std::string(key));
    };
    // Members below which an ignored pointer goes, or where one ends.
    const auto concerned = [&ignored](std::string_view key) {
      return std::any_of(ignored.paths.begin(), ignored.paths.end(),
                         [&](const auto* path) { return (*path)[ignored.depth] == key; });
    };
    const auto skipped = [&](std::string_view key) {
      bool ends = false;
      if (concerned(key)) (void)ignored.below(key, ends);
      return ends;
    };
    while (a != a_end || b != b_end) {
      if (a != a_end && skipped(a.key())) {
        ++a;
        continue;
      }
      if (b != b_end && skipped(b->first)) {
        ++b;
        continue;
      }
      if (b == b_end || (a != a_end && std::string_view(a.key()) < b->first)) {
        // A zero value (or null) the patch wrote is decoded into the typed object, and an
        // omitempty field then leaves it out when encoded (encoding/json): the webhook's
        // `initialDelaySeconds: 0` is not in the response.
        if (isZeroValue(a.value())) {
          ++a;
          continue;
        }
        return Difference{at(a.key()), "missing in the response"};
      }
      if (a == a_end || b->first < std::string_view(a.key())) {
        if (!ignore_response_only) return Difference{at(b->first), "missing in the replay"};
        ++b;
        continue;
      }
      if (!equal(a.value(), b->second)) {
        bool ends = false;
        const Ignored inner = concerned(a.key()) ? ignored.below(a.key(), ends)
                                                 : Ignored{{}, ignored.depth + 1};
        if (auto d = firstDifference(a.value(), b->second, at(a.key()), ignore_response_only,
                                     inner)) {
          return d;
        }
      }
      ++a;
      ++b;
    }
    return std::nullopt;
  }
  if (replayed.is_array() && isArray(response)) {
    const auto theirs = elementsOf(response);
    const std::size_t common = std::min(replayed.size(), theirs.size());
    for (std::size_t i = 0; i < common; ++i) {
      if (equal(replayed[i], theirs[i])) continue;
      if (auto d = firstDifference(replayed[i], theirs[i], pointer + "/" + std::to_string(i),
                                   ignore_response_only, Ignored{})) {
        return d;
      }
    }
    if (replayed.size() > common) {
      return Difference{pointer + "/" + std::to_string(common), "missing in the response"};
    }
    if (theirs.size() > common) {
      return Difference{pointer + "/" + std::to_string(common), "missing in the replay"};
    }
    return std::nullopt;
  }
  if (equal(replayed, response)) return std::nullopt;
  // The same for a field that is not omitempty: a null comes back as the zero value ({} for a
  // struct such as resources: null in a container the webhook added).
  if (replayed.is_null() && isZeroValue(response)) return std::nullopt;
  return Difference{pointer,
                    "replayed " + replayed.dump() + ", response " + toJson(response).dump()};
}

std::string quoted(const std::string& s) { return json(s).dump(); }

std::string describe(const std::optional<json>& patch) {
  return patch ? patch->dump() : std::string("none");
}

}  // namespace

namespace {

// The verbs admission sees (pkg/endpoints/handlers: create, update, patch, delete and
// deletecollection; connect has no object to mutate).
bool isWriteVerb(std::string_view verb) {
  return verb == "create" || verb == "update" || verb == "patch" || verb == "delete" ||
         verb == "deletecollection";
}

bool failedWrite(const Event& event) {
  return isWriteVerb(event.verb) && event.response_status &&
         (event.response_status->code < 200 || event.response_status->code >= 300);
}

}  // namespace

bool ChainBuilder::keeps(const Event& event) {
  if (event.stage != Stage::kResponseComplete) return false;
  const bool admission = std::any_of(event.annotations.begin(), event.annotations.end(),
                                     [](const auto& kv) { return isAdmissionKey(kv.first); });
  if (!admission && !keep_all_ && !failedWrite(event)) return false;
  return seen_.insert(event.audit_id).second;
}

std::optional<MutationChain> ChainBuilder::add(const Event& event) {
  if (!keeps(event)) return std::nullopt;
  return chainOf(event);
}

std::vector<MutationChain> reconstructChains(const std::vector<Event>& events, bool keep_all) {
  std::vector<MutationChain> chains;
  ChainBuilder builder(keep_all);
  for (const Event& event : events) {
    if (auto chain = builder.add(event)) chains.push_back(std::move(*chain));
  }
  return chains;
}

namespace {

// What mayHoldChain looks for. Every admission annotation prefix ends in it.
constexpr std::string_view kAdmissionKeyPart = "webhook.admission.k8s.io/";
constexpr std::string_view kResponseComplete = "ResponseComplete";
// In the responseStatus of every request that did not succeed (metav1.StatusFailure).
constexpr std::string_view kFailure = "Failure";

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One pass over the bytes of a line: whether it is one balanced JSON value (strings closed,
// brackets matched) and whether a string escape could spell a character of the words mayHoldChain
// looks for (\/ or \u00XX for a letter, digit, '.', '-' or '/'). Go's encoder escapes <, > and
// & (\u003c...), which cannot.
struct LineShape {
  bool balanced = false;
  bool escaped_word_character = false;
};

LineShape shapeOf(std::string_view line) {
  LineShape shape;
  int depth = 0;
  bool in_string = false;
  const char* p = line.data();
  const char* const end = p + line.size();
  for (; p < end; ++p) {
    if (in_string) {
      // Most of a line is string contents: jump to the next quote, and to a backslash before it
      // (memchr is vectorized; a loop over the bytes was most of what reading a log cost after
      // the JSON). A string never closed leaves the line unbalanced whatever follows.
      const auto* quote = static_cast<const char*>(std::memchr(p, '"', end - p));
      if (quote == nullptr) return shape;
      const auto* backslash = static_cast<const char*>(std::memchr(p, '\\', quote - p));
      if (backslash == nullptr) {
        p = quote;
        in_string = false;
        continue;
      }
      p = backslash;
      if (++p == end) return shape;
      if (*p == '/') {
        shape.escaped_word_character = true;
      } else if (*p == 'u') {
        if (end - p < 5) return shape;
        const int a = hexValue(p[1]), b = hexValue(p[2]), h = hexValue(p[3]), l = hexValue(p[4]);
        if (a < 0 || b < 0 || h < 0 || l < 0) return shape;
        if (a == 0 && b == 0) {
          const char decoded = static_cast<char>(h * 16 + l);
          if (std::isalnum(static_cast<unsigned char>(decoded)) || decoded == '.' ||
              decoded == '-' || decoded == '/') {
            shape.escaped_word_character = true;
          }
        }
        p += 4;
      }
      continue;
    }
    const char c = *p;
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) return shape;
    }
  }
  shape.balanced = !in_string && depth == 0;
  return shape;
}

}  // namespace

bool mayHoldChain(std::string_view line, bool keep_all) {
  const bool words = line.find(kResponseComplete) != std::string_view::npos &&
                     (keep_all || line.find(kAdmissionKeyPart) != std::string_view::npos ||
                      line.find(kFailure) != std::string_view::npos);
  if (words) return true;
  const LineShape shape = shapeOf(line);
  return !shape.balanced || shape.escaped_word_character;
}

ChainReader::ChainReader(std::istream& in, std::string file_name, bool keep_all)
    : ChainReader(in, std::move(file_name), Options{keep_all, false, nullptr, false}) {}

ChainReader::ChainReader(std::istream& in, std::string file_name, Options options)
    : lines_(in),
      file_name_(std::move(file_name)),
      keep_all_(options.keep_all),
      options_(std::move(options)),
      builder_(keep_all_) {}

std::optional<ChainReader::Entry> ChainReader::next(
    const std::function<void(const std::string&)>& on_error) {
  if (!pending_.empty()) {
    Entry entry = std::move(pending_.back());
    pending_.pop_back();
    return entry;
  }
  while (auto line = lines_.next()) {
    auto where = [&] { return file_name_ + ":" + std::to_string(line->number) + ": "; };
    if (line->too_long) {
      on_error(where() + "line longer than " + std::to_string(kMaxLogLineBytes >> 20) +
               " MiB, skipped");
      continue;
    }
    if (line->text.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (!mayHoldChain(line->text, keep_all_)) continue;
    if (looksLikeEventList(line->text)) {
      auto items = parseEventListObjectsApart(line->text);
      if (!items.ok()) {
        if (!line->complete) {
          incomplete_last_line_ = where() + "last line incomplete (" +
                                  std::to_string(line->text.size()) +
                                  " bytes, no newline), skipped";
        } else {
          on_error(where() + items.error().message);
        }
        continue;
      }
      std::vector<Entry> kept;
      for (std::size_t i = 0; i < items->size(); ++i) {
        auto& read = (*items)[i];
        if (!builder_.keeps(read.event)) continue;
        kept.push_back(Entry{chainWith(read.event, std::move(read.request_object),
                                       std::move(read.response_object)),
                             line->number, line->offset, i});
      }
      // Handed out from the back: the first item last in.
      pending_.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
      if (!pending_.empty()) {
        Entry entry = std::move(pending_.back());
        pending_.pop_back();
        return entry;
      }
      continue;
    }
    if (options_.wanted) {
      // Lines that cannot be kept or are not wanted are skipped without building anything.
      if (const auto peek = peekEvent(line->text)) {
        if (peek->stage != toString(Stage::kResponseComplete) || !options_.wanted(*peek)) continue;
      }
    }
    auto read = options_.metadata_only           ? parseLogLineMetadataOnly(line->text)
                : options_.defer_response_object ? parseLogLineDeferredResponse(line->text)
                                                 : parseLogLineObjectsApart(line->text);
    if (!read.ok()) {
      if (!line->complete) {
        incomplete_last_line_ = where() + "last line incomplete (" +
                                std::to_string(line->text.size()) + " bytes, no newline), skipped";
        continue;
      }
      on_error(where() + read.error().message);
      continue;
    }
    if (builder_.keeps(read->event)) {
      return Entry{chainWith(read->event, std::move(read->request_object),
                             std::move(read->response_object), std::move(read->deferred_response)),
                   line->number, line->offset};
    }
  }
  return std::nullopt;
}

namespace {

const json* metadataOf(const std::optional<json>& object) {
  if (!object || !object->is_object()) return nullptr;
  const auto metadata = object->find("metadata");
  if (metadata == object->end() || !metadata->is_object()) return nullptr;
  return &*metadata;
}

// The object's metadata as the client sent it, else as stored (a deferred responseObject is
// built into `built` for it).
const json* objectMetadataOf(const MutationChain& chain, std::optional<json>& built) {
  if (const json* metadata = metadataOf(chain.request_object)) return metadata;
  if (chain.deferred_response) {
    built = chain.deferred_response->tree();
    return metadataOf(built);
  }
  return metadataOf(chain.response_object);
}

// The hash labels the controllers add, whose values differ between clusters and runs
// (pkg/controller/deployment/util: DefaultDeploymentUniqueLabelKey; apps/v1
// ControllerRevisionHashLabelKey).
constexpr std::array<std::string_view, 2> kHashLabels = {"pod-template-hash",
                                                         "controller-revision-hash"};

// `name` without a trailing "-<hash>" (or "-<hash>-" of a generateName) for the hash labels'
// values.
std::string withoutHash(std::string name, const json* labels) {
  if (labels == nullptr || !labels->is_object()) return name;
  for (const auto label : kHashLabels) {
    const auto it = labels->find(std::string(label));
    if (it == labels->end() || !it->is_string()) continue;
    const std::string hash = it->get<std::string>();
    if (hash.empty()) continue;
    for (const std::string& suffix : {"-" + hash + "-", "-" + hash}) {
      if (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        return name.substr(0, name.size() - suffix.size()) + "-";
      }
    }
  }
  return name;
}

std::string indexKey(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (const auto part : parts) {
    if (!key.empty()) key.push_back(' ');
    key.append(part);
  }
  return key;
}

}  // namespace

std::optional<PairBy> parsePairBy(std::string_view text) {
  if (text == "auto") return PairBy::kAuto;
  if (text == "name") return PairBy::kName;
  if (text == "labels") return PairBy::kLabels;
  if (text == "order") return PairBy::kOrder;
  return std::nullopt;
}

std::string_view toString(PairBy by) {
  switch (by) {
    case PairBy::kName:
      return "name";
    case PairBy::kLabels:
      return "labels";
    case PairBy::kOrder:
      return "order";
    case PairBy::kAuto:
      break;
  }
  return "auto";
}

std::string pairingKey(const MutationChain& chain, PairBy by) {
  std::string resource = chain.resource;
  if (!chain.api_group.empty()) resource += "." + chain.api_group;
  if (!chain.subresource.empty()) resource += "/" + chain.subresource;
  const std::string namespace_name = chain.namespace_name.empty() ? "-" : chain.namespace_name;
  std::optional<json> built;
  const json* metadata = objectMetadataOf(chain, built);
  const json* labels = nullptr;
  if (metadata != nullptr) {
    const auto it = metadata->find("labels");
    if (it != metadata->end() && it->is_object()) labels = &*it;
  }
  switch (by) {
    case PairBy::kName:
      return indexKey({chain.verb, resource, namespace_name, "name", chain.name});
    case PairBy::kOrder:
      return indexKey({chain.verb, resource, namespace_name});
    case PairBy::kLabels: {
      std::string text;
      if (labels != nullptr) {
        for (const auto& [key, value] : labels->items()) {
          if (std::find(kHashLabels.begin(), kHashLabels.end(), key) != kHashLabels.end()) continue;
          if (!text.empty()) text += ",";
          text += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
        }
      }
      return indexKey({chain.verb, resource, namespace_name, "labels", text});
    }
    case PairBy::kAuto:
      break;
  }
  const std::string generate_name =
      metadata != nullptr ? stringOf(*metadata, "generateName") : std::string();
  const bool client_named = metadata == nullptr || generate_name.empty() ||
                            !stringOf(*metadata, "name").empty();
  if (client_named || chain.verb != "create") {
    return indexKey({chain.verb, resource, namespace_name, "name", chain.name});
  }
  // Named by the server: by its controller, else its generateName, hashes removed.
  const auto owners = metadata->find("ownerReferences");
  if (owners != metadata->end() && owners->is_array()) {
    for (const auto& owner : *owners) {
      if (!owner.is_object()) continue;
      const auto controller = owner.find("controller");
      if (controller == owner.end() || !controller->is_boolean() || !controller->get<bool>()) {
        continue;
      }
      return indexKey({chain.verb, resource, namespace_name, "owner",
                       stringOf(owner, "kind") + "/" +
                           withoutHash(stringOf(owner, "name") + "-", labels)});
    }
  }
  return indexKey({chain.verb, resource, namespace_name, "generateName",
                   withoutHash(generate_name, labels)});
}

void ChainIndex::add(const MutationChain& chain, Position position, bool reported) {
  slots_[pairingKey(chain, by_)].positions.emplace_back(position, reported);
  ++size_;
}

std::optional<ChainIndex::Position> ChainIndex::take(const MutationChain& chain) {
  const auto found = slots_.find(pairingKey(chain, by_));
  if (found == slots_.end()) return std::nullopt;
  Slot& slot = found->second;
  if (slot.taken == slot.positions.size()) return std::nullopt;
  return slot.positions[slot.taken++].first;
}

std::vector<std::pair<ChainIndex::Position, std::string>> ChainIndex::unpaired() const {
  std::vector<std::pair<Position, std::string>> out;
  for (const auto& [key, slot] : slots_) {
    for (std::size_t i = slot.taken; i < slot.positions.size(); ++i) {
      if (slot.positions[i].second) out.emplace_back(slot.positions[i].first, key);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) {
              return std::pair(a.first.file, a.first.offset) <
                     std::pair(b.first.file, b.first.offset);
            });
  return out;
}

const MutationChain* findChain(const std::vector<MutationChain>& chains, std::string_view resource,
                               std::string_view namespace_name, std::string_view name,
                               std::string_view verb) {
  for (const auto& chain : chains) {
    if (chain.resource == resource && chain.namespace_name == namespace_name &&
        chain.name == name && (verb.empty() || chain.verb == verb)) {
      return &chain;
    }
  }
  return nullptr;
}

namespace {

// core::decodeParsedPatch(patch) without copying the patch twice (into the argument, then each
// value into its operation): the operations are decoded from a copy without their values (all
// that decoding checks and that errors name: op, path, from), and each value is then copied once,
// into its operation. Only the decoded `raw` lacks the value, which applyPatch does not read.
core::Result<core::JsonPatch> decodeRecordedPatch(const json& patch) {
  if (!patch.is_array()) return core::decodeParsedPatch(patch);
  json skeleton = json::array();
  auto& operations = skeleton.get_ref<json::array_t&>();
  operations.reserve(patch.size());
  for (const json& element : patch) {
    if (!element.is_object()) {
      operations.push_back(element);
      continue;
    }
    json& operation = operations.emplace_back(json::object());
    for (const auto& [key, value] : element.items()) {
      if (key != "value") operation[key] = value;
    }
  }
  auto decoded = core::decodeParsedPatch(std::move(skeleton));
  if (!decoded.ok()) return decoded;
  for (std::size_t i = 0; i < patch.size() && i < decoded->size(); ++i) {
    if (!patch[i].is_object()) continue;
    if (const auto value = patch[i].find("value"); value != patch[i].end()) {
      (*decoded)[i].value = *value;
    }
  }
  return decoded;
}

bool hasResponse(const MutationChain& chain) {
  return chain.response_object.has_value() || chain.deferred_response != nullptr;
}

// The first difference between the replayed object and the response with the members at the
// `ignored` pointers left out of both.
template <class R>
std::optional<Difference> differenceFromResponse(const json& replayed, R response,
                                                 const std::vector<std::string>& ignored,
                                                 bool ignore_response_only) {
  // Members at the ignored pointers are left out of the comparison without copying either
  // document to erase them, when that is the same as erasing: when every pointer goes through
  // objects only, in both documents. Otherwise (a user's pointer into an array...) copies are
  // erased as the pointers say.
  std::vector<std::vector<std::string>> ignored_tokens;
  bool only_objects = true;
  for (const auto& pointer : ignored) {
    const auto parsed = core::JsonPointer::parse(pointer);
    if (!parsed.ok() || parsed->isRoot()) continue;  // erasePointer leaves these
    const auto& tokens = parsed->tokens();
    const json* node = &replayed;
    for (std::size_t i = 0; node != nullptr && i < tokens.size(); ++i) {
      if (!node->is_object()) {
        only_objects = false;
        break;
      }
      const auto it = node->find(tokens[i]);
      node = it == node->end() ? nullptr : &*it;
    }
    std::optional<R> theirs = response;
    for (std::size_t i = 0; theirs && i < tokens.size(); ++i) {
      if (!isObject(*theirs)) {
        only_objects = false;
        break;
      }
      theirs = member(*theirs, tokens[i]);
    }
    ignored_tokens.push_back(tokens);
  }
  if (only_objects) {
    Ignored top;
    for (const auto& tokens : ignored_tokens) top.paths.push_back(&tokens);
    return firstDifference(replayed, response, "", ignore_response_only, top);
  }
  json replayed_copy = replayed;
  json response_copy = toJson(response);
  for (const auto& pointer : ignored) {
    erasePointer(replayed_copy, pointer);
    erasePointer(response_copy, pointer);
  }
  return firstDifference<const json*>(replayed_copy, &response_copy, "", ignore_response_only,
                                      Ignored{});
}

// replayChain; with `owned` (a base object the caller is done with), the first patch is applied
// to it in place instead of to a copy (replayReport replays every chain of a log).
core::Result<ReplayResult> replayFrom(const MutationChain& chain, const ReplayOptions& options,
                                      std::optional<json> owned) {
  const std::optional<json>& base =
      owned ? owned : options.base_object ? options.base_object : chain.request_object;
  if (!base) {
    return core::makeError(
        "audit " + chain.audit_id + ": no requestObject (the event's level is below Request)",
        core::ErrorCode::kFailedPrecondition);
  }
  if (!hasResponse(chain)) {
    return core::makeError("audit " + chain.audit_id +
                               ": no responseObject (the event's level is below RequestResponse)",
                           core::ErrorCode::kFailedPrecondition);
  }
  std::vector<std::string> ignored = {
      "/metadata/uid",           "/metadata/resourceVersion", "/metadata/creationTimestamp",
      "/metadata/managedFields", "/metadata/generation",      "/status"};
  for (const char* filled : {"/metadata/name", "/metadata/namespace"}) {
    if (!hasPointer(*base, filled)) ignored.emplace_back(filled);
  }
  // The first patch applies to the base itself (in place when owned): the only copies are those
  // applyPatch makes.
  std::optional<json> object;
  for (const MutationStep& step : chain.steps) {
    const std::string label = stepLabel(step) + " (webhook " + step.webhook + ")";
    if (!step.patch) {
      if (step.mutated) {
        return core::makeError(
            label + ": mutated but no patch recorded (the event's level is below Request)",
            core::ErrorCode::kFailedPrecondition);
      }
      continue;
    }
    auto patch = decodeRecordedPatch(*step.patch);
    if (!patch.ok()) return patch.error().within(label);
    auto applied = object  ? core::applyPatch(std::move(*object), std::move(*patch))
                   : owned ? core::applyPatch(std::move(*owned), std::move(*patch))
                           : core::applyPatch(*base, *patch);
    if (!applied.ok()) return applied.error().within(label);
    object = std::move(*applied);
  }
  if (!object) {
    if (owned) {
      object = std::move(*owned);
    } else {
      object = *base;
    }
  }

  ReplayResult result;
  result.patched = std::move(*object);
  ignored.insert(ignored.end(), options.ignored_paths.begin(), options.ignored_paths.end());
  const std::optional<Difference> difference =
      chain.deferred_response
          ? differenceFromResponse(result.patched, chain.deferred_response->value, ignored,
                                   options.ignore_fields_only_in_response)
          : differenceFromResponse(result.patched, &*chain.response_object, ignored,
                                   options.ignore_fields_only_in_response);
  if (difference) {
    result.matches = false;
    result.first_difference = difference->pointer;
    result.detail = difference->detail;
  } else {
    result.matches = true;
  }
  return result;
}

}  // namespace

core::Result<ReplayResult> replayChain(const MutationChain& chain, const ReplayOptions& options) {
  return replayFrom(chain, options, std::nullopt);
}

namespace {

// Members every stored object gets from the server, never from admission.
bool serverSet(const std::string& pointer) {
  static constexpr std::array<std::string_view, 6> kServerSet = {
      "/metadata/uid",        "/metadata/resourceVersion", "/metadata/creationTimestamp",
      "/metadata/managedFields", "/metadata/generation",   "/status"};
  return std::find(kServerSet.begin(), kServerSet.end(), pointer) != kServerSet.end();
}

// What a patch writes: the exact paths its operations add or replace, and per array (pointer
// without the last token) the names of the elements added to it.
struct PatchWrites {
  std::set<std::string> paths;
  std::map<std::string, std::set<std::string>> names;  // array pointer -> element names
};

bool isIndexToken(std::string_view token) {
  return token == "-" || (!token.empty() && std::all_of(token.begin(), token.end(), [](char c) {
    return c >= '0' && c <= '9';
  }));
}

PatchWrites patchWrites(const MutationChain& chain) {
  PatchWrites out;
  for (const auto& step : chain.steps) {
    if (!step.patch || !step.patch->is_array()) continue;
    for (const auto& op : *step.patch) {
      if (!op.is_object()) continue;
      const std::string path = stringOf(op, "path");
      const std::string kind = stringOf(op, "op");
      if (kind != "add" && kind != "replace" && kind != "copy" && kind != "move") continue;
      out.paths.insert(path);
      const auto slash = path.rfind('/');
      if (slash == std::string::npos) continue;
      const std::string array = path.substr(0, slash);
      const auto value = op.find("value");
      if (value == op.end()) continue;
      auto addName = [&](const std::string& at, const json& element) {
        if (element.is_object()) {
          const std::string name = stringOf(element, "name");
          if (!name.empty()) out.names[at].insert(name);
        }
      };
      if (isIndexToken(std::string_view(path).substr(slash + 1))) addName(array, *value);
      if (value->is_array()) {
        for (const auto& element : *value) addName(path, element);
      }
    }
  }
  return out;
}

// The "name" of an element of a named array (namedArray).
std::string_view nameOf(const json* element) {
  return (*element)["name"].get_ref<const std::string&>();
}
std::string_view nameOf(Element element) { return std::string_view(*lastMember(element, "name")); }

bool namedArray(const json& array) {
  return array.is_array() && std::all_of(array.begin(), array.end(), [](const json& e) {
           return e.is_object() && e.contains("name") && e["name"].is_string();
         });
}
bool namedArray(const json* array) { return namedArray(*array); }
bool namedArray(Element array) {
  if (!array.is_array()) return false;
  for (const auto element : simdjson::dom::array(array)) {
    const auto name = lastMember(element, "name");  // nullopt unless an object
    if (!name || !name->is_string()) return false;
  }
  return true;
}

// What a filled member is, for people: the in-tree plugin that adds it when known.
std::string fillNote(const std::string& pointer, const json& value) {
  std::string note;
  const std::string name =
      value.is_object() && value.contains("name") && value["name"].is_string()
          ? value["name"].get<std::string>()
          : std::string();
  auto endsWith = [&](std::string_view suffix) {
    return pointer.size() >= suffix.size() &&
           pointer.compare(pointer.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const bool kube_api_access = name.rfind("kube-api-access-", 0) == 0;
  if (!name.empty()) note = "\"" + name + "\"";
  if (kube_api_access || endsWith("/serviceAccountName") || endsWith("/serviceAccount") ||
      (value.is_array() && value.dump().find("kube-api-access-") != std::string::npos)) {
    note += (note.empty() ? "" : ", ") + std::string("ServiceAccount plugin");
  } else if (endsWith("/tolerations")) {
    note += (note.empty() ? "" : ", ") + std::string("DefaultTolerationSeconds plugin");
  } else if (endsWith("/priority") || endsWith("/preemptionPolicy")) {
    note += (note.empty() ? "" : ", ") + std::string("Priority plugin");
  }
  return note.empty() ? pointer : pointer + " (" + note + ")";
}

template <class R>
json fillFromResponse(const json& request, R response, const std::string& pointer,
                      const PatchWrites& writes, std::vector<std::string>& filled) {
  if (request.is_object() && isObject(response)) {
    Members<R> theirs;
    membersOf(response, theirs);
    // Built member by member: each member of the request is copied once.
    json out = json::object();
    for (const auto& [key, value] : request.items()) {
      const auto their = findMember(theirs, key);
      out[key] = !their ? value
                        : fillFromResponse(value, *their,
                                           pointer + "/" + core::escapePointerToken(key), writes,
                                           filled);
    }
    for (const auto& [key, value] : theirs) {
      if (request.contains(key)) continue;
      const std::string at = pointer + "/" + core::escapePointerToken(std::string(key));
      if (serverSet(at) || writes.paths.count(at) != 0) continue;
      if (namedArray(value)) {
        // Only the elements no patch added.
        const auto added = writes.names.find(at);
        json kept = json::array();
        for (const auto& element : elementsOf(value)) {
          if (added != writes.names.end() &&
              added->second.count(std::string(nameOf(element))) != 0) {
            continue;
          }
          json copy = toJson(element);
          filled.push_back(fillNote(at + "/" + std::to_string(kept.size()), copy));
          kept.push_back(std::move(copy));
        }
        if (!kept.empty()) out[std::string(key)] = std::move(kept);
        continue;
      }
      json copy = toJson(value);
      filled.push_back(fillNote(at, copy));
      out[std::string(key)] = std::move(copy);
    }
    return out;
  }
  if (namedArray(request) && namedArray(response)) {
    std::map<std::string, const json*, std::less<>> mine;
    for (const auto& element : request) mine[element["name"].get<std::string>()] = &element;
    const auto theirs = elementsOf(response);
    std::size_t present = 0;
    for (const auto& element : theirs) present += mine.count(nameOf(element)) != 0 ? 1 : 0;
    // An element the response lacks was removed or renamed by a webhook: keep the request's.
    if (present != mine.size()) return request;
    const auto added = writes.names.find(pointer);
    json out = json::array();
    for (const auto& element : theirs) {
      const std::string name(nameOf(element));
      const std::string at = pointer + "/" + std::to_string(out.size());
      if (const auto it = mine.find(name); it != mine.end()) {
        out.push_back(fillFromResponse(*it->second, element, at, writes, filled));
      } else if (added == writes.names.end() || added->second.count(name) == 0) {
        json copy = toJson(element);
        filled.push_back(fillNote(at, copy));
        out.push_back(std::move(copy));
      }
    }
    return out;
  }
  return request;
}

std::string levelText(Level level) { return std::string(toString(level)); }

}  // namespace

AdmittedBase admittedBase(const MutationChain& chain) {
  AdmittedBase out;
  if (!chain.request_object) return out;
  if (!hasResponse(chain)) {
    out.object = *chain.request_object;
    return out;
  }
  out.object = chain.deferred_response
                   ? fillFromResponse(*chain.request_object, chain.deferred_response->value, "",
                                      patchWrites(chain), out.filled)
                   : fillFromResponse(*chain.request_object, &*chain.response_object, "",
                                      patchWrites(chain), out.filled);
  return out;
}

ReplayReport replayReport(const MutationChain& chain) {
  using Kind = ReplayReport::Kind;
  ReplayReport report;
  const bool mutated = std::any_of(chain.steps.begin(), chain.steps.end(),
                                   [](const MutationStep& s) { return s.mutated || s.patch; });
  auto verdict = [&](Kind kind, std::string line) {
    report.kind = kind;
    report.lines.insert(report.lines.begin(), "replay: " + std::move(line));
    return report;
  };
  if (!mutated) return verdict(Kind::kNothingToReplay, "nothing to replay (no webhook mutated)");
  if (chain.outcome.kind != OutcomeKind::kAdmitted && chain.outcome.kind != OutcomeKind::kUnknown) {
    return verdict(Kind::kNotReplayable,
                   "not done: the request was " + std::string(toString(chain.outcome.kind)) +
                       ", nothing was stored (the responseObject is the error Status)");
  }
  if (chain.verb == "patch") {
    return verdict(Kind::kNotReplayable,
                   "not possible for a patch request: its requestObject is the client's patch, "
                   "not the object the webhooks saw (which the log does not record)");
  }
  if (chain.verb == "delete" || chain.verb == "deletecollection") {
    return verdict(Kind::kNotReplayable,
                   "not possible for a " + chain.verb +
                       ": its requestObject is DeleteOptions, not the object");
  }
  // Level None: a chain not read from an event; what it holds is all there is.
  if (chain.level != Level::kNone && less(chain.level, Level::kRequest)) {
    return verdict(Kind::kNotReplayable,
                   "not possible at level " + levelText(chain.level) +
                       ": the event records which webhooks ran and whether they mutated, but "
                       "neither the objects nor the patches (level Request records them)");
  }
  for (const auto& step : chain.steps) {
    if (step.mutated && !step.patch) {
      return verdict(Kind::kNotReplayable,
                     stepLabel(step) + " (webhook " + step.webhook +
                         ") mutated but its patch is not recorded (no patch annotation)");
    }
  }
  if (!chain.request_object) {
    return verdict(Kind::kNotReplayable,
                   "not possible: the event at level " + levelText(chain.level) +
                       " has no requestObject (stage " + std::string(toString(chain.stage)) +
                       ")");
  }
  ReplayOptions options;
  options.ignore_fields_only_in_response = true;
  if (!hasResponse(chain)) {
    // Level Request: the patches can be applied, not checked.
    auto strict = replayChain([&] {
      MutationChain copy = chain;
      copy.response_object = copy.request_object;
      return copy;
    }(), options);
    if (!strict.ok()) {
      report.lines.push_back("  " + strict.error().message);
      return verdict(Kind::kPatchFails,
                     "the patches do not apply to the requestObject, and level " +
                         levelText(chain.level) +
                         " records no responseObject to rebuild what admission added before "
                         "the webhooks");
    }
    return verdict(Kind::kAppliedOnly,
                   "the patches apply to the requestObject; not checked: level " +
                       levelText(chain.level) + " records no responseObject");
  }
  // The object the webhooks saw, as far as the event tells: the requestObject itself when
  // admission added nothing before them (then one replay says it all).
  AdmittedBase base = admittedBase(chain);
  const std::vector<std::string> filled = std::move(base.filled);
  auto describe = [](const core::Result<ReplayResult>& replay) {
    if (!replay.ok()) return replay.error().message;
    return "differs at " +
           (replay->first_difference.empty() ? std::string("the root")
                                             : replay->first_difference) +
           ": " + replay->detail;
  };
  if (filled.empty()) {
    auto strict = replayChain(chain, options);
    if (strict.ok() && strict->matches) {
      return verdict(Kind::kMatches, "the patches turn the requestObject into the responseObject");
    }
    if (!strict.ok()) {
      report.lines.push_back("  " + strict.error().message);
      return verdict(Kind::kPatchFails, "a patch does not apply to the recorded objects");
    }
    return verdict(Kind::kDiffers, describe(strict));
  }
  auto completed = replayFrom(chain, options, std::move(base.object));
  if (completed.ok() && completed->matches) {
    report.lines.push_back(
        "  the requestObject is the request as the client sent it; completed with what "
        "admission added before the webhooks (" +
        std::to_string(filled.size()) + " member" + (filled.size() == 1 ? "" : "s") +
        " of the responseObject no patch wrote):");
    constexpr std::size_t kListed = 8;
    for (std::size_t i = 0; i < filled.size() && i < kListed; ++i) {
      report.lines.push_back("    " + filled[i]);
    }
    if (filled.size() > kListed) {
      report.lines.push_back("    and " + std::to_string(filled.size() - kListed) +
                             " more (defaults)");
    }
    return verdict(Kind::kMatches,
                   "the patches turn the admitted object into the responseObject");
  }
  // Not explained by what admission added: what the requestObject alone gives, for comparison.
  report.lines.push_back("  onto the requestObject alone: " +
                         describe(replayChain(chain, options)));
  if (!completed.ok()) {
    report.lines.push_back("  onto it completed from the responseObject: " +
                           completed.error().message);
    return verdict(Kind::kPatchFails, "a patch does not apply to the recorded objects");
  }
  return verdict(Kind::kDiffers,
                 describe(completed) + " (onto the requestObject completed from the "
                                       "responseObject)");
}

namespace {

// The ServiceAccount plugin names its projected token volume kube-api-access-<5 random
// characters> (plugin/pkg/admission/serviceaccount/admission.go, utilrand.String(5)): another name
// in each request, which a webhook's patch repeats (a volumeMount of its container). Replaced by
// "kube-api-access-*" before patches are compared.
void normalizeGeneratedNames(json& value) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    constexpr std::string_view kPrefix = "kube-api-access-";
    if (text.size() == kPrefix.size() + 5 && text.compare(0, kPrefix.size(), kPrefix) == 0 &&
        std::all_of(text.begin() + static_cast<std::ptrdiff_t>(kPrefix.size()), text.end(),
                    [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; })) {
      value = "kube-api-access-*";
    }
    return;
  }
  if (value.is_object() || value.is_array()) {
    for (auto& item : value) normalizeGeneratedNames(item);
  }
}

}  // namespace

bool isDifference(std::string_view compare_line) {
  return compare_line.find(" not compared: ") == std::string_view::npos;
}

std::vector<std::string> compareChains(const MutationChain& expected, const MutationChain& actual) {
  std::vector<std::string> out;
  // What only one side recorded is left out (the patch annotations are written at Request and
  // above: annotations.h).
  // Level None: not read from an event (no event is written at None), nothing known.
  auto low = [](Level level) { return level != Level::kNone && less(level, Level::kRequest); };
  const bool patches = !low(expected.level) && !low(actual.level);
  if (!patches) {
    const bool expected_low = low(expected.level);
    out.push_back("patches not compared: recorded at level " +
                  levelText(expected_low ? expected.level : actual.level) + " in " +
                  (expected_low ? "expected" : "actual"));
  }
  const auto& eo = expected.outcome;
  const auto& ao = actual.outcome;
  if (eo.kind == OutcomeKind::kUnknown || ao.kind == OutcomeKind::kUnknown) {
    if (eo.kind != ao.kind) {
      out.push_back(std::string("outcome not compared: no responseStatus in ") +
                    (eo.kind == OutcomeKind::kUnknown ? "expected" : "actual"));
    }
  } else if (eo.kind != ao.kind || eo.code != ao.code || eo.decided_by != ao.decided_by) {
    out.push_back("outcome: expected " + formatOutcome(eo) + ", got " + formatOutcome(ao));
  }
  std::map<std::pair<int, std::size_t>, const MutationStep*> want;
  std::map<std::pair<int, std::size_t>, const MutationStep*> got;
  for (const auto& step : expected.steps) want[{step.round, step.index}] = &step;
  for (const auto& step : actual.steps) got[{step.round, step.index}] = &step;
  std::set<std::pair<int, std::size_t>> positions;
  for (const auto& [at, step] : want) positions.insert(at);
  for (const auto& [at, step] : got) positions.insert(at);

  for (const auto& at : positions) {
    const auto w = want.find(at);
    const auto g = got.find(at);
    if (g == got.end()) {
      const MutationStep& s = *w->second;
      out.push_back(stepLabel(s) + ": webhook " + quoted(s.webhook) + " (configuration " +
                    quoted(s.configuration) + ") missing in actual");
      continue;
    }
    if (w == want.end()) {
      const MutationStep& s = *g->second;
      out.push_back(stepLabel(s) + ": unexpected webhook " + quoted(s.webhook) +
                    " (configuration " + quoted(s.configuration) + ") in actual");
      continue;
    }
    auto normalized = [](MutationStep step) {
      if (step.patch) normalizeGeneratedNames(*step.patch);
      return step;
    };
    const MutationStep e = normalized(*w->second);
    const MutationStep a = normalized(*g->second);
    const std::string label = stepLabel(e) + " (" + e.webhook + "): ";
    if (e.webhook != a.webhook) {
      out.push_back(label + "webhook: expected " + quoted(e.webhook) + ", got " +
                    quoted(a.webhook));
      continue;
    }
    if (e.configuration != a.configuration) {
      out.push_back(label + "configuration: expected " + quoted(e.configuration) + ", got " +
                    quoted(a.configuration));
    }
    if (e.mutated != a.mutated) {
      out.push_back(label + "mutated: expected " + (e.mutated ? "true" : "false") + ", got " +
                    (a.mutated ? "true" : "false"));
    }
    if (e.failed_open != a.failed_open) {
      out.push_back(label + "failed open: expected " + (e.failed_open ? "true" : "false") +
                    ", got " + (a.failed_open ? "true" : "false"));
    }
    if (!patches || e.patch == a.patch) continue;
    if (e.patch && a.patch && e.patch->is_array() && a.patch->is_array()) {
      const std::size_t n = std::max(e.patch->size(), a.patch->size());
      for (std::size_t i = 0; i < n; ++i) {
        const std::optional<json> eo =
            i < e.patch->size() ? std::optional<json>((*e.patch)[i]) : std::nullopt;
        const std::optional<json> ao =
            i < a.patch->size() ? std::optional<json>((*a.patch)[i]) : std::nullopt;
        if (eo != ao) {
          out.push_back(label + "patch differs at operation " + std::to_string(i) + ": expected " +
                        describe(eo) + ", got " + describe(ao));
          break;
        }
      }
      continue;
    }
    out.push_back(label + "patch: expected " + describe(e.patch) + ", got " + describe(a.patch));
  }
  return out;
}

std::string formatChain(const MutationChain& chain) {
  std::string group_resource = chain.resource;
  if (!chain.api_group.empty()) group_resource += "." + chain.api_group;
  if (!chain.subresource.empty()) group_resource += "/" + chain.subresource;
  const std::string object =
      chain.namespace_name.empty() ? chain.name : chain.namespace_name + "/" + chain.name;
  std::string out = chain.verb + " " + group_resource + " " + object + " (auditID " +
                    chain.audit_id + ")\n";
  out += "  by " + (chain.user.empty() ? std::string("(no user)") : chain.user) + ", level " +
         std::string(toString(chain.level)) + "\n";
  out += "  outcome: " + formatOutcome(chain.outcome) + "\n";
  const bool denied_by_webhook = chain.outcome.decided_by_kind == "webhook";
  if (chain.steps.empty() && !denied_by_webhook) out += "  no mutating webhook was called\n";
  for (const auto& step : chain.steps) {
    out += "  round " + std::to_string(step.round) + " index " + std::to_string(step.index) +
           "  " + step.webhook + " (" + step.configuration + "): ";
    if (step.failed_open) {
      out += "failed open";
    } else {
      out += step.mutated ? "mutated" : "not mutated";
    }
    if (step.patch) {
      const std::size_t operations = step.patch->is_array() ? step.patch->size() : 0;
      out += ", patch of " + std::to_string(operations) + " operation" +
             (operations == 1 ? "" : "s");
    } else if (step.mutated) {
      out += ", patch not recorded (level below Request)";
    }
    out += "\n";
  }
  if (denied_by_webhook) {
    // A webhook that rejects, times out or cannot be called gets no mutation annotation: it
    // appears here, from the responseStatus.
    out += "  " + chain.outcome.decided_by + ": ";
    switch (chain.outcome.kind) {
      case OutcomeKind::kDenied:
        out += "denied the request";
        break;
      case OutcomeKind::kTimedOut:
        out += "timed out (failurePolicy Fail)";
        break;
      default:
        out += "could not be called (failurePolicy Fail)";
        break;
    }
    out += "\n";
  }
  for (const auto& [key, value] : chain.webhook_annotations) {
    out.append("  annotation ").append(key).append(" = ").append(value).append("\n");
  }
  for (const auto& problem : chain.problems) out += "  problem: " + problem + "\n";
  if (!chain.steps.empty()) {
    for (const auto& line : replayReport(chain).lines) out += "  " + line + "\n";
  }
  return out;
}

}  // namespace harness::audit
