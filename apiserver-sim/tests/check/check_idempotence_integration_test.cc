// `apiserver-sim check-idempotence` over real HTTPS on 127.0.0.1 (port 0): it catches each
// deliberately non-idempotent example webhook with a shrunk counterexample, passes the
// idempotent ones and both injector profiles, and reports usage errors and unreachable webhooks
// with exit status 2.

#include <gtest/gtest.h>

#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/net/certificates.h"
#include "harness/sim/check_command.h"
#include "harness/sim/stub_webhook.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
namespace t = harness::testing;

// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Outcome {
  int code = 0;
  std::string out, err;
  json report;  // -o json
};

fs::path workDir(const std::string& name) {
  return t::binaryDir() / "apiserver-sim" / "check-idempotence" / name;
}

Outcome check(CheckIdempotenceArgs args, const std::string& name) {
  if (!args.seed) args.seed = 20261126;
  if (args.output == "table") args.output = "json";
  args.work_dir = workDir(name).string();
  args.injector_binary = HARNESS_INJECTOR_BINARY;
  std::ostringstream out, err;
  Outcome o;
  o.code = runCheckIdempotence(args, out, err);
  o.out = out.str();
  o.err = err.str();
  if (args.output == "json" && !o.out.empty()) o.report = json::parse(o.out);
  return o;
}

const json& podSpec(const json& object) { return object["spec"]; }

// The check of a stub answering with `mutator`'s patch; its report (exit status 1 expected).
Outcome failingStub(const std::string& mutator) {
  CheckIdempotenceArgs args;
  args.stub_mutator = mutator;
  Outcome o = check(args, mutator);
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_TRUE(o.report.contains("counterexample")) << o.out;
  return o;
}

TEST(CheckIdempotence, CatchesASidecarAppendedWithoutLookingAndShrinksToOneContainer) {
  const auto o = failingStub("append-sidecar");
  const json& c = o.report["counterexample"];
  EXPECT_EQ(c["law"], "idempotence") << c.dump(2);
  // Shrunk: one container, no init containers, and nothing else optional.
  EXPECT_EQ(podSpec(c["object"])["containers"].size(), 1u) << c["object"].dump(2);
  EXPECT_FALSE(podSpec(c["object"]).contains("initContainers")) << c["object"].dump(2);
  EXPECT_FALSE(c["object"]["metadata"].contains("annotations")) << c["object"].dump(2);
  EXPECT_EQ(c["firstPatch"], json::parse(R"([{"op":"add","path":"/spec/containers/-",
      "value":{"name":"logger","image":"fluent/fluent-bit:3.1"}}])"));
  EXPECT_EQ(c["failingPatch"], c["firstPatch"]);
  EXPECT_EQ(podSpec(c["failingInput"])["containers"].size(), 2u);
}

TEST(CheckIdempotence, CatchesATimestampedAnnotation) {
  const auto o = failingStub("timestamp-annotation");
  const json& c = o.report["counterexample"];
  EXPECT_EQ(c["law"], "idempotence");
  ASSERT_EQ(c["failingPatch"].size(), 1u) << c.dump(2);
  EXPECT_EQ(c["failingPatch"][0]["path"], "/metadata/annotations/example.com~1mutated-at");
  EXPECT_NE(c["failingPatch"][0]["value"],
            c["failingInput"]["metadata"]["annotations"]["example.com/mutated-at"]);
  EXPECT_EQ(o.report["cases"], 1) << "every case fails: the first one is reported";
}

TEST(CheckIdempotence, CatchesReorderedContainersWithTwoContainers) {
  const auto o = failingStub("reorder-containers");
  const json& c = o.report["counterexample"];
  EXPECT_EQ(c["law"], "idempotence");
  EXPECT_EQ(podSpec(c["object"])["containers"].size(), 2u) << c["object"].dump(2);
  EXPECT_EQ(c["failingPatch"][0]["op"], "move");
}

