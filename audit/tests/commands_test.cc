// The `audit` commands on real kube-apiserver logs (testdata/kube_*.log: captured from the local
// control plane of kube/ v1.37.2 with `apiserver-sim run --backend kube SCENARIO --audit-log`,
// scenarios seed-tutorial, failure-policy/denials, failure-policy/transport-errors,
// validating/failed-open-index) and the simulator's log of the seed tutorial
// (testdata/sim_seed_tutorial.log, `apiserver-sim run ... --audit-log`).

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include "harness/audit/chain.h"
#include "harness/audit/commands.h"
#include "harness/audit/log.h"
#include "harness/audit/outcome.h"
#include "harness/audit/timeline.h"
#include "harness/testing/support.h"

namespace harness::audit {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string testdataPath(const std::string& name) {
  return (testing::sourceDir() / "audit" / "tests" / "testdata" / name).string();
}

std::vector<MutationChain> chainsOf(const std::string& name, bool keep_all = false) {
  std::ifstream in(testdataPath(name), std::ios::binary);
  ChainReader reader(in, name, keep_all);
  std::vector<MutationChain> out;
  while (auto entry = reader.next([](const std::string& m) { ADD_FAILURE() << m; })) {
    out.push_back(std::move(entry->chain));
  }
  return out;
}

const MutationChain* byName(const std::vector<MutationChain>& chains, const std::string& name) {
  for (const auto& chain : chains) {
    if (chain.name == name) return &chain;
  }
  return nullptr;
}

struct CommandRun {
  int status = 0;
  std::string out, err;
};

CommandRun compare(const std::string& a, const std::string& b, PairBy by = PairBy::kAuto) {
  CompareOptions options;
  options.expected = {testdataPath(a)};
  options.actual = {testdataPath(b)};
  options.pair_by = by;
  std::ostringstream out, err;
  CommandRun run;
  run.status = compareCommand(options, out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

// A scratch file under the build tree.
fs::path scratch(const std::string& name) {
  // One folder per test: CTest runs the tests of this binary in parallel processes.
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::current_path() / "audit_commands_test.scratch" /
                       (std::string(test->test_suite_name()) + "." + test->name());
  fs::create_directories(dir);
  return dir / name;
}

// --- (a) comparison pairs requests as a user means them ---

// The simulator's Pod is simple-app-v1-7b9c6f5d4-xxxxx, the real one simple-app-v1-76fc...: other
// names, other hashes. Paired by controller owner (ReplicaSet, hash removed): the chains are
// compared, not reported as missing.
TEST(AuditCompare, PairsGeneratedPodsByOwnerAcrossSimulatorAndRealLogs) {
  const CommandRun run = compare("sim_seed_tutorial.log", "kube_seed_tutorial.log");
  EXPECT_THAT(run.out, HasSubstr("compare: paired with create simple-app/"));
  EXPECT_THAT(run.out, Not(HasSubstr("nothing paired")));
  EXPECT_THAT(run.out, Not(HasSubstr("no partner")));
  EXPECT_THAT(run.out, HasSubstr(" 0 without a partner"));
  // The patches differ only by the ServiceAccount plugin's random volume name: the same chain.
  EXPECT_THAT(run.out, HasSubstr("2 paired (by auto), 0 differ"));
  EXPECT_EQ(run.status, 0);
  EXPECT_THAT(pairingKey(*byName(chainsOf("kube_seed_tutorial.log"), "simple-app-v1"),
                         PairBy::kAuto),
              "create services simple-app name simple-app-v1");
  const auto real = chainsOf("kube_seed_tutorial.log");
  const MutationChain* pod = nullptr;
  for (const auto& chain : real) {
    if (chain.resource == "pods" && chain.name != "controller") pod = &chain;
  }
  ASSERT_NE(pod, nullptr);
  EXPECT_EQ(pairingKey(*pod, PairBy::kAuto),
            "create pods simple-app owner ReplicaSet/simple-app-v1-");
}

// The issue's example: the simulator's Pod (ReplicaSet simple-app-v1-7b9c6f5d4) against the k3d
// cluster's (ReplicaSet simple-app-v1-76fc99b86b): other hashes, the same Deployment.
TEST(AuditCompare, PairsAcrossPodTemplateHashes) {
  const CommandRun run = compare("sim_seed_tutorial.log", "k3d_linkerd_pod_create.log");
  EXPECT_THAT(run.out,
              HasSubstr("compare: paired with create simple-app/simple-app-v1-76fc99b86b-"));
  EXPECT_THAT(run.out, Not(HasSubstr("nothing paired")));
}

TEST(AuditCompare, SaysWhenNothingPaired) {
  // By name, the generated Pod names never match.
  const CommandRun run = compare("sim_seed_tutorial.log", "kube_seed_tutorial.log", PairBy::kName);
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr("no partner in the other log (key: create pods simple-app name "
                                 "simple-app-v1-7b9c6f5d4-"));
  // Logs of unrelated requests pair nothing at all.
  const CommandRun unrelated = compare("kube_denials.log", "kube_seed_tutorial.log");
  EXPECT_EQ(unrelated.status, 1);
  EXPECT_THAT(unrelated.out, HasSubstr("nothing paired: "));
  EXPECT_THAT(unrelated.out, HasSubstr("(try --pair-by order or labels)"));
}

TEST(AuditCompare, ByOrderAndByLabels) {
  const CommandRun order = compare("sim_seed_tutorial.log", "kube_seed_tutorial.log", PairBy::kOrder);
  EXPECT_THAT(order.out, HasSubstr("paired (by order)"));
  EXPECT_THAT(order.out, Not(HasSubstr("nothing paired")));
  const CommandRun labels = compare("sim_seed_tutorial.log", "kube_seed_tutorial.log", PairBy::kLabels);
  EXPECT_THAT(labels.out, HasSubstr("paired (by labels)"));
  EXPECT_THAT(labels.out, HasSubstr("compare: paired with create simple-app/"));
}

TEST(AuditCompare, ComparesOnlyWhatBothSidesRecorded) {
  auto real = chainsOf("kube_seed_tutorial.log");
  MutationChain metadata_only;
  for (const auto& chain : real) {
    if (!chain.steps.empty() && chain.resource == "pods") metadata_only = chain;
  }
  ASSERT_FALSE(metadata_only.steps.empty());
  MutationChain full = metadata_only;
  // The same request recorded at Metadata: no patches, so a different patch is not a difference.
  metadata_only.level = Level::kMetadata;
  for (auto& step : metadata_only.steps) step.patch.reset();
  const auto lines = compareChains(full, metadata_only);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "patches not compared: recorded at level Metadata in actual");
  EXPECT_FALSE(isDifference(lines[0]));
}

TEST(AuditCompare, OutcomesDiffer) {
  auto denied = chainsOf("kube_denials.log");
  ASSERT_FALSE(denied.empty());
  MutationChain admitted = denied[0];
  admitted.outcome = RequestOutcome{};
  admitted.outcome.kind = OutcomeKind::kAdmitted;
  admitted.outcome.code = 201;
  const auto lines = compareChains(admitted, denied[0]);
  ASSERT_FALSE(lines.empty());
  EXPECT_THAT(lines[0], HasSubstr("outcome: expected admitted, got denied (403 Forbidden) by "
                                  "webhook \"deny-ignore.denials.example.com\""));
}

// --- (b) replay from what the log recorded ---

// The real Pod's patch adds to /spec/volumes, which only the ServiceAccount plugin's volume
// created: the requestObject alone cannot take it. The replay completes it and says with what.
TEST(Replay, RealInjectedPodReplaysOntoTheAdmittedObject) {
  const auto chains = chainsOf("kube_seed_tutorial.log");
  const MutationChain* pod = nullptr;
  for (const auto& chain : chains) {
    if (chain.resource == "pods" && !chain.steps.empty()) pod = &chain;
  }
  ASSERT_NE(pod, nullptr);
  EXPECT_FALSE(replayChain(*pod).ok());  // what the old replay did, and stopped at
  const ReplayReport report = replayReport(*pod);
  EXPECT_EQ(report.kind, ReplayReport::Kind::kMatches) << ::testing::PrintToString(report.lines);
  std::string text;
  for (const auto& line : report.lines) text += line + "\n";
  EXPECT_THAT(text, HasSubstr("replay: the patches turn the admitted object into the "
                              "responseObject"));
  EXPECT_THAT(text, HasSubstr("/spec/volumes/0 (\"kube-api-access-"));
  EXPECT_THAT(text, HasSubstr("ServiceAccount plugin)"));
  const AdmittedBase base = admittedBase(*pod);
  // The webhook's own volumes are not in the base: the patch adds them.
  const std::string volumes = base.object["spec"]["volumes"].dump();
  EXPECT_THAT(volumes, HasSubstr("kube-api-access-"));
  EXPECT_THAT(volumes, Not(HasSubstr("linkerd-identity-end-entity")));
}

TEST(Replay, SaysWhatCannotBeReplayedAndWhy) {
  // Level Request (the transport-errors log): no responseObject to check against.
  auto chains = chainsOf("kube_denials.log");
  ASSERT_FALSE(chains.empty());
  MutationChain chain = chains[0];
  MutationStep step;
  step.webhook = "w";
  step.mutated = true;
  step.patch = nlohmann::json::parse(R"([{"op":"add","path":"/data/x","value":"1"}])");
  chain.steps = {step};
  // Denied: nothing was stored.
  EXPECT_EQ(replayReport(chain).kind, ReplayReport::Kind::kNotReplayable);
  EXPECT_THAT(replayReport(chain).lines[0],
              HasSubstr("not done: the request was denied, nothing was stored"));
  chain.outcome.kind = OutcomeKind::kAdmitted;
  chain.request_object = nlohmann::json{{"kind", "ConfigMap"}, {"data", nlohmann::json::object()}};
  chain.response_object.reset();
  EXPECT_EQ(replayReport(chain).kind, ReplayReport::Kind::kAppliedOnly);
  EXPECT_THAT(replayReport(chain).lines[0],
              HasSubstr("not checked: level Request records no responseObject"));
  chain.level = Level::kMetadata;
  EXPECT_THAT(replayReport(chain).lines[0], HasSubstr("not possible at level Metadata"));
  chain.level = Level::kRequestResponse;
  chain.verb = "patch";
  EXPECT_THAT(replayReport(chain).lines[0],
              HasSubstr("its requestObject is the client's patch"));
}

// --- (c) the outcome of every request ---

TEST(Outcome, RealDenialsNameTheWebhookCodeAndMessage) {
  const auto chains = chainsOf("kube_denials.log");
  // Rejections are chains now, validating ones included (no mutation annotation).
  ASSERT_EQ(chains.size(), 9u);
  const MutationChain* fail = byName(chains, "deny-fail");
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ(fail->outcome.kind, OutcomeKind::kDenied);
  EXPECT_EQ(fail->outcome.code, 403);
  EXPECT_EQ(fail->outcome.decided_by, "deny-fail.denials.example.com");
  EXPECT_EQ(formatOutcome(fail->outcome),
            "denied (403 Forbidden) by webhook \"deny-fail.denials.example.com\": admission "
            "webhook \"deny-fail.denials.example.com\" denied the request: not on my watch");
  const MutationChain* validating = byName(chains, "v-deny-ignore");
  ASSERT_NE(validating, nullptr);
  EXPECT_TRUE(validating->steps.empty());
  EXPECT_EQ(validating->outcome.decided_by, "v-deny-ignore.denials.example.com");
  const std::string text = formatChain(*validating);
  EXPECT_THAT(text, HasSubstr("  outcome: denied (403 Forbidden) by webhook"));
  EXPECT_THAT(text, HasSubstr("  v-deny-ignore.denials.example.com: denied the request\n"));
  EXPECT_THAT(text, Not(HasSubstr("replay: differs")));
}

TEST(Outcome, RealFailedOpenAndTimeouts) {
  const auto chains = chainsOf("kube_transport_errors.log");
  const MutationChain* timeout = byName(chains, "timeout-fail");
  ASSERT_NE(timeout, nullptr);
  EXPECT_EQ(timeout->outcome.kind, OutcomeKind::kTimedOut);
  EXPECT_EQ(timeout->outcome.decided_by, "timeout-fail.transport.example.com");
  const MutationChain* refused = byName(chains, "refused-fail");
  ASSERT_NE(refused, nullptr);
  EXPECT_EQ(refused->outcome.kind, OutcomeKind::kFailed);
  const MutationChain* ignored = byName(chains, "refused-ignore");
  ASSERT_NE(ignored, nullptr);
  EXPECT_EQ(ignored->outcome.kind, OutcomeKind::kAdmitted);
  EXPECT_THAT(formatOutcome(ignored->outcome),
              HasSubstr("mutating webhook \"refused-ignore.transport.example.com\" (round 0 index "
                        "1) failed open"));
  const MutationChain* validating = byName(chains, "v-refused-ignore");
  ASSERT_NE(validating, nullptr);
  EXPECT_THAT(formatOutcome(validating->outcome),
              HasSubstr("validating webhook \"v-refused-ignore.transport.example.com\" (index 1) "
                        "failed open"));
}

TEST(Outcome, RealValidatingWebhooksFailedOpenAndFailingClosed) {
  const auto chains = chainsOf("kube_failed_open_index.log");
  const MutationChain* open = byName(chains, "settings");
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->outcome.kind, OutcomeKind::kAdmitted);
  ASSERT_EQ(open->outcome.failed_open.size(), 1u);
  EXPECT_THAT(open->outcome.failed_open[0], HasSubstr("validating webhook \""));
  EXPECT_THAT(open->outcome.failed_open[0], HasSubstr("(index 1)"));
  const MutationChain* closed = byName(chains, "web");
  ASSERT_NE(closed, nullptr);
  EXPECT_EQ(closed->outcome.kind, OutcomeKind::kFailed);
  EXPECT_EQ(closed->outcome.decided_by, "unreachable-fail.validating.example.com");
  EXPECT_THAT(formatChain(*closed),
              HasSubstr("  unreachable-fail.validating.example.com: could not be called "
                        "(failurePolicy Fail)\n"));
}

