// The injector spec, the binary lookup, and the process lifecycle with stand-in executables
// (shell scripts that behave like a well-behaved, a stubborn, a crashing or a silent injector).
// The real binary is exercised by injector_process_integration_test.cc.

#include "harness/sim/injector_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/net/certificates.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;
namespace t = harness::testing;

// Writes the ports file the way `injector serve` does (temporary file, then rename).
constexpr const char* kWritePorts = R"(
while [ $# -gt 0 ]; do
  case "$1" in
    --ports-file) ports="$2" ;;
    --check-fd) check_fd="$2" ;;
  esac
  shift
done
)";

class InjectorProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = net::CertificateAuthority::create("injector-test-ca");
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    ca_ = *ca;
  }

  fs::path script(const std::string& name, const std::string& body) {
    fs::path path = fs::absolute(dir_ / name);
    t::writeFile(path, std::string("#!/bin/sh\n") + kWritePorts + body);
    ::chmod(path.c_str(), 0755);
    return path;
  }

  core::Result<std::unique_ptr<InjectorProcess>> start(const fs::path& binary,
                                                       InjectorSpec spec = {},
                                                       InjectorLaunchOptions options = {}) {
    options.binary = binary;
    return InjectorProcess::start("fake", std::move(spec), ca_, dir_.path(), {"inj.ns.svc"},
                                  std::move(options));
  }

  static bool alive(pid_t pid) { return ::kill(pid, 0) == 0; }

  t::ScratchDir dir_{"injector-process"};
  net::CertificateAuthority ca_;
};

const char* kListenAndExitOnTerm = R"(
trap 'exit 0' TERM
printf '{"webhook": 4242, "admin": 4343}\n' > "$ports.tmp" && mv "$ports.tmp" "$ports"
while :; do sleep 0.05; done
)";

TEST_F(InjectorProcessTest, ReadsThePortsFileAndStopsWithSigterm) {
  auto process = start(script("good.sh", kListenAndExitOnTerm));
  ASSERT_TRUE(process.ok()) << process.error().message;
  EXPECT_EQ((*process)->port(), 4242);
  EXPECT_EQ((*process)->adminPort(), 4343);
  EXPECT_EQ((*process)->url(), "https://127.0.0.1:4242/");
  EXPECT_TRUE((*process)->running());
  const pid_t pid = (*process)->pid();
  EXPECT_EQ((*process)->stop(), 0);
  EXPECT_FALSE((*process)->running());
  EXPECT_FALSE(alive(pid));
  EXPECT_EQ((*process)->stop(), 0);  // idempotent
}

TEST_F(InjectorProcessTest, PassesTheServeCommandLine) {
  InjectorSpec spec;
  spec.profiles = {"linkerd", "istio"};
  spec.log_level = "debug";
  spec.values = "/abs/values.yaml";
  spec.args = {"--linkerd-namespace", "mesh"};
  InjectorLaunchOptions options;
  options.object_files = {"/abs/ns.yaml", "/abs/rs.yaml"};
  auto process = start(script("good.sh", kListenAndExitOnTerm), spec, options);
  ASSERT_TRUE(process.ok()) << process.error().message;
  const auto dir = fs::absolute(dir_ / "injector-fake");
  const std::vector<std::string> expected = {
      fs::absolute(dir_ / "good.sh").string(),
      "--log-level", "debug", "serve", "--address", "127.0.0.1", "--port", "0",
      "--admin-port", "0", "--ports-file", (dir / "ports.json").string(),
      "--tls-cert", (dir / "tls.crt").string(), "--tls-key", (dir / "tls.key").string(),
      "--profile", "linkerd,istio", "--values", "/abs/values.yaml",
      "--objects", "/abs/ns.yaml", "--objects", "/abs/rs.yaml",
      "--linkerd-namespace", "mesh"};
  EXPECT_EQ((*process)->commandLine(), expected);
}

TEST_F(InjectorProcessTest, PassesAKubeconfig) {
  InjectorLaunchOptions options;
  options.kubeconfig = "/abs/kubeconfig";
  auto process = start(script("good.sh", kListenAndExitOnTerm), {}, options);
  ASSERT_TRUE(process.ok()) << process.error().message;
  const auto& argv = (*process)->commandLine();
  auto it = std::find(argv.begin(), argv.end(), "--kubeconfig");
  ASSERT_NE(it, argv.end());
  EXPECT_EQ(*(it + 1), "/abs/kubeconfig");
}

TEST_F(InjectorProcessTest, RejectsAKubeconfigTogetherWithObjectFiles) {
  InjectorLaunchOptions options;
  options.kubeconfig = "/abs/kubeconfig";
  options.object_files = {"/abs/ns.yaml"};
  auto process = start(script("good.sh", kListenAndExitOnTerm), {}, options);
  ASSERT_FALSE(process.ok());
  EXPECT_EQ(process.error().message,
            "injector \"fake\": a kubeconfig and object files are mutually exclusive");
}

