// Followed: k8s.io/apiserver pkg/endpoints/handlers/responsewriters/{status.go,writers.go},
// pkg/server/handler.go (serviceErrorHandler: NewGenericServerResponse(code, "", {}, "",
// serviceErr.Message)), pkg/util/notfoundhandler/not_found_handler.go,
// pkg/endpoints/handlers/negotiation/{errors.go,negotiate.go}, emicklei/go-restful jsr311.go
// (router messages "404: Page Not Found", "405: Method Not Allowed", "406: Not Acceptable",
// "415: Unsupported Media Type"), k8s.io/apimachinery pkg/util/net/http.go (NewWarningHeader,
// makeQuotedString).

#include "responses.h"

#include <algorithm>
#include <cctype>
#include <map>

#include <fmt/format.h>

namespace harness::sim::rest {
namespace {

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

struct MediaRange {
  std::string type;  // lower-cased "application/json"
  std::map<std::string, std::string> params;
};

MediaRange parseRange(std::string_view text) {
  MediaRange range;
  std::size_t start = 0;
  bool first = true;
  while (start <= text.size()) {
    const auto semi = text.find(';', start);
    const std::string part =
        trim(text.substr(start, semi == std::string_view::npos ? std::string_view::npos
                                                               : semi - start));
    if (first) {
      range.type = lower(part);
      first = false;
    } else if (!part.empty()) {
      const auto eq = part.find('=');
      std::string key = lower(trim(part.substr(0, eq)));
      std::string value = eq == std::string::npos ? std::string() : trim(part.substr(eq + 1));
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      range.params[std::move(key)] = std::move(value);
    }
    if (semi == std::string_view::npos) break;
    start = semi + 1;
  }
  return range;
}

}  // namespace

net::Response jsonResponse(int code, const nlohmann::json& body) {
  net::Response response;
  response.status = code;
  response.headers.set("Content-Type", "application/json");
  response.body = body.dump();
  return response;
}

net::Response statusResponse(const core::Status& status) {
  core::Status typed = status.withTypeMeta();
  const int code = typed.code == 0 ? 500 : typed.code;
  if (typed.code == 0) typed.code = 500;
  return jsonResponse(code, core::toJson(typed));
}

net::Response notFoundPage() {
  net::Response response;
  response.status = 404;
  response.headers.set("Content-Type", "text/plain; charset=utf-8");
  response.headers.set("X-Content-Type-Options", "nosniff");
  response.body = "404 page not found\n";
  return response;
}

core::Status routerError(int code) {
  std::string message;
  switch (code) {
    case 404:
      message = "404: Page Not Found";
      break;
    case 405:
      message = "405: Method Not Allowed";
      break;
    case 406:
      message = "406: Not Acceptable";
      break;
    case 415:
      message = "415: Unsupported Media Type";
      break;
    default:
      message = fmt::format("{}: {}", code, net::reasonPhrase(code));
  }
  return core::newGenericServerResponse(code, "", {}, "", message, 0, false);
}

std::string warningHeaderValue(std::string_view text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

void addWarnings(net::Response& response, const std::vector<std::string>& warnings) {
  for (const auto& warning : warnings) response.headers.add("Warning", warningHeaderValue(warning));
}

std::optional<OutputFormat> negotiateOutput(const std::optional<std::string>& accept) {
  if (!accept || trim(*accept).empty()) return OutputFormat{};
  std::string_view rest = *accept;
  while (true) {
    const auto comma = rest.find(',');
    const MediaRange range = parseRange(rest.substr(0, comma));
    const bool json_like = range.type == "application/json" || range.type == "application/*" ||
                           range.type == "*/*";
    if (json_like) {
      auto as = range.params.find("as");
      if (as == range.params.end()) return OutputFormat{};
      auto g = range.params.find("g");
      auto v = range.params.find("v");
      const bool meta = g != range.params.end() && g->second == "meta.k8s.io" &&
                        v != range.params.end() && (v->second == "v1" || v->second == "v1beta1");
      if (meta && as->second == "Table") {
        return OutputFormat{OutputFormat::Kind::kTable, v->second};
      }
      if (meta && (as->second == "PartialObjectMetadata" ||
                   as->second == "PartialObjectMetadataList")) {
        return OutputFormat{OutputFormat::Kind::kPartialObjectMetadata, v->second};
      }
      // Another transformation (e.g. APIGroupDiscoveryList): not offered, try the next range.
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return std::nullopt;
}

std::optional<BodyFormat> negotiateInput(const std::optional<std::string>& content_type,
                                         bool protobuf) {
  if (!content_type || trim(*content_type).empty()) return BodyFormat::kJson;
  auto media = core::parseMediaType(*content_type);
  if (!media) return std::nullopt;
  if (*media == "application/json") return BodyFormat::kJson;
  if (*media == "application/yaml") return BodyFormat::kYaml;
  if (protobuf && *media == "application/vnd.kubernetes.protobuf") return BodyFormat::kProtobuf;
  return std::nullopt;
}

core::Status unsupportedMediaType(const std::vector<std::string>& accepted) {
  std::string list;
  for (const auto& type : accepted) {
    if (!list.empty()) list += ", ";
    list += type;
  }
  core::Status status;
  status.status = std::string(core::kStatusFailure);
  status.code = 415;
  status.reason = std::string(core::kReasonUnsupportedMediaType);
  status.message =
      "the body of the request was in an unknown format - accepted media types include: " + list;
  return status;
}

}  // namespace harness::sim::rest
