// POST, PUT, PATCH and DELETE through the admission chain (docs/admission-chain.md §1.3-§1.5).
// Followed (k8s.io/apiserver pkg/endpoints/handlers/): create.go (body negotiation and decoding,
// transformDecodeError, "the API version in the data (...) does not match the expected API
// version (...)", CreateOptions validation), update.go (checkName), patch.go (patch types,
// "PatchOptions" validation, json-patch decode 400 / apply 422 / 10000 operations 413, merge-patch
// "Invalid JSON Patch" 400, strategic merge errors 500, patchToUpdateOptions, conflict retries,
// apply-patch creates a missing object), delete.go (DeleteOptions from the body or the query,
// 200 with the object for registries with ReturnDeletedObject, else a Status Success whose details
// name the resource, registry/generic/registry/store.go finalizeDelete), rest.go (limitedReadBody:
// 3 MiB, "Request entity too large: limit is 3145728"), registry/rest/meta.go
// (EnsureObjectNamespaceMatchesRequestNamespace), apimachinery pkg/apis/meta/v1/validation
// (ValidateDryRun, ValidateFieldValidation, ValidatePatchOptions, ValidateDeleteOptions).
//
// Server-side apply (application/apply-patch+yaml) and managedFields are Kubernetes' own field
// manager when one is installed (field_manager.h: kube-cel's): patch.go's applyPatcher for an
// apply (conflicts are upstream's 409, force takes the fields over), FieldManager.UpdateNoErrors
// before admission for every other create, update and patch (create.go, update.go, patch.go
// applyPatch), with managerOrUserAgent's manager. Without it apply is simplified: the applied
// configuration is strategically merged into the stored object, or becomes the object when there
// is none (operation CREATE, 201); fields an apply would remove are kept, nothing conflicts, and
// no managedFields are recorded.

#include <algorithm>
#include <iostream>
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "discovery.h"
#include "handler.h"
#include "harness/core/field_errors.h"
#include "harness/core/json.h"
#include "harness/core/json_patch.h"
#include "harness/core/process_slot.h"
#include "harness/core/strategic_merge.h"
#include "harness/core/yaml.h"
#include "harness/sim/field_manager.h"
#include "harness/sim/field_validation.h"
#include "harness/go/fmt.h"
#include "harness/go/strconv.h"
#include "selectors.h"

namespace harness::sim {

using rest::Call;

namespace {

constexpr std::size_t kMaxRequestBodyBytes = std::size_t{3} * 1024 * 1024;
constexpr std::size_t kMaxJsonPatchOperations = 10000;
constexpr int kPatchConflictRetries = 5;

constexpr std::string_view kContentJsonPatch = "application/json-patch+json";
constexpr std::string_view kContentMergePatch = "application/merge-patch+json";
constexpr std::string_view kContentStrategicPatch = "application/strategic-merge-patch+json";
constexpr std::string_view kContentApplyPatch = "application/apply-patch+yaml";

const char* goTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::array:
      return "array";
    case nlohmann::json::value_t::string:
      return "string";
    case nlohmann::json::value_t::boolean:
      return "bool";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "number";
    default:
      return "object";
  }
}

// runtime.summarizeData: the first 30 bytes of a JSON object, else hex.
std::string summarizeData(const std::string& data) {
  constexpr std::size_t kMax = 30;
  if (data.empty()) return "<empty>";
  if (data.front() == '{') {
    return data.size() > kMax ? data.substr(0, kMax) + " ..." : data;
  }
  std::string hex;
  for (std::size_t i = 0; i < std::min(data.size(), kMax); ++i) {
    hex += fmt::format("{:02x}", static_cast<unsigned char>(data[i]));
  }
  return data.size() > kMax ? hex + " ..." : hex;
}

// The Go package names in conversion errors: versioned "v1.Service", internal "core.Pod".
std::string internalTypeName(const core::GroupVersionKind& kind) {
  std::string package = kind.group.empty() || kind.group == "events.k8s.io" ? "core" : kind.group;
  if (const auto dot = package.find('.'); dot != std::string::npos) package.resize(dot);
  return package + "." + kind.kind;
}

bool isKnownKind(const std::string& group, const std::string& version, const std::string& kind) {
  for (const auto& info : core::builtinResources()) {
    if (info.kind.group == group && info.kind.version == version && info.kind.kind == kind) {
      return true;
    }
  }
  return false;
}

bool isEquivalentKind(const core::ResourceInfo& main, const std::string& group,
                      const std::string& version, const std::string& kind) {
  for (const auto& equivalent : core::equivalentResources(main.resource)) {
    if (equivalent.kind.group == group && equivalent.kind.version == version &&
        equivalent.kind.kind == kind) {
      return true;
    }
  }
  return false;
}

core::Status unrecognized(const Call& call, const std::string& reason, const std::string& body) {
  return core::newBadRequest(fmt::format(
      "the object provided is unrecognized (must be of type {}): couldn't get version/kind; json "
      "parse error: {} ({})",
      call.main.kind.kind, reason, summarizeData(body)));
}

// A process-wide hook the simulator installs (kube-cel's): one slot per hook type.
template <class Hook>
core::ProcessSlot<Hook>& hookSlot() {
  static core::ProcessSlot<Hook> slot;
  return slot;
}

template <class Hook>
Hook installedHook() {
  return hookSlot<Hook>().get();
}

