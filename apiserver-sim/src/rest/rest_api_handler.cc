// The request path of kube-apiserver in front of the REST handlers: authentication (k3s runs
// kube-apiserver with --anonymous-auth=false, so a missing or unknown bearer token is a 401 on every
// path: pkg/endpoints/filters/authentication.go Unauthorized, NewUnauthorized("Unauthorized")),
// the request deadline (pkg/endpoints/filters/request_deadline.go: a malformed ?timeout= is a 400
// "invalid timeout specified in the request URL - <err>", zero or negative means the default),
// request info (request_info.cc), then routing as pkg/server/handler.go's director and the
// go-restful routes of pkg/endpoints/installer.go would: collection paths serve GET/POST/DELETE
// (namespaced resources across namespaces only GET), object paths GET/PUT/PATCH/DELETE, the
// status subresource GET/PUT/PATCH.

#include <algorithm>
#include <atomic>
#include <chrono>

#include <fmt/format.h>

#include "discovery.h"
#include "handler.h"
#include "harness/go/time.h"
#include "harness/sim/authorizer.h"

namespace harness::sim {
namespace rest {

nlohmann::json asRequested(nlohmann::json object, const core::ResourceInfo& info) {
  if (object.is_object()) {
    object["apiVersion"] = core::GroupVersion{info.resource.group, info.resource.version}.toString();
    // The kind the main resource serves (a subresource like status serves the same kind).
    if (auto main = core::findResource(info.resource)) {
      object["kind"] = main->kind.kind;
    } else {
      object["kind"] = info.kind.kind;
    }
  }
  return object;
}

nlohmann::json listDocument(const core::ResourceInfo& info, const std::vector<nlohmann::json>& items,
                            const std::string& resource_version) {
  nlohmann::json array = nlohmann::json::array();
  for (const auto& item : items) {
    nlohmann::json copy = item;
    if (copy.is_object()) {
      // Items of a typed list are encoded without their TypeMeta.
      copy.erase("apiVersion");
      copy.erase("kind");
    }
    array.push_back(std::move(copy));
  }
  return {{"kind", info.kind.kind + "List"},
          {"apiVersion", core::GroupVersion{info.resource.group, info.resource.version}.toString()},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"items", std::move(array)}};
}

std::string sourceIp(const std::string& peer) {
  if (peer.empty()) return "127.0.0.1";
  if (peer.front() == '[') {
    const auto close = peer.find(']');
    return close == std::string::npos ? peer : peer.substr(1, close - 1);
  }
  const auto colon = peer.rfind(':');
  if (colon == std::string::npos || peer.find(':') != colon) return peer;
  return peer.substr(0, colon);
}

}  // namespace rest

