// Fixed in-process workloads of the injector's request path, for instruction counts under
// callgrind (scripts/bench/callgrind.sh): deterministic, so a 1% regression shows on a busy
// machine where wall-clock figures do not. Each workload is set up, run once to warm caches and
// lazily built statics, then run `--iterations` times inside injector_workload_measure(), the
// only function callgrind collects (--toggle-collect=injector_workload_measure). The request is
// the seed tutorial Pod's AdmissionReview as `injector review` builds it; the objects, Linkerd
// values and trust anchors are the seed tutorial's (its Namespace, and the ReplicaSet and
// Deployment owning the Pod); the Istio configuration is this project's default one.
//
//   injector_workloads WORKLOAD [--iterations N]    (WORKLOAD: --list prints them)
//
// Runs natively too (each run checks its answer): a workload that stops injecting fails.

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "event_sink.h"
#include "harness/core/admission_review.h"
#include "harness/core/json.h"
#include "harness/core/json_patch.h"
#include "harness/injector/istio/config.h"
#include "harness/injector/istio/injector.h"
#include "harness/injector/kube_api.h"
#include "harness/injector/linkerd/injector.h"
#include "harness/injector/object_files.h"
#include "harness/testing/support.h"
#include "istio_webhook.h"
#include "linkerd_webhook.h"
#include "review_command.h"
#include "serve.h"

// Kept out of line, with C linkage for a plain name, so that callgrind collects exactly this frame
// and what it calls.
extern "C" [[gnu::noinline]] void injector_workload_measure(const std::function<void()>* work,
                                                             int iterations) {
  for (int i = 0; i < iterations; ++i) (*work)();
}

namespace {

namespace t = harness::testing;

constexpr int kMaxIterations = 1000;
namespace core = harness::core;
namespace inj = harness::injector;
using nlohmann::json;

[[noreturn]] void die(const std::string& message) {
  std::cerr << "injector_workloads: " << message << "\n";
  std::exit(1);
}

std::string seedReview() {
  std::istringstream in(t::readFile(t::sourceDir() / "scenarios" / "seed-tutorial" / "pod.yaml"));
  std::ostringstream out, err;
  inj::ReviewOptions options;
  options.uid = "bench";
  if (inj::runReview(options, in, out, err) != 0) die("injector review: " + err.str());
  return out.str();
}

harness::net::Request webhookRequest(const std::string& path, const std::string& body) {
  harness::net::Request r;
  r.method = "POST";
  r.target = path + "?timeout=10s";
  r.path = path;
  r.query = "timeout=10s";
  r.headers.set("Content-Type", "application/json");
  r.body = body;
  r.peer = "127.0.0.1:40000";
  r.tls = true;
  return r;
}

const std::filesystem::path& seedDir() {
  static const auto dir = t::sourceDir() / "scenarios" / "seed-tutorial";
  return dir;
}

inj::IstioWebhookConfig istioConfig() {
  const std::filesystem::path data(inj::istio::defaultDataDir());
  return {data / "sidecar-injector-config.yaml", data / "values.json", data / "mesh.yaml"};
}

// Everything a workload needs, built once.
struct Fixture {
  std::string review = seedReview();
  json review_json = json::parse(review);
  json pod = review_json["request"]["object"];
  std::unique_ptr<inj::LocalKubeApi> kube;
  core::MetricsRegistry metrics;
  std::unique_ptr<inj::EventSink> events;
  std::unique_ptr<inj::LinkerdWebhook> linkerd;
  std::unique_ptr<inj::IstioWebhook> istio;

