// Mutation chains rebuilt from audit logs, replayed, and compared (simulator vs real cluster).

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/audit/chain.h"
#include "harness/audit/log.h"
#include "harness/testing/support.h"

namespace harness::audit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

std::string testdata(const std::string& name) {
  return testing::readFile(testing::sourceDir() / "audit" / "tests" / "testdata" / name);
}

std::vector<Event> eventsOf(const std::string& name) {
  auto result = readLog(testdata(name), name);
  return result.events;
}

TEST(ReconstructChains, OneChainPerResponseCompleteWithAdmissionAnnotations) {
  const auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  ASSERT_EQ(chains.size(), 1u);
  const MutationChain& chain = chains[0];
  EXPECT_EQ(chain.audit_id, "sim-0001");
  EXPECT_EQ(chain.verb, "create");
  EXPECT_EQ(chain.resource, "pods");
  EXPECT_EQ(chain.namespace_name, "shop");
  EXPECT_EQ(chain.name, "web-0");
  EXPECT_TRUE(chain.request_object.has_value());
  EXPECT_TRUE(chain.response_object.has_value());
  EXPECT_TRUE(chain.problems.empty());
}

TEST(ReconstructChains, KeepAllKeepsEventsWithoutAdmissionAnnotations) {
  const auto chains = reconstructChains(eventsOf("simulator_chains.log"), true);
  ASSERT_EQ(chains.size(), 2u);
  EXPECT_EQ(chains[1].audit_id, "sim-0002");
  EXPECT_TRUE(chains[1].steps.empty());
}

TEST(ReconstructChains, StepsOrderedByRoundThenIndex) {
  const auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  ASSERT_EQ(chains.size(), 1u);
  const auto& steps = chains[0].steps;
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(std::make_pair(steps[0].round, steps[0].index), std::make_pair(0, std::size_t{0}));
  EXPECT_EQ(std::make_pair(steps[1].round, steps[1].index), std::make_pair(0, std::size_t{1}));
  EXPECT_EQ(std::make_pair(steps[2].round, steps[2].index), std::make_pair(0, std::size_t{2}));
  EXPECT_EQ(std::make_pair(steps[3].round, steps[3].index), std::make_pair(1, std::size_t{0}));
  EXPECT_EQ(steps[0].webhook, "inject.sidecar.example.com");
  EXPECT_EQ(steps[0].configuration, "sidecar-injector");
  EXPECT_TRUE(steps[0].mutated);
  ASSERT_TRUE(steps[0].patch.has_value());
  EXPECT_EQ(steps[0].patch->size(), 2u);
  EXPECT_EQ((*steps[0].patch)[1]["value"]["args"][0], "--mode=<auto>");
  EXPECT_FALSE(steps[2].mutated);
  EXPECT_TRUE(steps[2].failed_open);
  EXPECT_FALSE(steps[2].patch.has_value());
  EXPECT_FALSE(steps[3].mutated);
}

TEST(ReconstructChains, OtherAdmissionAnnotationsAreKeptWithoutAuthorization) {
  const auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_THAT(chains[0].webhook_annotations,
              ElementsAre(Pair("failed-open.validating.webhook.admission.k8s.io/round_0_index_0",
                               "policy.example.com"),
                          Pair("labels.example.com/decision", "added team label")));
}

TEST(ReconstructChains, BadAnnotationValuesAreReportedNotFatal) {
  Event event;
  event.level = Level::kRequest;
  event.stage = Stage::kResponseComplete;
  event.audit_id = "x";
  event.annotations = {{"mutation.webhook.admission.k8s.io/round_0_index_0", "not json"},
                       {"mutation.webhook.admission.k8s.io/round_x", "{}"},
                       {"patch.webhook.admission.k8s.io/round_0_index_1", R"({"webhook":"w"})"}};
  const auto chains = reconstructChains({event});
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0].problems.size(), 3u);
  ASSERT_EQ(chains[0].steps.size(), 1u);
  EXPECT_EQ(chains[0].steps[0].webhook, "w");
}

TEST(ReconstructChains, FirstResponseCompletePerAuditIdWins) {
  auto events = eventsOf("simulator_chains.log");
  Event later = events[1];
  later.annotations.clear();
  later.annotations[mutationAnnotationKey(0, 0)] = mutationAnnotationValue("c", "other", false);
  events.push_back(later);
  const auto chains = reconstructChains(events);
  ASSERT_EQ(chains.size(), 1u);
  EXPECT_EQ(chains[0].steps[0].webhook, "inject.sidecar.example.com");
}