StrictFieldChecker strictFieldChecker() { return installedHook<StrictFieldChecker>(); }

// Said once a process when a client asks for field validation that cannot be done.
void noteFieldsNotChecked() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::cerr << "apiserver-sim: unknown and duplicate fields are not detected (fieldValidation "
                 "Strict and Warn need kube-cel: bash scripts/build-kube.sh)\n";
  });
}

// The field manager of field_manager.h, when installed.
FieldManager fieldManager() { return installedHook<FieldManager>(); }

// Said once a process when an apply is served by the simplified merge.
void noteApplySimplified() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::cerr << "apiserver-sim: server-side apply is simplified (no managedFields, no conflicts: "
                 "Kubernetes' field manager needs kube-cel: bash scripts/build-kube.sh)\n";
  });
}

// Said once a process when the field manager fails for an object (a kind its type converter
// does not know): the write goes on without managedFields, as UpdateNoErrors does.
void noteFieldsNotManaged(const std::string& why) {
  static std::once_flag once;
  std::call_once(once, [&why] {
    std::cerr << "apiserver-sim: managedFields not recorded: " << why << "\n";
  });
}

// FieldManager.UpdateNoErrors (create.go, update.go, patch.go applyPatch): the managedFields
// `object` gets when written over `live` (nullopt: created), before admission.
void recordManagedFields(const Call& call, const nlohmann::json& options, nlohmann::json& object,
                         const std::optional<nlohmann::json>& live) {
  const auto update = installedHook<FieldManager>().update;
  // kube-cel's field manager knows the built-in types only: custom resources are written
  // without managedFields.
  if (!update || !object.is_object() || call.crd) return;
  const std::string manager =
      managerOrUserAgent(options.value("fieldManager", std::string()),
                         call.http->headers.get("User-Agent").value_or(""));
  auto managed = update(object, live, manager, call.info.subresource, call.main.kind);
  if (!managed) {
    noteFieldsNotManaged(managed.error().message);
    return;
  }
  if (!object.contains("metadata") || !object["metadata"].is_object()) {
    object["metadata"] = nlohmann::json::object();
  }
  if (managed->empty()) {
    object["metadata"].erase("managedFields");
  } else {
    object["metadata"]["managedFields"] = std::move(*managed);
  }
}

// fieldValidation on a decoded create/update body (create.go, update.go): with Strict (or Warn,
// the default when the query has none: rest.go fieldValidation) the body's unknown and duplicate
// fields, as Go's type sees them, are the 400 of transformDecodeError (Strict) or Warnings (Warn).
// JSON bodies only (kubectl's): YAML's strict errors are worded by its own decoder, and
// protobuf has no unknown fields to report.
std::optional<core::Status> checkFields(const Call& call, const nlohmann::json& options,
                                        const nlohmann::json& object,
                                        std::vector<std::string>& warnings) {
  const std::string directive = options.value("fieldValidation", std::string("Warn"));
  // A custom resource's unknown fields are those its CRD's decoding prunes: the admission
  // chain's decode step reports them.
  if (directive == "Ignore" || call.crd) return std::nullopt;
  if (rest::negotiateInput(call.http->headers.get("Content-Type"), true) !=
      rest::BodyFormat::kJson) {
    return std::nullopt;
  }
  const StrictFieldChecker checker = strictFieldChecker();
  if (!checker) {
    // Said when a client asks (kubectl's Strict), not for the server's default.
    if (!options.contains("fieldValidation")) return std::nullopt;
    noteFieldsNotChecked();
    return std::nullopt;
  }
  auto errors = checker(call.http->body, call.main.kind);
  if (!errors) return core::newInternalError(errors.error().message);
  if (errors->empty()) return std::nullopt;
  if (directive == "Warn") {
    warnings.insert(warnings.end(), errors->begin(), errors->end());
    return std::nullopt;
  }
  // runtime.strictDecodingError.Error(); the kind and version are the body's (decodeObject
  // filled them in as the decoder defaults them).
  std::string list;
  for (const auto& error : *errors) list += (list.empty() ? "" : ", ") + error;
  const std::string api_version = object.value("apiVersion", std::string());
  const auto slash = api_version.rfind('/');
  return core::newBadRequest(fmt::format(
      "{} in version \"{}\" cannot be handled as a {}: strict decoding error: {}",
      object.value("kind", std::string()),
      slash == std::string::npos ? api_version : api_version.substr(slash + 1),
      call.main.kind.kind, list));
}

