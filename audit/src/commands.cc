// The `apiserver-sim audit` commands (commands.h).

#include "harness/audit/commands.h"

#include <stdlib.h>  // mkstemp
#include <unistd.h>  // close, unlink

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>

#include "harness/audit/log.h"
#include "harness/audit/policy.h"
#include "harness/audit/timeline.h"
#include "harness/core/json.h"
#include "harness/core/unstructured.h"
#include "harness/core/yaml.h"

namespace harness::audit {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kExitDiffers = 1;
constexpr int kExitBadInput = 2;

// Reading several logs, counting what went wrong: bad lines and unreadable files make the exit
// status 2; an incomplete last line is only noted.
struct Reading {
  std::ostream& err;
  std::size_t bad_lines = 0;
  bool unreadable = false;

  void badLine(const std::string& message) {
    ++bad_lines;
    err << message << "\n";
  }
  void fail(const std::string& message) {
    unreadable = true;
    err << "apiserver-sim: " << message << "\n";
  }
  // Ends a read: the summary line for bad lines; false when the input was not good.
  bool finish() {
    if (bad_lines > 0) {
      err << "apiserver-sim: " << bad_lines << " line" << (bad_lines == 1 ? "" : "s")
          << " could not be read as audit events\n";
    }
    return bad_lines == 0 && !unreadable;
  }
};

using ChainSink = std::function<void(ChainReader::Entry&&, std::size_t file_index)>;

// Streams the chains of `logs`, in order, to `sink`.
void readChains(const std::vector<std::string>& logs, bool keep_all, Reading& reading,
                const ChainSink& sink) {
  for (std::size_t i = 0; i < logs.size(); ++i) {
    auto file = LogFile::open(logs[i]);
    if (!file.ok()) {
      reading.fail(file.error().message);
      continue;
    }
    // The responseObjects are only replayed against (and pairing keys read from the
    // requestObject's metadata first): left as simdjson parsed them.
    ChainReader::Options options;
    options.keep_all = keep_all;
    options.defer_response_object = true;
    ChainReader reader((*file)->stream(), logs[i], std::move(options));
    while (auto entry = reader.next([&](const std::string& m) { reading.badLine(m); })) {
      sink(std::move(*entry), i);
    }
    if (auto error = (*file)->error()) {
      reading.fail(*error);
    } else if (reader.failed()) {
      reading.fail("cannot read " + logs[i]);
    } else if (reader.incompleteLastLine()) {
      reading.err << "note: " << *reader.incompleteLastLine() << "\n";
    }
  }
}

bool isRead(std::string_view verb) { return verb == "get" || verb == "list" || verb == "watch"; }

std::string objectOf(const MutationChain& chain) {
  return chain.namespace_name.empty() ? chain.name : chain.namespace_name + "/" + chain.name;
}

// A log readable again at any offset: the file itself when it is a plain file, else its
// decompressed text in a temporary file (removed with this object).
class SeekableLog {
 public:
  static core::Result<std::unique_ptr<SeekableLog>> open(const std::string& path) {
    auto file = LogFile::open(path);
    if (!file.ok()) return file.error();
    std::error_code ec;
    auto log = std::unique_ptr<SeekableLog>(new SeekableLog());
    if (!(*file)->compressed() && fs::is_regular_file(path, ec)) {
      log->path_ = path;
      return log;
    }
    std::string pattern = (fs::temp_directory_path(ec) / "apiserver-sim-audit-XXXXXX").string();
    const int fd = mkstemp(pattern.data());
    if (fd < 0) return core::Error{"cannot create a temporary file to read " + path + " again"};
    close(fd);
    log->path_ = pattern;
    log->temporary_ = true;
    std::ofstream copy(pattern, std::ios::binary | std::ios::trunc);
    copy << (*file)->stream().rdbuf();
    copy.flush();
    if (!copy) return core::Error{"cannot write " + pattern + " (a copy of " + path + ")"};
    if (auto error = (*file)->error()) return core::Error{*error};
    return log;
  }
  ~SeekableLog() {
    if (temporary_) unlink(path_.c_str());
  }
  SeekableLog(const SeekableLog&) = delete;
  SeekableLog& operator=(const SeekableLog&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  SeekableLog() = default;
  std::string path_;
  bool temporary_ = false;
};

// The chain of the event at `position` (compare reads the indexed log twice).
core::Result<MutationChain> chainAt(std::istream& log, const std::string& name,
                                    ChainIndex::Position position) {
  log.clear();
  log.seekg(static_cast<std::streamoff>(position.offset));
  // Read in small chunks: one line is wanted (an event of a few KiB, usually).
  constexpr std::size_t kLineChunk = std::size_t{64} << 10;
  LogLineReader lines(log, kMaxLogLineBytes, position.offset, position.line_number, kLineChunk);
  auto line = lines.next();
  core::Result<EventObjectsApart> event = core::Error{"no such line"};
  if (line && !line->too_long && looksLikeEventList(line->text)) {
    auto items = parseEventListObjectsApart(line->text);
    if (!items.ok()) {
      event = items.error();
    } else if (position.item < items->size()) {
      event = std::move((*items)[position.item]);
    }
  } else if (line && !line->too_long) {
    event = parseLogLineObjectsApart(line->text);
  }
  if (!event.ok()) {
    return core::Error{name + ":" + std::to_string(position.line_number) +
                       ": changed while it was read: " + event.error().message};
  }
  return chainOf(std::move(*event));
}

}  // namespace

bool ChainFilter::empty() const {
  return namespace_name.empty() && resource.empty() && user.empty() && verb.empty() &&
         webhook.empty() && !outcome;
}

bool ChainFilter::matches(const MutationChain& chain) const {
  if (!namespace_name.empty() && chain.namespace_name != namespace_name) return false;
  if (!resource.empty()) {
    const std::string group_resource =
        chain.api_group.empty() ? chain.resource : chain.resource + "." + chain.api_group;
    if (resource != chain.resource && resource != group_resource) return false;
  }
  if (!user.empty() && chain.user != user) return false;
  if (!verb.empty() && chain.verb != verb) return false;
  if (outcome && chain.outcome.kind != *outcome) {
    // failed open is an admitted request with failed-open annotations
    return false;
  }
  if (!webhook.empty()) {
    const bool in_steps = std::any_of(chain.steps.begin(), chain.steps.end(),
                                      [&](const MutationStep& s) { return s.webhook == webhook; });
    const bool decided = chain.outcome.decided_by == webhook;
    const bool failed_open =
        std::any_of(chain.outcome.failed_open.begin(), chain.outcome.failed_open.end(),
                    [&](const std::string& f) {
                      return f.find("\"" + webhook + "\"") != std::string::npos;
                    });
    const bool annotated = std::any_of(
        chain.webhook_annotations.begin(), chain.webhook_annotations.end(),
        [&](const auto& kv) { return kv.first.rfind(webhook + "/", 0) == 0; });
    if (!in_steps && !decided && !failed_open && !annotated) return false;
  }
  return true;
}

json chainJson(const MutationChain& chain) {
  json steps = json::array();
  for (const auto& step : chain.steps) {
    json item = {{"round", step.round},       {"index", step.index},
                 {"webhook", step.webhook},   {"configuration", step.configuration},
                 {"mutated", step.mutated},   {"failedOpen", step.failed_open}};
    if (step.patch) item["patch"] = *step.patch;
    steps.push_back(std::move(item));
  }
  const RequestOutcome& o = chain.outcome;
  json outcome = {{"kind", std::string(toString(o.kind))}, {"code", o.code}};
  if (!o.reason.empty()) outcome["reason"] = o.reason;
  if (!o.message.empty()) outcome["message"] = o.message;
  if (!o.decided_by.empty()) {
    outcome["decidedBy"] = {{"kind", o.decided_by_kind}, {"name", o.decided_by}};
    if (!o.binding.empty()) outcome["decidedBy"]["binding"] = o.binding;
  }
  if (!o.failed_open.empty()) outcome["failedOpen"] = o.failed_open;
  if (!o.policy_audit.empty()) outcome["policyAudit"] = o.policy_audit;
  json annotations = json::object();
  for (const auto& [key, value] : chain.webhook_annotations) annotations[key] = value;
  const ReplayReport replay = replayReport(chain);
  json out = {{"auditID", chain.audit_id},
              {"verb", chain.verb},
              {"resource", chain.resource},
              {"apiGroup", chain.api_group},
              {"subresource", chain.subresource},
              {"namespace", chain.namespace_name},
              {"name", chain.name},
              {"user", chain.user},
              {"level", std::string(toString(chain.level))},
              {"outcome", std::move(outcome)},
              {"mutatingWebhooks", std::move(steps)},
              {"annotations", std::move(annotations)},
              {"replay", replay.lines}};
  if (!chain.problems.empty()) out["problems"] = chain.problems;
  if (chain.received) out["requestReceivedTimestamp"] = formatMicroTime(*chain.received);
  if (chain.completed) out["stageTimestamp"] = formatMicroTime(*chain.completed);
  return out;
}

int chainsCommand(const ChainsOptions& given, std::ostream& out, std::ostream& err) {
  ChainsOptions options = given;
  options.logs = orderRotatedLogs(std::move(options.logs));
  Reading reading{err};
  const bool json_output = options.output == "json";
  std::size_t chains = 0;
  // -o json: one document, written as the chains stream by (no array held in memory).
  if (json_output) out << "{\"chains\":[";
  readChains(options.logs, options.all, reading, [&](ChainReader::Entry&& entry, std::size_t) {
    if (!options.filter.matches(entry.chain)) return;
    if (json_output) {
      out << (chains == 0 ? "\n" : ",\n")
          << core::dumpJson(chainJson(entry.chain));
    } else {
      out << formatChain(entry.chain);
    }
    ++chains;
  });
  const bool good = reading.finish();
  if (json_output) {
    out << "\n],\"count\":" << chains << "}\n";
  } else {
    std::string where = options.logs.size() == 1 ? options.logs[0]
                                                 : std::to_string(options.logs.size()) + " logs";
    out << chains << (options.all ? " request" : " chain") << (chains == 1 ? "" : "s")
        << (options.filter.empty() ? "" : " matching") << " in " << where << "\n";
  }
  out.flush();
  return good ? 0 : kExitBadInput;
}

int compareCommand(const CompareOptions& given, std::ostream& out, std::ostream& err) {
  CompareOptions options = given;
  options.expected = orderRotatedLogs(std::move(options.expected));
  options.actual = orderRotatedLogs(std::move(options.actual));
  Reading reading{err};
  // Index `actual`: its files made seekable, the keys and positions of its requests.
  std::vector<std::unique_ptr<SeekableLog>> seekable;
  for (const auto& path : options.actual) {
    auto log = SeekableLog::open(path);
    if (!log.ok()) {
      reading.fail(log.error().message);
      reading.finish();
      return kExitBadInput;
    }
    seekable.push_back(std::move(*log));
  }
  ChainIndex index(options.pair_by);
  {
    // The copies of compressed files have the same lines: messages name the original files.
    for (std::size_t i = 0; i < seekable.size(); ++i) {
      std::ifstream in(seekable[i]->path(), std::ios::binary);
      // Reads are never indexed (below): skipped unparsed; the others with their objects'
      // metadata only (pairing keys), read whole again when paired.
      ChainReader::Options index_options;
      index_options.keep_all = true;
      if (!options.full_parse) {
        index_options.metadata_only = true;
        index_options.wanted = [all = options.all](const EventPeek& peek) {
          return all || !isRead(peek.verb);
        };
      }
      ChainReader reader(in, options.actual[i], std::move(index_options));
      while (auto entry = reader.next([&](const std::string& m) { reading.badLine(m); })) {
        const MutationChain& chain = entry->chain;
        // Reads are never chains; writes are indexed so that a chain of the other log finds
        // its partner even where no webhook touched it, and reported as unpaired only when
        // they are chains themselves (as `chains` would list them).
        if (!options.all && isRead(chain.verb)) continue;
        const bool listed = options.all || !chain.steps.empty() ||
                            !chain.outcome.failed_open.empty() ||
                            chain.outcome.kind != OutcomeKind::kAdmitted;
        index.add(chain, {entry->line_number, entry->offset, i, entry->item},
                  listed && options.filter.matches(chain));
      }
      if (reader.failed()) reading.fail("cannot read " + options.actual[i]);
      if (reader.incompleteLastLine()) err << "note: " << *reader.incompleteLastLine() << "\n";
    }
  }
  std::vector<std::unique_ptr<std::ifstream>> again;
  again.reserve(seekable.size());
  for (const auto& log : seekable) {
    again.push_back(std::make_unique<std::ifstream>(log->path(), std::ios::binary));
  }
  const bool json_output = options.output == "json";
  std::size_t compared = 0, paired = 0, differing = 0, unpaired = 0;
  std::optional<std::string> fatal;
  if (json_output) out << "{\"pairs\":[";
  bool first_json = true;
  readChains(options.expected, options.all, reading, [&](ChainReader::Entry&& entry,
                                                         std::size_t) {
    if (fatal) return;
    const MutationChain& chain = entry.chain;
    if (!options.filter.matches(chain)) return;
    ++compared;
    const auto partner = index.take(chain);
    json item;
    if (json_output) {
      item = {{"expected", chainJson(chain)}, {"key", pairingKey(chain, options.pair_by)}};
    } else {
      out << formatChain(chain);
    }
    std::vector<std::string> lines;
    bool differs = false;
    if (!partner) {
      ++unpaired;
      lines.push_back("no partner in the other log (key: " + pairingKey(chain, options.pair_by) +
                      ")");
    } else {
      ++paired;
      auto other = chainAt(*again[partner->file], options.actual[partner->file], *partner);
      if (!other.ok()) {
        fatal = other.error().message;
        return;
      }
      lines.push_back("paired with " + other->verb + " " + objectOf(*other) + " (auditID " +
                      other->audit_id + ", " + options.actual[partner->file] + ":" +
                      std::to_string(partner->line_number) + ")");
      for (auto& line : compareChains(chain, *other)) {
        differs = differs || isDifference(line);
        lines.push_back(std::move(line));
      }
      if (!differs) lines.push_back("the same chain");
      if (json_output) item["actual"] = chainJson(*other);
    }
    if (differs) ++differing;
    if (json_output) {
      item["compare"] = lines;
      item["differs"] = differs;
      item["paired"] = partner.has_value();
      out << (first_json ? "\n" : ",\n") << core::dumpJson(item);
      first_json = false;
    } else {
      for (const auto& line : lines) out << "  compare: " << line << "\n";
    }
  });
  if (fatal) {
    reading.fail(*fatal);
    reading.finish();
    return kExitBadInput;
  }
  const auto leftover = index.unpaired();
  std::size_t leftover_chains = 0;
  if (json_output) {
    out << "\n],\"unpairedInActual\":[";
    for (std::size_t i = 0; i < leftover.size(); ++i) {
      out << (i == 0 ? "" : ",")
          << json(options.actual[leftover[i].first.file] + ":" +
                  std::to_string(leftover[i].first.line_number) + " " + leftover[i].second)
                 .dump();
    }
    out << "],\"compared\":" << compared << ",\"paired\":" << paired
        << ",\"differ\":" << differing << "}\n";
  } else {
    for (const auto& [position, key] : leftover) {
      if (++leftover_chains > 20) continue;
      out << "only in " << options.actual[position.file] << ":" << position.line_number << ": "
          << key << "\n";
    }
    if (leftover.size() > 20) out << "... and " << leftover.size() - 20 << " more\n";
    out << compared << " chain" << (compared == 1 ? "" : "s") << " compared, " << paired
        << " paired (by " << toString(options.pair_by) << "), " << differing << " differ, "
        << unpaired << " without a partner; " << leftover.size()
        << " request" << (leftover.size() == 1 ? "" : "s") << " only in the other log\n";
    if (compared > 0 && paired == 0) {
      out << "nothing paired: no request of one log has the key of a request of the other"
          << (options.pair_by == PairBy::kOrder ? "" : " (try --pair-by order or labels)")
          << "\n";
    }
  }
  out.flush();
  const bool good = reading.finish();
  if (!good) return kExitBadInput;
  return differing == 0 && unpaired == 0 && paired > 0 ? 0 : kExitDiffers;
}

namespace {

std::string describeRule(const PolicyRule& rule) {
  std::string out = "level " + std::string(toString(rule.level));
  auto list = [&](const char* name, const std::vector<std::string>& values) {
    if (values.empty()) return;
    out += std::string(", ") + name + " [";
    for (std::size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i];
    out += "]";
  };
  list("users", rule.users);
  list("userGroups", rule.user_groups);
  list("verbs", rule.verbs);
  if (!rule.resources.empty()) {
    out += ", resources [";
    for (std::size_t i = 0; i < rule.resources.size(); ++i) {
      const auto& group = rule.resources[i];
      out += (i ? "; " : "") + std::string("group \"") + group.group + "\"";
      if (!group.resources.empty()) {
        out += ":";
        for (const auto& r : group.resources) out += " " + r;
      }
    }
    out += "]";
  }
  list("namespaces", rule.namespaces);
  list("nonResourceURLs", rule.non_resource_urls);
  return out;
}

core::Result<std::string> readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Error{"cannot read " + path};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A string member of `object` at `field`, or an error naming it.
core::Result<std::string> stringField(const json& object, const char* field,
                                      const std::string& where) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return core::Error{where + ": " + field + ": expected a string, got " +
                       std::string(it->type_name())};
  }
  return it->get<std::string>();
}

