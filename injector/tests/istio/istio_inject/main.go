// Injects Pod and workload files with Istio's own code, as `istioctl kube-inject` does
// (istioctl/pkg/kubeinject InjectCommand: inject.ParseTemplates, inject.NewValuesConfig and
// inject.IntoResourceFile from pkg/kube/inject, no injector service), given the rendered
// istio-sidecar-injector and istio ConfigMaps (../chart_render). The oracle of
// compare.sh: what Istio itself does with an object and with its own output again.
// Nothing of Istio is committed: the module is read from the Go module cache (compare.sh
// builds it with GOPROXY=off).
//
//	istio_inject -config <istio-sidecar-injector.yaml> -mesh <istio.yaml> <in.yaml> > out.yaml
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/kube/inject"
	istiolog "istio.io/istio/pkg/log"
	"sigs.k8s.io/yaml"
)

// configMapData reads a ConfigMap file's data key.
func configMapData(file, key string) string {
	text, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	var cm struct {
		Data map[string]string `json:"data"`
	}
	if err := yaml.Unmarshal(text, &cm); err != nil {
		log.Fatalf("%s: %v", file, err)
	}
	value, ok := cm.Data[key]
	if !ok {
		log.Fatalf("%s: the ConfigMap has no data.%s", file, key)
	}
	return value
}

func main() {
	config := flag.String("config", "", "the istio-sidecar-injector ConfigMap (keys config, values)")
	meshFile := flag.String("mesh", "", "the istio ConfigMap (key mesh)")
	revision := flag.String("revision", "", "the revision (kube-inject renders \"default\" as \"\")")
	flag.Parse()
	// Istio's logger writes to stdout by default; kube-inject sends it to stderr (log_target).
	logOptions := istiolog.DefaultOptions()
	logOptions.OutputPaths = []string{"stderr"}
	if err := istiolog.Configure(logOptions); err != nil {
		log.Fatal(err)
	}
	if *config == "" || *meshFile == "" || flag.NArg() != 1 {
		log.Fatal("usage: istio_inject -config <injector ConfigMap> -mesh <mesh ConfigMap> <in.yaml>")
	}
	injectConfig, err := inject.UnmarshalConfig([]byte(configMapData(*config, "config")))
	if err != nil {
		log.Fatalf("%s: %v", *config, err)
	}
	templates, err := inject.ParseTemplates(injectConfig.RawTemplates)
	if err != nil {
		log.Fatalf("%s: %v", *config, err)
	}
	values, err := inject.NewValuesConfig(configMapData(*config, "values"))
	if err != nil {
		log.Fatalf("%s: %v", *config, err)
	}
	meshConfig, err := mesh.ApplyMeshConfigDefaults(configMapData(*meshFile, "mesh"))
	if err != nil {
		log.Fatalf("%s: %v", *meshFile, err)
	}
	in, err := os.Open(flag.Arg(0))
	if err != nil {
		log.Fatal(err)
	}
	defer in.Close()
	err = inject.IntoResourceFile(nil, templates, values, *revision, meshConfig, in, os.Stdout,
		func(warning string) { fmt.Fprint(os.Stderr, warning) })
	if err != nil {
		log.Fatalf("%s: %v", flag.Arg(0), err)
	}
}