TEST(Outcome, AdmissionPolicyDenialAndAuditAction) {
  core::Status status;
  status.code = 422;
  status.reason = "Invalid";
  status.message =
      "configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'size' with binding 'size-b' "
      "denied request: too big";
  const auto outcome = outcomeOf(
      status, {{"validation.policy.admission.k8s.io/validation_failure",
                R"([{"message":"m","policy":"p","binding":"b","expressionIndex":0,"validationActions":["Audit"]}])"}});
  EXPECT_EQ(outcome.kind, OutcomeKind::kDenied);
  EXPECT_EQ(outcome.decided_by_kind, "policy");
  EXPECT_EQ(outcome.decided_by, "size");
  EXPECT_EQ(outcome.binding, "size-b");
  ASSERT_EQ(outcome.policy_audit.size(), 1u);
  EXPECT_EQ(outcome.policy_audit[0], "policy \"p\" binding \"b\": m");
}

// --- chains with filters and -o json ---

TEST(AuditChains, FiltersAndJson) {
  ChainsOptions options;
  options.logs = {testdataPath("kube_transport_errors.log")};
  options.filter.outcome = OutcomeKind::kTimedOut;
  options.output = "json";
  std::ostringstream out, err;
  EXPECT_EQ(chainsCommand(options, out, err), 0) << err.str();
  const auto document = nlohmann::json::parse(out.str());
  ASSERT_EQ(document["count"], 1);
  EXPECT_EQ(document["chains"][0]["name"], "timeout-fail");
  EXPECT_EQ(document["chains"][0]["outcome"]["kind"], "timed-out");

  options.filter = ChainFilter{};
  options.filter.webhook = "v-refused-ignore.transport.example.com";
  options.output = "text";
  std::ostringstream text;
  EXPECT_EQ(chainsCommand(options, text, err), 0);
  EXPECT_THAT(text.str(), HasSubstr("create configmaps"));
  EXPECT_THAT(text.str(), HasSubstr("1 chain matching in "));
}

