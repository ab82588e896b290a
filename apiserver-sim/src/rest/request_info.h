#pragma once

// What the apiserver knows about a request from its method, path and query before any handler
// runs (k8s.io/apiserver pkg/endpoints/request/requestinfo.go RequestInfoFactory.NewRequestInfo),
// and Go's url.ParseQuery for the query string. Pure.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness::sim::rest {

// url.Values: every value of every key, percent-decoded, '+' read as a space.
class QueryValues {
 public:
  static QueryValues parse(std::string_view query);
  // The first value (Go's Values.Get), nullopt when the key is absent.
  [[nodiscard]] std::optional<std::string> get(const std::string& key) const;
  [[nodiscard]] std::vector<std::string> all(const std::string& key) const;
  [[nodiscard]] bool has(const std::string& key) const { return values_.count(key) != 0; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

// Percent-decoding as Go's url.PathUnescape (plus_is_space = false) / QueryUnescape (true);
// an invalid escape is kept as written.
std::string percentDecode(std::string_view text, bool plus_is_space);

struct RequestInfo {
  bool is_resource_request = false;
  std::string path;
  // get, list, watch, create, update, patch, delete, deletecollection; for non-resource requests
  // the lower-cased method.
  std::string verb;
  std::string api_prefix;  // "api" or "apis"
  std::string api_group;
  std::string api_version;
  std::string namespace_name;
  std::string resource;
  std::string subresource;
  std::string name;
  // resource/name/subresource/... after the namespace part (more than 3 parts: no such route).
  std::vector<std::string> parts;
};

// NewRequestInfo for the prefixes "api" (groupless) and "apis". Path segments are percent-decoded.
RequestInfo parseRequestInfo(std::string_view method, std::string_view path,
                             const QueryValues& query);

}  // namespace harness::sim::rest
