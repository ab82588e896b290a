#pragma once

// Discovery documents of kube-apiserver for the built-in resources this project knows
// (core::builtinResources()): /version (version.Info), /api (APIVersions), /apis (APIGroupList),
// /api/v1 and /apis/<group>/<version> (APIResourceList). Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/sim/custom_resources.h"
#include "harness/sim/rest_api.h"

namespace harness::sim::rest {

nlohmann::json versionDocument(const ServerVersion& version);
// APIVersions; serverAddressByClientCIDRs has one entry for 0.0.0.0/0 when `server_address` is
// not empty.
nlohmann::json apiVersionsDocument(const std::string& server_address);
// `custom`: what the established CustomResourceDefinitions serve (servedCustomResources), their
// groups after the built-in ones (customresource_discovery_controller.go: versions by version
// priority, resources in CRD order, verbs in its order).
using CustomResources = std::vector<ServedCustomResource>;
nlohmann::json apiGroupListDocument(const CustomResources& custom = {});
// nullopt when the group/version is not served.
std::optional<nlohmann::json> apiResourceListDocument(std::string_view group,
                                                      std::string_view version,
                                                      const CustomResources& custom = {});
bool servesGroupVersion(std::string_view group, std::string_view version,
                        const CustomResources& custom = {});

// OpenAPI v3 discovery, as much of it as kubectl reads (k8s.io/client-go/openapi/client.go
// Paths(), openapi3/root.go GVSpec(), cli-runtime/pkg/resource/query_param_verifier_v3.go):
// /openapi/v3 maps "api/v1" and "apis/<group>/<version>" to a serverRelativeURL carrying a hash;
// each group/version document lists, per resource, the PATCH operation of the object path with
// its x-kubernetes-group-version-kind and the query parameters kube-apiserver declares
// (dryRun, fieldManager, fieldValidation, force, pretty). kubectl then validates server-side
// (?fieldValidation=Strict) instead of downloading the OpenAPI v2 schema. Component schemas are
// not served: kubectl apply falls back to the compiled-in strategic-merge metadata.
// The custom resources' group/versions are listed after the built-in ones, with the same
// operations (their schemas are not served either).
nlohmann::json openApiV3Root(const CustomResources& custom = {});
// nullopt when the group/version is not served.
std::optional<nlohmann::json> openApiV3Document(std::string_view group, std::string_view version,
                                                const CustomResources& custom = {});

// The verbs discovery lists for a resource or subresource, sorted (e.g. pods: create, delete,
// deletecollection, get, list, patch, update, watch; pods/status: get, patch, update).
std::vector<std::string> verbsOf(const core::ResourceInfo& info);

// Storage that returns the deleted object from DELETE instead of a Status (registry Store
// ReturnDeletedObject: pods, services, namespaces, serviceaccounts, persistentvolumeclaims).
bool returnsDeletedObject(const core::GroupVersionResource& resource);

}  // namespace harness::sim::rest