TEST(ReconstructChains, RealClusterLineWithLinkerdPatch) {
  const auto chains = reconstructChains(eventsOf("k3d_linkerd_pod_create.log"));
  ASSERT_EQ(chains.size(), 1u);
  const MutationChain& chain = chains[0];
  // generateName create: the name comes from the responseObject.
  EXPECT_EQ(chain.name, "simple-app-v1-76fc99b86b-x7k2q");
  ASSERT_EQ(chain.steps.size(), 1u);
  const MutationStep& step = chain.steps[0];
  EXPECT_EQ(step.configuration, "linkerd-proxy-injector-webhook-config");
  EXPECT_EQ(step.webhook, "linkerd-proxy-injector.linkerd.io");
  EXPECT_TRUE(step.mutated);
  ASSERT_TRUE(step.patch.has_value());
  EXPECT_EQ(step.patch->size(), 14u);
  EXPECT_EQ((*step.patch)[1]["path"], "/metadata/annotations/linkerd.io~1created-by");
  EXPECT_THAT(chain.webhook_annotations,
              ElementsAre(Pair("pod-security.kubernetes.io/enforce-policy", "privileged:latest"),
                          Pair("policy.example.com/image-check", "tag <latest> & no digest")));
  EXPECT_NE(findChain(chains, "pods", "simple-app", "simple-app-v1-76fc99b86b-x7k2q", "create"),
            nullptr);
  EXPECT_EQ(findChain(chains, "pods", "simple-app", "simple-app-v1-76fc99b86b-x7k2q", "delete"),
            nullptr);
}

TEST(ReplayChain, SimulatorChainReplaysToTheResponse) {
  const auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  auto replay = replayChain(chains[0]);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  EXPECT_TRUE(replay->matches) << replay->first_difference << ": " << replay->detail;
  EXPECT_EQ(replay->patched["spec"]["containers"].size(), 2u);
}

TEST(ReplayChain, ReportsTheFirstDifferingPath) {
  auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  (*chains[0].response_object)["spec"]["containers"][1]["image"] = "proxy:2.1";
  auto replay = replayChain(chains[0]);
  ASSERT_TRUE(replay.ok());
  EXPECT_FALSE(replay->matches);
  EXPECT_EQ(replay->first_difference, "/spec/containers/1/image");
  EXPECT_EQ(replay->detail, R"(replayed "proxy:2.0", response "proxy:2.1")");
}

TEST(ReplayChain, MemberMissingFromTheResponse) {
  auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  (*chains[0].response_object)["metadata"]["labels"].erase("team");
  auto replay = replayChain(chains[0]);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->first_difference, "/metadata/labels/team");
  EXPECT_EQ(replay->detail, "missing in the response");
}

TEST(ReplayChain, ServerDefaultsCanBeIgnored) {
  auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  (*chains[0].response_object)["spec"]["dnsPolicy"] = "ClusterFirst";
  auto strict = replayChain(chains[0]);
  ASSERT_TRUE(strict.ok());
  EXPECT_EQ(strict->first_difference, "/spec/dnsPolicy");
  EXPECT_EQ(strict->detail, "missing in the replay");
  ReplayOptions options;
  options.ignore_fields_only_in_response = true;
  auto lenient = replayChain(chains[0], options);
  ASSERT_TRUE(lenient.ok());
  EXPECT_TRUE(lenient->matches);
  ReplayOptions ignore_path;
  ignore_path.ignored_paths = {"/spec/dnsPolicy"};
  EXPECT_TRUE(replayChain(chains[0], ignore_path)->matches);
}

// Ignored pointers leave their members out of both sides, as erasing them would: through
// objects (compared in place), into arrays (an element erased shifts the next ones), and where
// one side has a scalar on the way (the other side's member is still erased from what is shown).
TEST(ReplayChain, IgnoredPointersActAsErasedFromBothSides) {
  auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  MutationChain& chain = chains[0];
  (*chain.response_object)["metadata"]["uid"] = "server-set";
  (*chain.response_object)["status"] = {{"phase", "Pending"}};
  EXPECT_TRUE(replayChain(chain)->matches);

  MutationChain images = chain;
  (*images.response_object)["spec"]["containers"][0]["image"] = "other:1";
  ReplayOptions into_array;
  into_array.ignored_paths = {"/spec/containers/0/image"};
  EXPECT_TRUE(replayChain(images, into_array)->matches);
  ReplayOptions element;
  element.ignored_paths = {"/spec/containers/0"};
  auto shifted = replayChain(images, element);
  ASSERT_TRUE(shifted.ok());
  EXPECT_TRUE(shifted->matches) << shifted->first_difference << ": " << shifted->detail;

  MutationChain scalar = chain;
  (*scalar.response_object)["metadata"] = "flattened";
  auto replay = replayChain(scalar);
  ASSERT_TRUE(replay.ok());
  EXPECT_EQ(replay->first_difference, "/metadata");
  EXPECT_THAT(replay->detail, StartsWith("replayed {"));
  EXPECT_THAT(replay->detail, ::testing::Not(HasSubstr("\"uid\"")));
}

