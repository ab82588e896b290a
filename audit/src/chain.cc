// Mutation chains from audit annotations. The key and value formats read here are those written
// by kubernetes/apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go (webhookAnnotator:
// mutation/patch/failed-open keys "<prefix>round_<r>_index_<i>", MutationAuditAnnotation and
// PatchAuditAnnotation values) and validating/dispatcher.go (failed-open.validating keys); see
// docs/admission-chain.md §7.1.

#include "harness/audit/chain.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <set>
#include <utility>

#include "harness/core/json.h"
#include "harness/core/json_patch.h"
#include "harness/core/json_patch_decode.h"
#include "harness/core/json_pointer.h"

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

std::string stepLabel(const MutationStep& step) {
  return "round " + std::to_string(step.round) + " index " + std::to_string(step.index);
}

// chainOf, with the event's objects given apart (ChainReader reads them as json).
MutationChain chainWith(const Event& event, std::optional<json> request_object,
                        std::optional<json> response_object) {
  MutationChain chain;
  chain.audit_id = event.audit_id;
  chain.verb = event.verb;
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
  if (chain.name.empty() && chain.response_object && chain.response_object->is_object()) {
    const auto metadata = chain.response_object->find("metadata");
    if (metadata != chain.response_object->end() && metadata->is_object()) {
      chain.name = stringOf(*metadata, "name");
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
      chain.problems.push_back(key + ": value is not a JSON object: " + value);
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
        chain.problems.push_back(key + ": no boolean \"mutated\" in " + value);
      }
    } else {
      if (step.configuration.empty()) step.configuration = configuration;
      if (step.webhook.empty()) step.webhook = webhook;
      const auto patch = parsed->find("patch");
      if (patch != parsed->end()) {
        step.patch = std::move(*patch);
      } else {
        chain.problems.push_back(key + ": no \"patch\" in " + value);
      }
    }
  }
  for (auto& [at, step] : steps) chain.steps.push_back(std::move(step));
  return chain;
}

}  // namespace