core::Result<RequestAttributes> attributesOf(const json& document, const std::string& where) {
  if (!document.is_object()) return core::Error{where + ": expected an object"};
  RequestAttributes attributes;
  if (core::nestedString(document, {"kind"}) == "Event") {
    auto event = eventFromJson(document);
    if (!event.ok()) return core::Error{where + ": " + event.error().message};
    attributes.user = event->user.username;
    attributes.groups = event->user.groups;
    attributes.has_user = !event->user.username.empty();
    attributes.verb = event->verb;
    attributes.path = event->request_uri.substr(0, event->request_uri.find('?'));
    if (event->object_ref) {
      const auto& ref = *event->object_ref;
      attributes.resource = ref.resource;
      attributes.subresource = ref.subresource;
      attributes.namespace_name = ref.namespace_name;
      attributes.name = ref.name;
      attributes.api_group = ref.api_group;
      attributes.api_version = ref.api_version;
    } else {
      attributes.resource_request = false;
    }
    return attributes;
  }
  static constexpr const char* kKnown[] = {"user",        "groups",    "verb", "apiGroup",
                                           "apiVersion",  "resource",  "subresource",
                                           "namespace",   "name",      "path"};
  for (const auto& [key, value] : document.items()) {
    if (std::find(std::begin(kKnown), std::end(kKnown), key) == std::end(kKnown)) {
      return core::Error{std::string(where)
                             .append(": unknown field \"")
                             .append(key)
                             .append("\" (known: user, groups, verb, apiGroup, apiVersion, "
                                     "resource, subresource, namespace, name, path)")};
    }
  }
  struct Field {
    const char* name;
    std::string* into;
  };
  for (const Field field : {Field{"user", &attributes.user}, Field{"verb", &attributes.verb},
                            Field{"apiGroup", &attributes.api_group},
                            Field{"apiVersion", &attributes.api_version},
                            Field{"resource", &attributes.resource},
                            Field{"subresource", &attributes.subresource},
                            Field{"namespace", &attributes.namespace_name},
                            Field{"name", &attributes.name}, Field{"path", &attributes.path}}) {
    auto value = stringField(document, field.name, where);
    if (!value.ok()) return value.error();
    *field.into = std::move(*value);
  }
  if (const auto groups = document.find("groups"); groups != document.end()) {
    if (!groups->is_array()) return core::Error{where + ": groups: expected a list of strings"};
    for (std::size_t i = 0; i < groups->size(); ++i) {
      if (!(*groups)[i].is_string()) {
        return core::Error{where + ": groups[" + std::to_string(i) + "]: expected a string"};
      }
      attributes.groups.push_back((*groups)[i].get<std::string>());
    }
  }
  if (attributes.verb.empty()) return core::Error{where + ": verb: required"};
  attributes.has_user = !attributes.user.empty();
  attributes.resource_request = !attributes.resource.empty();
  if (!attributes.resource_request && attributes.path.empty()) {
    return core::Error{where + ": either resource or path is required"};
  }
  return attributes;
}

}  // namespace

