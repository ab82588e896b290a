#pragma once

// The real control plane as a scenario backend (harness/sim/backend.h): `apiserver-sim run
// --backend kube` plays a scenario against kube-apiserver v1.37.2 built from its Go modules
// instead of the simulator.
//
// Per scenario (isolation): a fresh ControlPlane (etcd data, certificates, audit log, metrics all
// new), because what a scenario configures is fixed at kube-apiserver's start (audit policy,
// admission plugins, --request-timeout) and because deleting a scenario's namespaces is
// asynchronous (the namespace controller finalizes them) and leaves cluster-scoped objects,
// counters and generated names behind. The cost is the start, ~6 s (scripts/bench-backends.sh).
//
// Then, in this order: the scenario's endpoints on 127.0.0.1 (stubs sleep their declared delays
// for real: time cannot be scaled on a real server), a Service with a ClusterIP for every
// `service` address (the egress CONNECT proxy routes "<clusterIP>:<port>" to the endpoint) and a
// route for every `hosts` address (`url` webhooks are dialled through the proxy's
// `controlplane` selection); the starting objects through the API (Namespaces first, then
// waiting for their default ServiceAccount, as a cluster has it); the webhook configurations,
// caBundles filled, `service` references kept; then a sync: two sentinel webhooks (mutating and
// validating, sorted last, matching only a labelled dry-run request on a resource no webhook of
// the scenario matches) are created and a request is repeated until both were called, so the
// apiserver's configuration informers have every configuration created before them. A step
// that writes a webhook configuration is followed by the same sync.
//
// A step is one HTTP request (POST/PUT/DELETE, ?dryRun=All, ?timeout=, impersonation for
// userInfo). What is observed: the status code, the Status or object of the answer, the
// Warning headers, the audit event (by the Audit-Id header) with its annotations and level, the
// counters of /metrics before and after, and what the stubs received. Webhook calls are
// reconstructed from the audit annotations (mutating: round, index, mutated, patch, failed
// open) and the counters (validating); what a real server does not expose (the ?timeout= sent,
// whether round 1 ran) is reported as not observable instead of checked.

#include <chrono>
#include <filesystem>
#include <memory>

#include "harness/kube/control_plane.h"
#include "harness/sim/backend.h"

namespace harness::kube {

struct KubeBackendOptions {
  Binaries binaries = Binaries::inDir(Binaries::defaultDir());
  // Waits for conditions on the server (never fixed sleeps): configuration informers synced, a
  // namespace's default ServiceAccount, a request's audit event.
  std::chrono::seconds wait_timeout{60};
  bool keep_work_dir = false;
};

std::unique_ptr<sim::Backend> kubeBackend(KubeBackendOptions options = {});

}  // namespace harness::kube
