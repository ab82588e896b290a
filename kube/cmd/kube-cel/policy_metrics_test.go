package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// A denial and an admission by the dispatcher are counted under upstream's names and labels.
func TestPolicyMetricsCountTheDispatchersChecks(t *testing.T) {
	s := newServer()
	policy := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",` +
		`"metadata":{"name":"metrics-p"},"spec":{"failurePolicy":"Fail","matchConstraints":{"resourceRules":` +
		`[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]},` +
		`"validations":[{"expression":"object.metadata.name != 'bad'"}]}}`
	binding := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicyBinding",` +
		`"metadata":{"name":"metrics-b"},"spec":{"policyName":"metrics-p","validationActions":["Deny"]}}`
	for _, name := range []string{"bad", "good"} {
		req := &request{Op: "dispatchValidatingPolicies",
			Policies: []json.RawMessage{rawJSON(t, policy)}, Bindings: []json.RawMessage{rawJSON(t, binding)},
			Attributes: &attributesJSON{Operation: "CREATE", Name: name, Namespace: "default",
				Kind:     groupVersionKind{Version: "v1", Kind: "ConfigMap"},
				Resource: groupVersionResource{Version: "v1", Resource: "configmaps"},
				Object: rawJSON(t, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"`+name+
					`","namespace":"default"}}`),
				UserInfo: userInfoJSON{Username: "admin", Groups: []string{"system:masters"}}}}
		response, err := s.dispatchValidatingPolicies(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, denied := response["status"]; denied != (name == "bad") {
			t.Fatalf("%s: response %v", name, response)
		}
	}
	response, err := policyMetrics()
	if err != nil {
		t.Fatal(err)
	}
	text := response["text"].(string)
	for _, want := range []string{
		`apiserver_validating_admission_policy_check_total{enforcement_action="deny",error_type="no_error",policy="metrics-p",policy_binding="metrics-b"} 1`,
		`apiserver_validating_admission_policy_check_total{enforcement_action="allow",error_type="no_error",policy="metrics-p",policy_binding="metrics-b"} 1`,
		`apiserver_validating_admission_policy_check_duration_seconds_count{enforcement_action="deny",error_type="no_error",policy="metrics-p",policy_binding="metrics-b"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "apiserver_admission_") {
		t.Errorf("families other than the policies' in\n%s", text)
	}
}