int policyCheckCommand(const std::string& policy_path, const std::string& request_path,
                       std::ostream& out, std::ostream& err) {
  auto policy_text = readText(policy_path);
  if (!policy_text.ok()) {
    err << "apiserver-sim: " << policy_text.error().message << "\n";
    return kExitBadInput;
  }
  auto policy = parsePolicy(*policy_text, policy_path);
  if (!policy.ok()) {
    err << "apiserver-sim: " << policy.error().message << "\n";
    return kExitBadInput;
  }
  for (const auto& warning : policy->warnings) err << "warning: " << warning << "\n";
  auto request_text = readText(request_path);
  if (!request_text.ok()) {
    err << "apiserver-sim: " << request_text.error().message << "\n";
    return kExitBadInput;
  }
  // One YAML/JSON document, several YAML documents, or JSON lines (an audit log).
  std::vector<std::pair<json, std::string>> documents;
  const std::string_view text = *request_text;
  const bool json_lines = text.find_first_not_of(" \t\r\n") != std::string_view::npos &&
                          text[text.find_first_not_of(" \t\r\n")] == '{' &&
                          std::count(text.begin(), text.end(), '\n') > 1 &&
                          !core::parseJson(text).ok();
  if (json_lines) {
    std::size_t number = 0, start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      const std::string_view line = text.substr(start, end - start);
      start = end + 1;
      ++number;
      if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
      const std::string where = request_path + ":" + std::to_string(number);
      auto parsed = core::parseJson(line);
      if (!parsed.ok()) {
        err << where << ": invalid JSON: " << parsed.error().message << "\n";
        return kExitBadInput;
      }
      documents.emplace_back(std::move(*parsed), where);
    }
  } else {
    auto parsed = core::parseYamlDocuments(text);
    if (!parsed.ok()) {
      err << request_path << ": " << parsed.error().message << "\n";
      return kExitBadInput;
    }
    for (std::size_t i = 0; i < parsed->size(); ++i) {
      if ((*parsed)[i].is_null()) continue;
      documents.emplace_back(std::move((*parsed)[i]),
                             parsed->size() == 1 ? request_path
                                                 : request_path + " document " +
                                                       std::to_string(i + 1));
    }
  }
  int status = 0;
  for (const auto& [document, where] : documents) {
    auto attributes = attributesOf(document, where);
    if (!attributes.ok()) {
      err << attributes.error().message << "\n";
      return kExitBadInput;
    }
    const RequestAuditConfig config = evaluatePolicy(*policy, *attributes);
    std::string request = attributes->verb + " ";
    if (attributes->resource_request) {
      request += (attributes->api_group.empty() ? "" : attributes->api_group + "/") +
                 attributes->resource +
                 (attributes->subresource.empty() ? "" : "/" + attributes->subresource);
      if (!attributes->namespace_name.empty()) request += " in " + attributes->namespace_name;
    } else {
      request += attributes->path;
    }
    request += " by " + (attributes->has_user ? attributes->user : std::string("(no user)"));
    out << where << ": " << request << ": level " << toString(config.level);
    if (config.rule_index) {
      out << ", decided by rules[" << *config.rule_index
          << "] (" << describeRule(policy->rules[*config.rule_index]) << ")";
    } else {
      out << ", no rule matched (level None)";
    }
    if (!config.omit_stages.empty()) {
      out << ", omitStages [";
      for (std::size_t i = 0; i < config.omit_stages.size(); ++i) {
        out << (i ? ", " : "") << toString(config.omit_stages[i]);
      }
      out << "]";
    }
    out << "\n";
    if (core::nestedString(document, {"kind"}) == "Event") {
      const std::string recorded = core::nestedString(document, {"level"});
      if (!recorded.empty() && recorded != toString(config.level)) {
        out << "  recorded at level " << recorded << ": this policy would give "
            << toString(config.level) << "\n";
        status = kExitDiffers;
      }
    }
  }
  return status;
}

