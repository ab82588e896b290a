#!/usr/bin/env bash
# scripts/build-kube.sh without a usable Go and with a failing build (a fake go command): one
# clear line each, the documented exit status, nothing built. Never runs the real Go build.
#   build_kube_test.sh SOURCE_DIR SCRATCH_DIR
set -euo pipefail
source_dir=$1
scratch=$2
rm -rf "$scratch" && mkdir -p "$scratch"
trap 'rm -rf "$scratch"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
run() {  # run EXPECTED_STATUS ARGS... -> output in $out
  local expected=$1; shift
  set +e
  out=$(HARNESS_KUBE_OUT="$scratch/out" bash "$source_dir/scripts/build-kube.sh" "$@" 2>&1)
  local status=$?
  set -e
  [[ $status == "$expected" ]] || fail "exit status $status, want $expected: $out"
}

# No Go: skipped with one line, exit 0 (3 with --require).
GO="$scratch/no-such-go" run 0
[[ $(wc -l <<<"$out") == 1 ]] || fail "more than one line: $out"
[[ $out == "build-kube: skipped: no Go toolchain ($scratch/no-such-go not found;"* ]] || fail "$out"
GO="$scratch/no-such-go" run 3 --require

# A Go that is too old.
cat > "$scratch/old-go" <<'GO'
#!/bin/sh
[ "$1 $2" = "env GOVERSION" ] && echo go1.20.1 && exit 0
exit 1
GO
chmod +x "$scratch/old-go"
GO="$scratch/old-go" run 0
[[ $out == "build-kube: skipped: go1.20.1 is older than go1.26"* ]] || fail "$out"

# A failing build: one line naming the log, then the log's tail; exit 1; nothing linked.
cat > "$scratch/broken-go" <<'GO'
#!/bin/sh
[ "$1 $2" = "env GOVERSION" ] && echo go1.26.8 && exit 0
echo "# k8s.io/example"
echo "cmd/kube/main.go:1:1: expected 'package', found broken"
exit 1
GO
chmod +x "$scratch/broken-go"
GO="$scratch/broken-go" run 1
[[ $(head -1 <<<"$out") == "build-kube: the Go build failed after "*"s (full log: $scratch/out/build.log):" ]] ||
  fail "$out"
grep -q "expected 'package', found broken" <<<"$out" || fail "no log tail: $out"
[[ ! -e "$scratch/out/bin/kubectl" ]] || fail "kubectl linked after a failed build"
echo "PASS"
