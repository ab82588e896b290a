// A mutating admission webhook written the obvious way with Go's standard library, the baseline
// of scripts/bench/compare.sh: decode the AdmissionReview, answer it with a two-operation JSON
// patch (a label and an annotation), TLS 1.3 only. No Kubernetes modules: the few fields it
// reads and writes are declared here.
package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
)

type review struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Request    *request  `json:"request,omitempty"`
	Response   *response `json:"response,omitempty"`
}

type request struct {
	UID    string          `json:"uid"`
	Object json.RawMessage `json:"object,omitempty"`
}

type response struct {
	UID       string `json:"uid"`
	Allowed   bool   `json:"allowed"`
	PatchType string `json:"patchType,omitempty"`
	Patch     []byte `json:"patch,omitempty"` // base64 in JSON, as []byte is
}

type operation struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}

// The pod's fields the patch depends on.
type pod struct {
	Metadata struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
}

func handle(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 3<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var in review
	if err := json.Unmarshal(body, &in); err != nil || in.Request == nil {
		http.Error(w, "invalid admission review", http.StatusBadRequest)
		return
	}
	var p pod
	if err := json.Unmarshal(in.Request.Object, &p); err != nil {
		http.Error(w, "invalid pod", http.StatusBadRequest)
		return
	}
	var ops []operation
	if p.Metadata.Labels == nil {
		ops = append(ops, operation{"add", "/metadata/labels", map[string]string{"bench/injected": "true"}})
	} else {
		ops = append(ops, operation{"add", "/metadata/labels/bench~1injected", "true"})
	}
	if p.Metadata.Annotations == nil {
		ops = append(ops, operation{"add", "/metadata/annotations", map[string]string{"bench/by": "go"}})
	} else {
		ops = append(ops, operation{"add", "/metadata/annotations/bench~1by", "go"})
	}
	patch, _ := json.Marshal(ops)
	out := review{APIVersion: in.APIVersion, Kind: in.Kind, Response: &response{
		UID: in.Request.UID, Allowed: true, PatchType: "JSONPatch", Patch: patch}}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

func main() {
	cert := flag.String("tls-cert", "", "serving certificate (PEM)")
	key := flag.String("tls-key", "", "serving key (PEM)")
	addr := flag.String("address", "127.0.0.1:0", "listen address")
	portFile := flag.String("port-file", "", "write the port here once listening")
	flag.Parse()
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
	server := &http.Server{Handler: http.HandlerFunc(handle), TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS13}}
	log.Fatal(server.ServeTLS(ln, "", ""))
}