// Decodes a POST/PUT body into the requested version's object.
rest::Decoded<nlohmann::json> decodeObject(const Call& call) {
  rest::Decoded<nlohmann::json> out;
  const net::Request& http = *call.http;
  const ProtobufDecoder protobuf = protobufDecoder();
  const auto format = rest::negotiateInput(http.headers.get("Content-Type"), protobuf != nullptr);
  if (!format) {
    out.error = protobuf ? rest::unsupportedMediaType({"application/json", "application/yaml",
                                                       "application/vnd.kubernetes.protobuf"})
                         : rest::unsupportedMediaType({"application/json", "application/yaml"});
    return out;
  }
  if (http.body.size() > kMaxRequestBodyBytes) {
    out.error = core::newRequestEntityTooLargeError(
        fmt::format("limit is {}", kMaxRequestBodyBytes));
    return out;
  }
  nlohmann::json object;
  if (*format == rest::BodyFormat::kProtobuf) {
    auto decoded = protobuf(http.body);
    if (!decoded) {
      out.error = decoded.error().code == core::ErrorCode::kDecode
                      ? unrecognized(call, decoded.error().message, http.body)
                      : core::newInternalError(decoded.error().message);
      return out;
    }
    object = std::move(*decoded);
  } else if (*format == rest::BodyFormat::kYaml) {
    auto parsed = core::parseYaml(http.body);
    if (!parsed) {
      out.error = unrecognized(call, "error converting YAML to JSON: " + parsed.error().message,
                               http.body);
      return out;
    }
    object = std::move(*parsed);
  } else {
    auto parsed = core::parseJson(http.body);
    if (!parsed) {
      out.error = unrecognized(call, parsed.error().message, http.body);
      return out;
    }
    object = std::move(*parsed);
  }
  if (!object.is_object()) {
    out.error = unrecognized(
        call,
        fmt::format("json: cannot unmarshal {} into Go value of type struct {{ APIVersion string "
                    "\"json:\\\"apiVersion,omitempty\\\"\"; Kind string "
                    "\"json:\\\"kind,omitempty\\\"\" }}",
                    goTypeName(object)),
        http.body);
    return out;
  }
  for (const char* field : {"apiVersion", "kind"}) {
    if (object.contains(field) && !object[field].is_string() && !object[field].is_null()) {
      out.error = unrecognized(
          call,
          fmt::format("json: cannot unmarshal {} into Go struct field .{} of type string",
                      goTypeName(object[field]), field),
          http.body);
      return out;
    }
  }

  // Missing apiVersion / kind default to the endpoint's (the decoder's default GVK).
  const core::GroupVersionKind& expected = call.main.kind;
  std::string kind = object.value("kind", nlohmann::json("")).is_string()
                         ? object.value("kind", std::string())
                         : std::string();
  std::string api_version = object.value("apiVersion", nlohmann::json("")).is_string()
                                ? object.value("apiVersion", std::string())
                                : std::string();
  if (kind.empty()) kind = expected.kind;
  core::GroupVersion gv = expected.groupVersion();
  if (!api_version.empty()) {
    auto parsed = core::GroupVersion::parse(api_version);
    if (!parsed) {
      out.error = unrecognized(call, parsed.error().message, http.body);
      return out;
    }
    gv = *parsed;
  }

  // A custom resource's body is decoded as unstructured JSON whatever its kind (the CRD's
  // strategy then refuses another kind: ValidateTypeMeta's 422).
  if (!call.crd && !isEquivalentKind(call.main, gv.group, gv.version, kind)) {
    std::string reason;
    if (isKnownKind(gv.group, gv.version, kind)) {
      reason = fmt::format("converting ({}.{}) to ({}): unknown conversion", gv.version, kind,
                           internalTypeName(expected));
    } else {
      reason = fmt::format(
          "no kind \"{}\" is registered for version \"{}\" in scheme "
          "\"pkg/api/legacyscheme/scheme.go:30\"",
          kind, gv.toString());
    }
    out.error = core::newBadRequest(fmt::format("{} in version \"{}\" cannot be handled as a {}: {}",
                                                kind, gv.version, expected.kind, reason));
    return out;
  }
  if (gv != expected.groupVersion()) {
    out.error = core::newBadRequest(fmt::format(
        "the API version in the data ({}) does not match the expected API version ({})",
        gv.toString(), expected.groupVersion().toString()));
    return out;
  }
  if (object.contains("metadata") && !object["metadata"].is_object() &&
      !object["metadata"].is_null()) {
    out.error = core::newBadRequest(fmt::format(
        "{} in version \"{}\" cannot be handled as a {}: json: cannot unmarshal {} into Go struct "
        "field {}.metadata of type v1.ObjectMeta",
        kind, gv.version, expected.kind, goTypeName(object["metadata"]), expected.kind));
    return out;
  }
  object["apiVersion"] = gv.toString();
  object["kind"] = kind;
  if (!object.contains("metadata") || object["metadata"].is_null()) {
    object["metadata"] = nlohmann::json::object();
  }
  out.value = std::move(object);
  return out;
}

std::string metadataString(const nlohmann::json& object, const char* field) {
  if (!object.is_object()) return {};
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return {};
  auto value = metadata->find(field);
  return value != metadata->end() && value->is_string() ? value->get<std::string>() : std::string();
}

// registry/rest.EnsureObjectNamespaceMatchesRequestNamespace.
std::optional<core::Status> ensureNamespace(const std::string& request_namespace,
                                            nlohmann::json& object) {
  const std::string object_namespace = metadataString(object, "namespace");
  if (object_namespace == request_namespace) return std::nullopt;
  if (object_namespace.empty()) {
    object["metadata"]["namespace"] = request_namespace;
    return std::nullopt;
  }
  if (request_namespace.empty()) {
    object["metadata"].erase("namespace");
    return std::nullopt;
  }
  return core::newBadRequest(
      "the namespace of the provided object does not match the namespace sent on the request");
}