TEST_F(InjectorProcessTest, WritesACertificateFromTheCaWithTheServiceNames) {
  auto process = start(script("good.sh", kListenAndExitOnTerm));
  ASSERT_TRUE(process.ok()) << process.error().message;
  const auto cert = t::readFile(dir_ / "injector-fake" / "tls.crt");
  EXPECT_TRUE(cert.starts_with("-----BEGIN CERTIFICATE-----"));
  // Verified by openssl: issued by the CA, valid for the service name.
  t::writeFile(dir_ / "ca.crt", ca_.certificate_pem);
  EXPECT_EQ(t::runCommand("openssl verify -CAfile " + (dir_ / "ca.crt").string() +
                          " -verify_hostname inj.ns.svc " +
                          (dir_ / "injector-fake" / "tls.crt").string()),
            0);
}

TEST_F(InjectorProcessTest, KillsAProcessThatIgnoresSigterm) {
  InjectorLaunchOptions options;
  options.stop_timeout = 200ms;
  auto process = start(script("stubborn.sh", R"(
trap '' TERM
printf '{"webhook": 4242, "admin": 0}' > "$ports.tmp" && mv "$ports.tmp" "$ports"
exec sleep 1000
)"),
                       {}, options);
  ASSERT_TRUE(process.ok()) << process.error().message;
  const pid_t pid = (*process)->pid();
  EXPECT_EQ((*process)->stop(), 128 + SIGKILL);
  EXPECT_FALSE(alive(pid));
}

TEST_F(InjectorProcessTest, DestructorStopsTheProcess) {
  pid_t pid = -1;
  {
    auto process = start(script("good.sh", kListenAndExitOnTerm));
    ASSERT_TRUE(process.ok()) << process.error().message;
    pid = (*process)->pid();
    EXPECT_TRUE(alive(pid));
  }
  EXPECT_FALSE(alive(pid));
}

