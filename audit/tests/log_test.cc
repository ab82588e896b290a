// Writing JSON-lines audit logs like kube-apiserver's log backend and reading them back, from the
// simulator and from a real cluster (k3d), bad lines included.

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/audit/log.h"
#include "harness/testing/support.h"

namespace harness::audit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string testdata(const std::string& name) {
  return testing::readFile(testing::sourceDir() / "audit" / "tests" / "testdata" / name);
}

Event eventWithId(const std::string& id) {
  Event event;
  event.level = Level::kMetadata;
  event.stage = Stage::kResponseComplete;
  event.audit_id = id;
  event.verb = "get";
  event.request_uri = "/api";
  return event;
}

TEST(LogWriter, AppendsOneLinePerEvent) {
  testing::ScratchDir dir("audit-log");
  const auto path = dir / "logs" / "audit.log";
  {
    auto writer = LogWriter::open(path);
    ASSERT_TRUE(writer.ok()) << writer.error().message;
    writer->write(eventWithId("a"));
    writer->write(eventWithId("b"));
    EXPECT_EQ(writer->lastError(), std::nullopt);
  }
  {
    auto writer = LogWriter::open(path);
    ASSERT_TRUE(writer.ok());
    writer->write(eventWithId("c"));
  }
  const std::string text = testing::readFile(path);
  EXPECT_EQ(text, toJsonLine(eventWithId("a")) + toJsonLine(eventWithId("b")) +
                      toJsonLine(eventWithId("c")));
}

TEST(LogWriter, LinesDoNotInterleaveAcrossThreads) {
  testing::ScratchDir dir("audit-log-threads");
  const auto path = dir / "audit.log";
  auto writer = LogWriter::open(path);
  ASSERT_TRUE(writer.ok());
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        writer->write(eventWithId(std::to_string(t) + "-" + std::to_string(i)));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  const auto result = readLog(testing::readFile(path), "audit.log");
  EXPECT_TRUE(result.errors.empty());
  EXPECT_EQ(result.events.size(), 200u);
}

TEST(LogWriter, OpenFailureNamesThePath) {
  testing::ScratchDir dir("audit-log-dir");
  auto writer = LogWriter::open(dir.path());  // a directory
  ASSERT_FALSE(writer.ok());
  EXPECT_THAT(writer.error().message, StartsWith("cannot open audit log " + dir.path().string()));
}

TEST(ReadLog, ReportsBadLinesAndKeepsGoing) {
  const auto result = readLog(testdata("simulator_chains.log"), "audit.log");
  ASSERT_EQ(result.events.size(), 3u);
  EXPECT_EQ(result.events[0].stage, Stage::kRequestReceived);
  EXPECT_EQ(result.events[1].audit_id, "sim-0001");
  EXPECT_EQ(result.events[2].audit_id, "sim-0002");  // after a "\r\n" line end
  EXPECT_THAT(result.line_numbers, ElementsAre(1u, 2u, 5u));
  ASSERT_EQ(result.errors.size(), 2u);
  EXPECT_THAT(result.errors[0], StartsWith("audit.log:4: invalid JSON: parse error at line 1"));
  EXPECT_EQ(result.errors[1], "audit.log:6: stage: unknown stage \"Done\"");
}

TEST(ReadLog, NonJsonLinesAreErrors) {
  const auto result = readLog("AUDIT: id=\"x\" stage=\"ResponseComplete\"\n", "legacy.log");
  EXPECT_TRUE(result.events.empty());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_THAT(result.errors[0], StartsWith("legacy.log:1: invalid JSON: "));
}

TEST(ReadLog, DeeplyNestedLineIsRefusedWithoutCrashing) {
  const std::string line = std::string(200000, '[') + std::string(200000, ']');
  const auto result = readLog(line, "deep.log");
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_EQ(result.errors[0], "deep.log:1: invalid JSON: invalid character '[' exceeded max depth");
}

TEST(ReadLog, EmptyTextHasNothing) {
  const auto result = readLog("", "audit.log");
  EXPECT_TRUE(result.events.empty());
  EXPECT_TRUE(result.errors.empty());
}

TEST(ReadLog, RealClusterLinesRoundTripByteForByte) {
  const std::string text = testdata("k3d_linkerd_pod_create.log");
  const auto result = readLog(text, "audit.log");
  ASSERT_TRUE(result.errors.empty()) << result.errors[0];
  ASSERT_EQ(result.events.size(), 3u);
  std::string written;
  for (const auto& event : result.events) written += toJsonLine(event);
  EXPECT_EQ(written, text);
}

TEST(ReadLog, RealClusterEventFields) {
  const auto result = readLog(testdata("k3d_linkerd_pod_create.log"), "audit.log");
  ASSERT_EQ(result.events.size(), 3u);
  const Event& create = result.events[2];
  EXPECT_EQ(create.level, Level::kRequestResponse);
  EXPECT_EQ(create.stage, Stage::kResponseComplete);
  EXPECT_EQ(create.user.username, "system:serviceaccount:kube-system:replicaset-controller");
  ASSERT_TRUE(create.response_status.has_value());
  EXPECT_EQ(create.response_status->code, 201);
  EXPECT_EQ(create.annotations.at("policy.example.com/image-check"), "tag <latest> & no digest");
  EXPECT_THAT(create.annotations.at("patch.webhook.admission.k8s.io/round_0_index_0"),
              HasSubstr("\"patchType\":\"JSONPatch\""));
  EXPECT_EQ(formatMicroTime(*create.stage_timestamp), "2026-03-14T09:26:53.931876Z");
}

}  // namespace
}  // namespace harness::audit