// handlers/rest.go checkName.
std::optional<core::Status> checkName(const nlohmann::json& object, const std::string& name,
                                      const std::string& request_namespace) {
  const std::string object_name = metadataString(object, "name");
  if (object_name != name) {
    return core::newBadRequest(fmt::format(
        "the name of the object ({}) does not match the name on the URL ({})", object_name, name));
  }
  const std::string object_namespace = metadataString(object, "namespace");
  if (!request_namespace.empty() && !object_namespace.empty() &&
      object_namespace != request_namespace) {
    return core::newBadRequest(
        fmt::format("the namespace of the object ({}) does not match the namespace on the request "
                    "({})",
                    object_namespace, request_namespace));
  }
  return std::nullopt;
}

core::Status invalidOptions(const std::string& kind, const core::FieldErrors& errors) {
  return core::newInvalid({"meta.k8s.io", kind}, "", errors);
}

core::FieldErrors validateDryRun(const std::vector<std::string>& dry_run) {
  for (const auto& value : dry_run) {
    if (value != "All") {
      core::FieldError error = core::FieldError::notSupported("dryRun", "", {"All"});
      error.bad_value = go::stringSliceGoSyntax(dry_run);
      return {error};
    }
  }
  return {};
}

core::FieldErrors validateFieldValidation(const std::string& value) {
  if (value.empty() || value == "Ignore" || value == "Strict" || value == "Warn") return {};
  return {core::FieldError::notSupported("fieldValidation", value,
                                         {"", "Ignore", "Strict", "Warn"})};
}

// Create/Update/PatchOptions from the query (what the webhooks see as request.options), or the
// 422 for invalid values.
rest::Decoded<nlohmann::json> writeOptions(const Call& call, const std::string& kind) {
  rest::Decoded<nlohmann::json> out;
  nlohmann::json options = {{"kind", kind}, {"apiVersion", "meta.k8s.io/v1"}};
  const std::vector<std::string> dry_run = call.query.all("dryRun");
  const std::string field_manager = call.query.get("fieldManager").value_or("");
  const std::string field_validation = call.query.get("fieldValidation").value_or("");
  core::FieldErrors errors = validateDryRun(dry_run);
  for (auto& e : validateFieldValidation(field_validation)) errors.push_back(std::move(e));
  if (kind == "PatchOptions") {
    const auto content = call.http->headers.get("Content-Type").value_or("");
    const bool apply = content.rfind(kContentApplyPatch, 0) == 0;
    if (apply && field_manager.empty()) {
      errors.push_back(core::FieldError::required("fieldManager", "is required for apply patch"));
    }
    if (!apply && call.query.has("force")) {
      errors.push_back(
          core::FieldError::forbidden("force", "may not be specified for non-apply patch"));
    }
  }
  if (!errors.empty()) {
    out.error = invalidOptions(kind, errors);
    return out;
  }
  if (!dry_run.empty()) options["dryRun"] = dry_run;
  if (kind == "PatchOptions" && call.query.has("force")) {
    // PatchOptions.force (a query bool: "true", "1"...; anything else is false).
    auto force = go::parseBool(call.query.get("force").value_or(""));
    options["force"] = force.ok() && *force;
  }
  if (!field_manager.empty()) options["fieldManager"] = field_manager;
  if (!field_validation.empty()) options["fieldValidation"] = field_validation;
  out.value = std::move(options);
  return out;
}

// The decoder's warnings come before admission's (the request context's warning recorder keeps
// the order they were added; duplicates once).
AdmissionResult withWarningsFirst(const std::vector<std::string>& first, AdmissionResult result) {
  if (first.empty()) return result;
  std::vector<std::string> warnings;
  for (const auto& w : first) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  for (auto& w : result.warnings) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) {
      warnings.push_back(std::move(w));
    }
  }
  result.warnings = std::move(warnings);
  return result;
}

// fieldValidation on a PATCH of a stored object (patch.go; field_validation.h): before
// admission, as the patcher checks while it applies the patch.
std::optional<core::Status> checkPatchFields(const Call& call, const nlohmann::json& options,
                                             const nlohmann::json& current,
                                             std::string_view patch_type,
                                             std::vector<std::string>& warnings) {
  const std::string directive = options.value("fieldValidation", std::string("Warn"));
  if (directive == "Ignore" || call.crd) return std::nullopt;  // as checkFields
  const StrictPatchChecker checker = installedHook<StrictPatchChecker>();
  if (!checker) {
    if (options.contains("fieldValidation")) noteFieldsNotChecked();
    return std::nullopt;
  }
  auto checked = checker(current, call.http->body, patch_type, directive, call.main.kind);
  if (!checked) return core::newInternalError(checked.error().message);
  if (checked->second) return checked->second;
  warnings.insert(warnings.end(), checked->first.begin(), checked->first.end());
  return std::nullopt;
}

nlohmann::json optionsAs(nlohmann::json options, const std::string& kind) {
  options["kind"] = kind;
  options.erase("force");
  return options;
}

// Removes strategic-merge directives ("$patch", "$setElementOrder/...", "$retainKeys",
// "$deleteFromPrimitiveList/...") for kinds merged as a JSON merge patch here, so that they do not
// end up stored as fields.
void stripDirectives(nlohmann::json& value) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end();) {
      if (!it.key().empty() && it.key().front() == '$') {
        it = value.erase(it);
      } else {
        stripDirectives(it.value());
        ++it;
      }
    }
  } else if (value.is_array()) {
    for (auto& element : value) stripDirectives(element);
  }
}

}  // namespace

ProtobufDecoder protobufDecoder() { return installedHook<ProtobufDecoder>(); }

