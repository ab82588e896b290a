// `injector inject` (offline) on files: the seed tutorial golden, output modes, bad input.

#include "inject_command.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/yaml.h"
#include "harness/testing/support.h"

namespace harness::injector {
namespace {

namespace t = harness::testing;
using json = nlohmann::json;

struct Run {
  int code;
  std::string out, err;
};

Run run(InjectOptions o, const std::string& stdin_text = {}) {
  std::istringstream in(stdin_text);
  std::ostringstream out, err;
  if (o.trust_anchors_file.empty()) {
    o.trust_anchors_file = t::sourceDir() / "injector/tests/runtime/testdata/trust-anchors.pem";
  }
  o.version = "test";
  const int code = runInject(o, in, out, err);
  return {code, out.str(), err.str()};
}

std::string seed(const std::string& file) {
  return (t::sourceDir() / "scenarios/seed-tutorial" / file).string();
}

// The seed tutorial's application.yaml, injected offline, is kept as a golden file; refresh it
// with HARNESS_UPDATE_GOLDEN=1.
TEST(InjectCommand, SeedTutorialMatchesGoldenOutput) {
  InjectOptions o;
  o.inputs = {seed("application.yaml")};
  auto r = run(o);
  ASSERT_EQ(r.code, 0) << r.err;
  const auto golden = t::sourceDir() / "injector/tests/runtime/testdata/seed-tutorial.injected.yaml";
  if (const char* update = std::getenv("HARNESS_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    t::writeFile(golden, r.out);
  }
  EXPECT_EQ(r.out, t::readFile(golden)) << "refresh with HARNESS_UPDATE_GOLDEN=1 if intended";
}

TEST(InjectCommand, SeedTutorialPodIsInjectedAsANativeSidecar) {
  InjectOptions o;
  o.inputs = {seed("application.yaml"), seed("pod.yaml")};
  o.object_files = {seed("owners.yaml")};
  o.output = "json";
  auto r = run(o);
  ASSERT_EQ(r.code, 0) << r.err;
  auto list = json::parse(r.out);
  ASSERT_EQ(list["kind"], "List");
  ASSERT_EQ(list["items"].size(), 3u);
  const auto& pod = list["items"][2];
  ASSERT_EQ(pod["kind"], "Pod");
  const auto& init = pod["spec"]["initContainers"];
  ASSERT_EQ(init.size(), 2u);
  EXPECT_EQ(init[0]["name"], "linkerd-init");
  EXPECT_EQ(init[1]["name"], "linkerd-proxy");
  EXPECT_EQ(init[1]["restartPolicy"], "Always");
  EXPECT_EQ(pod["metadata"]["labels"]["linkerd.io/proxy-deployment"], "simple-app-v1");
  EXPECT_EQ(pod["metadata"]["annotations"]["linkerd.io/created-by"], "linkerd/proxy-injector test");
}

TEST(InjectCommand, ReinjectingTheOutputChangesNothing) {
  InjectOptions o;
  o.inputs = {seed("application.yaml")};
  auto first = run(o);
  ASSERT_EQ(first.code, 0);
  InjectOptions again;
  again.inputs = {"-"};
  auto second = run(again, first.out);
  ASSERT_EQ(second.code, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
}

TEST(InjectCommand, PatchModePrintsOnePatchPerObject) {
  InjectOptions o;
  o.inputs = {seed("application.yaml")};
  o.patch = true;
  auto r = run(o);
  ASSERT_EQ(r.code, 0) << r.err;
  auto patches = json::parse(r.out);
  ASSERT_EQ(patches.size(), 1u);  // the Namespace is not sent to the webhook
  EXPECT_EQ(patches[0]["object"], "Deployment simple-app/simple-app-v1");
  EXPECT_EQ(patches[0]["decision"], "inject");
  EXPECT_EQ(patches[0]["patch"][0]["path"], "/spec/template/metadata/annotations");
}

TEST(InjectCommand, ExplainNamesTheDecisionAndTheReasons) {
  InjectOptions o;
  o.inputs = {"-"};
  o.explain = true;
  auto r = run(o,
               "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: plain\n"
               "spec:\n  hostNetwork: true\n  containers:\n  - name: c\n    image: x\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("Pod plain/p: allow"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped: host_network_enabled: hostNetwork is enabled"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("namespace plain not in the input"), std::string::npos) << r.out;
}

// The webhook records its event on the parent it finds in its informer cache; a Pod without an
// owner is not there while it is being created, so no event is recorded
// (controller/proxy-injector/webhook.go). Offline, the Pod in the input must not stand in for it.
TEST(InjectCommand, ExplainRecordsNoEventForAPodWithoutOwner) {
  t::ScratchDir dir{"inject-no-owner"};
  t::writeFile(dir / "ns.yaml",
               "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  annotations:\n"
               "    linkerd.io/inject: enabled\n");
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: team\n"
      "spec:\n  containers:\n  - name: c\n    image: x\n";
  for (const std::string& extra : {std::string(), std::string("  hostNetwork: true\n")}) {
    InjectOptions o;
    o.inputs = {"-"};
    o.namespace_files = {dir / "ns.yaml"};
    o.explain = true;
    auto r = run(o, pod + extra);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.find("event: Normal"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("event: none: the webhook records it on the parent object, and a Pod "
                         "without an owner is not in its cache while it is being created"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("log warning: couldn't retrieve parent object team-pod-p"),
              std::string::npos)
        << r.out;
  }
}

TEST(InjectCommand, ExplainRecordsTheEventOnAnOwnerInTheInput) {
  InjectOptions o;
  o.inputs = {seed("application.yaml"), seed("pod.yaml")};
  o.object_files = {seed("owners.yaml")};
  o.explain = true;
  auto r = run(o);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("event: Normal Injected \"Linkerd sidecar proxy injected\" on "
                       "Deployment/simple-app-v1"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("event: none"), std::string::npos) << r.out;
}

// linkerd inject reads YAML into typed objects (sigs.k8s.io/yaml), so an unquoted number or
// boolean annotation value is its string, in the decision and in the output.
TEST(InjectCommand, UnquotedNumbersAndBooleansInAnnotationsAreStrings) {
  InjectOptions o;
  o.inputs = {"-"};
  o.output = "json";
  auto r = run(o,
               "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
               "  namespace: team\nspec:\n  selector: {matchLabels: {app: web}}\n"
               "  template:\n    metadata:\n      labels: {app: web, version: 2}\n"
               "      annotations:\n        linkerd.io/inject: enabled\n"
               "        config.linkerd.io/skip-outbound-ports: 4222\n"
               "        config.linkerd.io/enable-external-profiles: true\n"
               "    spec:\n      containers: [{name: web, image: nginx}]\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const json deployment = json::parse(r.out);  // one object: printed as itself
  const json& tmpl = deployment["spec"]["template"];
  EXPECT_EQ(tmpl["metadata"]["annotations"]["config.linkerd.io/skip-outbound-ports"], "4222");
  EXPECT_EQ(tmpl["metadata"]["annotations"]["config.linkerd.io/enable-external-profiles"], "true");
  EXPECT_EQ(tmpl["metadata"]["labels"]["version"], "2");
  // Injected, and the annotation's value was read.
  const std::string spec = tmpl["spec"].dump();
  EXPECT_NE(spec.find("linkerd-proxy"), std::string::npos) << spec;
  EXPECT_NE(spec.find("4222"), std::string::npos) << spec;
}

TEST(InjectCommand, NamespaceFileEnablesInjection) {
  t::ScratchDir dir{"inject-ns"};
  t::writeFile(dir / "ns.yaml",
               "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  annotations:\n"
               "    linkerd.io/inject: enabled\n");
  InjectOptions o;
  o.inputs = {"-"};
  o.namespace_files = {dir / "ns.yaml"};
  o.default_namespace = "team";
  o.patch = true;
  auto r = run(o, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
                  "  - name: c\n    image: x\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)[0]["decision"], "inject");
}

TEST(InjectCommand, ListsAreFlattened) {
  InjectOptions o;
  o.inputs = {"-"};
  o.patch = true;
  auto r = run(o, R"({"apiVersion":"v1","kind":"List","items":[
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},"spec":{"containers":[{"name":"c","image":"x"}]}},
    {"apiVersion":"v1","kind":"Pod","metadata":{"name":"b"},"spec":{"containers":[{"name":"c","image":"x"}]}}]})");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).size(), 2u);
}

TEST(InjectCommand, MalformedYamlIsExit2WithFileAndPosition) {
  InjectOptions o;
  o.inputs = {"-"};
  auto r = run(o, "apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("<stdin>: document 1, line"), std::string::npos) << r.err;
}

TEST(InjectCommand, NonObjectDocumentsAndMissingKindAreRejected) {
  InjectOptions o;
  o.inputs = {"-"};
  auto scalar = run(o, "just a string\n");
  EXPECT_EQ(scalar.code, 2);
  EXPECT_NE(scalar.err.find("a document is not an object (got string)"), std::string::npos)
      << scalar.err;
  auto no_kind = run(o, "apiVersion: v1\nmetadata:\n  name: x\n");
  EXPECT_EQ(no_kind.code, 2);
  EXPECT_NE(no_kind.err.find("kind: missing"), std::string::npos) << no_kind.err;
}

TEST(InjectCommand, MissingFilesAreExit2) {
  InjectOptions o;
  o.inputs = {"/nonexistent/app.yaml"};
  auto r = run(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("cannot read /nonexistent/app.yaml"), std::string::npos) << r.err;
}

TEST(InjectCommand, ARenderErrorIsExit1NamingTheObject) {
  InjectOptions o;
  o.inputs = {"-"};
  auto r = run(o,
               "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
               "    linkerd.io/inject: enabled\n"
               "    config.linkerd.io/proxy-log-http-headers: bogus\n"
               "spec:\n  containers:\n  - name: c\n    image: x\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("Pod default/p: the webhook would deny it: "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace harness::injector

namespace harness::injector {
namespace {

// Records each write to the stream separately.
class ChunkRecorder : public std::streambuf {
 public:
  std::vector<std::string> chunks;

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    chunks.emplace_back(s, static_cast<std::size_t>(n));
    return n;
  }
  int_type overflow(int_type c) override {
    if (c != traits_type::eof()) chunks.emplace_back(1, static_cast<char>(c));
    return c;
  }
};

std::string pods(int count) {
  std::string text =
      "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team\n  annotations:\n"
      "    linkerd.io/inject: enabled\n";
  for (int i = 0; i < count; ++i) {
    text += "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-" + std::to_string(i) +
            "\n  namespace: team\nspec:\n  containers:\n  - name: app\n    image: app:1\n";
  }
  return text;
}

// `inject` of many objects holds one result at a time: each is written when it is made, never
// all of them in one piece at the end.
TEST(InjectCommand, WritesEachResultAsItIsMade) {
  for (const std::string output : {"yaml", "json", "patch"}) {
    SCOPED_TRACE(output);
    InjectOptions o;
    o.inputs = {"-"};
    o.output = output == "json" ? "json" : "yaml";
    o.patch = output == "patch";
    o.trust_anchors_file = t::sourceDir() / "injector/tests/runtime/testdata/trust-anchors.pem";
    std::istringstream in(pods(3));
    ChunkRecorder recorder;
    std::ostream out(&recorder);
    std::ostringstream err;
    ASSERT_EQ(runInject(o, in, out, err), 0) << err.str();
    std::string all;
    for (const auto& chunk : recorder.chunks) {
      all += chunk;
      int names = 0;
      for (const char* name : {"pod-0", "pod-1", "pod-2"}) {
        names += chunk.find(name) != std::string::npos ? 1 : 0;
      }
      EXPECT_LE(names, 1) << "one write holds several results: " << chunk.substr(0, 200);
    }
    EXPECT_NE(all.find("pod-2"), std::string::npos);
  }
}

// Written piece by piece, the JSON is still exactly nlohmann's dump of the whole: a List (or the
// object alone when there is one), the --patch array with an indent of 2.
TEST(InjectCommand, JsonWrittenPieceByPieceIsTheDumpOfTheWhole) {
  struct Case {
    std::string input;
    std::string kind;     // of the whole -o json output
    std::size_t patches;  // in the --patch output
  };
  for (const auto& c : {Case{"", "List", 0}, Case{pods(0), "Namespace", 0},
                        Case{pods(1), "List", 1}, Case{pods(3), "List", 3}}) {
    SCOPED_TRACE(c.input);
    InjectOptions o;
    o.inputs = {"-"};
    o.output = "json";
    auto listed = run(o, c.input);
    ASSERT_EQ(listed.code, 0) << listed.err;
    const json whole = json::parse(listed.out);
    EXPECT_EQ(listed.out, whole.dump(4) + "\n");
    EXPECT_EQ(whole.value("kind", ""), c.kind);
    o.patch = true;
    auto patched = run(o, c.input);
    ASSERT_EQ(patched.code, 0) << patched.err;
    const json patches = json::parse(patched.out);
    EXPECT_EQ(patched.out, patches.dump(2) + "\n");
    EXPECT_EQ(patches.size(), c.patches);
  }
}

}  // namespace
}  // namespace harness::injector
