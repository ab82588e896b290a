// GET and LIST (k8s.io/apiserver pkg/endpoints/handlers/get.go GetResource, ListResource): the
// object or list in the requested version, labelSelector / fieldSelector filtering (a selector that
// does not parse, or an unsupported field label, is a 400 BadRequest with the parser's text),
// Table and PartialObjectMetadata transformations (rest.go transformResponseObject), and one audit
// event per request through AdmissionChain::auditRead.

#include <chrono>

#include "handler.h"
#include "harness/core/label_selector.h"
#include "selectors.h"
#include "table.h"

namespace harness::sim {

using rest::Call;

namespace {

rest::IncludeObject includeObject(const Call& call) {
  return rest::parseIncludeObject(call.query.get("includeObject").value_or(""));
}

}  // namespace

rest::Decoded<std::vector<nlohmann::json>> RestApiHandler::Impl::selectListed(
    const Call& call) const {
  rest::Decoded<std::vector<nlohmann::json>> out;
  auto labels = rest::parseLabelSelector(call.query.get("labelSelector").value_or(""));
  if (!labels) {
    out.error = core::newBadRequest(labels.error().message);
    return out;
  }
  auto fields = rest::parseFieldSelector(call.query.get("fieldSelector").value_or(""));
  if (fields) {
    if (auto checked = rest::checkFieldLabels(call.main.kind.group, call.main.kind.kind, *fields);
        !checked) {
      out.error = core::newBadRequest(checked.error().message);
      return out;
    }
  } else {
    out.error = core::newBadRequest(fields.error().message);
    return out;
  }
  std::vector<nlohmann::json> selected;
  for (auto& object : listStored(call.main.resource, call.namespace_name)) {
    auto object_labels = core::labelsOf(object);
    if (!object_labels || !labels->matches(*object_labels)) continue;
    if (!rest::matchesFields(object, *fields)) continue;
    selected.push_back(rest::asRequested(std::move(object), call.main));
  }
  out.value = std::move(selected);
  return out;
}

std::variant<nlohmann::json, core::Status> RestApiHandler::Impl::tableOf(
    const Call& call, const std::vector<nlohmann::json>& objects,
    const std::string& resource_version) const {
  const auto& convert = chain.options().custom_resources.table;
  if (!call.crd || !convert) {
    // Without kube-cel a custom resource gets Name and Age: a CRD's columns when it declares
    // none.
    return rest::toTable(call.main, objects, resource_version, call.output.meta_version,
                         includeObject(call), std::chrono::system_clock::now());
  }
  try {
    return rest::customResourceTable(convert(*call.crd, call.main.resource.version, objects,
                                             !call.info.name.empty(), false, resource_version),
                                     objects, resource_version, call.output.meta_version,
                                     includeObject(call));
  } catch (const std::exception& e) {
    return core::newInternalError(e.what());
  }
}

net::Response RestApiHandler::Impl::get(const Call& call) {
  const core::GroupVersionResource& gvr = call.main.resource;
  auto found = findStored(gvr, call.namespace_name, call.info.name);
  if (!found) {
    const core::Status status = core::newNotFound(call.groupResource(), call.info.name);
    chain.auditRead("get", gvr, call.namespace_name, call.info.name, call.user,
                    call.http->target, status.code, std::nullopt);
    return rest::statusResponse(status);
  }
  nlohmann::json object = rest::asRequested(std::move(*found), call.main);
  nlohmann::json body;
  switch (call.output.kind) {
    case rest::OutputFormat::Kind::kTable: {
      std::string rv;
      if (object.contains("metadata") && object["metadata"].is_object()) {
        rv = object["metadata"].value("resourceVersion", "");
      }
      auto table = tableOf(call, {object}, rv);
      if (auto* status = std::get_if<core::Status>(&table)) return rest::statusResponse(*status);
      body = std::get<nlohmann::json>(std::move(table));
      break;
    }
    case rest::OutputFormat::Kind::kPartialObjectMetadata:
      body = rest::toPartialObjectMetadata(object, call.output.meta_version);
      break;
    case rest::OutputFormat::Kind::kObject:
      body = object;
      break;
  }
  chain.auditRead("get", gvr, call.namespace_name, call.info.name, call.user,
                  call.http->target, 200, object);
  return rest::jsonResponse(200, body);
}

net::Response RestApiHandler::Impl::list(const Call& call) {
  const core::GroupVersionResource& gvr = call.main.resource;
  const std::string resource_version = std::to_string(store.revision());
  auto selected = selectListed(call);
  if (selected.error) {
    chain.auditRead("list", gvr, call.namespace_name, "", call.user, call.http->target,
                    selected.error->code, std::nullopt);
    return rest::statusResponse(*selected.error);
  }
  const std::vector<nlohmann::json>& objects = *selected.value;
  nlohmann::json list = rest::listDocument(call.main, objects, resource_version);
  nlohmann::json body;
  switch (call.output.kind) {
    case rest::OutputFormat::Kind::kTable: {
      auto table = tableOf(call, objects, resource_version);
      if (auto* status = std::get_if<core::Status>(&table)) return rest::statusResponse(*status);
      body = std::get<nlohmann::json>(std::move(table));
      break;
    }
    case rest::OutputFormat::Kind::kPartialObjectMetadata:
      body = rest::toPartialObjectMetadataList(objects, resource_version,
                                               call.output.meta_version);
      break;
    case rest::OutputFormat::Kind::kObject:
      body = list;
      break;
  }
  chain.auditRead("list", gvr, call.namespace_name, "", call.user, call.http->target, 200,
                  list);
  return rest::jsonResponse(200, body);
}

}  // namespace harness::sim
