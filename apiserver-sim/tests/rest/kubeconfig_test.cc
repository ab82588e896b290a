// The kubeconfig written for the REST API: clientcmd's field names, inline CA data, a token, and a
// file only its owner can read.

#include <sys/stat.h>

#include <gtest/gtest.h>

#include "harness/core/yaml.h"
#include "harness/go/base64.h"
#include "harness/sim/kubeconfig.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

KubeconfigSpec spec() {
  KubeconfigSpec s;
  s.server = "https://127.0.0.1:6443";
  s.ca_pem = "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n";
  s.bearer_token = "secret-token";
  return s;
}

TEST(KubeconfigTest, DocumentHasOneClusterUserAndCurrentContext) {
  const nlohmann::json doc = kubeconfigDocument(spec());
  EXPECT_EQ(doc["apiVersion"], "v1");
  EXPECT_EQ(doc["kind"], "Config");
  EXPECT_EQ(doc["current-context"], "apiserver-sim");
  EXPECT_EQ(doc["clusters"][0]["name"], "apiserver-sim");
  EXPECT_EQ(doc["clusters"][0]["cluster"]["server"], "https://127.0.0.1:6443");
  EXPECT_EQ(doc["users"][0]["user"]["token"], "secret-token");
  EXPECT_EQ(doc["contexts"][0]["context"],
            nlohmann::json({{"cluster", "apiserver-sim"}, {"user", "apiserver-sim"}}));
}

TEST(KubeconfigTest, CertificateAuthorityIsInlineBase64) {
  const nlohmann::json doc = kubeconfigDocument(spec());
  auto decoded = go::base64Decode(
      doc["clusters"][0]["cluster"]["certificate-authority-data"].get<std::string>());
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, spec().ca_pem);
}

TEST(KubeconfigTest, NamespaceIsOnlyWrittenWhenSet) {
  KubeconfigSpec with_namespace = spec();
  with_namespace.namespace_name = "team";
  EXPECT_EQ(kubeconfigDocument(with_namespace)["contexts"][0]["context"]["namespace"], "team");
  EXPECT_FALSE(kubeconfigDocument(spec())["contexts"][0]["context"].contains("namespace"));
}

TEST(KubeconfigTest, RenderedYamlReadsBackAsTheDocument) {
  auto parsed = core::parseYaml(renderKubeconfig(spec()));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(*parsed, kubeconfigDocument(spec()));
}

TEST(KubeconfigTest, FileIsWrittenOwnerOnlyInANewDirectory) {
  testing::ScratchDir dir("kubeconfig");
  const auto file = dir.path() / "nested" / "config";
  auto written = writeKubeconfigFile(file, spec());
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(testing::readFile(file), renderKubeconfig(spec()));
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST(KubeconfigTest, UnwritableLocationIsAnErrorNamingTheFile) {
  testing::ScratchDir dir("kubeconfig");
  testing::writeFile(dir.path() / "blocker", "x");
  const auto file = dir.path() / "blocker" / "config";
  auto written = writeKubeconfigFile(file, spec());
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find(file.parent_path().string()), std::string::npos)
      << written.error().message;
}

}  // namespace
}  // namespace harness::sim