TEST(CheckIdempotence, TheTableShowsTheMinimalObjectAndBothPatches) {
  CheckIdempotenceArgs args;
  args.stub_mutator = "append-sidecar";
  args.seed = 7;
  args.work_dir = workDir("table").string();
  std::ostringstream out, err;
  ASSERT_EQ(runCheckIdempotence(args, out, err), 1) << err.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("FAIL stub append-sidecar: seed 7"), std::string::npos) << text;
  EXPECT_NE(text.find("idempotence: sent its own output, it changes it again"), std::string::npos)
      << text;
  EXPECT_NE(text.find("reproduce: --seed 7 --cases 1"), std::string::npos) << text;
  EXPECT_NE(text.find("object (minimal):"), std::string::npos) << text;
  EXPECT_NE(text.find("failing call's patch:\n  {\"op\":\"add\",\"path\":\"/spec/containers/-\""),
            std::string::npos)
      << text;
}

TEST(CheckIdempotence, JunitReportsTheFailingLaw) {
  CheckIdempotenceArgs args;
  args.stub_mutator = "reorder-containers";
  args.output = "junit";
  const auto o = check(args, "junit");
  ASSERT_EQ(o.code, 1) << o.err;
  EXPECT_NE(o.out.find("<testsuites name=\"apiserver-sim check-idempotence\" tests=\"3\" "
                       "failures=\"1\" errors=\"0\" skipped=\"2\""),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("<testcase name=\"idempotence\" classname=\"stub reorder-containers\""),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("<failure message=\"sent its own output, it changes it again\""),
            std::string::npos)
      << o.out;
}

TEST(CheckIdempotence, IdempotentMutatorsPassBesideEachOther) {
  for (const char* mutator : {"add-annotation", "add-init-container", "set-image-pull-policy",
                              "label-fighter=blue"}) {
    CheckIdempotenceArgs args;
    args.stub_mutator = mutator;
    args.kinds = "all";
    args.cases = 40;
    args.mutators = {"add-annotation=example.com/other:x", "label-fighter=green",
                     "add-init-container=istio-validation", "set-image-pull-policy=Always"};
    const auto o = check(args, std::string("pass-") + mutator);
    EXPECT_EQ(o.code, 0) << mutator << "\n" << o.out << o.err;
    EXPECT_EQ(o.report["cases"], 40) << mutator;
    EXPECT_GT(o.report["patchedCases"].get<int>(), 0) << mutator;
  }
}

// The reinvocation law catches what the idempotence law cannot: a webhook that is idempotent on
// its own output but appends again once another mutator changed it.
TEST(CheckIdempotence, ReinvocationCatchesAnAdderThatLooksOnlyAtItsOwnMark) {
  const fs::path stub = workDir("marker") / "stub.yaml";
  // Adds a container unless the annotation it sets is there with the value it had: another
  // mutator rewriting that annotation makes it add the container again.
  t::writeFile(stub, R"(stub:
  responses:
    - when:
        pointers:
          /request/object/metadata/annotations/example.com~1audited: "true"
      respond: {}
    - respond:
        patch:
          - {op: add, path: /metadata/annotations, value: {example.com/audited: "true"}}
          - {op: add, path: /spec/containers/-, value: {name: logger, image: fluent/fluent-bit:3.1}}
)");
  CheckIdempotenceArgs args;
  args.stub_file = stub.string();
  args.mutators = {"add-annotation=example.com/audited:false"};
  const auto o = check(args, "marker");
  ASSERT_EQ(o.code, 1) << o.out << o.err;
  const json& c = o.report["counterexample"];
  EXPECT_EQ(c["law"], "reinvocation") << c.dump(2);
  EXPECT_EQ(c["mutator"], "add-annotation=example.com/audited:false");
  EXPECT_NE(c["message"].get<std::string>().find("duplicates: container logger"),
            std::string::npos)
      << c["message"];
}

TEST(CheckIdempotence, LinkerdInjectorPassesOnEveryKindWithMutatorsBeside) {
  CheckIdempotenceArgs args;
  args.injector = "linkerd";
  args.kinds = "all";
  args.cases = 60;
  args.mutators = {"add-annotation", "add-init-container", "set-image-pull-policy=Always",
                   "label-fighter=blue"};
  const auto o = check(args, "linkerd");
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_EQ(o.report["cases"], 60);
  EXPECT_GT(o.report["patchedCases"].get<int>(), 10) << o.out;
}

