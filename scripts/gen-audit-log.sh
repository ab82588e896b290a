#!/usr/bin/env bash
# Writes a large kube-apiserver audit log (JSON lines, the log backend's format) for benchmarking
# `apiserver-sim audit`. The events are a real k3d cluster's (audit/tests/testdata/
# k3d_linkerd_pod_create.log: a Pod CREATE through Linkerd's proxy-injector, with its mutation and
# patch annotations and the injected proxy, and the injector's namespace lookup) repeated over
# many objects: 200 namespaces, deployments with generateName'd pods, fresh auditIDs and UIDs,
# mixed with the controller traffic around them (ConfigMap reads, node status patches, Event
# creates at RequestResponse). About half of the bytes are Pod CREATE events with an
# injected sidecar; one event in 16 is such a Pod CREATE.
#   scripts/gen-audit-log.sh OUT [SIZE_MB]      (default 1024)
set -euo pipefail
out="${1:?usage: gen-audit-log.sh OUT [SIZE_MB]}"
size_mb="${2:-1024}"
cd "$(dirname "$0")/.."
sample=audit/tests/testdata/k3d_linkerd_pod_create.log

awk -v limit="$((size_mb * 1024 * 1024))" '
function replace(s, from, to,    out, i) {
  out = ""
  while ((i = index(s, from)) > 0) {
    out = out substr(s, 1, i - 1) to
    s = substr(s, i + length(from))
  }
  return out s
}
function id(kind, n) { return sprintf("%08x-%04x-4%03x-8%03x-%012x", n, kind, n % 4096, kind, n) }
function emit(line) { print line; written += length(line) + 1 }
NR == 1 { received = $0 }
NR == 2 { namespace_get = $0 }
NR == 3 { created = $0 }
END {
  configmap_get = "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"RequestResponse\",\"auditID\":\"@ID@\",\"stage\":\"ResponseComplete\",\"requestURI\":\"/api/v1/namespaces/@NS@/configmaps/settings-@N@\",\"verb\":\"get\",\"user\":{\"username\":\"system:serviceaccount:@NS@:app\",\"uid\":\"@UID@\",\"groups\":[\"system:serviceaccounts\",\"system:serviceaccounts:@NS@\",\"system:authenticated\"]},\"sourceIPs\":[\"10.42.0.31\"],\"userAgent\":\"app/v1.4.2 (linux/amd64) kubernetes/$Format\",\"objectRef\":{\"resource\":\"configmaps\",\"namespace\":\"@NS@\",\"name\":\"settings-@N@\",\"apiVersion\":\"v1\"},\"responseStatus\":{\"metadata\":{},\"code\":200},\"responseObject\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"settings-@N@\",\"namespace\":\"@NS@\",\"uid\":\"@UID@\",\"resourceVersion\":\"81@N@\",\"creationTimestamp\":\"2026-03-14T09:20:11Z\",\"labels\":{\"app.kubernetes.io/name\":\"settings\",\"app.kubernetes.io/part-of\":\"@NS@\"}},\"data\":{\"LOG_LEVEL\":\"info\",\"FEATURE_FLAGS\":\"checkout,search,recommendations\",\"UPSTREAM\":\"http://backend.@NS@.svc.cluster.local:8080\",\"TIMEOUT\":\"30s\",\"RETRIES\":\"3\"}},\"requestReceivedTimestamp\":\"2026-03-14T09:26:54.101234Z\",\"stageTimestamp\":\"2026-03-14T09:26:54.102011Z\",\"annotations\":{\"authorization.k8s.io/decision\":\"allow\",\"authorization.k8s.io/reason\":\"RBAC: allowed by RoleBinding \\\"app-config\\\" of Role \\\"config-reader\\\" to ServiceAccount \\\"app/@NS@\\\"\"}}"
  conditions = ""
  split("MemoryPressure DiskPressure PIDPressure Ready", types, " ")
  for (c = 1; c <= 4; c++) {
    conditions = conditions (c > 1 ? "," : "") "{\"type\":\"" types[c] "\",\"status\":\"" (c == 4 ? "True" : "False") "\",\"lastHeartbeatTime\":\"2026-03-14T09:26:54Z\",\"lastTransitionTime\":\"2026-03-14T08:00:00Z\",\"reason\":\"Kubelet" types[c] "\",\"message\":\"kubelet status for " types[c] "\"}"
  }
  node_patch = "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"RequestResponse\",\"auditID\":\"@ID@\",\"stage\":\"ResponseComplete\",\"requestURI\":\"/api/v1/nodes/agent-@N@/status?timeout=10s\",\"verb\":\"patch\",\"user\":{\"username\":\"system:node:agent-@N@\",\"groups\":[\"system:nodes\",\"system:authenticated\"]},\"sourceIPs\":[\"172.18.0.3\"],\"userAgent\":\"k3s/v1.31.4+k3s1 (linux/amd64) kubernetes/a562d09\",\"objectRef\":{\"resource\":\"nodes\",\"name\":\"agent-@N@\",\"apiVersion\":\"v1\",\"subresource\":\"status\"},\"responseStatus\":{\"metadata\":{},\"code\":200},\"requestObject\":{\"status\":{\"conditions\":[" conditions "]}},\"responseObject\":{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"agent-@N@\",\"uid\":\"@UID@\",\"resourceVersion\":\"93@N@\",\"labels\":{\"kubernetes.io/hostname\":\"agent-@N@\",\"kubernetes.io/os\":\"linux\",\"node-role.kubernetes.io/agent\":\"true\"}},\"spec\":{\"podCIDR\":\"10.42.@N@.0/24\",\"providerID\":\"k3s://agent-@N@\"},\"status\":{\"capacity\":{\"cpu\":\"8\",\"memory\":\"32817612Ki\",\"pods\":\"110\"},\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32817612Ki\",\"pods\":\"110\"},\"conditions\":[" conditions "],\"addresses\":[{\"type\":\"InternalIP\",\"address\":\"172.18.0.3\"},{\"type\":\"Hostname\",\"address\":\"agent-@N@\"}],\"nodeInfo\":{\"kernelVersion\":\"6.1.0-18-amd64\",\"osImage\":\"K3s v1.31.4+k3s1\",\"containerRuntimeVersion\":\"containerd://1.7.23-k3s2\",\"kubeletVersion\":\"v1.31.4+k3s1\",\"operatingSystem\":\"linux\",\"architecture\":\"amd64\"}}},\"requestReceivedTimestamp\":\"2026-03-14T09:26:54.201234Z\",\"stageTimestamp\":\"2026-03-14T09:26:54.209876Z\",\"annotations\":{\"authorization.k8s.io/decision\":\"allow\",\"authorization.k8s.io/reason\":\"\"}}"
  event_create = "{\"kind\":\"Event\",\"apiVersion\":\"audit.k8s.io/v1\",\"level\":\"RequestResponse\",\"auditID\":\"@ID@\",\"stage\":\"ResponseComplete\",\"requestURI\":\"/api/v1/namespaces/@NS@/events\",\"verb\":\"create\",\"user\":{\"username\":\"system:serviceaccount:linkerd:linkerd-proxy-injector\",\"groups\":[\"system:serviceaccounts\",\"system:authenticated\"]},\"sourceIPs\":[\"10.42.0.12\"],\"userAgent\":\"controller/v0.0.0 (linux/amd64) kubernetes/$Format\",\"objectRef\":{\"resource\":\"events\",\"namespace\":\"@NS@\",\"name\":\"app-@N@.18a2b3c4d5e6f7a8\",\"apiVersion\":\"v1\"},\"responseStatus\":{\"metadata\":{},\"code\":201},\"requestObject\":{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"app-@N@.18a2b3c4d5e6f7a8\",\"namespace\":\"@NS@\"},\"involvedObject\":{\"kind\":\"Deployment\",\"namespace\":\"@NS@\",\"name\":\"app-@N@\",\"apiVersion\":\"apps/v1\"},\"reason\":\"Injected\",\"message\":\"Linkerd sidecar proxy injected\",\"source\":{\"component\":\"linkerd-proxy-injector\"},\"type\":\"Normal\"},\"responseObject\":{\"kind\":\"Event\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"app-@N@.18a2b3c4d5e6f7a8\",\"namespace\":\"@NS@\",\"uid\":\"@UID@\",\"resourceVersion\":\"95@N@\"},\"involvedObject\":{\"kind\":\"Deployment\",\"namespace\":\"@NS@\",\"name\":\"app-@N@\",\"apiVersion\":\"apps/v1\"},\"reason\":\"Injected\",\"message\":\"Linkerd sidecar proxy injected\",\"source\":{\"component\":\"linkerd-proxy-injector\"},\"count\":1,\"type\":\"Normal\"},\"requestReceivedTimestamp\":\"2026-03-14T09:26:54.301234Z\",\"stageTimestamp\":\"2026-03-14T09:26:54.302011Z\",\"annotations\":{\"authorization.k8s.io/decision\":\"allow\",\"authorization.k8s.io/reason\":\"RBAC: allowed by ClusterRoleBinding \\\"linkerd-linkerd-proxy-injector\\\"\"}}"
  alphabet = "bcdfghjklmnpqrstvwxz2456789"
  n = 0
  for (i = 0; written < limit; i++) {
    ns = "team-" (i % 200)
    deployment = "app" (i % 1000) "-v1-" sprintf("%010x", (i % 1000) * 2654435761 % 4294967296)
    suffix = ""
    for (k = i; length(suffix) < 5; k = int(k / 27)) suffix = suffix substr(alphabet, k % 27 + 1, 1)
    pod_id = id(1, i)
    # The pod: its name and generateName, its ReplicaSet, its namespace, its IDs.
    pod = replace(created, "simple-app-v1-76fc99b86b-x7k2q", deployment "-" suffix)
    pod = replace(pod, "simple-app-v1-76fc99b86b", deployment)
    pod = replace(pod, "simple-app", ns)
    pod = replace(pod, "5f0c3a8e-91d2-4c6b-a7e4-0b8d2f6c1e93", pod_id)
    pod = replace(pod, "3c1e9a52-7d4b-4f0e-b1a2-9e8d7c6b5a41", id(2, i))
    emit(replace(replace(received, "simple-app", ns), "5f0c3a8e-91d2-4c6b-a7e4-0b8d2f6c1e93", pod_id))
    emit(replace(replace(namespace_get, "simple-app", ns), "d2b7e1f4-3a5c-4e8d-9f0a-1b2c3d4e5f60", id(3, i)))
    emit(pod)
    for (b = 0; b < 13; b++) {
      n++
      if (b < 8) template = configmap_get
      else if (b < 10) template = node_patch
      else template = event_create
      line = replace(template, "@ID@", id(4, n))
      line = replace(line, "@UID@", id(5, n))
      line = replace(line, "@NS@", ns)
      emit(replace(line, "@N@", n % 97))
    }
  }
}' "$sample" >"$out"
echo "gen-audit-log: $(wc -c <"$out") bytes, $(wc -l <"$out") events in $out"
