// Command kube is one multi-call binary holding the real Kubernetes control plane built from
// k8s.io/kubernetes at the version pinned in go.mod: kube-apiserver, kube-controller-manager,
// kubectl and an embedded etcd. It runs the component named by the name it was called by
// (build/kube/bin/kubectl is a link to it) or by its first argument (`kube kubectl get pods`).
//
// One binary instead of four: the components share most of their code (client-go, apimachinery,
// the apiserver library), so one link step and one copy on disk replace four (see README.md for
// the measured sizes and times).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// components maps a component's name to its entry point; each returns the process exit code.
var components = map[string]func(args []string) int{
	"kube-apiserver":          runAPIServer,
	"kube-controller-manager": runControllerManager,
	"kubectl":                 runKubectl,
	"etcd":                    runEtcd,
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: kube {kube-apiserver|kube-controller-manager|kubectl|etcd} [flags]")
	fmt.Fprintln(os.Stderr, "       (or call it through a link named after the component)")
}

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	args := os.Args
	if _, ok := components[name]; !ok {
		if len(os.Args) < 2 {
			usage()
			os.Exit(2)
		}
		name, args = os.Args[1], os.Args[1:]
	}
	run, ok := components[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "kube: unknown component %q\n", name)
		usage()
		os.Exit(2)
	}
	// Each component parses os.Args itself (cobra reads os.Args[1:]), so present it the command
	// line it would see as its own binary.
	os.Args = args
	os.Exit(run(args))
}
