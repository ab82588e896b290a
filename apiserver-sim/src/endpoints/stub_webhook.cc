// StubWebhook: the HTTPS server and the scripted answers (format in stub_webhook.h).

#include "harness/sim/stub_webhook.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "harness/core/json.h"
#include "harness/core/json_pointer.h"
#include "harness/core/recent_cache.h"
#include "harness/go/base64.h"
#include "harness/net/server.h"

namespace harness::sim {

namespace {

using nlohmann::json;

// A name usable as one directory component.
std::string fileNameFor(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    out += keep ? c : '_';
  }
  return out.empty() ? std::string("stub") : out;
}

const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// A string field of request (absent or not a string: "", as Go's zero value).
std::string stringField(const json* object, std::string_view key) {
  if (!object) return {};
  const json* value = member(*object, key);
  return value && value->is_string() ? value->get<std::string>() : std::string();
}

bool pointerMatches(const json& review, const std::string& pointer, const json& expected) {
  auto resolved = core::resolvePointer(review, std::string_view(pointer));
  if (!resolved) return expected.is_null();
  const json& actual = **resolved;
  if (expected.is_null()) return actual.is_null();
  return actual == expected;
}

bool conditionMatches(const StubCondition& when, const net::Request& request,
                      const json& review, std::size_t call_number) {
  const json* admission = member(review, "request");
  if (admission && !admission->is_object()) admission = nullptr;
  if (when.operation && (!admission || stringField(admission, "operation") != *when.operation)) {
    return false;
  }
  if (when.dry_run) {
    const json* dry_run = admission ? member(*admission, "dryRun") : nullptr;
    const bool actual = dry_run && dry_run->is_boolean() && dry_run->get<bool>();
    if (!admission || actual != *when.dry_run) return false;
  }
  if (when.sub_resource &&
      (!admission || stringField(admission, "subResource") != *when.sub_resource)) {
    return false;
  }
  if (when.kind) {
    const json* kind = admission ? member(*admission, "kind") : nullptr;
    if (!kind || stringField(kind, "kind") != *when.kind) return false;
  }
  if (when.namespace_name &&
      (!admission || stringField(admission, "namespace") != *when.namespace_name)) {
    return false;
  }
  if (when.name && (!admission || stringField(admission, "name") != *when.name)) return false;
  if (!when.calls.empty() &&
      std::find(when.calls.begin(), when.calls.end(), call_number) == when.calls.end()) {
    return false;
  }
  if (when.path && request.path != *when.path) return false;
  for (const auto& [pointer, expected] : when.pointers) {
    if (!pointerMatches(review, pointer, expected)) return false;
  }
  return true;
}

std::chrono::milliseconds scaledDelay(std::chrono::nanoseconds delay, double time_scale) {
  if (delay.count() <= 0 || time_scale <= 0) return std::chrono::milliseconds(0);
  // Rounded up, so that a delay never vanishes unless the scale is 0.
  const double ms = std::ceil(static_cast<double>(delay.count()) * time_scale / 1e6);
  constexpr double kMaxMs = 24.0 * 3600 * 1000;  // a day: longer than any deadline
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::min(ms, kMaxMs)));
}

// The review a webhook server answers with (k8s.io/api admission/v1 types.go field names;
// docs/admission-chain.md §4.1), with the behaviour's overrides.
json reviewAnswer(const StubBehaviour& behaviour, const json& request_review) {
  const json* admission = member(request_review, "request");
  json review = json::object();
  if (behaviour.api_version) {
    review["apiVersion"] = *behaviour.api_version;
  } else if (const json* v = member(request_review, "apiVersion"); v && v->is_string()) {
    review["apiVersion"] = *v;
  } else {
    review["apiVersion"] = "admission.k8s.io/v1";
  }
  review["kind"] = behaviour.kind.value_or("AdmissionReview");
  if (behaviour.omit_response) return review;
  json response = json::object();
  response["uid"] = behaviour.uid ? *behaviour.uid
                                  : stringField(admission && admission->is_object() ? admission
                                                                                     : nullptr,
                                                "uid");
  response["allowed"] = behaviour.allowed;
  if (behaviour.status) response["status"] = *behaviour.status;
  std::optional<std::string> patch = behaviour.patch;
  if (behaviour.mutator) {
    const json* object = admission ? member(*admission, "object") : nullptr;
    const json ops = mutatorPatch(*behaviour.mutator, object ? *object : json());
    if (!ops.empty()) patch = ops.dump();
  }
  if (patch) response["patch"] = go::base64Encode(*patch);
  if (behaviour.patch_type_overridden) {
    if (behaviour.patch_type) response["patchType"] = *behaviour.patch_type;
  } else if (patch) {
    response["patchType"] = "JSONPatch";
  }
  if (!behaviour.warnings.empty()) response["warnings"] = behaviour.warnings;
  if (!behaviour.audit_annotations.empty()) {
    response["auditAnnotations"] = behaviour.audit_annotations;
  }
  review["response"] = std::move(response);
  return review;
}