TEST(ReplayChain, RecordedRealRequestLacksWhatInTreePluginsAdded) {
  const auto chains = reconstructChains(eventsOf("k3d_linkerd_pod_create.log"));
  auto replay = replayChain(chains[0]);
  ASSERT_FALSE(replay.ok());
  EXPECT_THAT(replay.error().message,
              StartsWith("round 0 index 0 (webhook linkerd-proxy-injector.linkerd.io): "));
  EXPECT_THAT(replay.error().message, HasSubstr("/spec/volumes/-"));
}

TEST(ReplayChain, RealChainFromTheWebhooksViewMatches) {
  const auto chains = reconstructChains(eventsOf("k3d_linkerd_pod_create.log"));
  ReplayOptions options;
  options.base_object = nlohmann::json::parse(testdata("k3d_linkerd_pod_webhook_view.json"));
  auto replay = replayChain(chains[0], options);
  ASSERT_TRUE(replay.ok()) << replay.error().message;
  EXPECT_TRUE(replay->matches) << replay->first_difference << ": " << replay->detail;
}

TEST(ReplayChain, NeedsRequestAndResponseObjects) {
  MutationChain chain;
  chain.audit_id = "a";
  EXPECT_THAT(replayChain(chain).error().message, HasSubstr("no requestObject"));
  chain.request_object = nlohmann::json::object();
  EXPECT_THAT(replayChain(chain).error().message, HasSubstr("no responseObject"));
}

TEST(ReplayChain, MutationWithoutRecordedPatchIsAnError) {
  MutationChain chain;
  chain.request_object = nlohmann::json::object();
  chain.response_object = nlohmann::json::object();
  chain.steps.push_back(MutationStep{0, 0, "c", "w", true, std::nullopt, false});
  auto replay = replayChain(chain);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error().message,
            "round 0 index 0 (webhook w): mutated but no patch recorded (the event's level is "
            "below Request)");
}

MutationChain simulatorLinkerdChain() {
  // The simulator's chain for the same Pod: same webhook, same patch.
  const auto real = reconstructChains(eventsOf("k3d_linkerd_pod_create.log"));
  MutationChain sim;
  sim.audit_id = "sim";
  sim.steps = real[0].steps;
  sim.level = real[0].level;
  sim.outcome = real[0].outcome;
  return sim;
}

TEST(CompareChains, IdenticalChainsAgree) {
  const auto real = reconstructChains(eventsOf("k3d_linkerd_pod_create.log"));
  EXPECT_TRUE(compareChains(simulatorLinkerdChain(), real[0]).empty());
}

TEST(CompareChains, ReportsMutatedFlagAndPatchDifferences) {
  const auto real = reconstructChains(eventsOf("k3d_linkerd_pod_create.log"));
  MutationChain sim = simulatorLinkerdChain();
  sim.steps[0].mutated = false;
  (*sim.steps[0].patch)[3]["value"] = "edge-26.9.1";
  const auto diffs = compareChains(sim, real[0]);
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0],
            "round 0 index 0 (linkerd-proxy-injector.linkerd.io): mutated: expected false, got "
            "true");
  EXPECT_THAT(diffs[1], StartsWith("round 0 index 0 (linkerd-proxy-injector.linkerd.io): patch "
                                   "differs at operation 3: expected "));
  EXPECT_THAT(diffs[1], HasSubstr("edge-26.9.1"));
}

TEST(CompareChains, PatchOrderMatters) {
  MutationChain a = simulatorLinkerdChain();
  MutationChain b = a;
  std::swap((*b.steps[0].patch)[1], (*b.steps[0].patch)[2]);
  const auto diffs = compareChains(a, b);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_THAT(diffs[0], HasSubstr("patch differs at operation 1"));
}

TEST(CompareChains, MissingExtraAndRenamedWebhooks) {
  const auto sim = reconstructChains(eventsOf("simulator_chains.log"))[0];
  MutationChain actual = sim;
  actual.steps.erase(actual.steps.begin() + 1);  // round 0 index 1 missing
  actual.steps.push_back(MutationStep{1, 1, "c", "extra.example.com", false, std::nullopt, false});
  actual.steps[0].webhook = "renamed.example.com";
  actual.steps[1].failed_open = false;  // round 0 index 2
  EXPECT_THAT(
      compareChains(sim, actual),
      ElementsAre(
          "round 0 index 0 (inject.sidecar.example.com): webhook: expected "
          "\"inject.sidecar.example.com\", got \"renamed.example.com\"",
          "round 0 index 1: webhook \"labels.example.com\" (configuration \"team-labels\") "
          "missing in actual",
          "round 0 index 2 (flaky.example.com): failed open: expected true, got false",
          "round 1 index 1: unexpected webhook \"extra.example.com\" (configuration \"c\") in "
          "actual"));
}