int timelineCommand(const std::vector<std::string>& given, const std::string& audit_id,
                    const std::string& output, std::ostream& out, std::ostream& err) {
  const std::vector<std::string> logs = orderRotatedLogs(given);
  Reading reading{err};
  TimelineBuilder builder;
  for (const auto& path : logs) {
    auto file = LogFile::open(path);
    if (!file.ok()) {
      reading.fail(file.error().message);
      continue;
    }
    LogLineReader lines((*file)->stream());
    while (auto line = lines.next()) {
      // Only the lines that name the auditID are parsed.
      if (line->too_long || line->text.find(audit_id) == std::string_view::npos) continue;
      // A line may be an EventList (the webhook backend's batch, e.g. as `audit sink` received
      // it): its items are the events.
      core::Result<std::vector<Event>> parsed = std::vector<Event>();
      if (looksLikeEventList(line->text)) {
        parsed = parseEventBatch(line->text);
      } else if (auto event = parseLogLine(line->text); event.ok()) {
        parsed->push_back(std::move(*event));
      } else {
        parsed = event.error();
      }
      if (!parsed.ok()) {
        if (line->complete) {
          reading.badLine(path + ":" + std::to_string(line->number) + ": " +
                          parsed.error().message);
        }
        continue;
      }
      for (const Event& event : *parsed) {
        if (event.audit_id == audit_id) builder.add(event);
      }
    }
    if (auto error = (*file)->error()) reading.fail(*error);
  }
  const bool good = reading.finish();
  if (builder.empty()) {
    err << "apiserver-sim: no event with auditID " << audit_id << "\n";
    return good ? kExitDiffers : kExitBadInput;
  }
  const Timeline timeline = builder.build();
  if (output == "json") {
    out << timelineJson(timeline).dump(2) << "\n";
  } else {
    out << formatTimeline(timeline);
  }
  return good ? 0 : kExitBadInput;
}

}  // namespace harness::audit
