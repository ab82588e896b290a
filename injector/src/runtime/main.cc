// injector: a sidecar-injecting mutating admission webhook (Linkerd and Istio profiles) and its
// offline `inject` command.

#include <algorithm>
#include <iostream>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "harness/net/server.h"
#include "inject_command.h"
#include "logging.h"
#include "review_command.h"
#include "serve.h"

#ifndef HARNESS_VERSION
#define HARNESS_VERSION "dev"
#endif

namespace {

int run(int argc, char** argv) {
  using namespace harness::injector;
  CLI::App app{"Sidecar injector: a mutating admission webhook with Linkerd's proxy-injector "
               "behaviour, and offline injection."};
  app.require_subcommand(1);
  std::string log_level = "info", log_format = "plain";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")
      ->capture_default_str();
  app.add_option("--log-format", log_format, "plain (logrus text) or json")
      ->capture_default_str();
  app.set_version_flag("--version", std::string("injector ") + HARNESS_VERSION);

  ServeOptions serve;
  serve.linkerd.version = std::string("sidecar-harness-") + HARNESS_VERSION;
  auto* serve_cmd = app.add_subcommand("serve", "Run the HTTPS webhook server");
  serve_cmd->footer("Exit status: 0 after SIGTERM or SIGINT (graceful shutdown), 2 when it cannot "
                    "start (bad flags, unreadable files, a port in use).");
  serve_cmd->add_option("--address", serve.address, "Listen address")->capture_default_str();
  serve_cmd->add_option("--port", serve.port, "Webhook port (TLS; 0: any free port)")
      ->capture_default_str();
  serve_cmd->add_option("--admin-port", serve.admin_port,
                        "Plain-HTTP admin port for /healthz, /readyz, /metrics (-1: none)")
      ->capture_default_str();
  serve_cmd->add_option("--tls-cert", serve.tls_cert, "Serving certificate (PEM)")->required();
  serve_cmd->add_option("--tls-key", serve.tls_key, "Serving key (PEM)")->required();
  serve_cmd->add_option("--profile", serve.profiles,
                        "Injection profiles, comma-separated (linkerd, istio); the first also "
                        "serves \"/\"")
      ->delimiter(',')
      ->capture_default_str();
  const std::string istio_data = HARNESS_ISTIO_DATA_DIR;
  serve.istio.config_file = istio_data + "/sidecar-injector-config.yaml";
  serve.istio.values_file = istio_data + "/values.json";
  serve.istio.mesh_file = istio_data + "/mesh.yaml";
  serve_cmd->add_option("--istio-config", serve.istio.config_file,
                        "istio-sidecar-injector `config` (or the dumped ConfigMap)")
      ->capture_default_str();
  serve_cmd->add_option("--istio-values", serve.istio.values_file,
                        "istio-sidecar-injector `values` (or the dumped ConfigMap)")
      ->capture_default_str();
  serve_cmd->add_option("--istio-mesh", serve.istio.mesh_file,
                        "mesh config (or the dumped `istio` ConfigMap)")
      ->capture_default_str();
  serve_cmd->add_flag("--istio-native-sidecars", serve.istio.native_sidecars,
                      "ENABLE_NATIVE_SIDECARS=true (istio-proxy as a native sidecar)");
  serve_cmd->add_option("--istio-enable-native-sidecars", serve.istio.native_sidecars_mode,
                        "ENABLE_NATIVE_SIDECARS: true, false or auto (the nodes' kubelet "
                        "versions, read through the Kubernetes API); default: the values' "
                        "pilot.env, else auto since 1.27");
  serve_cmd->add_option("--istio-platform", serve.istio.platform,
                        "istiod's PLATFORM (openshift: the proxy's UID and GID from the pod's "
                        "Namespace, read through the Kubernetes API); default: the values' "
                        "pilot.env.PLATFORM, else global.platform");
  serve_cmd->add_option("--values", serve.linkerd.values_file,
                        "linkerd-config values file (or the dumped ConfigMap)");
  serve_cmd->add_option("--trust-anchors", serve.linkerd.trust_anchors_file,
                        "Identity trust anchors bundle (PEM)");
  serve_cmd->add_option("--linkerd-namespace", serve.linkerd.linkerd_namespace,
                        "Control plane namespace")
      ->capture_default_str();
  serve_cmd->add_option("--kubeconfig", serve.kubeconfig, "Kubeconfig for API lookups");
  serve_cmd->add_option("--context", serve.kube_context, "Kubeconfig context");
  serve_cmd->add_flag("--in-cluster", serve.in_cluster, "Use the pod's service account");
  serve_cmd->add_option("--objects", serve.object_files,
                        "Serve lookups from these object files instead of an API server");
  serve_cmd->add_option("--ports-file", serve.ports_file,
                        "Write the bound ports as JSON here once listening");
  serve_cmd->add_option("--threads", serve.threads, "Server I/O threads")->capture_default_str();
  serve_cmd->add_option("--handler-threads", serve.max_handler_threads,
                        "Most webhook handlers running at once (each may wait on the Kubernetes "
                        "API); the pool grows to this on demand")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  serve_cmd->add_option("--max-connections", serve.max_connections,
                        "Most webhook connections open at once; at the limit the longest-idle "
                        "one is closed (0: half the file descriptor limit, at most 4096)")
      ->capture_default_str();
  serve_cmd->add_option("--client-ca-file", serve.client_ca_file,
                        "Require client certificates signed by a CA in this PEM bundle (mutual "
                        "TLS, as kube-apiserver presents with an AdmissionConfiguration "
                        "kubeconfig); reloaded when it changes")
      ->check(CLI::ExistingFile);
  bool allow_tls12 = false;
  serve_cmd->add_flag("--allow-tls12", allow_tls12,
                      "Accept TLS 1.2 clients (Linkerd requires TLS 1.3)");

  InjectOptions inject;
  inject.version = serve.linkerd.version;
  auto* inject_cmd = app.add_subcommand(
      "inject", "Print what the webhook would do to objects from files or stdin");
  inject_cmd->footer("Exit status: 0 every object processed, 1 the webhook would deny an object, "
                     "2 bad input (bad flags, unreadable or malformed files).");
  inject_cmd->add_option("inputs", inject.inputs, "Files (YAML or JSON; '-' for stdin)");
  // istioctl kube-inject's spellings (istioctl/pkg/kubeinject/kubeinject.go) work as well.
  inject_cmd->add_option("-f,--filename", inject.inputs, "Same as inputs (istioctl's -f)");
  inject_cmd->add_option("--profile", inject.profile, "linkerd or istio")
      ->check(CLI::IsMember({"linkerd", "istio"}))
      ->capture_default_str();
  inject.istio.config_file = serve.istio.config_file;
  inject.istio.values_file = serve.istio.values_file;
  inject.istio.mesh_file = serve.istio.mesh_file;
  inject_cmd->add_option("--istio-config,--injectConfigFile", inject.istio.config_file,
                         "Istio injection config")
      ->capture_default_str();
  inject_cmd->add_option("--istio-values,--valuesFile", inject.istio.values_file, "Istio values")
      ->capture_default_str();
  inject_cmd->add_option("--istio-mesh,--meshConfigFile", inject.istio.mesh_file, "Istio mesh config")
      ->capture_default_str();
  inject_cmd->add_flag("--istio-native-sidecars", inject.istio.native_sidecars,
                       "ENABLE_NATIVE_SIDECARS=true");
  inject_cmd->add_option("--values", inject.values_file, "linkerd-config values file");
  inject_cmd->add_option("--trust-anchors", inject.trust_anchors_file, "Trust anchors (PEM)");
  inject_cmd->add_option("-n,--namespace", inject.default_namespace,
                         "Namespace of objects that name none")
      ->capture_default_str();
  inject_cmd->add_option("--namespace-file", inject.namespace_files, "Namespace objects");
  inject_cmd->add_option("--objects", inject.object_files,
                         "Other objects for owner lookups (ReplicaSets, Jobs, ...)");
  inject_cmd->add_option("--linkerd-namespace", inject.linkerd_namespace,
                         "Control plane namespace")
      ->capture_default_str();
  inject_cmd->add_option("-o,--output", inject.output, "yaml or json")
      ->check(CLI::IsMember({"yaml", "json"}))
      ->capture_default_str();
  inject_cmd->add_flag("--patch", inject.patch, "Print the JSON patches instead");
  inject_cmd->add_flag("--explain", inject.explain, "Print the decision and reasons per object");

  ReviewOptions review;
  auto* review_cmd = app.add_subcommand(
      "review", "Print the AdmissionReview kube-apiserver would send for an object");
  review_cmd->footer("Exit status: 0 printed, 2 bad input (bad flags, an unreadable or malformed "
                     "file).");
  review_cmd->add_option("input", review.input, "Object file (YAML or JSON; '-' for stdin)")
      ->capture_default_str();
  review_cmd->add_option("--operation", review.operation, "CREATE, UPDATE, DELETE or CONNECT")
      ->check(CLI::IsMember({"CREATE", "UPDATE", "DELETE", "CONNECT"}))
      ->capture_default_str();
  review_cmd->add_option("--version", review.version, "AdmissionReview version")
      ->check(CLI::IsMember({"v1", "v1beta1"}))
      ->capture_default_str();
  review_cmd->add_option("-n,--namespace", review.namespace_name, "request.namespace");
  review_cmd->add_option("--uid", review.uid, "request.uid (default: random)");
  review_cmd->add_option("--user", review.username, "userInfo.username")->capture_default_str();
  review_cmd->add_flag("--dry-run", review.dry_run, "request.dryRun");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11's own codes (105, 106, 109...) are not this program's: a usage error is bad input.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (auto ok = configureLogging(log_level, log_format); !ok) {
    std::cerr << "injector: " << ok.error().message << "\n";
    return 2;
  }
  try {
    if (*serve_cmd) {
      serve.tls13_only = !allow_tls12;
      const bool wants_linkerd = std::find(serve.profiles.begin(), serve.profiles.end(),
                                           "linkerd") != serve.profiles.end();
      if (wants_linkerd &&
          (serve.linkerd.values_file.empty() || serve.linkerd.trust_anchors_file.empty())) {
        std::cerr << "injector serve: the linkerd profile needs --values and --trust-anchors\n";
        return 2;
      }
      // Only the server takes SIGTERM/SIGINT itself (sigwait, then a graceful shutdown); blocked
      // before its threads start so that every thread inherits the mask. `inject` and `review`
      // keep the default action: a signal ends them, e.g. while they wait on stdin.
      harness::net::blockTerminationSignals();
      return runServe(serve);
    }
    if (*review_cmd) return runReview(review, std::cin, std::cout, std::cerr);
    return runInject(inject, std::cin, std::cout, std::cerr);
  } catch (const std::exception& e) {
    spdlog::critical("injector: {}", e.what());
    return 2;
  }
}

}  // namespace

// An exception nothing below caught (out of memory, a broken invariant) ends the program with one
// line and status 2 instead of std::terminate's abort.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "injector: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "injector: an unknown exception\n";
  }
  return 2;
}