// --- logs as kube-apiserver leaves them ---

std::string gzipOf(const std::string& text) {
  z_stream stream{};
  deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&stream, text.size()), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  stream.avail_in = static_cast<uInt>(text.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  return out;
}

TEST(AuditLogs, RotatedGzipAndTruncatedLastLine) {
  const std::string text = testing::readFile(testdataPath("kube_transport_errors.log"));
  const fs::path rotated = scratch("audit-2026-11-26T10-00-00.000.log.gz");
  {
    std::ofstream out(rotated, std::ios::binary);
    // Two gzip members, as `cat a.gz b.gz`.
    out << gzipOf(text.substr(0, text.size() / 2)) << gzipOf(text.substr(text.size() / 2));
  }
  const fs::path current = scratch("audit.log");
  {
    std::ofstream out(current, std::ios::binary);
    const std::string seed = testing::readFile(testdataPath("kube_denials.log"));
    out << seed << seed.substr(0, 100);  // kube-apiserver stopped mid-line
  }
  ChainsOptions options;
  options.logs = {rotated.string(), current.string()};
  std::ostringstream out, err;
  EXPECT_EQ(chainsCommand(options, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("timeout-fail"));
  EXPECT_THAT(out.str(), HasSubstr("deny-fail"));
  EXPECT_THAT(err.str(), HasSubstr("audit.log:10: last line incomplete (100 bytes, no newline), "
                                   "skipped"));

  // Bad gzip data: named, exit 2.
  const fs::path bad = scratch("bad.log.gz");
  {
    std::string data = gzipOf(text);
    data[data.size() / 2] ^= 0x55;
    data[data.size() / 2 + 1] ^= 0x55;
    std::ofstream(bad, std::ios::binary) << data;
  }
  options.logs = {bad.string()};
  std::ostringstream bad_out, bad_err;
  EXPECT_EQ(chainsCommand(options, bad_out, bad_err), 2);
  EXPECT_THAT(bad_err.str(), HasSubstr(bad.string() + ": "));
  EXPECT_THAT(bad_err.str(), HasSubstr("gzip"));

  // Truncated gzip.
  {
    const std::string data = gzipOf(text);
    std::ofstream(bad, std::ios::binary) << data.substr(0, data.size() - 20);
  }
  std::ostringstream cut_out, cut_err;
  EXPECT_EQ(chainsCommand(options, cut_out, cut_err), 2);
  EXPECT_THAT(cut_err.str(), HasSubstr("gzip data truncated at compressed byte"));

  // A compressed log compared (read twice through a temporary copy).
  CompareOptions compare_options;
  compare_options.expected = {testdataPath("kube_transport_errors.log")};
  compare_options.actual = {rotated.string()};
  std::ostringstream c_out, c_err;
  EXPECT_EQ(compareCommand(compare_options, c_out, c_err), 0) << c_out.str() << c_err.str();
  EXPECT_THAT(c_out.str(), HasSubstr(" 0 differ, 0 without a partner"));
}

// lumberjack's names (backupName: prefix-<UTC time>.ext, ".gz" once compressed): the files of
// one log sorted by that time, the current file last, each in a place one of them had; other
// files stay where they were.
TEST(AuditLogs, RotatedFilesAreOrderedByTheTimeInTheirNames) {
  EXPECT_EQ(orderRotatedLogs({"/var/log/audit.log", "other.log",
                              "/var/log/audit-2026-11-26T12-00-00.000.log",
                              "/var/log/audit-2026-11-26T09-30-00.000.log.gz",
                              "/var/log/audit-2025-12-31T23-59-59.999.log.gz"}),
            (std::vector<std::string>{"/var/log/audit-2025-12-31T23-59-59.999.log.gz", "other.log",
                                      "/var/log/audit-2026-11-26T09-30-00.000.log.gz",
                                      "/var/log/audit-2026-11-26T12-00-00.000.log",
                                      "/var/log/audit.log"}));
  // Another log in the same directory, another directory, a file without extension (backups
  // "audit-<time>"), names that only look like times: each ordered on its own.
  EXPECT_EQ(orderRotatedLogs({"d/kube.log", "d/audit.log", "e/audit-2026-01-01T00-00-00.000.log",
                              "d/kube-2026-01-01T00-00-00.000.log",
                              "d/audit-2026-02-01T00-00-00.000.log"}),
            (std::vector<std::string>{"d/kube-2026-01-01T00-00-00.000.log",
                                      "d/audit-2026-02-01T00-00-00.000.log",
                                      "e/audit-2026-01-01T00-00-00.000.log", "d/kube.log",
                                      "d/audit.log"}));
  EXPECT_EQ(orderRotatedLogs({"audit", "audit-2026-01-01T00-00-00.000"}),
            (std::vector<std::string>{"audit-2026-01-01T00-00-00.000", "audit"}));
  EXPECT_EQ(orderRotatedLogs({"audit-2026-01-01T00-00-00.log", "audit-x.log", "audit.log"}),
            (std::vector<std::string>{"audit-2026-01-01T00-00-00.log", "audit-x.log",
                                      "audit.log"}));

  // A log split over a compressed backup, a backup and the current file, given newest first:
  // read in the order it was written, as the one file is.
  const std::string text = testing::readFile(testdataPath("kube_denials.log"));
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line + "\n");
  }
  ASSERT_GE(lines.size(), 6u);
  auto part = [&](std::size_t from, std::size_t to) {
    std::string out;
    for (std::size_t i = from; i < to && i < lines.size(); ++i) out += lines[i];
    return out;
  };
  const std::size_t third = lines.size() / 3;
  const fs::path dir = scratch("rotated");
  fs::create_directories(dir);
  const fs::path oldest = dir / "audit-2026-11-26T09-00-00.000.log.gz";
  const fs::path older = dir / "audit-2026-11-26T10-00-00.000.log";
  const fs::path current = dir / "audit.log";
  std::ofstream(oldest, std::ios::binary) << gzipOf(part(0, third));
  std::ofstream(older, std::ios::binary) << part(third, 2 * third);
  std::ofstream(current, std::ios::binary) << part(2 * third, lines.size());
  ChainsOptions options;
  options.logs = {current.string(), older.string(), oldest.string()};
  std::ostringstream out, err;
  EXPECT_EQ(chainsCommand(options, out, err), 0) << err.str();
  ChainsOptions whole;
  whole.logs = {testdataPath("kube_denials.log")};
  std::ostringstream whole_out, whole_err;
  EXPECT_EQ(chainsCommand(whole, whole_out, whole_err), 0) << whole_err.str();
  auto chainsPart = [](const std::string& text) {
    return text.substr(0, text.rfind(" chains in "));
  };
  EXPECT_EQ(chainsPart(out.str()), chainsPart(whole_out.str()));
}

