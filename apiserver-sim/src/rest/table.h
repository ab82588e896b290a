#pragma once

// Server-side printing: the meta.k8s.io Table that `kubectl get` asks for with
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io`, and PartialObjectMetadata(List).
// Pure (the current time is a parameter).

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"

namespace harness::sim::rest {

// What a Table row carries as its object (the includeObject query parameter).
enum class IncludeObject { kNone, kMetadata, kObject };
// The includeObject query parameter: "None", "Object", else (also absent) Metadata.
IncludeObject parseIncludeObject(std::string_view value);

// A Table (apiVersion meta.k8s.io/<table_version>) of `objects`: the columns of kube-apiserver's
// printers for pods (Name, Ready, Status, Restarts, Age; IP, Node, Nominated Node, Readiness
// Gates at priority 1), namespaces, deployments, configmaps, secrets and webhook configurations;
// Name and Age for other kinds.
nlohmann::json toTable(const core::ResourceInfo& info, const std::vector<nlohmann::json>& objects,
                       const std::string& resource_version, std::string_view table_version,
                       IncludeObject include, std::chrono::system_clock::time_point now);

// A custom resource's Table: the columns and cells apiextensions-apiserver's table convertor made
// of the same `objects` (`converted`, a Table: its CRD's additionalPrinterColumns, or Age), the
// rows' objects as toTable sets them, apiVersion meta.k8s.io/<table_version>.
nlohmann::json customResourceTable(const nlohmann::json& converted,
                                   const std::vector<nlohmann::json>& objects,
                                   const std::string& resource_version,
                                   std::string_view table_version, IncludeObject include);

// PartialObjectMetadata of one object (apiVersion meta.k8s.io/<version>).
nlohmann::json toPartialObjectMetadata(const nlohmann::json& object, std::string_view version);
nlohmann::json toPartialObjectMetadataList(const std::vector<nlohmann::json>& objects,
                                           const std::string& resource_version,
                                           std::string_view version);

// apimachinery util/duration HumanDuration ("90s", "5m3s", "3h10m", "2d5h", "<invalid>").
std::string humanDuration(std::chrono::nanoseconds d);
// translateTimestampSince: HumanDuration since an RFC 3339 timestamp, "<unknown>" when absent or
// unparseable.
std::string ageSince(const std::string& rfc3339, std::chrono::system_clock::time_point now);

}  // namespace harness::sim::rest
