// The example mutators (mutators.h): their patches on Pods and pod templates, which of them are
// idempotent, the `mutator:` stub behaviour, and the errors for bad names and values.

#include "harness/sim/mutators.h"

#include <gtest/gtest.h>

#include "harness/go/base64.h"
#include "harness/core/json_patch.h"
#include "harness/net/certificates.h"
#include "harness/sim/stub_webhook.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using nlohmann::json;

json pod() {
  return json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},
    "spec":{"containers":[{"name":"app","image":"nginx"},{"name":"side","image":"envoy"}]}})");
}

json deployment() {
  return json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
    "spec":{"template":{"metadata":{"labels":{"app":"web"}},
                        "spec":{"containers":[{"name":"app","image":"nginx"}]}}}})");
}

json applied(const json& object, const json& patch) {
  auto decoded = core::decodePatch(patch.dump());
  EXPECT_TRUE(decoded.ok()) << patch.dump();
  auto out = core::applyPatch(object, *decoded);
  EXPECT_TRUE(out.ok()) << patch.dump() << ": " << (out ? "" : out.error().message);
  return out ? *out : json();
}

Mutator parsed(const std::string& text) {
  auto m = parseMutator(text);
  EXPECT_TRUE(m.ok()) << text;
  return *m;
}

TEST(Mutators, IdempotentOnesChangeNothingTheSecondTime) {
  for (const auto& text : {"add-annotation", "add-init-container", "set-image-pull-policy",
                           "label-fighter=blue", "add-annotation=a.io/b:c"}) {
    const Mutator m = parsed(text);
    EXPECT_TRUE(m.idempotent()) << text;
    for (const json& object : {pod(), deployment()}) {
      const json once = applied(object, mutatorPatch(m, object));
      EXPECT_NE(once, object) << text;
      EXPECT_EQ(mutatorPatch(m, once), json::array()) << text << " on " << once.dump();
    }
  }
}

TEST(Mutators, NonIdempotentOnesChangeTheObjectAgain) {
  for (const auto& text : {"append-sidecar", "timestamp-annotation", "reorder-containers"}) {
    const Mutator m = parsed(text);
    EXPECT_FALSE(m.idempotent()) << text;
    const json once = applied(pod(), mutatorPatch(m, pod()));
    const json twice = applied(once, mutatorPatch(m, once));
    EXPECT_NE(once, twice) << text;
  }
}

TEST(Mutators, PatchesGoIntoThePodTemplate) {
  const json d = applied(deployment(), mutatorPatch(parsed("add-annotation"), deployment()));
  EXPECT_EQ(d["spec"]["template"]["metadata"]["annotations"]["example.com/audited"], "true");
  const json i = applied(deployment(), mutatorPatch(parsed("add-init-container=x"), deployment()));
  EXPECT_EQ(i["spec"]["template"]["spec"]["initContainers"][0]["name"], "x");
  const json p = applied(pod(), mutatorPatch(parsed("set-image-pull-policy=Never"), pod()));
  EXPECT_EQ(p["spec"]["containers"][1]["imagePullPolicy"], "Never");
  const json r = applied(pod(), mutatorPatch(parsed("reorder-containers"), pod()));
  EXPECT_EQ(r["spec"]["containers"][0]["name"], "side");
}

TEST(Mutators, TimestampsNeverRepeat) {
  const Mutator m = parsed("timestamp-annotation");
  const json a = mutatorPatch(m, pod());
  const json b = mutatorPatch(m, pod());
  EXPECT_NE(a, b);
  EXPECT_EQ(a[0]["path"], "/metadata/annotations");
  EXPECT_TRUE(a[0]["value"]["example.com/mutated-at"].get<std::string>().ends_with("Z"));
}

TEST(Mutators, OtherKindsAndOddObjectsGetNoPatch) {
  const Mutator m = parsed("append-sidecar");
  EXPECT_EQ(mutatorPatch(m, json::parse(R"({"kind":"ConfigMap","data":{}})")), json::array());
  EXPECT_EQ(mutatorPatch(m, json::parse(R"({"kind":"Pod","spec":"x"})")), json::array());
  EXPECT_EQ(mutatorPatch(m, json(nullptr)), json::array());
  EXPECT_EQ(mutatorPatch(parsed("add-annotation"),
                         json::parse(R"({"kind":"Pod","metadata":[],"spec":{}})")),
            json::array());
}

TEST(Mutators, BadNamesAndValuesAreErrors) {
  EXPECT_EQ(parseMutator("sprinkle").error().message,
            "unknown mutator \"sprinkle\" (known: add-annotation, add-init-container, "
            "set-image-pull-policy, label-fighter, append-sidecar, timestamp-annotation, "
            "reorder-containers)");
  EXPECT_EQ(parseMutator("label-fighter").error().message,
            "mutator \"label-fighter\" needs a value (label-fighter=VALUE)");
  EXPECT_EQ(parseMutator("append-sidecar=x").error().message,
            "mutator \"append-sidecar\" takes no value");
  EXPECT_EQ(parseMutator("add-annotation=novalue").error().message,
            "mutator \"add-annotation=novalue\": expected add-annotation=KEY:VALUE with a "
            "non-empty KEY");
  EXPECT_EQ(parseMutator("add-init-container=").error().message,
            "mutator \"add-init-container=\": the value is empty");
}

TEST(Mutators, AStubAnswersWithTheMutatorsPatch) {
  auto spec = parseStubSpec(json::parse(
      R"({"responses":[{"when":{"call":1},"respond":{"mutator":"add-annotation"}},
                       {"respond":{"mutator":"add-annotation"}}]})"));
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto ca = net::CertificateAuthority::create("mutators-test-ca");
  ASSERT_TRUE(ca.ok());
  const auto dir = testing::binaryDir() / "apiserver-sim" / "mutators-test";
  auto stub = StubWebhook::start("mutator", std::move(*spec), *ca, dir, {}, 0);
  ASSERT_TRUE(stub.ok()) << stub.error().message;
  auto answerFor = [&](const json& object) {
    net::Request request;
    request.path = "/";
    request.body = json{{"apiVersion", "admission.k8s.io/v1"},
                        {"kind", "AdmissionReview"},
                        {"request", {{"uid", "u1"}, {"object", object}}}}
                       .dump();
    return json::parse((*stub)->answer(request).response.body)["response"];
  };
  const json first = answerFor(pod());
  EXPECT_EQ(first["patchType"], "JSONPatch");
  EXPECT_EQ(json::parse(*go::base64Decode(first["patch"].get<std::string>())),
            mutatorPatch(parsed("add-annotation"), pod()));
  // Its own output: the mutator's patch is empty, and an empty patch is no patch at all.
  const json second = answerFor(applied(pod(), mutatorPatch(parsed("add-annotation"), pod())));
  EXPECT_FALSE(second.contains("patch")) << second.dump();
  EXPECT_FALSE(second.contains("patchType")) << second.dump();
  (*stub)->stop();

  auto bad = parseStubSpec(json::parse(
      R"({"responses":[{"respond":{"mutator":"append-sidecar","patch":[]}}]})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "stub.responses[0].respond.mutator: may not be combined with a patch");
  auto unknown = parseStubSpec(json::parse(R"({"responses":[{"respond":{"mutator":"x"}}]})"));
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().message.rfind("stub.responses[0].respond.mutator: unknown mutator \"x\"", 0), 0u)
      << unknown.error().message;
}

}  // namespace
}  // namespace harness::sim
