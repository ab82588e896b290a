package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The Gateway API v1.0.0-rc1 CRDs and the objects apiextensions-apiserver's own ratcheting
// tests use (test/integration/ratcheting_test_cases in the module): real CRDs with defaults,
// printer columns and x-kubernetes-validations rules, and examples the Gateway API project wrote.
func gatewayCases(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/apiextensions-apiserver").Output()
	if err != nil {
		t.Skipf("go list -m k8s.io/apiextensions-apiserver: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "test", "integration", "ratcheting_test_cases")
}

// yamlDocuments reads every document of a YAML stream as JSON.
func yamlDocuments(t *testing.T, path string) []json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var docs []json.RawMessage
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if string(j) == "null" {
			continue
		}
		docs = append(docs, j)
	}
	return docs
}

func wire(t *testing.T, response map[string]any, err error) map[string]any {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(response)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func call(t *testing.T, s *server, req *request) map[string]any {
	t.Helper()
	response, err := s.dispatch(req)
	return wire(t, response, err)
}

func at(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// establish creates `crd` as the registry does and applies the controllers' status writes, with
// a uid and resourceVersion as the store gives them.
func establish(t *testing.T, s *server, crd json.RawMessage, others []json.RawMessage, uid string) json.RawMessage {
	t.Helper()
	created := call(t, s, &request{Op: "admitCustomResourceDefinition", Object: crd})
	if created["status"] != nil {
		t.Fatalf("refused: %v", created["status"])
	}
	object := created["object"].(map[string]any)
	object["metadata"].(map[string]any)["uid"] = uid
	object["metadata"].(map[string]any)["resourceVersion"] = "1"
	writes := call(t, s, &request{Op: "customResourceDefinitionStatus", Object: mustJSON(t, object), CRDs: others})
	list := writes["writes"].([]any)
	if len(list) == 0 {
		return mustJSON(t, object)
	}
	last := list[len(list)-1].(map[string]any)
	last["metadata"].(map[string]any)["resourceVersion"] = "2"
	return mustJSON(t, last)
}

func gatewayCRDs(t *testing.T, s *server) map[string]json.RawMessage {
	t.Helper()
	byKind := map[string]json.RawMessage{}
	var stored []json.RawMessage
	for i, crd := range yamlDocuments(t, filepath.Join(gatewayCases(t), "crds", "standard-install.yaml")) {
		if at(mustMap(t, crd), "kind") != "CustomResourceDefinition" {
			continue
		}
		established := establish(t, s, crd, stored, "uid-"+string(rune('a'+i)))
		stored = append(stored, established)
		byKind[at(mustMap(t, established), "spec", "names", "kind").(string)] = established
	}
	return byKind
}

func mustMap(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// Each CRD is admitted, named and established as kube-apiserver's controllers do it.
func TestGatewayCRDsAreEstablished(t *testing.T) {
	s := newServer()
	crds := gatewayCRDs(t, s)
	if len(crds) != 4 {
		t.Fatalf("got %d CRDs, want GatewayClass, Gateway, HTTPRoute, ReferenceGrant", len(crds))
	}
	for kind, crd := range crds {
		conditions := map[string]string{}
		for _, c := range at(mustMap(t, crd), "status", "conditions").([]any) {
			conditions[at(c, "type").(string)] = at(c, "status").(string) + " " + at(c, "reason").(string)
		}
		if conditions["NamesAccepted"] != "True NoConflicts" || conditions["Established"] != "True InitialNamesAccepted" {
			t.Errorf("%s: conditions %v", kind, conditions)
		}
		if at(mustMap(t, crd), "status", "acceptedNames", "kind") != kind {
			t.Errorf("%s: acceptedNames %v", kind, at(mustMap(t, crd), "status", "acceptedNames"))
		}
		if at(mustMap(t, crd), "metadata", "generation") != float64(1) {
			t.Errorf("%s: generation %v", kind, at(mustMap(t, crd), "metadata", "generation"))
		}
	}
}

// A CRD whose names another CRD of the group has taken: the naming controller's conflict, and no
// Established condition.
func TestCRDNameConflict(t *testing.T) {
	s := newServer()
	crds := gatewayCRDs(t, s)
	var others []json.RawMessage
	for _, c := range crds {
		others = append(others, c)
	}
	clash := mustMap(t, crds["GatewayClass"])
	delete(clash, "status")
	clash["metadata"] = map[string]any{"name": "gatewayclasses2.gateway.networking.k8s.io",
		"annotations": at(clash, "metadata", "annotations")}
	names := clash["spec"].(map[string]any)["names"].(map[string]any)
	names["plural"] = "gatewayclasses2"
	names["singular"] = "gatewayclass2"
	names["shortNames"] = []any{"gc2"}
	names["listKind"] = "GatewayClass2List"
	established := mustMap(t, establish(t, s, mustJSON(t, clash), others, "uid-clash"))
	var conditions []string
	for _, c := range at(established, "status", "conditions").([]any) {
		conditions = append(conditions, at(c, "type").(string)+"="+at(c, "status").(string)+" "+
			at(c, "reason").(string)+": "+at(c, "message").(string))
	}
	sort.Strings(conditions)
	want := []string{
		`Established=False NotAccepted: not all names are accepted`,
		`NamesAccepted=False KindConflict: "GatewayClass" is already in use`,
	}
	if strings.Join(conditions, "\n") != strings.Join(want, "\n") {
		t.Errorf("conditions:\n%s\nwant:\n%s", strings.Join(conditions, "\n"), strings.Join(want, "\n"))
	}
}

// The registry's validation of a CRD: the 422 kubectl prints.
func TestInvalidCRDIsRefused(t *testing.T) {
	s := newServer()
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",` +
		`"metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced",` +
		`"names":{"plural":"gadgets","kind":"Widget"},"versions":[{"name":"v1","served":true,"storage":true,` +
		`"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-validations":[{"rule":"self.spec.x >"}]}}}]}}`
	response := call(t, s, &request{Op: "admitCustomResourceDefinition", Object: json.RawMessage(crd)})
	message, _ := at(response, "status", "message").(string)
	for _, want := range []string{
		`CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: [`,
		`metadata.name: Invalid value: "widgets.example.com": must be spec.names.plural+"."+spec.group`,
		// The internal version holds a schema shared by every version in spec.validation, and
		// the path says so (as kubectl shows it for a v1 CRD).
		`spec.validation.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: {"Rule":"self.spec.x \u003e",`,
		`compilation failed: ERROR: <input>:1:14: Syntax error: mismatched input '<EOF>'`,
	} {
		if !strings.Contains(message, want) {
			t.Errorf("message lacks %q:\n%s", want, message)
		}
	}
	if at(response, "status", "code") != float64(422) {
		t.Errorf("code %v", at(response, "status", "code"))
	}
}

func admitCR(t *testing.T, s *server, crd json.RawMessage, object json.RawMessage, old json.RawMessage, subresource string) (map[string]any, []string) {
	t.Helper()
	decoded := call(t, s, &request{Op: "admitCustomResource", Step: "decode", CRD: crd, Object: object})
	if decoded["status"] != nil {
		return decoded, nil
	}
	var unknown []string
	for _, u := range asSlice(decoded["unknownFields"]) {
		unknown = append(unknown, u.(string))
	}
	validated := call(t, s, (&request{Op: "admitCustomResource", Step: "validate", CRD: crd,
		Object: mustJSON(t, decoded["object"]), OldObject: old, Subresource: subresource}))
	return validated, unknown
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// Every valid example of the Gateway API is admitted (defaulted and validated by the CRDs' schemas
// and CEL rules); the invalid ones their CRDs can judge are refused with a 422.
func TestGatewayExamples(t *testing.T) {
	s := newServer()
	crds := gatewayCRDs(t, s)
	root := gatewayCases(t)
	admitted, refused, invalidAdmitted := 0, 0, 0
	messages := map[string]string{}
	for _, dir := range []string{"valid", "invalid"} {
		err := filepath.Walk(filepath.Join(root, dir), func(path string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() {
				return err
			}
			for _, doc := range yamlDocuments(t, path) {
				kind, _ := at(mustMap(t, doc), "kind").(string)
				crd, ok := crds[kind]
				if !ok {
					continue // Namespaces, Services
				}
				if at(mustMap(t, crd), "spec", "scope") == "Namespaced" {
					// The request's namespace, as the handler sets it before decoding.
					m := mustMap(t, doc)
					if at(m, "metadata", "namespace") == nil {
						m["metadata"].(map[string]any)["namespace"] = "default"
					}
					doc = mustJSON(t, m)
				}
				response, _ := admitCR(t, s, crd, doc, nil, "")
				name, _ := filepath.Rel(root, path)
				if response["status"] != nil {
					refused++
					messages[name] = at(response, "status", "message").(string)
					if dir == "valid" {
						t.Errorf("%s refused: %v", name, messages[name])
					} else if at(response, "status", "code") != float64(422) {
						t.Errorf("%s: %v", name, response["status"])
					}
				} else {
					admitted++
					if dir == "invalid" {
						messages[name] = "admitted"
						invalidAdmitted++
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d admitted, %d refused, %d invalid admitted", admitted, refused, invalidAdmitted)
	// All 29 invalid documents are refused and all 57 valid ones pass.
	if refused != 29 || admitted != 57 || invalidAdmitted != 0 {
		t.Errorf("%d refused, %d admitted (%d invalid); want 29 and 57", refused, admitted, invalidAdmitted)
	}
	// One refusal in full: an x-kubernetes-validations rule of HTTPRoute v1beta1.
	const want = `HTTPRoute.gateway.networking.k8s.io "invalid-filter-duplicate" is invalid: spec.rules[0].filters: Invalid value: RequestHeaderModifier filter cannot be repeated`
	if got := messages[filepath.Join("invalid", "httproute", "invalid-filter-duplicate.yaml")]; got != want {
		t.Errorf("invalid-filter-duplicate.yaml:\n got %s\nwant %s", got, want)
	}
}

// Decoding prunes unknown fields (and names them, for fieldValidation) and applies the schema's
// defaults; on update the status subresource keeps the spec and the generation moves with the spec.
func TestCustomResourceDecodeAndUpdate(t *testing.T) {
	s := newServer()
	crd := gatewayCRDs(t, s)["Gateway"]
	gateway := `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Gateway","metadata":{"name":"g","namespace":"default"},` +
		`"spec":{"gatewayClassName":"c","bogus":1,"listeners":[{"name":"http","port":80,"protocol":"HTTP"}]},"status":{"x":1}}`
	created, unknown := admitCR(t, s, crd, json.RawMessage(gateway), nil, "")
	if created["status"] != nil {
		t.Fatalf("refused: %v", created["status"])
	}
	if strings.Join(unknown, ",") != "spec.bogus,status.x" {
		t.Errorf("unknown fields %v", unknown)
	}
	object := created["object"].(map[string]any)
	if at(object, "spec", "bogus") != nil {
		t.Errorf("spec.bogus kept")
	}
	// The schema's default (allowedRoutes: namespaces from Same) and the strategy's generation.
	listener := asSlice(at(object, "spec", "listeners"))[0]
	if at(listener, "allowedRoutes", "namespaces", "from") != "Same" {
		t.Errorf("listener not defaulted: %v", listener)
	}
	if at(object, "metadata", "generation") != float64(1) {
		t.Errorf("generation %v", at(object, "metadata", "generation"))
	}
	// A status update changes only the status; a spec update moves the generation.
	object["metadata"].(map[string]any)["resourceVersion"] = "5"
	old := mustJSON(t, object)
	changed := mustMap(t, old)
	changed["spec"].(map[string]any)["gatewayClassName"] = "other"
	changed["status"] = map[string]any{"conditions": []any{}}
	status, _ := admitCR(t, s, crd, mustJSON(t, changed), old, "status")
	if status["status"] != nil {
		t.Fatalf("status update refused: %v", status["status"])
	}
	if at(status, "object", "spec", "gatewayClassName") != "c" || at(status, "object", "metadata", "generation") != float64(1) {
		t.Errorf("status update: %v", status["object"])
	}
	spec, _ := admitCR(t, s, crd, mustJSON(t, changed), old, "")
	if at(spec, "object", "spec", "gatewayClassName") != "other" || at(spec, "object", "metadata", "generation") != float64(2) {
		t.Errorf("spec update: %v", spec["object"])
	}
}

// kubectl get's Table: the version's printer columns, with JSONPath cells.
func TestCustomResourceTable(t *testing.T) {
	s := newServer()
	crd := gatewayCRDs(t, s)["GatewayClass"]
	object := `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"GatewayClass","metadata":{"name":"istio",` +
		`"creationTimestamp":"2026-01-01T00:00:00Z"},"spec":{"controllerName":"istio.io/gateway-controller"},` +
		`"status":{"conditions":[{"type":"Accepted","status":"True"}]}}`
	table := call(t, s, (&request{Op: "customResourceTable", CRD: crd, Version: "v1", ResourceVersion: "9",
		Objects: []json.RawMessage{json.RawMessage(object)}}))
	var headers []string
	for _, c := range asSlice(at(table, "table", "columnDefinitions")) {
		headers = append(headers, at(c, "name").(string))
	}
	if strings.Join(headers, ",") != "Name,Controller,Accepted,Age,Description" {
		t.Errorf("headers %v", headers)
	}
	rows := asSlice(at(table, "table", "rows"))
	if len(rows) != 1 {
		t.Fatalf("rows %v", rows)
	}
	cells := asSlice(at(rows[0], "cells"))
	if cells[0] != "istio" || cells[1] != "istio.io/gateway-controller" || cells[2] != "True" || cells[4] != nil {
		t.Errorf("cells %v", cells)
	}
	if at(table, "table", "metadata", "resourceVersion") != "9" {
		t.Errorf("resourceVersion %v", at(table, "table", "metadata"))
	}
}
