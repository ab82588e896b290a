#!/usr/bin/env bash
# Installs what the project needs from Debian 12 packages. Idempotent: installs only what is
# missing, so a second run does nothing. Run as root (or with sudo available).
#   scripts/install-deps.sh [--bench]   (--bench: also what scripts/bench/compare.sh drives and
#                                        compares against: wrk, hey, nginx, Node.js)
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config git make
  libboost1.81-dev            # Beast, Asio, URL (replaces 1.74)
  libssl-dev openssl          # TLS, and the openssl CLI used by scripts/gen-certs.sh
  nlohmann-json3-dev libyaml-cpp-dev
  libfyaml-dev                # the fast path of core::parseYaml (yaml-cpp words the errors)
  zlib1g-dev                  # gzip-compressed audit logs (audit/src/log.cc)
  libsimdjson-dev             # the fast path of core::parseJson (nlohmann words the errors)
  libre2-dev                  # Go's regexp (harness/go/regexp.h): Sprig's regex functions, scenario regexes
  libvalijson-dev             # JSON Schema validation: the scenario schema test
  libgtest-dev libgmock-dev googletest librapidcheck-dev
  libcli11-dev libfmt-dev libspdlog-dev libbenchmark-dev
  libjemalloc-dev             # the injector binary's malloc (scripts/bench-inject.sh)
  clang-16 libclang-rt-16-dev llvm-16   # the asan and fuzz presets: libFuzzer, sanitizer runtimes, llvm-symbolizer
  lld-16                      # the asan preset's linker (links its test programs faster than ld)
  clang-tidy-16               # the tidy preset (.clang-tidy)
  procps curl ca-certificates
  time                        # /usr/bin/time -v: peak RSS in the benchmark scripts
  chromium                    # headless: the apiserver-sim report test draws the HTML page
)

if [[ "${1:-}" == "--bench" ]]; then
  packages+=(wrk hey nginx-light nodejs)
fi

missing=()
for p in "${packages[@]}"; do
  if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done
# kubectl is not installed from packages (Debian's kubernetes-client is 1.20, without OpenAPI v3):
# scripts/build-kube.sh builds the real kubectl, kube-apiserver, kube-controller-manager and etcd
# from the Go modules pinned in kube/go.mod when Go is present.

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all packages present"
  exit 0
fi

sudo=""
if [[ $(id -u) -ne 0 ]]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
# libboost1.81-dev conflicts with the 1.74 -dev packages; apt removes those if present.
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