// The stub's faults (a slow answer, a hang-up) are the server's Reply controls, not part of the
// HTTP response.
net::Reply respond(const StubBehaviour& behaviour, const json& request_review,
                   double time_scale) {
  net::Reply out;
  if (behaviour.close) {
    out.close_without_response = true;
  } else if (behaviour.http) {
    net::Response& response = out.response;
    response.status = behaviour.http->status;
    response.body = behaviour.http->body;
    if (behaviour.http->content_type) {
      response.headers.set("Content-Type", *behaviour.http->content_type);
    }
    for (const auto& [name, value] : behaviour.http->headers) response.headers.add(name, value);
  } else {
    out.response = net::Response::json(
        200, reviewAnswer(behaviour, request_review)
                 .dump(-1, ' ', false, json::error_handler_t::replace));
  }
  out.delay = scaledDelay(behaviour.delay, time_scale);
  return out;
}

const StubBehaviour& defaultBehaviour() {
  static const StubBehaviour kAllow;
  return kAllow;
}

// The stub's serving certificate: signed by `ca` for `sans` (kValid), self-signed (kUntrusted)
// or signed for another host (kWrongHost). Kept for the process and handed to every stub of the
// same CA, kind and host names: scenario after scenario starts stubs, and each new certificate
// costs OpenSSL 3 millions of instructions (issue 19). Its subject is therefore not the stub's
// name but kStubCommonName (clients check the host names only, as Go's crypto/tls does), and a
// stub's certificate is only ever checked by the clients of its own scenario, so sharing it
// changes no outcome.
constexpr std::string_view kStubCommonName = "apiserver-sim stub webhook";

core::Result<net::IssuedCertificate> stubCertificate(const net::CertificateAuthority& ca,
                                                     StubTls tls,
                                                     const std::vector<std::string>& sans) {
  using Key = std::tuple<std::string, StubTls, std::vector<std::string>>;
  static core::RecentCache<Key, core::Result<net::IssuedCertificate>> issued(256);
  const Key key{tls == StubTls::kUntrusted ? std::string() : ca.certificate_pem, tls,
                tls == StubTls::kWrongHost ? std::vector<std::string>() : sans};
  auto issue = [&]() -> core::Result<net::IssuedCertificate> {
    switch (tls) {
      case StubTls::kValid:
        return net::issueCertificate(ca, kStubCommonName, sans);
      case StubTls::kUntrusted:
        return net::selfSignedCertificate(kStubCommonName, sans);
      case StubTls::kWrongHost:
        return net::issueCertificate(
            ca, kStubCommonName, {std::string(kWrongHostDnsName), std::string(kWrongHostIp)});
    }
    return core::makeError("unknown stub TLS kind");
  };
  return issued.findOrMake(key, issue, [](const auto& certificate) { return certificate.ok(); });
}

// A stub certificate's SANs: 127.0.0.1, localhost and `extra_dns_names`, each once.
std::vector<std::string> stubSans(std::vector<std::string> extra_dns_names) {
  std::vector<std::string> sans = {"127.0.0.1", "localhost"};
  for (auto& dns : extra_dns_names) {
    if (std::find(sans.begin(), sans.end(), dns) == sans.end()) sans.push_back(std::move(dns));
  }
  return sans;
}

}  // namespace

void StubWebhook::prepare(StubTls tls, const net::CertificateAuthority& ca,
                          std::vector<std::string> extra_dns_names) {
  auto certificate = stubCertificate(ca, tls, stubSans(std::move(extra_dns_names)));
  // A certificate that cannot be made is start()'s to report.
  if (certificate) net::prepareServerTls(*certificate);
}

StubWebhook::StubWebhook(std::string name, StubSpec spec, double time_scale)
    : name_(std::move(name)),
      spec_(std::move(spec)),
      time_scale_(time_scale),
      rule_hits_(spec_.responses.size(), 0) {}

StubWebhook::~StubWebhook() { stop(); }

