package main

import (
	"os"

	_ "k8s.io/client-go/plugin/pkg/client/auth" // client auth plugins, as upstream's main
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

// runKubectl is k8s.io/kubernetes/cmd/kubectl/kubectl.go's main: the verbosity is read from the
// arguments first so that klog honours it while the command is built (plugins, .kuberc).
func runKubectl(_ []string) int {
	logs.GlogSetter(cmd.GetLogVerbosity(os.Args)) // nolint:errcheck
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err) // prints the error and exits non-zero, as kubectl does
	}
	return 0
}
