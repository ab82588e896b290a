#include "harness/core/admission_review.h"

#include "harness/go/base64.h"
#include "harness/go/strconv.h"

#include <algorithm>
#include <utility>

#include "go_json.h"

namespace harness::core {

namespace {

constexpr std::string_view kApiVersionV1 = "admission.k8s.io/v1";
constexpr std::string_view kApiVersionV1beta1 = "admission.k8s.io/v1beta1";

nlohmann::json rawExtension(const std::optional<nlohmann::json>& raw) {
  return raw ? *raw : nlohmann::json(nullptr);
}

nlohmann::json gvkJson(const GroupVersionKind& gvk) {
  return {{"group", gvk.group}, {"version", gvk.version}, {"kind", gvk.kind}};
}

nlohmann::json gvrJson(const GroupVersionResource& gvr) {
  return {{"group", gvr.group}, {"version", gvr.version}, {"resource", gvr.resource}};
}

// Go type names depend on the package the review is decoded into.
struct TypeNames {
  std::string prefix;  // "v1." or "v1beta1."
  [[nodiscard]] std::string of(std::string_view name) const { return prefix + std::string(name); }
};

void readGvk(go_json::Reader& parent, std::string_view key, GroupVersionKind& out) {
  if (const auto* obj = parent.readObject(key, "v1.GroupVersionKind")) {
    go_json::Reader r(*obj, "GroupVersionKind", parent.fieldPath(key));
    r.readString("group", out.group);
    r.readString("version", out.version);
    r.readString("kind", out.kind);
    if (!r.ok()) parent.fail(r.error());
  }
}

void readGvr(go_json::Reader& parent, std::string_view key, GroupVersionResource& out) {
  if (const auto* obj = parent.readObject(key, "v1.GroupVersionResource")) {
    go_json::Reader r(*obj, "GroupVersionResource", parent.fieldPath(key));
    r.readString("group", out.group);
    r.readString("version", out.version);
    r.readString("resource", out.resource);
    if (!r.ok()) parent.fail(r.error());
  }
}

void readUserInfo(go_json::Reader& parent, UserInfo& out) {
  const auto* obj = parent.readObject("userInfo", "v1.UserInfo");
  if (obj == nullptr) return;
  go_json::Reader r(*obj, "UserInfo", parent.fieldPath("userInfo"));
  r.readString("username", out.username);
  r.readString("uid", out.uid);
  r.readStringList("groups", out.groups);
  if (const auto* extra = r.readObject("extra", "map[string]v1.ExtraValue")) {
    for (const auto& [key, values] : extra->items()) {
      auto& list = out.extra[key];
      if (values.is_null()) continue;
      if (!values.is_array()) {
        r.mismatch(values, "extra", "v1.ExtraValue");
        break;
      }
      for (const auto& v : values) {
        if (v.is_string()) {
          list.push_back(v.get<std::string>());
        } else if (v.is_null()) {
          list.emplace_back();
        } else {
          r.mismatch(v, "extra", "string");
          break;
        }
      }
    }
  }
  if (!r.ok()) parent.fail(r.error());
}

// `take`: the document is the caller's to consume (the rvalue decoders), so the value is moved
// out of it instead of copied; a pod is most of a review, and copying its tree was a twentieth
// of a webhook request's work.
std::optional<nlohmann::json> readRaw(const go_json::Reader& r, std::string_view key, bool take) {
  const auto* v = r.find(key);
  if (v == nullptr) return std::nullopt;  // RawExtension: any JSON; null stays nil
  if (take) return std::move(const_cast<nlohmann::json&>(*v));
  return *v;
}

void readRequest(go_json::Reader& parent, const TypeNames& types, bool take,
                 std::optional<AdmissionRequest>& out) {
  const auto* obj = parent.readObject("request", types.of("AdmissionRequest"));
  if (obj == nullptr) return;
  AdmissionRequest req;
  go_json::Reader r(*obj, "AdmissionRequest", parent.fieldPath("request"));
  r.readString("uid", req.uid, "types.UID");
  readGvk(r, "kind", req.kind);
  readGvr(r, "resource", req.resource);
  r.readString("subResource", req.sub_resource);
  if (r.find("requestKind") != nullptr) {
    req.request_kind.emplace();
    readGvk(r, "requestKind", *req.request_kind);
  }
  if (r.find("requestResource") != nullptr) {
    req.request_resource.emplace();
    readGvr(r, "requestResource", *req.request_resource);
  }
  r.readString("requestSubResource", req.request_sub_resource);
  r.readString("name", req.name);
  r.readString("namespace", req.namespace_name);
  r.readString("operation", req.operation, types.of("Operation"));
  readUserInfo(r, req.user_info);
  req.object = readRaw(r, "object", take);
  req.old_object = readRaw(r, "oldObject", take);
  r.readOptionalBool("dryRun", req.dry_run);
  req.options = readRaw(r, "options", take);
  if (!r.ok()) {
    parent.fail(r.error());
    return;
  }
  out = std::move(req);
}

void readResponse(go_json::Reader& parent, const TypeNames& types,
                  std::optional<AdmissionResponse>& out) {
  const auto* obj = parent.readObject("response", types.of("AdmissionResponse"));
  if (obj == nullptr) return;
  AdmissionResponse resp;
  go_json::Reader r(*obj, "AdmissionResponse", parent.fieldPath("response"));
  r.readString("uid", resp.uid, "types.UID");
  r.readBool("allowed", resp.allowed);
  if (const auto* status = r.find("status")) {
    auto decoded = statusFromJson(*status, r.fieldPath("status"), "AdmissionResponse");
    if (decoded.ok()) {
      resp.status = std::move(decoded).value();
    } else {
      r.fail(decoded.error());
    }
  }
  r.readBytes("patch", resp.patch);
  r.readOptionalString("patchType", resp.patch_type, types.of("PatchType"));
  r.readStringMap("auditAnnotations", resp.audit_annotations);
  r.readStringList("warnings", resp.warnings);
  if (!r.ok()) {
    parent.fail(r.error());
    return;
  }
  out = std::move(resp);
}

// schema.ParseGroupVersion; nullopt for a string with more than one '/'.
std::optional<std::pair<std::string, std::string>> parseGroupVersion(std::string_view gv) {
  if (gv.empty() || gv == "/") return std::pair<std::string, std::string>{};
  switch (std::count(gv.begin(), gv.end(), '/')) {
    case 0:
      return std::pair<std::string, std::string>{"", std::string(gv)};
    case 1: {
      const auto i = gv.find('/');
      return std::pair<std::string, std::string>{std::string(gv.substr(0, i)),
                                                 std::string(gv.substr(i + 1))};
    }
    default:
      return std::nullopt;
  }
}

}  // namespace

std::string_view apiVersionOf(ReviewVersion version) {
  return version == ReviewVersion::kV1 ? kApiVersionV1 : kApiVersionV1beta1;
}

std::string_view versionNameOf(ReviewVersion version) {
  return version == ReviewVersion::kV1 ? "v1" : "v1beta1";
}

std::optional<ReviewVersion> reviewVersionOf(std::string_view api_version) {
  if (api_version == kApiVersionV1) return ReviewVersion::kV1;
  if (api_version == kApiVersionV1beta1) return ReviewVersion::kV1beta1;
  return std::nullopt;
}

// CreateAdmissionObjects in request/admissionreview.go.
Result<ReviewVersion> negotiateReviewVersion(
    const std::vector<std::string>& admission_review_versions) {
  for (const auto& v : admission_review_versions) {
    if (v == "v1") return ReviewVersion::kV1;
    if (v == "v1beta1") return ReviewVersion::kV1beta1;
  }
  return Error{"webhook does not accept known AdmissionReview versions (v1, v1beta1)"};
}

// k8s.io/api admission/v1/types.go: which fields are omitempty; RawExtension.MarshalJSON writes
// null for an absent object.
nlohmann::json toJson(const AdmissionRequest& request) {
  nlohmann::json j = nlohmann::json::object();
  j["uid"] = request.uid;
  j["kind"] = gvkJson(request.kind);
  j["resource"] = gvrJson(request.resource);
  if (!request.sub_resource.empty()) j["subResource"] = request.sub_resource;
  if (request.request_kind) j["requestKind"] = gvkJson(*request.request_kind);
  if (request.request_resource) j["requestResource"] = gvrJson(*request.request_resource);
  if (!request.request_sub_resource.empty()) {
    j["requestSubResource"] = request.request_sub_resource;
  }
  if (!request.name.empty()) j["name"] = request.name;
  if (!request.namespace_name.empty()) j["namespace"] = request.namespace_name;
  j["operation"] = request.operation;
  nlohmann::json user = nlohmann::json::object();
  const auto& u = request.user_info;
  if (!u.username.empty()) user["username"] = u.username;
  if (!u.uid.empty()) user["uid"] = u.uid;
  if (!u.groups.empty()) user["groups"] = u.groups;
  if (!u.extra.empty()) {
    nlohmann::json extra = nlohmann::json::object();
    for (const auto& [k, v] : u.extra) extra[k] = v;
    user["extra"] = std::move(extra);
  }
  j["userInfo"] = std::move(user);
  j["object"] = rawExtension(request.object);
  j["oldObject"] = rawExtension(request.old_object);
  if (request.dry_run) j["dryRun"] = *request.dry_run;
  j["options"] = rawExtension(request.options);
  return j;
}

nlohmann::json toJson(const AdmissionResponse& response) {
  nlohmann::json j = nlohmann::json::object();
  j["uid"] = response.uid;
  j["allowed"] = response.allowed;
  if (response.status) j["status"] = toJson(*response.status);
  if (!response.patch.empty()) j["patch"] = go::base64Encode(response.patch);
  if (response.patch_type) j["patchType"] = *response.patch_type;
  if (!response.audit_annotations.empty()) j["auditAnnotations"] = response.audit_annotations;
  if (!response.warnings.empty()) j["warnings"] = response.warnings;
  return j;
}

nlohmann::json toJson(const AdmissionReview& review) {
  nlohmann::json j = nlohmann::json::object();
  if (!review.kind.empty()) j["kind"] = review.kind;
  if (!review.api_version.empty()) j["apiVersion"] = review.api_version;
  if (review.request) j["request"] = toJson(*review.request);
  if (review.response) j["response"] = toJson(*review.response);
  return j;
}

std::string encodeAdmissionReview(const AdmissionReview& review) {
  return dumpJson(toJson(review));
}

namespace {

Result<AdmissionReview> reviewFromJson(const nlohmann::json& json, bool take) {
  if (!json.is_object()) return go_json::typeError(json, "", "", "v1.AdmissionReview");
  AdmissionReview review;
  go_json::Reader r(json, "AdmissionReview", "");
  r.readString("apiVersion", review.api_version);
  r.readString("kind", review.kind);
  const TypeNames types{review.api_version == kApiVersionV1beta1 ? "v1beta1." : "v1."};
  readRequest(r, types, take, review.request);
  readResponse(r, types, review.response);
  if (!r.ok()) return r.error();
  return review;
}

}  // namespace

Result<AdmissionReview> admissionReviewFromJson(const nlohmann::json& json) {
  return reviewFromJson(json, /*take=*/false);
}

Result<AdmissionReview> admissionReviewFromJson(nlohmann::json&& json) {
  return reviewFromJson(json, /*take=*/true);
}

Result<AdmissionReview> decodeAdmissionReview(std::string_view body) {
  auto json = go_json::parseJsonText(body);
  if (!json.ok()) return json.error();
  return admissionReviewFromJson(*json);
}

Result<AdmissionReview> decodeRequestReview(std::string_view body) {
  auto json = go_json::parseJsonText(body);
  if (!json.ok()) return json.error();
  return requestReviewFromJson(*json);
}

namespace {

Result<AdmissionReview> checkRequestReview(Result<AdmissionReview> decoded) {
  if (!decoded.ok()) return decoded;
  const auto& review = *decoded;
  const std::string wanted = std::string(kApiVersionV1) + " or " + std::string(kApiVersionV1beta1);
  if (review.api_version.empty()) return Error{"apiVersion is missing (want " + wanted + ")"};
  if (!reviewVersionOf(review.api_version)) {
    return Error{"apiVersion " + go::quote(review.api_version) + " is not " + wanted};
  }
  if (review.kind.empty()) return Error{"kind is missing (want AdmissionReview)"};
  if (review.kind != kAdmissionReviewKind) {
    return Error{"kind " + go::quote(review.kind) + " is not AdmissionReview"};
  }
  if (!review.request) return Error{"request is missing"};
  if (review.request->uid.empty()) return Error{"request.uid is missing"};
  return decoded;
}

}  // namespace

Result<AdmissionReview> requestReviewFromJson(const nlohmann::json& json) {
  return checkRequestReview(admissionReviewFromJson(json));
}

Result<AdmissionReview> requestReviewFromJson(nlohmann::json&& json) {
  return checkRequestReview(admissionReviewFromJson(std::move(json)));
}

AdmissionReview makeRequestReview(ReviewVersion version, AdmissionRequest request) {
  AdmissionReview review;
  review.api_version = std::string(apiVersionOf(version));
  review.kind = std::string(kAdmissionReviewKind);
  review.request = std::move(request);
  return review;
}

AdmissionReview makeResponseReview(const AdmissionReview& request_review,
                                   AdmissionResponse response) {
  AdmissionReview review;
  review.api_version = request_review.api_version;
  review.kind = request_review.kind;
  if (response.uid.empty() && request_review.request) response.uid = request_review.request->uid;
  review.response = std::move(response);
  return review;
}

std::string groupVersionKindString(std::string_view api_version, std::string_view kind) {
  // schema.FromAPIVersionAndKind + GroupVersionKind.String().
  const auto gv = parseGroupVersion(api_version).value_or(std::pair<std::string, std::string>{});
  return gv.first + "/" + gv.second + ", Kind=" + std::string(kind);
}

std::string invalidWebhookResponseText(std::string_view message) {
  return std::string(kInvalidWebhookResponsePrefix) + std::string(message);
}

// apiserver pkg/admission/plugin/webhook/request/admissionreview.go VerifyAdmissionResponse: the
// checks and their order, message for message.
Result<VerifiedResponse> verifyAdmissionResponse(ReviewVersion request_version,
                                                 std::string_view request_uid, bool mutating,
                                                 const AdmissionReview& response_review) {
  if (!response_review.response) return Error{"webhook response was absent"};
  const AdmissionResponse& r = *response_review.response;
  VerifiedResponse out;
  out.audit_annotations = r.audit_annotations;
  out.allowed = r.allowed;
  out.status = r.status;
  out.warnings = r.warnings;

  if (request_version == ReviewVersion::kV1beta1) {
    // Response GVK and response.uid were never verified for v1beta1.
    if (mutating) {
      out.patch = r.patch;
      if (!r.patch.empty()) out.patch_type = std::string(kPatchTypeJsonPatch);
    }
    return out;
  }

  if (r.uid != request_uid) {
    return Error{"expected response.uid=" + go::quote(request_uid) + ", got " + go::quote(r.uid)};
  }
  // Go compares the parsed GroupVersionKinds; their String() forms are equal exactly when they are.
  const std::string expected = groupVersionKindString(kApiVersionV1, kAdmissionReviewKind);
  const std::string got = groupVersionKindString(response_review.api_version, response_review.kind);
  if (got != expected) return Error{"expected webhook response of " + expected + ", got " + got};
  if (mutating) {
    if (!r.patch.empty() && !r.patch_type) {
      return Error{"webhook returned response.patch but not response.patchType"};
    }
    if (r.patch.empty() && r.patch_type) {
      return Error{"webhook returned response.patchType but not response.patch"};
    }
    out.patch = r.patch;
    if (r.patch_type) {
      if (r.patch_type->empty()) {
        return Error{"webhook returned invalid response.patchType of " + go::quote(*r.patch_type)};
      }
      out.patch_type = *r.patch_type;
    }
  } else {
    if (!r.patch.empty()) return Error{"validating webhook may not return response.patch"};
    if (r.patch_type) return Error{"validating webhook may not return response.patchType"};
  }
  return out;
}

}  // namespace harness::core