TEST(CompareChains, PatchPresentOnlyOnOneSide) {
  MutationChain a = simulatorLinkerdChain();
  MutationChain b = a;
  b.steps[0].patch.reset();
  const auto diffs = compareChains(a, b);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_THAT(diffs[0], HasSubstr("patch: expected [{"));
  EXPECT_THAT(diffs[0], HasSubstr(", got none"));
}

}  // namespace
}  // namespace harness::audit

namespace harness::audit {
namespace {

TEST(FormatChain, ListsStepsAndTheReplay) {
  const auto chains = reconstructChains(eventsOf("simulator_chains.log"));
  ASSERT_EQ(chains.size(), 1u);
  const std::string text = formatChain(chains[0]);
  EXPECT_THAT(text, ::testing::StartsWith("create pods shop/web-0 (auditID sim-0001)\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("  round 0 index 0  "));
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "  replay: the patches turn the requestObject into the responseObject\n"));
}

TEST(FormatChain, RealClusterChainWithItsAnnotations) {
  const auto chains = reconstructChains(eventsOf("k3d_linkerd_pod_create.log"));
  ASSERT_EQ(chains.size(), 1u);
  const std::string text = formatChain(chains[0]);
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "  round 0 index 0  linkerd-proxy-injector.linkerd.io "
                        "(linkerd-proxy-injector-webhook-config): mutated, patch of 14 "
                        "operations\n"));
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "  annotation policy.example.com/image-check = tag <latest> & no digest\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("  replay: "));
}

TEST(FormatChain, MutationWithoutPatchSaysTheLevelWasTooLow) {
  MutationChain chain;
  chain.audit_id = "a";
  chain.verb = "create";
  chain.resource = "deployments";
  chain.api_group = "apps";
  chain.namespace_name = "ns";
  chain.name = "d";
  MutationStep step;
  step.webhook = "w.example.com";
  step.configuration = "c";
  step.mutated = true;
  chain.steps.push_back(step);
  const std::string text = formatChain(chain);
  EXPECT_THAT(text, ::testing::StartsWith("create deployments.apps ns/d (auditID a)\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("mutated, patch not recorded (level below Request)\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("  replay: round 0 index 0 (webhook w.example.com) "
                                         "mutated but its patch is not recorded"));
}

// One webhook step with `patch` over a Pod without labels.
MutationChain chainWithPatch(const std::string& webhook, const nlohmann::json& patch) {
  MutationChain chain;
  chain.audit_id = "a";
  chain.verb = "create";
  chain.resource = "pods";
  chain.namespace_name = "ns";
  chain.name = "p";
  chain.level = Level::kRequestResponse;
  chain.request_object = nlohmann::json{{"kind", "Pod"}, {"metadata", {{"name", "p"}}}};
  chain.response_object = chain.request_object;
  MutationStep step;
  step.webhook = webhook;
  step.configuration = "c";
  step.mutated = true;
  step.patch = patch;
  chain.steps.push_back(step);
  return chain;
}

// A patch that needs a path neither the requestObject nor the responseObject has (kNotFound),
// and one whose test operation fails: both are said not to apply, with applyPatch's error.
TEST(FormatChain, PatchesThatDoNotApplyAreSaidWithTheError) {
  const auto missing = chainWithPatch(
      "w.example.com",
      nlohmann::json::parse(R"([{"op":"add","path":"/metadata/labels/x","value":"1"}])"));
  auto replay = replayChain(missing);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error().code, core::ErrorCode::kNotFound);
  EXPECT_EQ(replay.error().field, "/metadata/labels/x");
  EXPECT_EQ(replayReport(missing).kind, ReplayReport::Kind::kPatchFails);
  EXPECT_THAT(formatChain(missing),
              ::testing::HasSubstr("replay: a patch does not apply to the recorded objects"));

  const auto failed_test = chainWithPatch(
      "does not apply",
      nlohmann::json::parse(R"([{"op":"test","path":"/kind","value":"Service"}])"));
  replay = replayChain(failed_test);
  ASSERT_FALSE(replay.ok());
  EXPECT_NE(replay.error().code, core::ErrorCode::kNotFound);
  EXPECT_THAT(replay.error().message, ::testing::HasSubstr("does not apply"));
  EXPECT_THAT(formatChain(failed_test), ::testing::HasSubstr("round 0 index 0 (webhook does "
                                                             "not apply)"));
}

TEST(ReplayChain, MissingRecordsAreAFailedPrecondition) {
  auto chain = chainWithPatch("w.example.com", nlohmann::json::array());
  chain.request_object.reset();
  auto replay = replayChain(chain);
  ASSERT_FALSE(replay.ok());
  EXPECT_EQ(replay.error().code, core::ErrorCode::kFailedPrecondition);
}

}  // namespace
}  // namespace harness::audit