void setProtobufDecoder(ProtobufDecoder decoder) {
  hookSlot<ProtobufDecoder>().set(std::move(decoder));
}

void setStrictFieldChecker(StrictFieldChecker checker) {
  hookSlot<StrictFieldChecker>().set(std::move(checker));
}

void setStrictPatchChecker(StrictPatchChecker checker) {
  hookSlot<StrictPatchChecker>().set(std::move(checker));
}

void setFieldManager(FieldManager manager) { hookSlot<FieldManager>().set(std::move(manager)); }

std::string managerOrUserAgent(const std::string& manager, const std::string& user_agent) {
  if (!manager.empty()) return manager;
  // prefixFromUserAgent: runes before the first "/", printable ones, within
  // validation.FieldManagerMaxLength (128) bytes. Bytes below 0x20 and DEL are unprintable; a
  // multi-byte UTF-8 rune is kept whole.
  constexpr std::size_t kFieldManagerMaxLength = 128;
  const std::string prefix = user_agent.substr(0, user_agent.find('/'));
  std::string out;
  for (std::size_t i = 0; i < prefix.size();) {
    const auto lead = static_cast<unsigned char>(prefix[i]);
    const std::size_t length = lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : 2;
    const std::string rune = prefix.substr(i, length);
    i += length;
    if (length == 1 && (lead < 0x20 || lead == 0x7F)) continue;
    if (out.size() + rune.size() > kFieldManagerMaxLength) break;
    out += rune;
  }
  return out;
}

net::Response RestApiHandler::Impl::create(const Call& call) {
  auto options = writeOptions(call, "CreateOptions");
  if (options.error) return rest::statusResponse(*options.error);
  auto decoded = decodeObject(call);
  if (decoded.error) return rest::statusResponse(*decoded.error);
  nlohmann::json object = std::move(*decoded.value);
  std::vector<std::string> field_warnings;
  if (auto error = checkFields(call, *options.value, object, field_warnings)) {
    return rest::statusResponse(*error);
  }
  if (auto error = ensureNamespace(call.namespace_name, object)) {
    return rest::statusResponse(*error);
  }
  recordManagedFields(call, *options.value, object, std::nullopt);
  WriteRequest request = writeRequest(call, std::string(kOperationCreate), "create");
  request.name = metadataString(object, "name");
  request.object = std::move(object);
  request.dry_run = options.value->contains("dryRun");
  request.options = std::move(*options.value);
  return writeResponse(call, withWarningsFirst(field_warnings, chain.handle(request)));
}

net::Response RestApiHandler::Impl::update(const Call& call) {
  auto options = writeOptions(call, "UpdateOptions");
  if (options.error) return rest::statusResponse(*options.error);
  auto decoded = decodeObject(call);
  if (decoded.error) return rest::statusResponse(*decoded.error);
  nlohmann::json object = std::move(*decoded.value);
  std::vector<std::string> field_warnings;
  if (auto error = checkFields(call, *options.value, object, field_warnings)) {
    return rest::statusResponse(*error);
  }
  if (auto error = checkName(object, call.info.name, call.namespace_name)) {
    return rest::statusResponse(*error);
  }
  if (auto error = ensureNamespace(call.namespace_name, object)) {
    return rest::statusResponse(*error);
  }
  WriteRequest request = writeRequest(call, std::string(kOperationUpdate), "update");
  if (call.sub && call.sub->subresource == "status") {
    // The status strategy keeps everything but the status (and the client's resourceVersion
    // precondition) from the stored object.
    auto stored = findStored(call.main.resource, call.namespace_name, call.info.name);
    if (!stored) {
      return rest::statusResponse(core::newNotFound(call.groupResource(), call.info.name));
    }
    nlohmann::json updated = rest::asRequested(*stored, call.main);
    if (object.contains("status")) {
      updated["status"] = object["status"];
    } else {
      updated.erase("status");
    }
    if (const std::string rv = metadataString(object, "resourceVersion"); !rv.empty()) {
      updated["metadata"]["resourceVersion"] = rv;
    }
    request.old_object = rest::asRequested(std::move(*stored), call.main);
    object = std::move(updated);
  }
  {
    auto live = request.old_object;
    if (!live) {
      if (auto stored = findStored(call.main.resource, call.namespace_name, call.info.name)) {
        live = rest::asRequested(std::move(*stored), call.main);
      }
    }
    recordManagedFields(call, *options.value, object, live);
  }
  request.object = std::move(object);
  request.dry_run = options.value->contains("dryRun");
  request.options = std::move(*options.value);
  return writeResponse(call, withWarningsFirst(field_warnings, chain.handle(request)));
}

