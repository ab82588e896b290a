package main

import (
	_ "time/tzdata" // for timeZone support in CronJob, as cmd/kube-apiserver/apiserver.go

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format, as upstream's main
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream's main
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric, as upstream's main
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

// runAPIServer is k8s.io/kubernetes/cmd/kube-apiserver/apiserver.go's main.
func runAPIServer(_ []string) int {
	return cli.Run(apiserver.NewAPIServerCommand())
}

// runControllerManager is k8s.io/kubernetes/cmd/kube-controller-manager/controller-manager.go's
// main.
func runControllerManager(_ []string) int {
	return cli.Run(controllermanager.NewControllerManagerCommand())
}
