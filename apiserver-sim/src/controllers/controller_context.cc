#include "controller_context.h"

#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "harness/core/object.h"

namespace harness::sim::controllers {

using json = nlohmann::json;

core::UserInfo serviceAccount(const std::string& controller) {
  core::UserInfo user;
  user.username = "system:serviceaccount:kube-system:" + controller;
  user.groups = {"system:serviceaccounts", "system:serviceaccounts:kube-system",
                 "system:authenticated"};
  return user;
}

std::string str(const json& object, const json::json_pointer& pointer) {
  if (!object.contains(pointer)) return {};
  const json& value = object.at(pointer);
  return value.is_string() ? value.get<std::string>() : std::string();
}

std::int64_t integer(const json& object, const json::json_pointer& pointer, std::int64_t dflt) {
  if (!object.contains(pointer)) return dflt;
  const json& value = object.at(pointer);
  return value.is_number_integer() ? value.get<std::int64_t>() : dflt;
}

std::string uidOf(const json& object) { return str(object, "/metadata/uid"_json_pointer); }
std::string nameOf(const json& object) { return str(object, "/metadata/name"_json_pointer); }
std::string namespaceOf(const json& object) {
  return str(object, "/metadata/namespace"_json_pointer);
}
std::string resourceVersionOf(const json& object) {
  return str(object, "/metadata/resourceVersion"_json_pointer);
}

std::string annotation(const json& object, std::string_view key) {
  if (!object.contains("/metadata/annotations"_json_pointer)) return {};
  const json& annotations = object.at("/metadata/annotations"_json_pointer);
  const auto it = annotations.find(std::string(key));
  return it != annotations.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool terminating(const json& object) {
  return object.contains("/metadata/deletionTimestamp"_json_pointer);
}

std::optional<json> controllerOf(const json& object) {
  const json* refs = object.contains("/metadata/ownerReferences"_json_pointer)
                         ? &object.at("/metadata/ownerReferences"_json_pointer)
                         : nullptr;
  if (refs == nullptr || !refs->is_array()) return std::nullopt;
  for (const auto& ref : *refs) {
    if (ref.is_object() && ref.value("controller", false)) return ref;
  }
  return std::nullopt;
}

bool controlledBy(const json& object, const json& owner) {
  auto ref = controllerOf(object);
  return ref && ref->value("uid", "") == uidOf(owner);
}

json controllerRef(const json& owner, const std::string& api_version, const std::string& kind) {
  return {{"apiVersion", api_version}, {"kind", kind},      {"name", nameOf(owner)},
          {"uid", uidOf(owner)},       {"controller", true}, {"blockOwnerDeletion", true}};
}

namespace {

// client-go tools/record makeEvent.
json eventFor(const json& object, const std::string& kind, const std::string& api_version,
              const std::string& type, const std::string& reason, const std::string& message,
              const std::string& component) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string timestamp = rfc3339Now();
  // The name is "<object>.<UnixNano in hex>".
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata",
           {{"name", fmt::format("{}.{:x}", nameOf(object),
                                 std::chrono::duration_cast<std::chrono::nanoseconds>(now)
                                     .count())},
            {"namespace", namespaceOf(object)}}},
          {"involvedObject",
           {{"kind", kind},
            {"namespace", namespaceOf(object)},
            {"name", nameOf(object)},
            {"uid", uidOf(object)},
            {"apiVersion", api_version},
            {"resourceVersion", resourceVersionOf(object)}}},
          {"reason", reason},
          {"message", message},
          {"source", {{"component", component}}},
          {"firstTimestamp", timestamp},
          {"lastTimestamp", timestamp},
          {"count", 1},
          {"type", type},
          {"eventTime", nullptr},
          {"reportingComponent", component},
          {"reportingInstance", ""}};
}

}  // namespace

std::string servedVersion(const core::GroupResource& resource) {
  std::string found;
  for (const auto& info : core::builtinResources()) {
    if (info.resource.group != resource.group || info.resource.resource != resource.resource) {
      continue;
    }
    if (info.resource.version == "v1") return "v1";
    if (found.empty()) found = info.resource.version;
  }
  return found.empty() ? std::string("v1") : found;
}

AdmissionResult ControllerContext::write(std::string operation,
                                         const core::GroupResource& resource,
                                         const std::string& path,
                                         const std::string& namespace_name,
                                         const std::string& name, std::optional<json> object,
                                         const std::string& controller, std::string subresource,
                                         std::optional<json> options, std::string verb) const {
  WriteRequest request;
  request.operation = std::move(operation);
  request.verb = std::move(verb);
  const std::string version = servedVersion(resource);
  request.resource = {resource.group, version, resource.resource};
  request.subresource = std::move(subresource);
  request.namespace_name = namespace_name;
  request.name = name;
  request.object = std::move(object);
  request.options = std::move(options);
  request.user_info = serviceAccount(controller);
  request.user_agent = "kube-controller-manager/" + controller;
  const std::string prefix = resource.group.empty()
                                 ? std::string("/api/v1")
                                 : fmt::format("/apis/{}/{}", resource.group, version);
  request.request_uri = namespace_name.empty()
                            ? fmt::format("{}/{}", prefix, path)
                            : fmt::format("{}/namespaces/{}/{}", prefix, namespace_name, path);
  return chain_.handle(request);
}

void ControllerContext::event(const json& object, const std::string& kind,
                              const std::string& api_version, const std::string& type,
                              const std::string& reason, const std::string& message,
                              const std::string& controller) const {
  for (auto existing : store_.list({"", "events"}, namespaceOf(object))) {
    if (str(existing, "/involvedObject/uid"_json_pointer) == uidOf(object) &&
        existing.value("reason", "") == reason && existing.value("message", "") == message &&
        existing.value("type", "") == type &&
        str(existing, "/source/component"_json_pointer) == controller) {
      existing["count"] = integer(existing, "/count"_json_pointer, 1) + 1;
      existing["lastTimestamp"] = rfc3339Now();
      WriteRequest request;
      request.operation = "UPDATE";
      request.verb = "patch";
      request.resource = {"", "v1", "events"};
      request.namespace_name = namespaceOf(object);
      request.name = nameOf(existing);
      request.object = existing;
      request.user_info = serviceAccount(controller);
      request.user_agent = "kube-controller-manager/" + controller;
      request.request_uri = fmt::format("/api/v1/namespaces/{}/events/{}", namespaceOf(object),
                                        nameOf(existing));
      chain_.handle(request);
      return;
    }
  }
  write("CREATE", {"", "events"}, "events", namespaceOf(object), "",
        eventFor(object, kind, api_version, type, reason, message, controller), controller);
}

}  // namespace harness::sim::controllers