  Fixture() {
    auto objects =
        inj::loadObjectFiles({seedDir() / "application.yaml", seedDir() / "owners.yaml"});
    if (!objects) die(objects.error().message);
    kube = std::make_unique<inj::LocalKubeApi>(std::move(*objects));
    events = std::make_unique<inj::EventSink>(*kube, 1u << 20);
    linkerd = std::make_unique<inj::LinkerdWebhook>(
        inj::LinkerdWebhookConfig{seedDir() / "linkerd-values.yaml",
                                  seedDir() / "trust-anchors.pem", "linkerd", "bench"},
        *kube, *events, metrics);
    // As `injector serve --objects` builds it: the object files answer the node lookups.
    istio = std::make_unique<inj::IstioWebhook>(istioConfig(), metrics, kube.get());
    if (auto ok = linkerd->checkConfig(); !ok) die(ok.error().message);
    if (auto ok = istio->checkConfig(); !ok) die(ok.error().message);
  }
};

// An injecting answer: allowed with a JSONPatch of at least `min_ops` operations.
void expectInjected(const harness::net::Response& res, std::size_t min_ops) {
  if (res.status != 200) die("HTTP " + std::to_string(res.status) + ": " + res.body);
  auto raw = core::parseJson(res.body);
  auto answer = raw ? core::admissionReviewFromJson(*raw)
                    : core::Result<core::AdmissionReview>(raw.error());
  if (!answer || !answer->response || !answer->response->allowed) die("not injected: " + res.body);
  const auto patch = core::decodePatch(answer->response->patch);
  if (!patch || patch->size() < min_ops) die("short patch: " + res.body);
}

struct Workload {
  std::string about;
  std::function<void()> run;
  std::function<void()> verify;
};

std::map<std::string, Workload> workloads(Fixture& f) {
  std::map<std::string, Workload> w;
  auto review = std::make_shared<core::Result<core::AdmissionReview>>(core::makeError("not run"));
  w["decode"] = {"parse the AdmissionReview JSON and decode it (core::admissionReviewFromJson)",
                 [&f, review] {
                   auto raw = core::parseJson(f.review);
                   *review = raw ? core::admissionReviewFromJson(*raw)
                                 : core::Result<core::AdmissionReview>(raw.error());
                 },
                 [review] {
                   if (!*review || !(*review)->request) die("decode");
                 }};
  auto response = std::make_shared<harness::net::Response>();
  auto verify_response = [response] { expectInjected(*response, 5); };
  const auto linkerd_request = webhookRequest("/inject/linkerd", f.review);
  w["linkerd_request"] = {
      "LinkerdWebhook::handle: decode, inject, events, metrics, the answer serialized",
      [&f, linkerd_request, response] { *response = f.linkerd->handle(linkerd_request); },
      verify_response};
  const auto istio_request = webhookRequest("/inject", f.review);
  w["istio_request"] = {
      "IstioWebhook::handle: decode, render, merge, patch, the answer serialized",
      [&f, istio_request, response] { *response = f.istio->handle(istio_request); },
      verify_response};
  // Every request from another workload (its ReplicaSet, so its Deployment, named differently):
  // the rendered template differs each time, so nothing rendered before is reused.
  auto variants = std::make_shared<std::vector<harness::net::Request>>();
  for (int n = 0; n <= kMaxIterations; ++n) {
    std::string body = f.review;
    const std::string from = "simple-app-v1-7b9c6f5d4";
    const std::string to = "app-" + std::to_string(n) + "-7b9c6f5d4";
    for (auto at = body.find(from); at != std::string::npos; at = body.find(from, at + to.size())) {
      body.replace(at, from.size(), to);
    }
    variants->push_back(webhookRequest("/inject", body));
  }
  auto next = std::make_shared<std::size_t>(0);
  w["istio_request_new_workload"] = {
      "IstioWebhook::handle as istio_request, each request from another workload",
      [&f, variants, next, response] {
        *response = f.istio->handle((*variants)[(*next)++ % variants->size()]);
      },
      verify_response};
  // The same for Linkerd: each pod template new to linkerd::PatchCache, so the patch is built.
  auto linkerd_variants = std::make_shared<std::vector<harness::net::Request>>();
  for (const auto& variant : *variants) {
    linkerd_variants->push_back(webhookRequest("/inject/linkerd", variant.body));
  }
  auto linkerd_next = std::make_shared<std::size_t>(0);
  w["linkerd_request_new_workload"] = {
      "LinkerdWebhook::handle as linkerd_request, each request from another workload",
      [&f, linkerd_variants, linkerd_next, response] {
        *response = f.linkerd->handle((*linkerd_variants)[(*linkerd_next)++ % linkerd_variants->size()]);
      },
      verify_response};
  static const auto settings = inj::loadIstioSettings(istioConfig());
  if (!settings) die(settings.error().message);
  inj::istio::AdmissionInput input;
  input.pod = f.pod;
  input.request_namespace = "simple-app";
  input.native_sidecars = false;
  auto outcome = std::make_shared<inj::istio::Outcome>();
  w["istio_admit"] = {"istio::admit of the Pod alone (no decode, no answer)",
                      [input, outcome] { *outcome = inj::istio::admit(*settings, input); },
                      [outcome] {
                        if (outcome->decision != inj::istio::Decision::kInject) die("istio_admit");
                      }};
  // The Istio injection's patch, created and applied as kube-apiserver applies it.
  const auto injected = inj::istio::admit(*settings, input).injected_pod;
  auto patch = std::make_shared<core::JsonPatch>();
  w["patch_create"] = {"core::createPatch: the Istio-injected Pod against the original",
                       [&f, injected, patch] { *patch = core::createPatch(f.pod, injected); },
                       [patch] {
                         if (patch->empty()) die("patch_create");
                       }};
  const auto encoded = core::dumpJson(core::encodePatch(core::createPatch(f.pod, injected)));
  auto applied = std::make_shared<core::Result<json>>(core::makeError("not run"));
  w["patch_apply"] = {"core::decodePatch + applyPatch of that patch, as kube-apiserver does",
                      [&f, encoded, applied] {
                        auto decoded = core::decodePatch(encoded);
                        *applied = decoded ? core::applyPatch(f.pod, *decoded)
                                           : core::Result<json>(decoded.error());
                      },
                      [applied, injected] {
                        if (!*applied || **applied != injected) die("patch_apply: differs");
                      }};
  // The Linkerd answer as it goes back: the review echoed with its response.
  const auto answer = json::parse(f.linkerd->handle(linkerd_request).body);
  auto text = std::make_shared<std::string>();
  w["serialize"] = {"core::dumpJson of the Linkerd webhook's answer (review + response)",
                    [answer, text] { *text = core::dumpJson(answer); },
                    [answer, text] {
                      if (json::parse(*text) != answer) die("serialize");
                    }};
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);  // as `injector --log-level warn serve`
  std::string name;
  int iterations = 100;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--list") {
      list = true;
    } else if (arg == "--iterations" && i + 1 < argc) {
      iterations = std::atoi(argv[++i]);
    } else if (!arg.starts_with("-") && name.empty()) {
      name = arg;
    } else {
      die("usage: injector_workloads WORKLOAD [--iterations N] | --list");
    }
  }
  if (iterations < 1 || iterations > kMaxIterations) {
    die("--iterations must be in [1, " + std::to_string(kMaxIterations) + "]");
  }
  Fixture fixture;
  auto all = workloads(fixture);
  if (list) {
    for (const auto& [key, value] : all) {
      std::printf("%-28s %s\n", key.c_str(), value.about.c_str());
    }
    return 0;
  }
  const auto found = all.find(name);
  if (found == all.end()) die("unknown workload \"" + name + "\" (--list names them)");
  const Workload& workload = found->second;
  workload.run();  // warm-up, outside injector_workload_measure()
  workload.verify();
  fixture.events->flush();
  injector_workload_measure(&workload.run, iterations);
  fixture.events->flush();
  workload.verify();
  return 0;
}