net::Response RestApiHandler::Impl::patch(const Call& call) {
  // go-restful matches the route's Consumes list before the handler runs: any other type
  // (including none) is the router's 415.
  std::string content_type = call.http->headers.get("Content-Type").value_or("");
  if (const auto semi = content_type.find(';'); semi != std::string::npos) {
    content_type.resize(semi);
  }
  while (!content_type.empty() && content_type.back() == ' ') content_type.pop_back();
  const std::set<std::string_view> kPatchTypes = {kContentJsonPatch, kContentMergePatch,
                                                  kContentStrategicPatch, kContentApplyPatch};
  if (kPatchTypes.count(content_type) == 0) return rest::statusResponse(rest::routerError(415));
  if (call.crd && content_type == kContentStrategicPatch) {
    // customresource_handler.go serveResource: a custom resource has no strategic merge patch
    // (the patch handler's NewUnsupportedMediaTypeError over its supportedTypes).
    return rest::statusResponse(rest::unsupportedMediaType(
        {std::string(kContentJsonPatch), std::string(kContentMergePatch),
         std::string(kContentApplyPatch)}));
  }

  auto options = writeOptions(call, "PatchOptions");
  if (options.error) return rest::statusResponse(*options.error);
  if (call.http->body.size() > kMaxRequestBodyBytes) {
    return rest::statusResponse(
        core::newRequestEntityTooLargeError(fmt::format("limit is {}", kMaxRequestBodyBytes)));
  }
  const std::string& body = call.http->body;
  const bool apply = content_type == kContentApplyPatch;

  // Decode the patch once.
  std::optional<core::JsonPatch> json_patch;
  nlohmann::json document;
  if (content_type == kContentJsonPatch) {
    auto decoded = core::decodePatch(body);
    if (!decoded) return rest::statusResponse(core::newBadRequest(decoded.error().message));
    if (decoded->size() > kMaxJsonPatchOperations) {
      return rest::statusResponse(core::newRequestEntityTooLargeError(
          fmt::format("The allowed maximum operations in a JSON patch is {}, got {}",
                      kMaxJsonPatchOperations, decoded->size())));
    }
    json_patch = std::move(*decoded);
  } else if (apply) {
    auto parsed = core::parseYaml(body);
    if (!parsed) {
      return rest::statusResponse(
          core::newBadRequest("error decoding YAML: " + parsed.error().message));
    }
    if (!parsed->is_object()) {
      return rest::statusResponse(core::newBadRequest(fmt::format(
          "error decoding YAML: json: cannot unmarshal {} into Go value of type "
          "map[string]interface {{}}",
          goTypeName(*parsed))));
    }
    document = std::move(*parsed);
  } else {
    auto parsed = core::parseJson(body);
    if (!parsed) {
      // jsonpatch.MergePatch answers ErrBadJSONPatch; the strategic patcher the JSON error.
      return rest::statusResponse(core::newBadRequest(content_type == kContentMergePatch
                                                          ? std::string("Invalid JSON Patch")
                                                          : parsed.error().message));
    }
    document = std::move(*parsed);
    if (content_type == kContentStrategicPatch && !document.is_object()) {
      return rest::statusResponse(core::newBadRequest(fmt::format(
          "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
          goTypeName(document))));
    }
  }
  const bool precondition = content_type != kContentJsonPatch && document.is_object() &&
                            !metadataString(document, "resourceVersion").empty();

  decltype(FieldManager::apply) apply_fields;
  if (apply && !call.crd) apply_fields = fieldManager().apply;
  if (apply && !apply_fields) noteApplySimplified();
  AdmissionResult result;
  std::vector<std::string> field_warnings;
  for (int attempt = 0; attempt < kPatchConflictRetries; ++attempt) {
    auto stored = findStored(call.main.resource, call.namespace_name, call.info.name);
    WriteRequest request = writeRequest(call, std::string(kOperationUpdate), "patch");
    request.dry_run = options.value->contains("dryRun");
    nlohmann::json patched;
    if (apply && apply_fields) {
      // patch.go applyPatcher: FieldManager.Apply on the live object, or on a new one
      // (createNewObject) when there is none.
      if (!stored && call.sub) {
        return rest::statusResponse(core::newNotFound(call.groupResource(), call.info.name));
      }
      std::optional<nlohmann::json> live;
      if (stored) live = rest::asRequested(*stored, call.main);
      auto applied = apply_fields(live, body, options.value->value("fieldManager", std::string()),
                                  options.value->value("force", false), call.info.subresource,
                                  call.main.kind);
      if (!applied) return rest::statusResponse(core::newInternalError(applied.error().message));
      if (applied->second) return rest::statusResponse(*applied->second);
      patched = std::move(applied->first);
      if (live) {
        if (call.sub) {
          nlohmann::json updated = *live;
          if (patched.contains("status")) {
            updated["status"] = patched["status"];
          } else {
            updated.erase("status");
          }
          if (patched.contains("metadata") && patched["metadata"].contains("managedFields")) {
            updated["metadata"]["managedFields"] = patched["metadata"]["managedFields"];
          }
          patched = std::move(updated);
        }
        request.old_object = std::move(*live);
        request.options = optionsAs(*options.value, "UpdateOptions");
      } else {
        request.operation = std::string(kOperationCreate);
        request.options = optionsAs(*options.value, "CreateOptions");
      }
    } else if (!stored) {
      if (!apply || call.sub) {
        return rest::statusResponse(core::newNotFound(call.groupResource(), call.info.name));
      }
      patched = document;
      request.operation = std::string(kOperationCreate);
      request.options = optionsAs(*options.value, "CreateOptions");
    } else {
      const nlohmann::json current = rest::asRequested(*stored, call.main);
      if (attempt == 0 && !apply) {
        if (auto error = checkPatchFields(call, *options.value, current, content_type,
                                          field_warnings)) {
          return rest::statusResponse(*error);
        }
      }
      request.old_object = current;
      request.options = optionsAs(*options.value, "UpdateOptions");
      if (json_patch) {
        auto applied = core::applyPatch(current, *json_patch);
        if (!applied) {
          const core::Status status = core::newGenericServerResponse(
              422, "", {}, "", applied.error().message, 0, false);
          // The audit filter records every request, this one too (found by the e2e suite
          // namespace-lifecycle: kube-apiserver logs it, 422).
          chain.auditRead("patch", call.main.resource, call.namespace_name, call.info.name,
                          call.user, call.http->target, status.code, std::nullopt);
          return rest::statusResponse(status);
        }
        patched = std::move(*applied);
      } else if (content_type == kContentMergePatch) {
        auto merged = core::jsonMergePatch(current, document);
        if (!merged) {
          // patch.go: jsonpatch.ErrBadJSONPatch is a 400, anything else a 500.
          const core::Error& error = merged.error();
          return rest::statusResponse(error.code == core::ErrorCode::kInvalid
                                          ? core::newBadRequest(error.message)
                                          : core::newInternalError(error.message));
        }
        patched = std::move(*merged);
      } else {
        const core::StrategicSchema& schema = core::schemaForKind(call.main.kind.kind);
        nlohmann::json smp = document;
        if (schema.kind() != core::StrategicSchema::Kind::kStruct) stripDirectives(smp);
        auto merged = core::strategicMerge(current, smp, schema, {false});
        if (!merged) return rest::statusResponse(core::newInternalError(merged.error().message));
        patched = std::move(*merged);
      }
      if (call.sub) {
        // Only the status of a status patch is kept (the status strategy).
        nlohmann::json updated = current;
        if (patched.is_object() && patched.contains("status")) {
          updated["status"] = patched["status"];
        } else {
          updated.erase("status");
        }
        patched = std::move(updated);
      }
      if (patched.is_object()) recordManagedFields(call, *options.value, patched, current);
    }
    if (!patched.is_object()) {
      return rest::statusResponse(core::newBadRequest("the patched object is not a JSON object"));
    }
    if (!patched.contains("metadata") || !patched["metadata"].is_object()) {
      patched["metadata"] = nlohmann::json::object();
    }
    patched = rest::asRequested(std::move(patched), call.main);
    if (!stored) {
      // A created object takes its name from the URL when the configuration has none.
      if (metadataString(patched, "name").empty()) patched["metadata"]["name"] = call.info.name;
    }
    if (auto error = ensureNamespace(call.namespace_name, patched)) {
      return rest::statusResponse(*error);
    }
    if (auto error = checkName(patched, call.info.name, call.namespace_name)) {
      return rest::statusResponse(*error);
    }
    request.object = std::move(patched);
    result = chain.handle(request);
    const bool conflict = !result.allowed && result.status &&
                          result.status->reason == core::kReasonConflict;
    if (!conflict || precondition || json_patch) break;
  }
  return writeResponse(call, withWarningsFirst(field_warnings, std::move(result)));
}

