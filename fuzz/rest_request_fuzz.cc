// The simulator's REST API (apiserver-sim/src/rest) answering one request, without sockets:
// request info from method, path and query (RequestInfoFactory.NewRequestInfo, url.ParseQuery),
// content negotiation, and the decoding of write bodies (JSON or YAML objects, create/update/
// delete options, json-patch, merge-patch, strategic-merge-patch, apply-patch+yaml) on through the
// admission chain to the store. This is what kubectl and any client on the network reach.
//
// Input: a raw HTTP/1.1 request without the version, "<METHOD> <target>\n<Name>: <value>\n...\n
// \n<body>" ("\r\n" also ends a line). Every request carries the bearer token, so that inputs
// reach the handlers rather than stop at authentication. A fresh store (namespaces default and
// team, with their ServiceAccounts, and one Pod) serves each input, so runs are reproducible.
// Checked: no crash, a valid HTTP status, and every answer labelled application/json is JSON.

#include "fuzz_support.h"
#include "harness/core/metrics.h"
#include "harness/net/http.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"

namespace {

using namespace harness;
using nlohmann::json;

constexpr const char* kToken = "fuzz-token";

std::string_view nextLine(std::string_view& text) {
  const auto newline = text.find('\n');
  std::string_view line = text.substr(0, newline);
  text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

net::Request parseRequest(std::string_view text) {
  net::Request request;
  std::string_view line = nextLine(text);
  const auto space = line.find(' ');
  request.method = std::string(line.substr(0, space));
  request.target = space == std::string_view::npos ? "/" : std::string(line.substr(space + 1));
  const auto question = request.target.find('?');
  request.path = request.target.substr(0, question);
  request.query = question == std::string::npos ? "" : request.target.substr(question + 1);
  while (!text.empty()) {
    line = nextLine(text);
    if (line.empty()) break;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    request.headers.add(std::string(line.substr(0, colon)), std::string(value));
  }
  request.headers.add("Authorization", std::string("Bearer ") + kToken);
  request.body = std::string(text);
  request.peer = "10.1.2.3:45678";
  request.tls = true;
  return request;
}

sim::ChainOptions chainOptions() {
  sim::ChainOptions options;
  options.request_timeout = std::chrono::milliseconds(5000);
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const net::Request request = parseRequest(fuzz::asText(data, size));

  sim::ObjectStore store;
  sim::InProcessWebhookCaller caller;
  core::MetricsRegistry metrics;
  sim::AdmissionChain chain(store, caller, metrics, chainOptions());
  sim::RestApiOptions api_options;
  api_options.bearer_token = kToken;
  api_options.metrics = &metrics;
  sim::RestApiHandler handler(store, chain, api_options);
  handler.setServerAddress("127.0.0.1:6443");
  for (const char* name : {"default", "team"}) {
    store.put({"", "namespaces"}, {{"apiVersion", "v1"},
                                   {"kind", "Namespace"},
                                   {"metadata", {{"name", name}}},
                                   {"status", {{"phase", "Active"}}}});
    sim::createDefaultServiceAccount(store, name);
  }
  store.put({"", "pods"},
            json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web",
              "namespace":"default","labels":{"app":"web"}},"spec":{"serviceAccountName":"default",
              "containers":[{"name":"app","image":"nginx:1.27"}]}})"));

  const net::Response response = handler.handle(request);
  FUZZ_CHECK(response.status >= 100 && response.status <= 599, std::to_string(response.status));
  const auto content_type = response.headers.get("Content-Type");
  if (response.stream) {
    // A watch: what the stream has at once (its initial events) is one JSON event per line;
    // the stream is then cancelled as when the client goes away.
    response.stream->start([] {});
    const auto first = response.stream->pull();
    std::size_t begin = 0;
    for (std::size_t end = first.data.find('\n'); end != std::string::npos;
         begin = end + 1, end = first.data.find('\n', begin)) {
      const std::string line = first.data.substr(begin, end - begin);
      if (content_type && content_type->starts_with("application/json")) {
        FUZZ_CHECK(!fuzz::parseJsonOrDiscarded(line).is_discarded(), line);
      }
    }
    response.stream->cancel();
  } else if (content_type && content_type->starts_with("application/json")) {
    FUZZ_CHECK(!fuzz::parseJsonOrDiscarded(response.body).is_discarded(), response.body);
  }
  return 0;
}
