package main

import (
	"encoding/json"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
)

func typeCheckRequest(t *testing.T, policy string) map[string]any {
	t.Helper()
	s := newServer()
	response, err := s.typeCheckValidatingPolicy(&request{Op: "typeCheckValidatingPolicy", Object: rawJSON(t, policy),
		Resources: []servedResourceJSON{
			{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true},
			{Group: "apps", Version: "v1", Resource: "deployments/scale", Kind: "Scale", Namespaced: true},
			{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true},
		}})
	if err != nil {
		t.Fatal(err)
	}
	return response
}

func deploymentPolicy(generation, observed int, validations string) string {
	return `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",` +
		`"metadata":{"name":"p","generation":` + itoa(generation) + `},"spec":{"matchConstraints":{"resourceRules":` +
		`[{"apiGroups":["apps"],"apiVersions":["v1"],"operations":["CREATE"],"resources":["deployments"]}]},` +
		`"validations":` + validations + `},"status":{"observedGeneration":` + itoa(observed) + `}}`
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// The warnings of upstream's TypeChecker for a Deployment policy: a field the type does not have
// and a comparison of int with string, each at its expression's field path; messageExpression
// checked too.
func TestTypeCheckValidatingPolicyWarnings(t *testing.T) {
	response := typeCheckRequest(t, deploymentPolicy(3, 1, `[`+
		`{"expression":"object.spec.replicas > 1"},`+
		`{"expression":"object.spec.replicas > 'one'"},`+
		`{"expression":"object.spec.nosuchfield == 1","messageExpression":"object.metadata.name + 1"}]`))
	status, ok := response["status"].(admissionregistrationv1.ValidatingAdmissionPolicyStatus)
	if !ok {
		t.Fatalf("no status in %v", response)
	}
	if status.ObservedGeneration != 3 {
		t.Errorf("observedGeneration %d, want 3", status.ObservedGeneration)
	}
	warnings := status.TypeChecking.ExpressionWarnings
	wantRefs := []string{"spec.validations[1].expression", "spec.validations[2].expression", "spec.validations[2].messageExpression"}
	if len(warnings) != len(wantRefs) {
		t.Fatalf("warnings %+v, want fieldRefs %v", warnings, wantRefs)
	}
	for i, ref := range wantRefs {
		if warnings[i].FieldRef != ref {
			t.Errorf("warnings[%d].fieldRef %q, want %q", i, warnings[i].FieldRef, ref)
		}
	}
	// The text is the checker's: the kind it was checked against, then CEL's error.
	const want = "apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload for '_>_' applied to '(int, string)'\n | object.spec.replicas > 'one'\n | .....................^\n"
	if warnings[0].Warning != want {
		t.Errorf("warnings[0].warning %q, want %q", warnings[0].Warning, want)
	}
}

// A policy the controller has seen at this generation gets no new status; one without
// problems gets observedGeneration alone.
func TestTypeCheckValidatingPolicyNoWarnings(t *testing.T) {
	if response := typeCheckRequest(t, deploymentPolicy(2, 2, `[{"expression":"object.spec.replicas > 'x'"}]`)); len(response) != 0 {
		t.Errorf("observed generation: %v, want {}", response)
	}
	response := typeCheckRequest(t, deploymentPolicy(1, 0, `[{"expression":"object.spec.replicas > 1"}]`))
	text, err := json.Marshal(response)
	if err != nil {
		t.Fatal(err)
	}
	if string(text) != `{"status":{"observedGeneration":1}}` {
		t.Errorf("status %s", text)
	}
}