TEST(CheckIdempotence, IstioInjectorPassesInBothSidecarLayouts) {
  for (const char* native : {"--istio-enable-native-sidecars=true",
                             "--istio-enable-native-sidecars=false"}) {
    CheckIdempotenceArgs args;
    args.injector = "istio";
    args.injector_args = {native};
    args.cases = 60;
    args.mutators = {"add-annotation", "add-init-container", "set-image-pull-policy=Always",
                     "label-fighter=blue"};
    const auto o = check(args, std::string("istio-") + (native[31] == 't' ? "native" : "classic"));
    EXPECT_EQ(o.code, 0) << native << "\n" << o.out << o.err;
    EXPECT_GT(o.report["patchedCases"].get<int>(), 10) << o.out;
  }
}

TEST(CheckIdempotence, AnExternalUrlWithItsCaFileIsChecked) {
  auto ca = net::CertificateAuthority::create("external CA");
  ASSERT_TRUE(ca.ok());
  auto spec = parseStubSpec(json::parse(R"({"responses":[{"respond":{"mutator":"append-sidecar"}}]})"));
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto stub = StubWebhook::start("external", *spec, *ca, workDir("external"), {}, 0.0);
  ASSERT_TRUE(stub.ok()) << stub.error().message;
  const fs::path ca_file = workDir("external") / "ca.crt";
  t::writeFile(ca_file, ca->certificate_pem);

  CheckIdempotenceArgs args;
  args.url = (*stub)->url() + "mutate";
  args.ca_file = ca_file.string();
  const auto o = check(args, "external-check");
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_EQ(o.report["webhook"], args.url);
  EXPECT_FALSE((*stub)->calls().empty());
  EXPECT_EQ((*stub)->calls().front().path, "/mutate");

  // Without the CA file the certificate does not verify: the webhook cannot be asked.
  args.ca_file.clear();
  const auto untrusted = check(args, "external-untrusted");
  EXPECT_EQ(untrusted.code, 2) << untrusted.out;
  EXPECT_NE(untrusted.report["error"].get<std::string>().find("x509"), std::string::npos)
      << untrusted.report.dump(2);
  (*stub)->stop();

  // Stopped: the port refuses connections.
  args.ca_file = ca_file.string();
  const auto unreachable = check(args, "external-unreachable");
  EXPECT_EQ(unreachable.code, 2) << unreachable.out;
  EXPECT_NE(unreachable.report["error"].get<std::string>().find("connection refused"),
            std::string::npos)
      << unreachable.report.dump(2);
}

TEST(CheckIdempotence, UsageErrorsExitWithTwo) {
  auto usage = [](CheckIdempotenceArgs args, const std::string& expected) {
    const auto o = check(std::move(args), "usage");
    EXPECT_EQ(o.code, 2);
    EXPECT_NE(o.err.find(expected), std::string::npos) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  };
  usage({}, "name exactly one webhook");
  CheckIdempotenceArgs two;
  two.stub_mutator = "append-sidecar";
  two.url = "https://127.0.0.1:1/";
  usage(two, "name exactly one webhook");
  CheckIdempotenceArgs mutator;
  mutator.stub_mutator = "append-sidecar";
  mutator.mutators = {"sprinkle"};
  usage(mutator, "--mutator: unknown mutator \"sprinkle\" (known: add-annotation, ");
  CheckIdempotenceArgs stub_mutator;
  stub_mutator.stub_mutator = "label-fighter";
  usage(stub_mutator,
        "--stub-mutator.responses[0].respond.mutator: mutator \"label-fighter\" needs a value "
        "(label-fighter=VALUE)");
  CheckIdempotenceArgs kinds;
  kinds.stub_mutator = "append-sidecar";
  kinds.kinds = "Pod,Service";
  usage(kinds, "--kinds: unknown kind \"Service\"");
  CheckIdempotenceArgs url;
  url.url = "http://127.0.0.1:1/";
  usage(url, "'https' is the only allowed URL scheme");
  CheckIdempotenceArgs stub_file;
  stub_file.stub_file = (workDir("usage") / "missing.yaml").string();
  usage(stub_file, "--stub: cannot read");
}

}  // namespace
}  // namespace harness::sim