core::Result<std::unique_ptr<StubWebhook>> StubWebhook::start(
    std::string name, StubSpec spec, const net::CertificateAuthority& ca,
    const std::filesystem::path& scratch_dir, std::vector<std::string> extra_dns_names,
    double time_scale) {
  const std::string where = fmt::format("stub webhook \"{}\"", name);
  if (!std::isfinite(time_scale) || time_scale < 0) {
    return core::makeError(
        fmt::format("{}: time scale must be a finite number >= 0, got {}", where, time_scale));
  }
  auto certificate = stubCertificate(ca, spec.tls, stubSans(std::move(extra_dns_names)));
  if (!certificate) return certificate.error().within(where + ": certificate");
  const auto dir = scratch_dir / ("stub-" + fileNameFor(name));
  if (auto written = net::writePemFiles(*certificate, dir / "tls.crt", dir / "tls.key");
      !written) {
    return written.error().within(where);
  }

  std::unique_ptr<StubWebhook> stub(new StubWebhook(std::move(name), std::move(spec), time_scale));
  net::Router router;
  StubWebhook* self = stub.get();
  router.fallback([self](const net::Request& request) { return self->answer(request); });
  net::ServerOptions options;
  options.address = "127.0.0.1";
  options.port = 0;
  // One I/O thread, which also answers: answer() never blocks (delays are timers on the
  // connection), so no worker thread is needed.
  options.threads = 1;
  options.inline_handlers = true;
  options.name = "stub/" + stub->name_;
  options.tls = net::TlsServerConfig{(dir / "tls.crt").string(), (dir / "tls.key").string()};
  options.tls->reload_check_interval = std::chrono::milliseconds(0);
  stub->server_ = std::make_unique<net::Server>(std::move(options), std::move(router));
  if (auto started = stub->server_->start(); !started) return started.error().within(where);
  return stub;
}

std::string StubWebhook::url() const { return fmt::format("https://127.0.0.1:{}/", port()); }

std::uint16_t StubWebhook::port() const { return server_ ? server_->port() : 0; }

std::vector<StubCall> StubWebhook::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

std::size_t StubWebhook::callCount() const {
  std::lock_guard lock(mutex_);
  return calls_.size();
}

std::vector<StubCall> StubWebhook::callsSince(std::size_t since) const {
  std::lock_guard lock(mutex_);
  const auto first = calls_.begin() + static_cast<std::ptrdiff_t>(std::min(since, calls_.size()));
  return {first, calls_.end()};
}

std::optional<std::chrono::nanoseconds> StubWebhook::declaredDelay(std::string_view uid,
                                                                   int attempt) const {
  std::lock_guard lock(mutex_);
  int seen = 0;
  for (const auto& call : calls_) {
    if (call.uid != uid) continue;
    if (seen++ == attempt) return call.delay;
  }
  return std::nullopt;
}

void StubWebhook::resetCalls() {
  std::lock_guard lock(mutex_);
  calls_.clear();
  std::fill(rule_hits_.begin(), rule_hits_.end(), 0);
}

void StubWebhook::stop() {
  if (server_) server_->stop(std::chrono::milliseconds(0));
}

void StubWebhook::setHarnessRequestFilter(
    std::function<bool(const nlohmann::json& review)> filter) {
  std::lock_guard lock(mutex_);
  harness_filter_ = std::move(filter);
}

std::size_t StubWebhook::harnessRequests() const {
  std::lock_guard lock(mutex_);
  return harness_requests_;
}

net::Reply StubWebhook::answer(const net::Request& request) {
  StubCall call;
  call.received = std::chrono::steady_clock::now();
  call.path = request.path;
  call.query = request.query;
  call.timeout_param = request.queryParam("timeout").value_or("");
  call.body = request.body;
  call.review = core::parseJsonOrDiscarded(request.body);
  if (call.review.is_discarded()) call.review = nullptr;
  call.uid = stringField(member(call.review, "request"), "uid");

  const StubBehaviour* behaviour = &defaultBehaviour();
  {
    std::lock_guard lock(mutex_);
    if (harness_filter_ && harness_filter_(call.review)) {
      ++harness_requests_;
      return respond(defaultBehaviour(), call.review, 0);
    }
    call.number = calls_.size() + 1;
    call.rule_description = "default (no rule matched)";
    for (std::size_t i = 0; i < spec_.responses.size(); ++i) {
      const StubRule& rule = spec_.responses[i];
      if (!conditionMatches(rule.when, request, call.review, call.number)) continue;
      const std::size_t position = rule_hits_[i]++;
      if (rule.sequence.empty()) {  // only possible for a spec built in code: allow
        call.rule_description = fmt::format("responses[{}]", i);
        break;
      }
      const std::size_t index = std::min(position, rule.sequence.size() - 1);
      behaviour = &rule.sequence[index];
      call.rule_description = rule.is_sequence
                                  ? fmt::format("responses[{}].sequence[{}]", i, index)
                                  : fmt::format("responses[{}]", i);
      break;
    }
    call.delay = behaviour->delay;
    calls_.push_back(call);
  }
  // spec_ never changes after start(), so the behaviour is read without the lock.
  return respond(*behaviour, call.review, time_scale_);
}

}  // namespace harness::sim
