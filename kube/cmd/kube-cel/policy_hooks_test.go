package main

import (
	"encoding/json"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
)

func rawJSON(t *testing.T, text string) json.RawMessage {
	t.Helper()
	if !json.Valid([]byte(text)) {
		t.Fatalf("invalid JSON in the test: %s", text)
	}
	return json.RawMessage(text)
}

func testPolicyRequest(t *testing.T) *policyRequest {
	t.Helper()
	r, err := newPolicyRequest(&request{
		Op: "dispatchValidatingPolicies",
		Attributes: &attributesJSON{Operation: "CREATE",
			Kind:     groupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource: groupVersionResource{Version: "v1", Resource: "configmaps"}},
		Params: []paramKindJSON{{APIVersion: "v1", Kind: "ConfigMap", Resource: "configmaps", Namespaced: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func policyJSON(kind, name, paramKind string) string {
	return `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"` + kind + `","metadata":{"name":"` +
		name + `"},"spec":{` + paramKind + `"matchConstraints":{"resourceRules":[{"apiGroups":[""],` +
		`"apiVersions":["v1"],"operations":["CREATE"],"resources":["configmaps"]}]}}}`
}

func bindingJSON(kind, name, policy string) string {
	return `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"` + kind + `","metadata":{"name":"` +
		name + `"},"spec":{"policyName":"` + policy + `"}}`
}

type hookSummary struct {
	policy    string
	bindings  []string
	configErr string
	params    bool
}

func summarize[P runtime.Object, B runtime.Object, E generic.Evaluator](hooks []generic.PolicyHook[P, B, E],
	policyName func(P) string, bindingName func(B) string) []hookSummary {
	var out []hookSummary
	for _, h := range hooks {
		s := hookSummary{policy: policyName(h.Policy), params: h.ParamInformer != nil}
		for _, b := range h.Bindings {
			s.bindings = append(s.bindings, bindingName(b))
		}
		if h.ConfigurationError != nil {
			s.configErr = h.ConfigurationError.Error()
		}
		out = append(out, s)
	}
	return out
}

// Both plugins' stores build the same hooks from the same objects: policies by name, each with
// its bindings by name; a binding without its policy and a policy whose paramKind apiVersion
// does not parse are left out; an unserved paramKind is a configuration error.
func TestPolicyStoreHooksBothPlugins(t *testing.T) {
	for _, kind := range []string{"ValidatingAdmissionPolicy", "MutatingAdmissionPolicy"} {
		t.Run(kind, func(t *testing.T) {
			policies := []json.RawMessage{
				rawJSON(t, policyJSON(kind, "zeta", "")),
				rawJSON(t, policyJSON(kind, "alpha", `"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},`)),
				rawJSON(t, policyJSON(kind, "unserved", `"paramKind":{"apiVersion":"example.com/v1","kind":"Missing"},`)),
				rawJSON(t, policyJSON(kind, "badversion", `"paramKind":{"apiVersion":"a/b/c","kind":"X"},`)),
				rawJSON(t, policyJSON(kind, "unbound", "")),
			}
			binding := kind + "Binding"
			bindings := []json.RawMessage{
				rawJSON(t, bindingJSON(binding, "z2", "zeta")),
				rawJSON(t, bindingJSON(binding, "orphan", "nosuchpolicy")),
				rawJSON(t, bindingJSON(binding, "a1", "zeta")),
				rawJSON(t, bindingJSON(binding, "b", "alpha")),
				rawJSON(t, bindingJSON(binding, "u", "unserved")),
				rawJSON(t, bindingJSON(binding, "v", "badversion")),
			}
			var got []hookSummary
			var err error
			s := newServer()
			if kind == "ValidatingAdmissionPolicy" {
				hooks, e := s.policies.hooks(testPolicyRequest(t), policies, bindings)
				got, err = summarize(hooks, func(p *admissionregistrationv1.ValidatingAdmissionPolicy) string { return p.Name },
					func(b *admissionregistrationv1.ValidatingAdmissionPolicyBinding) string { return b.Name }), e
			} else {
				hooks, e := s.mutating.hooks(testPolicyRequest(t), policies, bindings)
				got, err = summarize(hooks, func(p *admissionregistrationv1.MutatingAdmissionPolicy) string { return p.Name },
					func(b *admissionregistrationv1.MutatingAdmissionPolicyBinding) string { return b.Name }), e
			}
			if err != nil {
				t.Fatal(err)
			}
			want := []hookSummary{
				{policy: "alpha", bindings: []string{"b"}, params: true},
				{policy: "unserved", bindings: []string{"u"},
					configErr: "failed to find resource referenced by paramKind: 'example.com/v1, Kind=Missing'"},
				{policy: "zeta", bindings: []string{"a1", "z2"}},
			}
			if len(got) != len(want) {
				t.Fatalf("hooks %+v, want %+v", got, want)
			}
			for i := range want {
				if got[i].policy != want[i].policy || strings.Join(got[i].bindings, ",") != strings.Join(want[i].bindings, ",") ||
					got[i].configErr != want[i].configErr || got[i].params != want[i].params {
					t.Errorf("hook %d: %+v, want %+v", i, got[i], want[i])
				}
			}
		})
	}
}

// A policy or binding that does not decode names the request's list it came from.
func TestPolicyStoreHooksDecodeErrors(t *testing.T) {
	s := newServer()
	_, err := s.policies.hooks(testPolicyRequest(t), []json.RawMessage{rawJSON(t, `{"spec":{"failurePolicy":7}}`)}, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "policies: ") {
		t.Errorf("policy decode error %v, want one starting with \"policies: \"", err)
	}
	_, err = s.mutating.hooks(testPolicyRequest(t), nil, []json.RawMessage{rawJSON(t, `{"spec":{"policyName":7}}`)})
	if err == nil || !strings.HasPrefix(err.Error(), "bindings: ") {
		t.Errorf("binding decode error %v, want one starting with \"bindings: \"", err)
	}
}