namespace {

using rest::Call;
using rest::RequestInfo;

bool constantTimeEquals(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

// pkg/authentication/request/bearertoken: "Bearer <token>", scheme case-insensitive.
std::optional<std::string> bearerToken(const net::Request& request) {
  auto header = request.headers.get("Authorization");
  if (!header) return std::nullopt;
  const std::string& value = *header;
  const auto space = value.find(' ');
  if (space == std::string::npos) return std::nullopt;
  std::string scheme = value.substr(0, space);
  std::transform(scheme.begin(), scheme.end(), scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (scheme != "bearer") return std::nullopt;
  std::string token = value.substr(space + 1);
  if (const auto extra = token.find(' '); extra != std::string::npos) token.resize(extra);
  if (token.empty()) return std::nullopt;
  return token;
}

net::Response plainText(int code, std::string body, std::string content_type) {
  net::Response response;
  response.status = code;
  response.headers.set("Content-Type", std::move(content_type));
  response.headers.set("X-Content-Type-Options", "nosniff");
  response.body = std::move(body);
  return response;
}

}  // namespace

RestApiHandler::RestApiHandler(ObjectStore& store, AdmissionChain& chain, RestApiOptions options)
    : impl_(std::make_unique<Impl>(store, chain, std::move(options))) {}

RestApiHandler::~RestApiHandler() = default;

net::Response RestApiHandler::handle(const net::Request& request) {
  try {
    return impl_->handle(request);
  } catch (const std::exception& e) {
    // A bug, not an input error: answered like the apiserver's panic recovery would, as a 500.
    return rest::statusResponse(core::newInternalError(e.what()));
  }
}

net::Response RestApiHandler::handleAs(const net::Request& request, const core::UserInfo& user,
                                       std::optional<AdmissionResult>* admitted) {
  try {
    return impl_->handle(request, &user, admitted);
  } catch (const std::exception& e) {
    return rest::statusResponse(core::newInternalError(e.what()));
  }
}

void RestApiHandler::setServerAddress(const std::string& host_port) {
  std::lock_guard lock(impl_->mutex);
  impl_->server_address = host_port;
}

const RestApiOptions& RestApiHandler::options() const { return impl_->options; }

net::Response RestApiHandler::Impl::handle(const net::Request& request,
                                           const core::UserInfo* user,
                                           std::optional<AdmissionResult>* admitted) {
  const auto token = bearerToken(request);
  if (!token || options.bearer_token.empty() || !constantTimeEquals(*token, options.bearer_token)) {
    return rest::statusResponse(core::newUnauthorized("Unauthorized"));
  }

  Call call;
  call.http = &request;
  call.admitted = admitted;
  call.query = rest::QueryValues::parse(request.query);
  if (auto timeout = call.query.get("timeout"); timeout && !timeout->empty()) {
    auto parsed = go::parseDuration(*timeout);
    if (!parsed) {
      return rest::statusResponse(core::newBadRequest(
          "invalid timeout specified in the request URL - " + parsed.error().message));
    }
    if (*parsed > 0) {
      call.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::nanoseconds(*parsed));
      if (call.timeout->count() == 0) call.timeout = std::chrono::milliseconds(1);
    }
  }

  call.info = rest::parseRequestInfo(request.method, request.path, call.query);
  // handleAs: a scenario step's user; else the admin or whom the headers impersonate.
  call.user = user != nullptr ? *user : requestUser(request);
  if (auto denied = authorizeRequest(call)) return std::move(*denied);
  if (!call.info.is_resource_request) return nonResource(request, call.info);
  return resource(call);
}

std::optional<net::Response> RestApiHandler::Impl::authorizeRequest(const Call& call) const {
  if (!chain.options().authorize) return std::nullopt;
  const net::Request& http = *call.http;
  // WithImpersonation (impersonation.go): the requester must be allowed to "impersonate" the
  // user (a service account's as serviceaccounts in its namespace), each group and the uid.
  if (http.headers.get("Impersonate-User")) {
    std::vector<AuthorizationAttributes> checks;
    auto check = [&](std::string group, std::string resource, std::string subresource,
                     std::string namespace_name, std::string name) {
      AuthorizationAttributes attributes;
      attributes.user = defaultAdminUser();
      attributes.verb = "impersonate";
      attributes.api_group = std::move(group);
      attributes.api_version = "v1";
      attributes.resource = std::move(resource);
      attributes.subresource = std::move(subresource);
      attributes.namespace_name = std::move(namespace_name);
      attributes.name = std::move(name);
      checks.push_back(std::move(attributes));
    };
    const std::string& username = call.user.username;
    constexpr std::string_view kPrefix = "system:serviceaccount:";
    const auto colon = username.find(':', kPrefix.size());
    if (username.rfind(kPrefix, 0) == 0 && colon != std::string::npos) {
      check("", "serviceaccounts", "", username.substr(kPrefix.size(), colon - kPrefix.size()),
            username.substr(colon + 1));
    } else {
      check("", "users", "", "", username);
    }
    for (const auto& group : http.headers.getAll("Impersonate-Group")) {
      check("", "groups", "", "", group);
    }
    if (auto uid = http.headers.get("Impersonate-Uid")) {
      check("authentication.k8s.io", "uids", "", "", *uid);
    }
    for (const auto& attributes : checks) {
      const Authorization decision = authorize(store, attributes);
      if (!decision.allowed()) {
        return rest::statusResponse(forbidden(attributes, decision.reason));
      }
    }
  }
  // WithAuthorization: the request as its RequestInfo names it.
  const rest::RequestInfo& info = call.info;
  AuthorizationAttributes attributes;
  attributes.user = call.user;
  attributes.verb = info.verb;
  attributes.resource_request = info.is_resource_request;
  attributes.path = info.path;
  attributes.namespace_name = info.namespace_name;
  attributes.api_group = info.api_group;
  attributes.api_version = info.api_version;
  attributes.resource = info.resource;
  attributes.subresource = info.subresource;
  attributes.name = info.name;
  const Authorization decision = authorize(store, attributes);
  if (decision.allowed()) return std::nullopt;
  return rest::statusResponse(forbidden(attributes, decision.reason));
}

net::Response RestApiHandler::Impl::nonResource(const net::Request& request,
                                                const RequestInfo& info) {
  const std::string& path = request.path;
  if (request.method != "GET" && request.method != "HEAD") {
    return rest::statusResponse(rest::routerError(405));
  }
  if (path == "/version" || path == "/version/") {
    return rest::jsonResponse(200, rest::versionDocument(options.version));
  }
  for (const char* check : {"/healthz", "/livez", "/readyz"}) {
    const std::string prefix = check;
    if (path == prefix || path.rfind(prefix + "/", 0) == 0) {
      return plainText(200, "ok", "text/plain; charset=utf-8");
    }
  }
  if (path == "/metrics") {
    std::string text = options.metrics ? options.metrics->render() : std::string();
    if (options.more_metrics) text += options.more_metrics();
    return plainText(200, std::move(text), "text/plain; version=0.0.4; charset=utf-8");
  }
  if (path == "/api" || path == "/api/") {
    std::string address;
    {
      std::lock_guard lock(mutex);
      address = server_address;
    }
    return rest::jsonResponse(200, rest::apiVersionsDocument(address));
  }
  if (path == "/apis" || path == "/apis/") {
    return rest::jsonResponse(200, rest::apiGroupListDocument(servedCustomResources(store)));
  }
  if (path == "/openapi/v3" || path == "/openapi/v3/") {
    return rest::jsonResponse(200, rest::openApiV3Root(servedCustomResources(store)));
  }
  if (path.rfind("/openapi/v3/", 0) == 0) {
    // /openapi/v3/api/v1, /openapi/v3/apis/<group>/<version>; the ?hash= query is not checked.
    const std::string key = path.substr(std::string_view("/openapi/v3/").size());
    std::optional<nlohmann::json> doc;
    if (key.rfind("api/", 0) == 0) {
      doc = rest::openApiV3Document("", key.substr(4), servedCustomResources(store));
    } else if (key.rfind("apis/", 0) == 0) {
      const std::string rest_of = key.substr(5);
      const auto slash = rest_of.find('/');
      if (slash != std::string::npos) {
        doc = rest::openApiV3Document(rest_of.substr(0, slash), rest_of.substr(slash + 1),
                                      servedCustomResources(store));
      }
    }
    if (doc) return rest::jsonResponse(200, *doc);
    return rest::notFoundPage();
  }
  // /api/v1, /apis/<group>, /apis/<group>/<version>: fewer than three parts after the prefix.
  std::vector<std::string> parts;
  for (std::size_t start = 1; start <= path.size();) {
    const auto slash = path.find('/', start);
    std::string part = path.substr(start, slash == std::string::npos ? std::string::npos
                                                                      : slash - start);
    if (!part.empty()) parts.push_back(rest::percentDecode(part, false));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (parts.size() == 2 && parts[0] == "api") {
    if (auto doc = rest::apiResourceListDocument("", parts[1])) return rest::jsonResponse(200, *doc);
  }
  if (parts.size() == 3 && parts[0] == "apis") {
    if (auto doc = rest::apiResourceListDocument(parts[1], parts[2],
                                                 servedCustomResources(store))) {
      return rest::jsonResponse(200, *doc);
    }
  }
  if (parts.size() == 2 && parts[0] == "apis") {
    const nlohmann::json groups = rest::apiGroupListDocument(servedCustomResources(store));
    for (const auto& group : groups["groups"]) {
      if (group["name"] == parts[1]) {
        nlohmann::json doc = group;
        doc["kind"] = "APIGroup";
        doc["apiVersion"] = "v1";
        return rest::jsonResponse(200, doc);
      }
    }
  }
  if (path == "/") {
    nlohmann::json paths = nlohmann::json::array({"/api", "/api/v1", "/apis", "/healthz", "/livez",
                                                  "/metrics", "/openapi/v3", "/readyz",
                                                  "/version"});
    // Named: a range-for over a member of a temporary would outlive the temporary (found by the
    // rest_request fuzz target; fuzz/corpus/rest_request/get-root-groups.txt replays it).
    const nlohmann::json groups = rest::apiGroupListDocument(servedCustomResources(store));
    for (const auto& group : groups["groups"]) {
      paths.push_back("/apis/" + group["name"].get<std::string>());
      for (const auto& version : group["versions"]) {
        paths.push_back("/apis/" + version["groupVersion"].get<std::string>());
      }
    }
    return rest::jsonResponse(200, {{"paths", paths}});
  }
  (void)info;
  return rest::notFoundPage();
}

net::Response RestApiHandler::Impl::resource(Call& call) {
  RequestInfo& info = call.info;
  if (info.verb.empty()) return rest::statusResponse(rest::routerError(405));
  if (isAccessReview(info)) return accessReview(call);
  // Resources of a group/version no built-in resource serves come from the established CRDs
  // (customresource_handler.go: a group/version without one is the 404 of the path).
  std::vector<ServedCustomResource> custom;
  if (!rest::servesGroupVersion(info.api_group, info.api_version)) {
    custom = servedCustomResources(store);
    if (!rest::servesGroupVersion(info.api_group, info.api_version, custom)) {
      return rest::notFoundPage();
    }
  }
  // Inside a served group/version, a path without a route is go-restful's 404.
  if (info.parts.size() > 3 || info.resource.empty()) {
    return rest::statusResponse(rest::routerError(404));
  }
  const core::GroupVersionResource gvr{info.api_group, info.api_version, info.resource};
  auto findCustom = [&](std::string_view subresource) -> const ServedCustomResource* {
    if (custom.empty()) custom = servedCustomResources(store);
    for (const auto& served : custom) {
      if (served.info.resource == gvr && served.info.subresource == subresource) return &served;
    }
    return nullptr;
  };
  auto main = core::findResource(gvr);
  if (!main) {
    const ServedCustomResource* served = findCustom("");
    if (served == nullptr) return rest::statusResponse(rest::routerError(404));
    if (served->needs_conversion_webhook) {
      // Objects are stored in another version and only the CRD's conversion webhook converts
      // them; the simulator does not call conversion webhooks.
      return rest::statusResponse(core::newInternalError(fmt::format(
          "{}: conversion webhooks are not simulated; call the storage version of {}",
          gvr.group + "/" + gvr.version + ", Resource=" + gvr.resource,
          served->definition->value("/metadata/name"_json_pointer, std::string()))));
    }
    main = served->info;
    call.crd = served->definition;
    call.list_kind = served->list_kind;
  }
  call.main = *main;

  const bool named = !info.name.empty();
  if (main->namespaced) {
    if (info.namespace_name.empty()) {
      // Across namespaces only the collection is routed, and only for reads.
      if (named) return rest::statusResponse(rest::routerError(404));
      if (info.verb != "list" && info.verb != "watch") {
        return rest::statusResponse(rest::routerError(405));
      }
    }
    call.namespace_name = info.namespace_name;
  } else if (info.resource != "namespaces" && !info.namespace_name.empty()) {
    return rest::statusResponse(rest::routerError(404));
  }

  if (!info.subresource.empty()) {
    auto sub = core::findResource(gvr, info.subresource);
    if (call.crd) {
      // customresource_handler.go ServeHTTP: a subresource the version does not declare is
      // the NotFound of the object.
      if (const ServedCustomResource* served = findCustom(info.subresource)) {
        sub = served->info;
      } else {
        return rest::statusResponse(core::newNotFound({gvr.group, gvr.resource}, info.name));
      }
    }
    if (!sub) return rest::statusResponse(rest::routerError(404));
    call.sub = *sub;
    if (info.subresource == "finalize") {
      // namespaces/finalize: FinalizeREST is only an Updater (PUT).
      if (info.verb != "update") return rest::statusResponse(rest::routerError(405));
    } else if (info.subresource != "status") {
      return rest::statusResponse(core::newMethodNotSupported(
          {gvr.group, gvr.resource + "/" + info.subresource}, info.verb));
    } else if (info.verb != "get" && info.verb != "update" && info.verb != "patch") {
      return rest::statusResponse(rest::routerError(405));
    }
  } else if (named) {
    if (info.verb == "create") return rest::statusResponse(rest::routerError(405));
  } else {
    if (info.verb == "update" || info.verb == "patch") {
      return rest::statusResponse(rest::routerError(405));
    }
    if (info.verb == "deletecollection") {
      const auto verbs = rest::verbsOf(*main);
      if (std::find(verbs.begin(), verbs.end(), "deletecollection") == verbs.end()) {
        return rest::statusResponse(rest::routerError(405));
      }
    }
  }
  auto output = rest::negotiateOutput(call.http->headers.get("Accept"));
  if (!output) return rest::statusResponse(rest::routerError(406));
  call.output = *output;

  if (info.verb == "get") return get(call);
  if (info.verb == "list") return list(call);
  if (info.verb == "watch") return watch(call);
  if (info.verb == "create") return create(call);
  if (info.verb == "update") return update(call);
  if (info.verb == "patch") return patch(call);
  if (info.verb == "delete") return remove(call);
  if (info.verb == "deletecollection") return removeCollection(call);
  return rest::statusResponse(rest::routerError(405));
}

std::optional<nlohmann::json> RestApiHandler::Impl::findStored(
    const core::GroupVersionResource& gvr, const std::string& namespace_name,
    const std::string& name) const {
  std::vector<core::GroupResource> seen;
  auto lookup = [&](const core::GroupResource& gr) -> std::optional<nlohmann::json> {
    for (const auto& s : seen) {
      if (s.group == gr.group && s.resource == gr.resource) return std::nullopt;
    }
    seen.push_back(gr);
    return store.get(gr, namespace_name, name);
  };
  if (auto found = lookup({gvr.group, gvr.resource})) return found;
  for (const auto& equivalent : core::equivalentResources(gvr)) {
    if (auto found = lookup({equivalent.resource.group, equivalent.resource.resource})) {
      return found;
    }
  }
  return std::nullopt;
}

std::vector<nlohmann::json> RestApiHandler::Impl::listStored(
    const core::GroupVersionResource& gvr, const std::string& namespace_name) const {
  std::vector<core::GroupResource> resources = {{gvr.group, gvr.resource}};
  for (const auto& equivalent : core::equivalentResources(gvr)) {
    const core::GroupResource gr{equivalent.resource.group, equivalent.resource.resource};
    const bool known = std::any_of(resources.begin(), resources.end(), [&](const auto& r) {
      return r.group == gr.group && r.resource == gr.resource;
    });
    if (!known) resources.push_back(gr);
  }
  std::vector<nlohmann::json> out;
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& gr : resources) {
    for (auto& object : store.list(gr, namespace_name)) {
      const auto& metadata = object.is_object() ? object.value("metadata", nlohmann::json::object())
                                                : nlohmann::json::object();
      std::pair<std::string, std::string> key{metadata.value("namespace", ""),
                                              metadata.value("name", "")};
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      keys.push_back(std::move(key));
      out.push_back(std::move(object));
    }
  }
  if (resources.size() > 1) {
    std::vector<std::size_t> order(out.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
    std::vector<nlohmann::json> sorted;
    sorted.reserve(out.size());
    for (std::size_t i : order) sorted.push_back(std::move(out[i]));
    out = std::move(sorted);
  }
  return out;
}

WriteRequest RestApiHandler::Impl::writeRequest(const Call& call, std::string operation,
                                                std::string verb) const {
  WriteRequest request;
  request.operation = std::move(operation);
  request.verb = std::move(verb);
  request.resource = call.main.resource;
  request.subresource = call.info.subresource;
  request.namespace_name = call.namespace_name;
  request.name = call.info.name;
  request.user_info = call.user;
  request.authorized = true;  // by authorizeRequest
  request.timeout = call.timeout;
  request.request_uri = call.http->target;
  request.user_agent = call.http->headers.get("User-Agent").value_or("");
  request.source_ip = rest::sourceIp(call.http->peer);
  return request;
}

net::Response RestApiHandler::Impl::writeResponse(const Call& call,
                                                  const AdmissionResult& result) const {
  if (call.admitted) *call.admitted = result;
  net::Response response;
  if (!result.allowed) {
    core::Status status = result.status.value_or(
        core::newInternalError("the request was rejected without a status"));
    if (status.code == 0) status.code = result.code != 0 ? result.code : 500;
    response = rest::statusResponse(status);
  } else {
    const core::ResourceInfo& info = call.sub ? *call.sub : call.main;
    nlohmann::json body = result.object ? rest::asRequested(*result.object, info)
                                        : nlohmann::json::object();
    response = rest::jsonResponse(result.code != 0 ? result.code : 200, body);
  }
  rest::addWarnings(response, result.warnings);
  return response;
}

}  // namespace harness::sim
