package main

import (
	"fmt"

	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/component-base/version"
)

// kubernetesVersion is the version stamped at build time (scripts/build-kube.sh passes the
// version pinned in go.mod, as Kubernetes' own build does).
func kubernetesVersion() string { return version.Get().GitVersion }

// compatibilityVersion is the CEL environment's version: the binary's minimum compatibility
// version, as kube-apiserver uses when nothing overrides it (environment.DefaultCompatibilityVersion).
func compatibilityVersion() string { return environment.DefaultCompatibilityVersion().String() }

func versionLine() string {
	return fmt.Sprintf("kube-cel %s (CEL compatibility version %s)", kubernetesVersion(), compatibilityVersion())
}
