package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// The dispatcher's counts under upstream's names and labels, with upstream's quirks
// (validating/dispatcher.go, errors.go ErrorType): a validation that is false is a denial counted
// with error_type "invalid_error" (only an admitted evaluation is "no_error"), and an admission
// is counted only when its evaluation failed, so the allowed request adds nothing.
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
			Namespace: rawJSON(t, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"default"}}`),
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
		`apiserver_validating_admission_policy_check_total{enforcement_action="deny",error_type="invalid_error",policy="metrics-p",policy_binding="metrics-b"} 1`,
		`apiserver_validating_admission_policy_check_duration_seconds_count{enforcement_action="deny",error_type="invalid_error",policy="metrics-p",policy_binding="metrics-b"} 1`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, `enforcement_action="allow"`) {
		t.Errorf("an admission without an evaluation error was counted:\n%s", text)
	}
	if strings.Contains(text, "apiserver_admission_") {
		t.Errorf("families other than the policies' in\n%s", text)
	}
}
