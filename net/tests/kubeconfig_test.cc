// Reading a kubeconfig as client-go reads it: `exec` credential plugins
// (client.authentication.k8s.io/v1) are run with KUBERNETES_EXEC_INFO, and their
// ExecCredential's token or client certificate is used; every broken plugin is an error naming
// the kubeconfig, the user and the problem.

#include "harness/net/kubeconfig.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/testing/support.h"

namespace harness::net {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class KubeconfigTest : public ::testing::Test {
 protected:
  // A kubeconfig whose user `me` has `user_yaml` (indented under `user:`).
  fs::path kubeconfig(const std::string& user_yaml, const std::string& cluster_extra = "") {
    fs::path path = dir_ / "kubeconfig";
    testing::writeFile(path, "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                             "clusters:\n- name: k\n  cluster:\n"
                             "    server: https://127.0.0.1:6443\n" +
                                 cluster_extra +
                                 "contexts:\n- name: c\n  context: {cluster: k, user: me}\n"
                                 "users:\n- name: me\n  user:\n" +
                                 user_yaml);
    return path;
  }
  // An executable shell script in the scratch folder.
  fs::path plugin(const std::string& name, const std::string& body) {
    fs::path path = dir_ / name;
    testing::writeFile(path, "#!/bin/sh\n" + body);
    ::chmod(path.c_str(), 0755);
    return path;
  }

  testing::ScratchDir dir_{"kubeconfig"};
};

TEST_F(KubeconfigTest, ExecPluginTokenWithExecInfoArgsAndEnv) {
  // The plugin writes what it was given, and answers a token built from its argument and env.
  plugin("get-token",
         "printf '%s' \"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/exec-info.json\"\n"
         "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                      "\"ExecCredential\",\"status\":{\"token\":\"'\"$1-$REGION\"'\"}}'\n");
  // A relative command with a path separator is relative to the kubeconfig (clientcmd).
  auto conn = loadKubeconfig(kubeconfig(
      "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
      "      command: ./get-token\n      args: [abc]\n      env: [{name: REGION, value: eu}]\n"
      "      interactiveMode: Never\n      provideClusterInfo: true\n",
      "    tls-server-name: api.cluster.internal\n"));
  ASSERT_TRUE(conn.ok()) << conn.error().message;
  EXPECT_EQ(bearerToken(*conn), "abc-eu");
  const auto info = nlohmann::json::parse(testing::readFile(dir_ / "exec-info.json"));
  EXPECT_EQ(info["apiVersion"], "client.authentication.k8s.io/v1");
  EXPECT_EQ(info["kind"], "ExecCredential");
  EXPECT_EQ(info["spec"]["interactive"], false);
  EXPECT_EQ(info["spec"]["cluster"]["server"], "https://127.0.0.1:6443");
  EXPECT_EQ(info["spec"]["cluster"]["tls-server-name"], "api.cluster.internal");
}

TEST_F(KubeconfigTest, ExecPluginClientCertificate) {
  plugin("get-cert",
         "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
         "\"status\":{\"clientCertificateData\":\"CERT\",\"clientKeyData\":\"KEY\"}}'\n");
  auto conn = loadKubeconfig(
      kubeconfig("    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
                 "      command: " + (dir_ / "get-cert").string() +
                 "\n      interactiveMode: IfAvailable\n"));
  ASSERT_TRUE(conn.ok()) << conn.error().message;
  EXPECT_EQ(conn->client_certificate_pem, "CERT");
  EXPECT_EQ(conn->client_key_pem, "KEY");
  EXPECT_EQ(clientOptionsFor(*conn, "test").client_certificate_pem, "CERT");
}

TEST_F(KubeconfigTest, BrokenExecPluginsAreErrorsNamingTheUser) {
  plugin("fails", "echo 'no login session' >&2\nexit 3\n");
  plugin("garbage", "echo 'hello'\n");
  plugin("wrong-kind", "echo '{\"apiVersion\":\"v1\",\"kind\":\"Secret\"}'\n");
  plugin("empty", "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                  "\"ExecCredential\",\"status\":{}}'\n");
  plugin("half", "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":"
                 "\"ExecCredential\",\"status\":{\"clientCertificateData\":\"C\"}}'\n");
  const std::string v1 = "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n";
  const struct {
    std::string user;
    std::string message;
  } cases[] = {
      {v1 + "      command: ./fails\n      interactiveMode: Never\n",
       "exec plugin " + (dir_ / "fails").string() + " failed (exit status 3): no login session"},
      {v1 + "      command: ./garbage\n      interactiveMode: Never\n", "(not JSON)"},
      {v1 + "      command: ./wrong-kind\n      interactiveMode: Never\n",
       "printed kind \"Secret\" apiVersion \"v1\", want ExecCredential"},
      {v1 + "      command: ./empty\n      interactiveMode: Never\n",
       "neither token nor clientCertificateData"},
      {v1 + "      command: ./half\n      interactiveMode: Never\n",
       "clientCertificateData and clientKeyData must both be present"},
      {v1 + "      command: ./no-such-plugin\n      interactiveMode: Never\n",
       "exec: \"" + (dir_ / "no-such-plugin").string() + "\": No such file or directory"},
      {v1 + "      command: ./fails\n", "exec.interactiveMode: Required value"},
      {v1 + "      command: ./fails\n      interactiveMode: Always\n", "no terminal is available"},
      {"    exec:\n      apiVersion: client.authentication.k8s.io/v1alpha1\n      command: x\n",
       "exec.apiVersion: \"client.authentication.k8s.io/v1alpha1\" is not supported"},
      {"    exec:\n      apiVersion: client.authentication.k8s.io/v1\n"
       "      interactiveMode: Never\n",
       "exec.command: Required value"},
  };
  for (const auto& c : cases) {
    auto conn = loadKubeconfig(kubeconfig(c.user));
    ASSERT_FALSE(conn.ok()) << c.user;
    EXPECT_THAT(conn.error().message, HasSubstr("kubeconfig: users[me].user.exec")) << c.user;
    EXPECT_THAT(conn.error().message, HasSubstr(c.message)) << c.user;
  }
}

}  // namespace
}  // namespace harness::net
