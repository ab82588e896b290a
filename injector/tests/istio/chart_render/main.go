// Renders the istio-sidecar-injector and istio ConfigMaps of an Istio source tree's charts as
// Istio's own TestInjection does (pkg/kube/inject/webhook_test.go getInjectionSettings:
// operator/pkg/render.GenerateManifest with installPackagePath=<tree>/manifests, profile=empty,
// components.pilot.enabled=true), for the tests that compare the injector with Istio's goldens
// (../upstream_support.h). Nothing of Istio is committed: the tree is read from the Go module
// cache when the tests run (render.sh).
//
//	chart_render -source <istio tree> -out <dir>   # writes <dir>/istio-sidecar-injector.yaml, <dir>/istio.yaml
package main

import (
	"flag"
	"log"
	"os"
	"path/filepath"

	"istio.io/istio/operator/pkg/render"
	"sigs.k8s.io/yaml"
)

func main() {
	source := flag.String("source", "", "an Istio source tree (holding manifests/)")
	out := flag.String("out", "", "where the ConfigMaps are written")
	flag.Parse()
	if *source == "" || *out == "" {
		log.Fatal("usage: chart_render -source <istio tree> -out <dir>")
	}
	sets := []string{
		"installPackagePath=" + filepath.Join(*source, "manifests"),
		"profile=empty",
		"components.pilot.enabled=true",
	}
	manifests, _, err := render.GenerateManifest(nil, sets, false, nil, nil)
	if err != nil {
		log.Fatalf("rendering %s: %v", *source, err)
	}
	want := map[string]string{
		"istio-sidecar-injector": "istio-sidecar-injector.yaml",
		"istio":                  "istio.yaml",
	}
	for _, set := range manifests {
		for _, o := range set.Manifests {
			file, ok := want[o.GetName()]
			if !ok || o.GetKind() != "ConfigMap" {
				continue
			}
			text, err := yaml.Marshal(o.Object)
			if err != nil {
				log.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(*out, file), text, 0o644); err != nil {
				log.Fatal(err)
			}
			delete(want, o.GetName())
		}
	}
	for name := range want {
		log.Fatalf("the chart of %s rendered no ConfigMap %s", *source, name)
	}
}