TEST_F(InjectorProcessTest, EarlyExitReportsTheStatusAndTheLogTail) {
  auto process = start(script("crash.sh", R"(
echo "loading values" >&2
echo "boom: bad config" >&2
exit 3
)"));
  ASSERT_FALSE(process.ok());
  const auto log = fs::absolute(dir_ / "injector-fake" / "injector.log").string();
  EXPECT_EQ(process.error().message, "injector \"fake\" exited with status 3 before listening; log " +
                                         log + ":\nloading values\nboom: bad config");
}

TEST_F(InjectorProcessTest, ProcessThatNeverListensTimesOut) {
  InjectorLaunchOptions options;
  options.startup_timeout = 300ms;
  auto process = start(script("silent.sh", "echo waiting >&2\nexec sleep 1000\n"), {}, options);
  ASSERT_FALSE(process.ok());
  EXPECT_TRUE(process.error().message.starts_with(
      "injector \"fake\" did not start listening within 300ms"))
      << process.error().message;
  EXPECT_NE(process.error().message.find("\nwaiting"), std::string::npos)
      << process.error().message;
}

TEST_F(InjectorProcessTest, GarbageInThePortsFileIsAnError) {
  auto process = start(script("garbage.sh", R"(
echo 'not json' > "$ports"
exec sleep 1000
)"));
  ASSERT_FALSE(process.ok());
  EXPECT_TRUE(process.error().message.starts_with("injector \"fake\": unexpected ports file "))
      << process.error().message;
}

TEST_F(InjectorProcessTest, TheChildInheritsNoDescriptorsOfTheParent) {
  const int fd = ::open("/dev/null", O_RDONLY);  // deliberately without O_CLOEXEC
  ASSERT_GE(fd, 3);
  InjectorSpec spec;
  spec.args = {"--check-fd", std::to_string(fd)};
  auto process = start(script("fds.sh", R"(
if [ -e /proc/$$/fd/$check_fd ]; then echo "fd leaked" >&2; else echo "fd clean" >&2; fi
exit 5
)"),
                       spec);
  ::close(fd);
  ASSERT_FALSE(process.ok());
  EXPECT_NE(process.error().message.find("fd clean"), std::string::npos)
      << process.error().message;
}

TEST_F(InjectorProcessTest, ABinaryThatCannotRunIsReported) {
  t::writeFile(dir_ / "not-executable", "x");
  auto process = start(fs::absolute(dir_ / "not-executable"));
  ASSERT_FALSE(process.ok());
  EXPECT_EQ(process.error().message,
            "injector \"fake\": injector binary " + fs::absolute(dir_ / "not-executable").string() +
                " is not an executable file");
}

// --- findInjectorBinary ---

class EnvironmentVariable {
 public:
  EnvironmentVariable(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~EnvironmentVariable() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST_F(InjectorProcessTest, FindsAnExplicitBinary) {
  const auto path = script("injector", "exit 0\n");
  auto found = findInjectorBinary(path);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(*found, path);
}

TEST_F(InjectorProcessTest, FindsTheBinaryNamedByTheEnvironment) {
  const auto path = script("injector", "exit 0\n");
  EnvironmentVariable env("HARNESS_INJECTOR_BINARY", path.string());
  auto found = findInjectorBinary();
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(*found, path);
}

TEST_F(InjectorProcessTest, ABadEnvironmentBinaryIsAnErrorNotAFallback) {
  EnvironmentVariable env("HARNESS_INJECTOR_BINARY", "/nonexistent/injector");
  auto found = findInjectorBinary();
  ASSERT_FALSE(found.ok());
  EXPECT_EQ(found.error().message,
            "HARNESS_INJECTOR_BINARY=/nonexistent/injector is not an executable file");
}

TEST_F(InjectorProcessTest, FindsTheBinaryOnThePath) {
  script("injector", "exit 0\n");
  EnvironmentVariable unset_binary("HARNESS_INJECTOR_BINARY", "");
  EnvironmentVariable path("PATH", fs::absolute(dir_.path()).string() + ":/usr/bin:/bin");
  auto found = findInjectorBinary();
  ASSERT_TRUE(found.ok()) << found.error().message;
  // Next to the test executable (the build tree) wins over $PATH when it is built.
  EXPECT_EQ(found->filename(), "injector");
}

// --- parseInjectorSpec ---

class InjectorSpecTest : public ::testing::Test {
 protected:
  std::string errorOf(const json& value) {
    auto spec = parseInjectorSpec(value, dir_.path());
    EXPECT_FALSE(spec.ok());
    return spec.ok() ? std::string("<parsed>") : spec.error().message;
  }
  t::ScratchDir dir_{"injector-spec"};
};

TEST_F(InjectorSpecTest, DefaultsToTheLinkerdProfile) {
  auto spec = parseInjectorSpec(json::object(), dir_.path());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->profiles, std::vector<std::string>{"linkerd"});
  EXPECT_TRUE(spec->args.empty());
  EXPECT_FALSE(spec->log_level);
}

TEST_F(InjectorSpecTest, ReadsCommaSeparatedProfiles) {
  auto spec = parseInjectorSpec(json{{"profile", "istio,linkerd"}}, dir_.path());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->profiles, (std::vector<std::string>{"istio", "linkerd"}));
}

TEST_F(InjectorSpecTest, ReadsAProfileList) {
  auto spec = parseInjectorSpec(json{{"profile", {"istio"}}}, dir_.path());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->profiles, std::vector<std::string>{"istio"});
}

TEST_F(InjectorSpecTest, ResolvesFilesAgainstTheBaseDir) {
  t::writeFile(dir_ / "values.yaml", "{}");
  t::writeFile(dir_ / "trust.pem", "x");
  auto spec = parseInjectorSpec(
      json{{"values", "values.yaml"}, {"trustAnchors", "./trust.pem"}, {"args", {"--a", "b"}},
           {"logLevel", "debug"}},
      dir_.path());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->values, (dir_.path() / "values.yaml").lexically_normal());
  EXPECT_EQ(spec->trust_anchors, (dir_.path() / "trust.pem").lexically_normal());
  EXPECT_EQ(spec->args, (std::vector<std::string>{"--a", "b"}));
  EXPECT_EQ(spec->log_level, "debug");
}

TEST_F(InjectorSpecTest, UnsupportedProfile) {
  EXPECT_EQ(errorOf(json{{"profile", "linkerd,envoy"}}),
            "injector.profile: Unsupported value: \"envoy\": supported values: \"linkerd\", "
            "\"istio\"");
}

TEST_F(InjectorSpecTest, DuplicateProfile) {
  EXPECT_EQ(errorOf(json{{"profile", "istio,istio"}}),
            "injector.profile: Duplicate value: \"istio\"");
}

TEST_F(InjectorSpecTest, ProfileOfTheWrongType) {
  EXPECT_EQ(errorOf(json{{"profile", 1}}),
            "injector.profile: must be a string or a list of strings, got number");
}

TEST_F(InjectorSpecTest, MissingFileIsNamedWithItsResolvedPath) {
  EXPECT_EQ(errorOf(json{{"istioMesh", "mesh.yaml"}}),
            "injector.istioMesh: cannot read \"" +
                (dir_.path() / "mesh.yaml").lexically_normal().string() +
                "\": No such file or directory");
}

TEST_F(InjectorSpecTest, ArgsMustBeStrings) {
  EXPECT_EQ(errorOf(json{{"args", {"--port", 1}}}),
            "injector.args[1]: must be a string, got number");
}

TEST_F(InjectorSpecTest, UnknownField) {
  EXPECT_EQ(errorOf(json{{"profiles", "linkerd"}}), "injector: unknown field \"profiles\"");
}

}  // namespace
}  // namespace harness::sim