TEST(AuditLogs, WrongTypesNameFileLineAndField) {
  const fs::path log = scratch("wrong.log");
  std::ofstream(log) << R"({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Request","auditID":"a","stage":"ResponseComplete","requestURI":"/","verb":"create","user":{},"responseStatus":{"metadata":{},"code":"403"},"annotations":{"mutation.webhook.admission.k8s.io/round_0_index_0":"{}"}})"
                      << "\n";
  ChainsOptions options;
  options.logs = {log.string()};
  std::ostringstream out, err;
  EXPECT_EQ(chainsCommand(options, out, err), 2);
  EXPECT_THAT(err.str(), HasSubstr("wrong.log:1: "));
  EXPECT_THAT(err.str(), HasSubstr("responseStatus.code of type int32"));
}

// --- the webhook backend's batches ---

std::string eventListOf(const std::string& log_text) {
  std::string items;
  std::istringstream lines(log_text);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    items += (items.empty() ? "" : ",") + line;
  }
  return R"({"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[)" + items +
         "]}";
}

TEST(EventList, ALineHoldingABatchIsReadAndCompared) {
  const std::string text = testing::readFile(testdataPath("kube_denials.log"));
  const fs::path batch = scratch("batch.log");
  std::ofstream(batch, std::ios::binary) << eventListOf(text) << "\n";
  ChainsOptions options;
  options.logs = {batch.string()};
  std::ostringstream out, err;
  EXPECT_EQ(chainsCommand(options, out, err), 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("9 chains in "));
  // Compared against the same events one per line: every item paired, read again by position.
  CompareOptions compare_options;
  compare_options.expected = {testdataPath("kube_denials.log")};
  compare_options.actual = {batch.string()};
  std::ostringstream c_out, c_err;
  EXPECT_EQ(compareCommand(compare_options, c_out, c_err), 0) << c_out.str() << c_err.str();
  EXPECT_THAT(c_out.str(), HasSubstr("9 chains compared, 9 paired"));
}