MutationChain chainOf(EventObjectsApart read) {
  return chainWith(read.event, std::move(read.request_object), std::move(read.response_object));
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

// The ignored pointers that continue below one member: their tokens, and how many of them the
// path to the member used.
struct Ignored {
  std::vector<const std::vector<std::string>*> paths;
  std::size_t depth = 0;

  // The paths through member `key`; `ends` when one of them ends there (the member is ignored).
  [[nodiscard]] Ignored below(const std::string& key, bool& ends) const {
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
std::optional<Difference> firstDifference(const json& replayed, const json& response,
                                          const std::string& pointer, bool ignore_response_only,
                                          const Ignored& ignored) {
  if (replayed.is_object() && response.is_object()) {
    // Both members are in key order (nlohmann::json objects are std::maps): one merge, and a
    // pointer built only for members that differ (`apiserver-sim audit` replays every chain).
    auto a = replayed.items().begin();
    auto b = response.items().begin();
    const auto a_end = replayed.items().end();
    const auto b_end = response.items().end();
    auto at = [&pointer](const std::string& key) {
      return pointer + "/" + core::escapePointerToken(key);
    };
    // Members below which an ignored pointer goes, or where one ends.
    const auto concerned = [&ignored](const std::string& key) {
      return std::any_of(ignored.paths.begin(), ignored.paths.end(),
                         [&](const auto* path) { return (*path)[ignored.depth] == key; });
    };
    const auto skipped = [&](const std::string& key) {
      bool ends = false;
      if (concerned(key)) (void)ignored.below(key, ends);
      return ends;
    };
    while (a != a_end || b != b_end) {
      if (a != a_end && skipped(a.key())) {
        ++a;
        continue;
      }
      if (b != b_end && skipped(b.key())) {
        ++b;
        continue;
      }
      if (b == b_end || (a != a_end && a.key() < b.key())) {
        return Difference{at(a.key()), "missing in the response"};
      }
      if (a == a_end || b.key() < a.key()) {
        if (!ignore_response_only) return Difference{at(b.key()), "missing in the replay"};
        ++b;
        continue;
      }
      if (a.value() != b.value()) {
        bool ends = false;
        const Ignored inner = concerned(a.key()) ? ignored.below(a.key(), ends)
                                                 : Ignored{{}, ignored.depth + 1};
        if (auto d = firstDifference(a.value(), b.value(), at(a.key()), ignore_response_only,
                                     inner)) {
          return d;
        }
      }
      ++a;
      ++b;
    }
    return std::nullopt;
  }
  if (replayed.is_array() && response.is_array()) {
    const std::size_t common = std::min(replayed.size(), response.size());
    for (std::size_t i = 0; i < common; ++i) {
      if (replayed[i] == response[i]) continue;
      if (auto d = firstDifference(replayed[i], response[i], pointer + "/" + std::to_string(i),
                                   ignore_response_only, Ignored{})) {
        return d;
      }
    }
    if (replayed.size() > common) {
      return Difference{pointer + "/" + std::to_string(common), "missing in the response"};
    }
    if (response.size() > common) {
      return Difference{pointer + "/" + std::to_string(common), "missing in the replay"};
    }
    return std::nullopt;
  }
  if (replayed == response) return std::nullopt;
  return Difference{pointer, "replayed " + replayed.dump() + ", response " + response.dump()};
}

std::string quoted(const std::string& s) { return json(s).dump(); }

std::string describe(const std::optional<json>& patch) {
  return patch ? patch->dump() : std::string("none");
}

}  // namespace

bool ChainBuilder::keeps(const Event& event) {
  if (event.stage != Stage::kResponseComplete) return false;
  const bool admission = std::any_of(event.annotations.begin(), event.annotations.end(),
                                     [](const auto& kv) { return isAdmissionKey(kv.first); });
  if (!admission && !keep_all_) return false;
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
    const char c = *p;
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (c == '\\') {
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
      }
      continue;
    }
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
                     (keep_all || line.find(kAdmissionKeyPart) != std::string_view::npos);
  if (words) return true;
  const LineShape shape = shapeOf(line);
  return !shape.balanced || shape.escaped_word_character;
}

ChainReader::ChainReader(std::istream& in, std::string file_name, bool keep_all)
    : lines_(in), file_name_(std::move(file_name)), keep_all_(keep_all), builder_(keep_all) {}

std::optional<ChainReader::Entry> ChainReader::next(
    const std::function<void(const std::string&)>& on_error) {
  while (auto line = lines_.next()) {
    auto where = [&] { return file_name_ + ":" + std::to_string(line->number) + ": "; };
    if (line->too_long) {
      on_error(where() + "line longer than " + std::to_string(kMaxLogLineBytes >> 20) +
               " MiB, skipped");
      continue;
    }
    if (line->text.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (!mayHoldChain(line->text, keep_all_)) continue;
    auto read = parseLogLineObjectsApart(line->text);
    if (!read.ok()) {
      on_error(where() + read.error().message);
      continue;
    }
    if (builder_.keeps(read->event)) {
      return Entry{chainWith(read->event, std::move(read->request_object),
                             std::move(read->response_object)),
                   line->number, line->offset};
    }
  }
  return std::nullopt;
}

namespace {

std::string generateNameOf(const MutationChain& chain) {
  if (!chain.request_object || !chain.request_object->is_object()) return {};
  const auto metadata = chain.request_object->find("metadata");
  if (metadata == chain.request_object->end() || !metadata->is_object()) return {};
  return stringOf(*metadata, "generateName");
}

std::string indexKey(std::initializer_list<std::string_view> parts) {
  std::string key;
  for (const auto part : parts) {
    key.append(part);
    key.push_back('\0');
  }
  return key;
}

}  // namespace

void ChainIndex::add(const MutationChain& chain, Position position) {
  // The first chain wins, as findChain finds it.
  by_name_.emplace(indexKey({chain.resource, chain.namespace_name, chain.name, chain.verb}),
                   position);
  by_object_.emplace(indexKey({chain.resource, chain.namespace_name, chain.name}), position);
  if (const std::string generate_name = generateNameOf(chain); !generate_name.empty()) {
    by_generate_name_.emplace(
        indexKey({chain.resource, chain.namespace_name, chain.verb, generate_name}), position);
  }
}

std::optional<ChainIndex::Position> ChainIndex::partnerOf(const MutationChain& chain) const {
  auto lookup = [](const std::map<std::string, Position>& map,
                   const std::string& key) -> std::optional<Position> {
    const auto found = map.find(key);
    if (found == map.end()) return std::nullopt;
    return found->second;
  };
  // An empty verb matches any, as in findChain.
  auto same = chain.verb.empty()
                  ? lookup(by_object_, indexKey({chain.resource, chain.namespace_name, chain.name}))
                  : lookup(by_name_, indexKey({chain.resource, chain.namespace_name, chain.name,
                                               chain.verb}));
  if (same) return same;
  const std::string generate_name = generateNameOf(chain);
  if (generate_name.empty()) return std::nullopt;
  return lookup(by_generate_name_,
                indexKey({chain.resource, chain.namespace_name, chain.verb, generate_name}));
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

core::Result<ReplayResult> replayChain(const MutationChain& chain, const ReplayOptions& options) {
  const std::optional<json>& base =
      options.base_object ? options.base_object : chain.request_object;
  if (!base) {
    return core::makeError(
        "audit " + chain.audit_id + ": no requestObject (the event's level is below Request)",
        core::ErrorCode::kFailedPrecondition);
  }
  if (!chain.response_object) {
    return core::makeError("audit " + chain.audit_id +
                               ": no responseObject (the event's level is below RequestResponse)",
                           core::ErrorCode::kFailedPrecondition);
  }
  // The first patch applies to the base itself: the only copies are those applyPatch makes.
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
    auto patch = core::decodeParsedPatch(*step.patch);
    if (!patch.ok()) return patch.error().within(label);
    auto applied = core::applyPatch(object ? *object : *base, *patch);
    if (!applied.ok()) return applied.error().within(label);
    object = std::move(*applied);
  }

  ReplayResult result;
  result.patched = object ? std::move(*object) : *base;
  std::vector<std::string> ignored = {
      "/metadata/uid",           "/metadata/resourceVersion", "/metadata/creationTimestamp",
      "/metadata/managedFields", "/metadata/generation",      "/status"};
  for (const char* filled : {"/metadata/name", "/metadata/namespace"}) {
    if (!hasPointer(*base, filled)) ignored.emplace_back(filled);
  }
  ignored.insert(ignored.end(), options.ignored_paths.begin(), options.ignored_paths.end());
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
    const json* const documents[] = {&result.patched, &*chain.response_object};
    for (const json* doc : documents) {
      const json* node = doc;
      for (std::size_t i = 0; node != nullptr && i < tokens.size(); ++i) {
        if (!node->is_object()) {
          only_objects = false;
          break;
        }
        const auto it = node->find(tokens[i]);
        node = it == node->end() ? nullptr : &*it;
      }
    }
    ignored_tokens.push_back(tokens);
  }
  std::optional<Difference> difference;
  if (only_objects) {
    Ignored top;
    for (const auto& tokens : ignored_tokens) top.paths.push_back(&tokens);
    difference = firstDifference(result.patched, *chain.response_object, "",
                                 options.ignore_fields_only_in_response, top);
  } else {
    json replayed = result.patched;
    json response = *chain.response_object;
    for (const auto& pointer : ignored) {
      erasePointer(replayed, pointer);
      erasePointer(response, pointer);
    }
    difference =
        firstDifference(replayed, response, "", options.ignore_fields_only_in_response, Ignored{});
  }
  if (difference) {
    result.matches = false;
    result.first_difference = difference->pointer;
    result.detail = difference->detail;
  } else {
    result.matches = true;
  }
  return result;
}

std::vector<std::string> compareChains(const MutationChain& expected, const MutationChain& actual) {
  std::vector<std::string> out;
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
    const MutationStep& e = *w->second;
    const MutationStep& a = *g->second;
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
    if (e.patch == a.patch) continue;
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
  if (chain.steps.empty()) out += "  no mutating webhook was called\n";
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
  for (const auto& [key, value] : chain.webhook_annotations) {
    out += "  annotation " + key + " = " + value + "\n";
  }
  for (const auto& problem : chain.problems) out += "  problem: " + problem + "\n";
  if (!chain.steps.empty()) {
    ReplayOptions options;
    options.ignore_fields_only_in_response = true;
    auto replay = replayChain(chain, options);
    if (!replay.ok()) {
      out += "  replay: not possible: " + replay.error().message + "\n";
      // A path the patch needs is missing from the requestObject.
      if (replay.error().code == core::ErrorCode::kNotFound) {
        // docs/admission-chain.md §7.2: requestObject is the body as received.
        out += "    (the requestObject is the request as the client sent it, before defaulting "
               "and the in-tree plugins the webhooks saw; see ReplayOptions::base_object)\n";
      }
    } else if (replay->matches) {
      out += "  replay: the patches turn the requestObject into the responseObject\n";
    } else {
      out += "  replay: differs at " +
             (replay->first_difference.empty() ? std::string("the root")
                                               : replay->first_difference) +
             ": " + replay->detail + "\n";
    }
  }
  return out;
}

}  // namespace harness::audit
