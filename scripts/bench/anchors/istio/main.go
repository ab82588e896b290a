// Istio's own sidecar injector (istio.io/istio pkg/kube/inject, the webhook istiod serves at
// /inject), served on its own over TLS: the same-work anchor of scripts/bench/compare.sh.
//
// Configured as istiod is by default: the istio-sidecar-injector ConfigMap (config and values)
// rendered from the charts embedded in the module with the default profile (as the module's own
// pkg/kube/inject tests render it, operator/pkg/render.GenerateManifest), the default MeshConfig,
// no ProxyConfig resources, and a cluster (a fake client with no Nodes) for the native-sidecar
// node lookup. TLS 1.3 only, GOMAXPROCS from the environment (compare.sh sets 1).
package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"

	"istio.io/istio/operator/pkg/render"
	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/config/constants"
	"istio.io/istio/pkg/config/mesh"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/config/schema/gvk"
	"istio.io/istio/pkg/kube"
	"istio.io/istio/pkg/kube/inject"
	"istio.io/istio/pkg/kube/multicluster"
)

// injectorConfigMap renders the default installation and returns the istio-sidecar-injector
// ConfigMap's config and values keys.
func injectorConfigMap() (config, values string) {
	sets, _, err := render.GenerateManifest(nil, []string{"profile=default"}, false, nil, nil)
	if err != nil {
		log.Fatalf("rendering the default installation: %v", err)
	}
	for _, set := range sets {
		for _, o := range set.Manifests {
			if o.GetName() != "istio-sidecar-injector" || o.GetKind() != gvk.ConfigMap.Kind {
				continue
			}
			data, _ := o.Object["data"].(map[string]any)
			config, _ = data["config"].(string)
			values, _ = data["values"].(string)
			if config != "" && values != "" {
				return config, values
			}
		}
	}
	log.Fatal("the default installation has no istio-sidecar-injector ConfigMap")
	return "", ""
}

func main() {
	cert := flag.String("tls-cert", "", "serving certificate (PEM)")
	key := flag.String("tls-key", "", "serving key (PEM)")
	addr := flag.String("address", "127.0.0.1:0", "listen address")
	portFile := flag.String("port-file", "", "write the port here once listening")
	work := flag.String("work-dir", os.TempDir(), "where the rendered ConfigMap keys are written")
	flag.Parse()

	config, values := injectorConfigMap()
	configFile := filepath.Join(*work, "istio-anchor-config.yaml")
	valuesFile := filepath.Join(*work, "istio-anchor-values.json")
	for file, text := range map[string]string{configFile: config, valuesFile: values} {
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	watcher, err := inject.NewFileWatcher(configFile, valuesFile)
	if err != nil {
		log.Fatal(err)
	}
	meshConfig := mesh.DefaultMeshConfig()
	env := model.Environment{Watcher: meshwatcher.NewTestWatcher(meshConfig), ConfigStore: model.NewFakeStore()}
	env.SetPushContext(&model.PushContext{ProxyConfigs: model.GetProxyConfigs(env.ConfigStore, meshConfig)})
	clusters := multicluster.NewFakeController()
	mux := http.NewServeMux()
	wh, err := inject.NewWebhook(inject.WebhookParameters{
		Watcher: watcher, Env: &env, Mux: mux, MultiCluster: clusters,
	})
	if err != nil {
		log.Fatal(err)
	}
	stop := make(chan struct{})
	client := kube.NewFakeClient()
	clusters.Add(constants.DefaultClusterName, client, stop)
	client.RunAndWait(stop)
	wh.Run(stop)

	pair, err := tls.LoadX509KeyPair(*cert, *key)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	if *portFile != "" {
		port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
		if err := os.WriteFile(*portFile, []byte(port), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	server := &http.Server{Handler: mux, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13}}
	log.Fatal(server.ServeTLS(ln, "", ""))
}