TEST(EventList, TheSinkWritesAllOrNothing) {
  const std::string text = testing::readFile(testdataPath("kube_denials.log"));
  const fs::path path = scratch("sink.log");
  fs::remove(path);
  auto log = LogWriter::open(path);
  ASSERT_TRUE(log.ok());
  auto written = appendEventBatch(eventListOf(text), *log);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(*written, 9u);
  // The lines written are the log backend's: read back as the same chains.
  EXPECT_EQ(chainsOf("kube_denials.log").size(), 9u);
  std::string bad = eventListOf(text);
  // The second event's stage.
  const auto at = bad.find("\"stage\":\"ResponseComplete\"",
                           bad.find("\"stage\":\"ResponseComplete\"") + 1);
  ASSERT_NE(at, std::string::npos);
  bad.replace(at, 26, "\"stage\":\"Done\"");
  const auto size_before = fs::file_size(path);
  auto refused = appendEventBatch(bad, *log);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.error().message, HasSubstr("items[1].stage: unknown stage \"Done\""));
  EXPECT_EQ(fs::file_size(path), size_before);
  EXPECT_FALSE(appendEventBatch(R"({"kind":"EventList","items":{}})", *log).ok());
  EXPECT_FALSE(appendEventBatch(R"([1,2])", *log).ok());
}