namespace {

// DeleteOptions from the body (any apiVersion/kind accepted) or else the query.
rest::Decoded<nlohmann::json> deleteOptions(const Call& call) {
  rest::Decoded<nlohmann::json> out;
  nlohmann::json options = {{"kind", "DeleteOptions"}, {"apiVersion", "meta.k8s.io/v1"}};
  const net::Request& http = *call.http;
  if (!http.body.empty()) {
    const auto format = rest::negotiateInput(http.headers.get("Content-Type"));
    if (!format) {
      out.error = rest::unsupportedMediaType({"application/json", "application/yaml"});
      return out;
    }
    nlohmann::json body;
    if (*format == rest::BodyFormat::kYaml) {
      auto parsed = core::parseYaml(http.body);
      if (!parsed) {
        out.error = core::newBadRequest(parsed.error().message);
        return out;
      }
      body = std::move(*parsed);
    } else {
      auto parsed = core::parseJson(http.body);
      if (!parsed) {
        out.error = core::newBadRequest(parsed.error().message);
        return out;
      }
      body = std::move(*parsed);
    }
    if (!body.is_object()) {
      out.error = core::newBadRequest(fmt::format(
          "json: cannot unmarshal {} into Go value of type v1.DeleteOptions", goTypeName(body)));
      return out;
    }
    for (const char* field : {"gracePeriodSeconds", "preconditions", "orphanDependents",
                              "propagationPolicy", "dryRun"}) {
      if (body.contains(field) && !body[field].is_null()) options[field] = body[field];
    }
  } else {
    if (auto grace = call.query.get("gracePeriodSeconds")) {
      auto parsed = go::parseInt(*grace, 10, 64);
      if (!parsed) {
        out.error = core::newBadRequest(parsed.error().message);
        return out;
      }
      options["gracePeriodSeconds"] = *parsed;
    }
    if (auto policy = call.query.get("propagationPolicy")) options["propagationPolicy"] = *policy;
    if (auto orphan = call.query.get("orphanDependents")) {
      auto parsed = go::parseBool(*orphan);
      if (!parsed) {
        out.error = core::newBadRequest(parsed.error().message);
        return out;
      }
      options["orphanDependents"] = *parsed;
    }
    if (auto dry_run = call.query.all("dryRun"); !dry_run.empty()) options["dryRun"] = dry_run;
  }

  core::FieldErrors errors;
  if (options.contains("dryRun")) {
    std::vector<std::string> values;
    if (options["dryRun"].is_array()) {
      for (const auto& v : options["dryRun"]) values.push_back(v.is_string() ? v.get<std::string>() : v.dump());
    }
    errors = validateDryRun(values);
  }
  if (options.contains("propagationPolicy")) {
    const auto& policy = options["propagationPolicy"];
    const std::string value = policy.is_string() ? policy.get<std::string>() : policy.dump();
    if (value != "Foreground" && value != "Background" && value != "Orphan") {
      errors.push_back(core::FieldError::notSupported(
          "propagationPolicy", value, {"Foreground", "Background", "Orphan", "nil"}));
    } else if (options.contains("orphanDependents")) {
      errors.push_back(core::FieldError::invalid(
          "propagationPolicy", value, "orphanDependents and deletionPropagation cannot be both set"));
    }
  }
  if (!errors.empty()) {
    out.error = invalidOptions("DeleteOptions", errors);
    return out;
  }
  out.value = std::move(options);
  return out;
}

// Storage preconditions (apiserver pkg/storage/interfaces.go Preconditions.Check).
std::optional<core::Status> checkPreconditions(const Call& call, const nlohmann::json& options,
                                               const nlohmann::json& stored) {
  if (!options.contains("preconditions") || !options["preconditions"].is_object()) {
    return std::nullopt;
  }
  const auto& preconditions = options["preconditions"];
  const auto uid = preconditions.find("uid");
  if (uid != preconditions.end() && uid->is_string() &&
      uid->get<std::string>() != metadataString(stored, "uid")) {
    return core::newConflict(
        call.groupResource(), call.info.name,
        fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: {}",
                    uid->get<std::string>(), metadataString(stored, "uid")));
  }
  const auto rv = preconditions.find("resourceVersion");
  if (rv != preconditions.end() && rv->is_string() &&
      rv->get<std::string>() != metadataString(stored, "resourceVersion")) {
    return core::newConflict(
        call.groupResource(), call.info.name,
        fmt::format("Precondition failed: ResourceVersion in precondition: {}, ResourceVersion in "
                    "object meta: {}",
                    rv->get<std::string>(), metadataString(stored, "resourceVersion")));
  }
  return std::nullopt;
}

}  // namespace

