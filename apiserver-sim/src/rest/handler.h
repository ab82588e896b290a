#pragma once

// Internal to the rest module: the state of a RestApiHandler and one routed resource request,
// shared by the read handlers (reads.cc) and the write handlers (writes.cc), as kube-apiserver's
// RequestScope is shared by its get.go / create.go / update.go / patch.go / delete.go handlers.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/status.h"
#include "harness/net/http.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"
#include "request_info.h"
#include "responses.h"

namespace harness::sim::rest {

// One resource request after routing.
struct Call {
  const net::Request* http = nullptr;
  RequestInfo info;
  core::UserInfo user;  // the admin, or the user its impersonation headers name
  QueryValues query;
  core::ResourceInfo main;                 // the resource as called (version included)
  std::optional<core::ResourceInfo> sub;   // the subresource, when one was called
  // A custom resource: the CRD serving it (as stored) and its list kind.
  std::shared_ptr<const nlohmann::json> crd;
  std::string list_kind;
  std::string namespace_name;              // "" for cluster-scoped resources
  OutputFormat output;
  std::optional<std::chrono::milliseconds> timeout;  // ?timeout=, when positive
  // RestApiHandler::handleAs: where the chain's result goes (its user is `user` above).
  std::optional<AdmissionResult>* admitted = nullptr;

  [[nodiscard]] core::GroupResource groupResource() const {
    return {main.resource.group, main.resource.resource};
  }
};

// A decoded request body, or the Status to answer with.
template <class T>
struct Decoded {
  std::optional<T> value;
  std::optional<core::Status> error;
};

}  // namespace harness::sim::rest

namespace harness::sim {

// The installed protobuf decoder (setProtobufDecoder; empty when none): writes.cc.
ProtobufDecoder protobufDecoder();

struct RestApiHandler::Impl {
  Impl(ObjectStore& s, AdmissionChain& c, RestApiOptions o)
      : store(s), chain(c), options(std::move(o)) {}

  ObjectStore& store;
  AdmissionChain& chain;
  RestApiOptions options;
  mutable std::mutex mutex;
  std::string server_address;  // guarded by mutex

  net::Response handle(const net::Request& request, const core::UserInfo* user = nullptr,
                       std::optional<AdmissionResult>* admitted = nullptr);
  net::Response nonResource(const net::Request& request, const rest::RequestInfo& info);
  net::Response resource(rest::Call& call);

  // reads.cc
  net::Response get(const rest::Call& call);
  net::Response list(const rest::Call& call);
  // watch.cc
  net::Response watch(const rest::Call& call);

  // writes.cc
  net::Response create(const rest::Call& call);
  net::Response update(const rest::Call& call);
  net::Response patch(const rest::Call& call);
  net::Response remove(const rest::Call& call);
  net::Response removeCollection(const rest::Call& call);

  // access_reviews.cc: Self/Local/SubjectAccessReview, SelfSubjectRulesReview
  net::Response accessReview(const rest::Call& call);

  // The request's authorization (WithImpersonation, then WithAuthorization): nullopt when it may
  // go on, else the 403 to answer. Only when the chain authorizes (ChainOptions::authorize).
  std::optional<net::Response> authorizeRequest(const rest::Call& call) const;

  // --- store access across equivalent resources (apps/v1 and extensions/v1beta1 deployments,
  // core and events.k8s.io events share one storage) ---
  // The Table of `objects` for `call` (a custom resource's from its CRD's printer columns, by
  // kube-cel when installed), or the 500 when kube-cel failed.
  [[nodiscard]] std::variant<nlohmann::json, core::Status> tableOf(
      const rest::Call& call, const std::vector<nlohmann::json>& objects,
      const std::string& resource_version) const;
  [[nodiscard]] std::optional<nlohmann::json> findStored(const core::GroupVersionResource& gvr,
                                                         const std::string& namespace_name,
                                                         const std::string& name) const;
  [[nodiscard]] std::vector<nlohmann::json> listStored(const core::GroupVersionResource& gvr,
                                                       const std::string& namespace_name) const;
  // The objects of a LIST after labelSelector and fieldSelector, or the 400 for a bad selector.
  rest::Decoded<std::vector<nlohmann::json>> selectListed(const rest::Call& call) const;

  // The WriteRequest fields every write shares.
  [[nodiscard]] WriteRequest writeRequest(const rest::Call& call, std::string operation,
                                          std::string verb) const;
  // The answer for a chain result: its Status when rejected, else `success_code` (or the chain's
  // code) with the object as requested; Warning headers either way.
  net::Response writeResponse(const rest::Call& call, const AdmissionResult& result) const;
};

// access_reviews.cc: a request for one of the access reviews (authorization.k8s.io/v1), served
// apart from the stored resources.
bool isAccessReview(const rest::RequestInfo& info);
// The user a request acts as: the admin (the one bearer token), or the user its impersonation
// headers name (k8s.io/apiserver pkg/endpoints/filters/impersonation.go).
core::UserInfo requestUser(const net::Request& http);

namespace rest {

// The object as the requested version presents it (apiVersion/kind rewritten; the built-in
// equivalents share one schema).
nlohmann::json asRequested(nlohmann::json object, const core::ResourceInfo& info);
// A list of `info`'s kind: items without apiVersion/kind, metadata.resourceVersion.
nlohmann::json listDocument(const core::ResourceInfo& info, const std::vector<nlohmann::json>& items,
                            const std::string& resource_version);
// The source IP of a peer "1.2.3.4:5" / "[::1]:5".
std::string sourceIp(const std::string& peer);

}  // namespace rest
}  // namespace harness::sim