// --- policy-check ---

TEST(PolicyCheck, FirstMatchingRuleDecides) {
  const fs::path request = scratch("request.yaml");
  std::ofstream(request) << "user: system:serviceaccount:kube-system:replicaset-controller\n"
                            "verb: create\nresource: pods\nnamespace: simple-app\n---\n"
                            "user: alice\nverb: get\napiGroup: apps\nresource: deployments\n";
  std::ostringstream out, err;
  const int status = policyCheckCommand(
      (testing::sourceDir() / "scenarios" / "seed-tutorial" / "audit-policy.yaml").string(),
      request.string(), out, err);
  EXPECT_EQ(status, 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("create pods in simple-app by "
                                   "system:serviceaccount:kube-system:replicaset-controller: "
                                   "level RequestResponse, decided by rules[0] (level "
                                   "RequestResponse, resources [group \"\": *])"));
  EXPECT_THAT(out.str(), HasSubstr("get apps/deployments by alice: level None, decided by "
                                   "rules[2] (level None)"));
}

TEST(PolicyCheck, EventsOfARealLogAgainstThePolicy) {
  std::ostringstream out, err;
  // The transport-errors log was recorded at Request; the seed tutorial's policy says
  // RequestResponse for the core group.
  const int status = policyCheckCommand(
      (testing::sourceDir() / "scenarios" / "seed-tutorial" / "audit-policy.yaml").string(),
      testdataPath("kube_transport_errors.log"), out, err);
  EXPECT_EQ(status, 1) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("kube_transport_errors.log:1: create configmaps in "));
  EXPECT_THAT(out.str(), HasSubstr("  recorded at level Request: this policy would give "
                                   "RequestResponse\n"));
}