net::Response RestApiHandler::Impl::remove(const Call& call) {
  auto options = deleteOptions(call);
  if (options.error) return rest::statusResponse(*options.error);
  if (auto stored = findStored(call.main.resource, call.namespace_name, call.info.name)) {
    if (auto error = checkPreconditions(call, *options.value, *stored)) {
      return rest::statusResponse(*error);
    }
  }
  WriteRequest request = writeRequest(call, std::string(kOperationDelete), "delete");
  request.dry_run = options.value->contains("dryRun");
  request.options = std::move(*options.value);
  const AdmissionResult result = chain.handle(request);
  // delete.go: the object the registry answers: the deleted one for registries with
  // ReturnDeletedObject, the object as it stays when it is not gone yet (finalizers pending, a
  // Namespace Terminating), else a Status.
  if (!result.allowed || !result.deleted || rest::returnsDeletedObject(call.main.resource)) {
    net::Response response = writeResponse(call, result);
    if (result.allowed) response.status = 200;
    return response;
  }
  // registry Store.finalizeDelete: a Status naming what was deleted (Kind holds the resource).
  core::Status status;
  status.status = std::string(core::kStatusSuccess);
  core::StatusDetails details;
  details.name = call.info.name;
  details.group = call.main.resource.group;
  details.kind = call.main.resource.resource;
  if (result.object) details.uid = metadataString(*result.object, "uid");
  status.details = std::move(details);
  net::Response response = rest::jsonResponse(200, core::toJson(status.withTypeMeta()));
  rest::addWarnings(response, result.warnings);
  return response;
}

net::Response RestApiHandler::Impl::removeCollection(const Call& call) {
  auto options = deleteOptions(call);
  if (options.error) return rest::statusResponse(*options.error);
  auto selected = selectListed(call);
  if (selected.error) return rest::statusResponse(*selected.error);
  // One DELETE through the chain per item (kube-apiserver admits the collection once, then
  // validates each deletion; here each item is admitted as its own DELETE).
  std::vector<nlohmann::json> deleted;
  std::vector<std::string> warnings;
  for (const auto& object : *selected.value) {
    Call item = call;
    item.info.name = metadataString(object, "name");
    WriteRequest request = writeRequest(item, std::string(kOperationDelete), "delete");
    request.namespace_name = metadataString(object, "namespace");
    request.dry_run = options.value->contains("dryRun");
    request.options = *options.value;
    const AdmissionResult result = chain.handle(request);
    for (const auto& w : result.warnings) warnings.push_back(w);
    if (!result.allowed) {
      if (result.status && result.status->reason == core::kReasonNotFound) continue;
      core::Status status = result.status.value_or(
          core::newInternalError("the request was rejected without a status"));
      if (status.code == 0) status.code = result.code != 0 ? result.code : 500;
      net::Response response = rest::statusResponse(status);
      rest::addWarnings(response, warnings);
      return response;
    }
    deleted.push_back(object);
  }
  net::Response response = rest::jsonResponse(
      200, rest::listDocument(call.main, deleted, std::to_string(store.revision())));
  rest::addWarnings(response, warnings);
  return response;
}

}  // namespace harness::sim
