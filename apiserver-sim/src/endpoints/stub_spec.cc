// parseStubSpec: the scenario's stub definition (format in stub_webhook.h).

#include <cmath>

#include <fmt/format.h>

#include "harness/core/field_errors.h"
#include "harness/core/json_pointer.h"
#include "harness/go/strconv.h"
#include "harness/go/time.h"
#include "harness/sim/stub_webhook.h"
#include "json_fields.h"

namespace harness::sim {

namespace {

using detail::ObjectFields;
using detail::invalidField;
using detail::typeError;
using nlohmann::json;

core::Error notSupported(const std::string& path, std::string_view value,
                         const std::vector<std::string>& supported) {
  return core::toError(core::FieldError::notSupported(path, value, supported));
}

// An HTTP field name is an RFC 9110 token; a value may not contain CR, LF or NUL (they would end
// the header early and let a scenario forge the rest of the response).
bool isToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    const bool ok = std::isalnum(c) || std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) !=
                                            std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

bool isFieldValue(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

core::Result<std::map<std::string, std::string>> stringMap(ObjectFields& fields,
                                                          std::string_view key) {
  std::map<std::string, std::string> out;
  const json* value = fields.get(key);
  if (!value || value->is_null()) return out;
  const std::string path = fields.pathOf(key);
  if (!value->is_object()) return typeError(path, "a map of strings", *value);
  for (auto it = value->begin(); it != value->end(); ++it) {
    if (!it->is_string()) return typeError(fmt::format("{}[{}]", path, it.key()), "a string", *it);
    out.emplace(it.key(), it->get<std::string>());
  }
  return out;
}

core::Result<StubHttpAnswer> parseHttpAnswer(const json& value, const std::string& path) {
  auto fields = ObjectFields::open(value, path);
  if (!fields) return fields.error();
  StubHttpAnswer out;
  auto status = fields->integer("status");
  if (!status) return status.error();
  if (*status) {
    // Beast writes any three-digit code; Go's client reads any three-digit code.
    if (**status < 100 || **status > 999) {
      return invalidField(fields->pathOf("status"),
                          fmt::format("must be between 100 and 999, got {}", **status));
    }
    out.status = static_cast<int>(**status);
  }
  auto body = fields->string("body");
  if (!body) return body.error();
  if (*body) out.body = **body;
  auto content_type = fields->string("contentType");
  if (!content_type) return content_type.error();
  if (*content_type) {
    if (!isFieldValue(**content_type)) {
      return invalidField(fields->pathOf("contentType"), "must not contain CR, LF or NUL");
    }
    out.content_type = **content_type;
  }
  auto headers = stringMap(*fields, "headers");
  if (!headers) return headers.error();
  for (auto& [name, header_value] : *headers) {
    const std::string header_path = fmt::format("{}[{}]", fields->pathOf("headers"), name);
    if (!isToken(name)) {
      return invalidField(header_path, "invalid header name");
    }
    if (!isFieldValue(header_value)) {
      return invalidField(header_path, "must not contain CR, LF or NUL");
    }
    out.headers.emplace_back(name, header_value);
  }
  HARNESS_TRY(fields->rejectUnknown());
  return out;
}

core::Result<StubBehaviour> parseBehaviour(const json& value, const std::string& path) {
  auto fields = ObjectFields::open(value, path);
  if (!fields) return fields.error();
  StubBehaviour out;

  auto allowed = fields->boolean("allowed");
  if (!allowed) return allowed.error();
  if (*allowed) out.allowed = **allowed;

  if (const json* status = fields->get("status"); status && !status->is_null()) {
    if (!status->is_object()) return typeError(fields->pathOf("status"), "an object", *status);
    out.status = *status;
  }

  const json* patch = fields->get("patch");
  if (patch && !patch->is_null()) {
    if (!patch->is_array()) {
      return typeError(fields->pathOf("patch"), "a list of JSON patch operations", *patch);
    }
    out.patch = patch->dump(-1, ' ', false, json::error_handler_t::replace);
  }
  auto raw_patch = fields->string("rawPatch");
  if (!raw_patch) return raw_patch.error();
  if (*raw_patch) {
    if (out.patch) {
      return invalidField(fields->pathOf("rawPatch"), "may not be combined with patch");
    }
    out.patch = **raw_patch;
  }

  auto mutator = fields->string("mutator");
  if (!mutator) return mutator.error();
  if (*mutator) {
    if (out.patch) {
      return core::makeError(
          fmt::format("{}: may not be combined with a patch", fields->pathOf("mutator")));
    }
    auto parsed = parseMutator(**mutator);
    if (!parsed) return parsed.error().within(fields->pathOf("mutator"));
    out.mutator = std::move(*parsed);
  }

  if (const json* patch_type = fields->get("patchType")) {
    out.patch_type_overridden = true;
    if (patch_type->is_string()) {
      out.patch_type = patch_type->get<std::string>();
    } else if (!patch_type->is_null()) {
      return typeError(fields->pathOf("patchType"), "a string or null", *patch_type);
    }
  }

  auto warnings = fields->stringList("warnings");
  if (!warnings) return warnings.error();
  if (*warnings) out.warnings = std::move(**warnings);

  auto annotations = stringMap(*fields, "auditAnnotations");
  if (!annotations) return annotations.error();
  out.audit_annotations = std::move(*annotations);

  auto delay = fields->string("delay");
  if (!delay) return delay.error();
  if (*delay) {
    const std::string delay_path = fields->pathOf("delay");
    auto ns = go::parseDuration(**delay);
    if (!ns) {
      // Go's text without its package prefix: `invalid duration "2 seconds"`.
      return invalidField(delay_path, ns.error().text());
    }
    if (*ns < 0) {
      return invalidField(delay_path,
                          fmt::format("must not be negative, got {}", go::timeQuote(**delay)));
    }
    out.delay = std::chrono::nanoseconds(*ns);
  }

  for (auto [key, target] : {std::pair{"uid", &out.uid}, std::pair{"apiVersion", &out.api_version},
                             std::pair{"kind", &out.kind}}) {
    auto text = fields->string(key);
    if (!text) return text.error();
    *target = std::move(*text);
  }

  auto omit = fields->boolean("omitResponse");
  if (!omit) return omit.error();
  out.omit_response = omit->value_or(false);

  if (const json* http = fields->get("http"); http && !http->is_null()) {
    auto answer = parseHttpAnswer(*http, fields->pathOf("http"));
    if (!answer) return answer.error();
    out.http = std::move(*answer);
  }

  auto close = fields->boolean("close");
  if (!close) return close.error();
  out.close = close->value_or(false);

  HARNESS_TRY(fields->rejectUnknown());

  // A raw HTTP answer or a hang-up replaces the review: the review fields would be ignored, which
  // is never what a scenario author means.
  if (out.close || out.http) {
    const std::string_view mode = out.close ? "close" : "http";
    for (const auto& key : fields->presentKeys()) {
      if (key == mode || key == "delay") continue;
      if (key == "close" && !out.close) continue;  // close: false next to http
      return invalidField(std::string(path),
                          fmt::format("{} may only be combined with delay, not {}", mode, key));
    }
  }
  return out;
}

core::Result<std::vector<std::size_t>> parseCalls(const json& value, const std::string& path) {
  auto one = [](const json& item, const std::string& item_path) -> core::Result<std::size_t> {
    if (item.is_number_unsigned() || item.is_number_integer()) {
      const auto n = item.get<std::int64_t>();
      if (n >= 1) return static_cast<std::size_t>(n);
    }
    if (item.is_number()) {
      return invalidField(item_path,
                          fmt::format("must be a positive integer, got {}", item.dump()));
    }
    return typeError(item_path, "a positive integer", item);
  };
  std::vector<std::size_t> out;
  if (value.is_array()) {
    if (value.empty()) return invalidField(path, "must not be empty");
    for (std::size_t i = 0; i < value.size(); ++i) {
      auto n = one(value[i], fmt::format("{}[{}]", path, i));
      if (!n) return n.error();
      out.push_back(*n);
    }
    return out;
  }
  if (!value.is_number()) return typeError(path, "a positive integer or a list of them", value);
  auto n = one(value, path);
  if (!n) return n.error();
  out.push_back(*n);
  return out;
}

core::Result<StubCondition> parseCondition(const json& value, const std::string& path) {
  auto fields = ObjectFields::open(value, path);
  if (!fields) return fields.error();
  StubCondition out;

  auto operation = fields->string("operation");
  if (!operation) return operation.error();
  if (*operation) {
    static const std::vector<std::string> kOperations = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
    if (std::find(kOperations.begin(), kOperations.end(), **operation) == kOperations.end()) {
      return notSupported(fields->pathOf("operation"), **operation, kOperations);
    }
    out.operation = std::move(*operation);
  }

  auto dry_run = fields->boolean("dryRun");
  if (!dry_run) return dry_run.error();
  out.dry_run = *dry_run;

  for (auto [key, target] :
       {std::pair{"subResource", &out.sub_resource}, std::pair{"kind", &out.kind},
        std::pair{"namespace", &out.namespace_name}, std::pair{"name", &out.name},
        std::pair{"path", &out.path}}) {
    auto text = fields->string(key);
    if (!text) return text.error();
    *target = std::move(*text);
  }
  if (out.path && !out.path->starts_with('/')) {
    return invalidField(fields->pathOf("path"),
                        fmt::format("must start with \"/\", got {}", go::quote(*out.path)));
  }

  if (const json* call = fields->get("call"); call && !call->is_null()) {
    auto calls = parseCalls(*call, fields->pathOf("call"));
    if (!calls) return calls.error();
    out.calls = std::move(*calls);
  }

  if (const json* pointers = fields->get("pointers"); pointers && !pointers->is_null()) {
    const std::string pointers_path = fields->pathOf("pointers");
    if (!pointers->is_object()) {
      return typeError(pointers_path, "a map from JSON pointer to value", *pointers);
    }
    for (auto it = pointers->begin(); it != pointers->end(); ++it) {
      if (auto parsed = core::JsonPointer::parse(it.key()); !parsed) {
        return invalidField(fmt::format("{}[{}]", pointers_path, it.key()), parsed.error().message);
      }
      out.pointers.emplace_back(it.key(), *it);
    }
  }

  HARNESS_TRY(fields->rejectUnknown());
  return out;
}

core::Result<StubRule> parseRule(const json& value, const std::string& path) {
  auto fields = ObjectFields::open(value, path);
  if (!fields) return fields.error();
  StubRule out;
  if (const json* when = fields->get("when"); when && !when->is_null()) {
    auto condition = parseCondition(*when, fields->pathOf("when"));
    if (!condition) return condition.error();
    out.when = std::move(*condition);
  }
  const json* respond = fields->get("respond");
  const json* sequence = fields->get("sequence");
  if (respond && !respond->is_null() && sequence && !sequence->is_null()) {
    return invalidField(fields->pathOf("sequence"), "may not be combined with respond");
  }
  if (sequence && !sequence->is_null()) {
    const std::string sequence_path = fields->pathOf("sequence");
    if (!sequence->is_array()) return typeError(sequence_path, "a list of behaviours", *sequence);
    if (sequence->empty()) return invalidField(sequence_path, "must not be empty");
    for (std::size_t i = 0; i < sequence->size(); ++i) {
      auto behaviour = parseBehaviour((*sequence)[i], fmt::format("{}[{}]", sequence_path, i));
      if (!behaviour) return behaviour.error();
      out.sequence.push_back(std::move(*behaviour));
    }
    out.is_sequence = true;
  } else if (respond && !respond->is_null()) {
    auto behaviour = parseBehaviour(*respond, fields->pathOf("respond"));
    if (!behaviour) return behaviour.error();
    out.sequence.push_back(std::move(*behaviour));
  } else {
    out.sequence.emplace_back();  // neither: allow
  }
  HARNESS_TRY(fields->rejectUnknown());
  return out;
}

}  // namespace

core::Result<StubSpec> parseStubSpec(const nlohmann::json& json, std::string_view path) {
  auto fields = ObjectFields::open(json, std::string(path));
  if (!fields) return fields.error();
  StubSpec out;
  auto tls = fields->string("tls");
  if (!tls) return tls.error();
  if (*tls) {
    if (**tls == "valid") {
      out.tls = StubTls::kValid;
    } else if (**tls == "untrusted") {
      out.tls = StubTls::kUntrusted;
    } else if (**tls == "wrong-host") {
      out.tls = StubTls::kWrongHost;
    } else {
      return notSupported(fields->pathOf("tls"), **tls, {"valid", "untrusted", "wrong-host"});
    }
  }
  if (const auto* responses = fields->get("responses"); responses && !responses->is_null()) {
    const std::string responses_path = fields->pathOf("responses");
    if (!responses->is_array()) return typeError(responses_path, "a list of rules", *responses);
    for (std::size_t i = 0; i < responses->size(); ++i) {
      auto rule = parseRule((*responses)[i], fmt::format("{}[{}]", responses_path, i));
      if (!rule) return rule.error();
      out.responses.push_back(std::move(*rule));
    }
  }
  HARNESS_TRY(fields->rejectUnknown());
  return out;
}

}  // namespace harness::sim