TEST(PolicyCheck, BadRequestFieldIsNamed) {
  const fs::path request = scratch("bad-request.yaml");
  std::ofstream(request) << "verb: create\nresource: pods\ngroups: admins\n";
  std::ostringstream out, err;
  EXPECT_EQ(policyCheckCommand(
                (testing::sourceDir() / "scenarios" / "seed-tutorial" / "audit-policy.yaml")
                    .string(),
                request.string(), out, err),
            2);
  EXPECT_THAT(err.str(), HasSubstr("bad-request.yaml: groups: expected a list of strings"));
}

// --- timeline ---

TEST(Timeline, RealTimedOutRequest) {
  const auto chains = chainsOf("kube_transport_errors.log");
  const MutationChain* timeout = byName(chains, "timeout-fail");
  ASSERT_NE(timeout, nullptr);
  std::ostringstream out, err;
  EXPECT_EQ(timelineCommand({testdataPath("kube_transport_errors.log")}, timeout->audit_id,
                            "text", out, err),
            0)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("received: create configmaps "));
  EXPECT_THAT(out.str(), HasSubstr("ResponseComplete: timed-out (500 InternalError) by webhook "
                                   "\"timeout-fail.transport.example.com\""));
  EXPECT_THAT(out.str(), HasSubstr("  latency mutating-webhook: "));
  EXPECT_THAT(out.str(), HasSubstr("  total "));
}

// A saved batch of the webhook backend: its items are the request's events.
TEST(Timeline, ReadsEventListLines) {
  const auto chains = chainsOf("kube_transport_errors.log");
  const MutationChain* timeout = byName(chains, "timeout-fail");
  ASSERT_NE(timeout, nullptr);
  const fs::path batch = scratch("timeline-batch.log");
  std::ofstream(batch, std::ios::binary)
      << eventListOf(testing::readFile(testdataPath("kube_transport_errors.log"))) << "\n";
  std::ostringstream out, err, plain_out, plain_err;
  EXPECT_EQ(timelineCommand({batch.string()}, timeout->audit_id, "text", out, err), 0)
      << err.str();
  EXPECT_EQ(timelineCommand({testdataPath("kube_transport_errors.log")}, timeout->audit_id, "text",
                            plain_out, plain_err),
            0);
  EXPECT_EQ(err.str(), "");
  EXPECT_THAT(out.str(), HasSubstr("ResponseComplete: timed-out (500 InternalError)"));
  EXPECT_EQ(out.str(), plain_out.str());
}

}  // namespace
}  // namespace harness::audit
