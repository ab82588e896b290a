package main

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const paramPolicy = `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingAdmissionPolicy",` +
	`"metadata":{"name":"p"},"spec":{"paramKind":{"apiVersion":"v1","kind":"ConfigMap"},` +
	`"matchConstraints":{"resourceRules":[{"apiGroups":[""],"apiVersions":["v1"],"operations":["CREATE"],` +
	`"resources":["pods"]}]},"validations":[{"expression":"true"}]}}`

var servedConfigMaps = []servedResourceJSON{{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true}}

func admitAs(t *testing.T, s *server, kind, object, old string, u *userInfoJSON) map[string]any {
	t.Helper()
	req := &request{Op: "admitPolicyObject", Kind: kind, Object: json.RawMessage(object), UserInfo: u,
		Resources: servedConfigMaps}
	if old != "" {
		req.OldObject = json.RawMessage(old)
	}
	response, err := s.admitPolicyObject(req)
	if err != nil {
		t.Fatal(err)
	}
	return response
}

func forbiddenMessage(response map[string]any) string {
	if status, ok := response["status"].(metav1.Status); ok {
		return status.Message
	}
	return ""
}

// The registry strategy's paramKind check (validatingadmissionpolicy/authz.go): "get" on every
// object of the resolved resource, by the simulator's authorizer; system:masters skips it; an
// update that keeps the paramKind is not checked again; without a user nothing is checked.
func TestAdmitPolicyObjectAuthorizesTheParamKind(t *testing.T) {
	for _, kind := range []string{kindPolicy, kindMutatingPolicy} {
		t.Run(kind, func(t *testing.T) {
			policy := strings.Replace(paramPolicy, `"kind":"ValidatingAdmissionPolicy"`, `"kind":"`+kind+`"`, 1)
			if kind == kindMutatingPolicy {
				policy = strings.Replace(policy, `"validations":[{"expression":"true"}]`,
					`"reinvocationPolicy":"Never","mutations":[{"patchType":"JSONPatch","jsonPatch":{"expression":"[JSONPatch{op: \"test\", path: \"/metadata/name\", value: \"x\"}]"}}]`, 1)
			}
			s := newServer()
			jane := &userInfoJSON{Username: "jane", Groups: []string{"developers"}}
			admin := &userInfoJSON{Username: "admin", Groups: []string{"system:masters"}}

			if message := forbiddenMessage(admitAs(t, s, kind, policy, "", admin)); message != "" {
				t.Errorf("system:masters: %s", message)
			}
			if message := forbiddenMessage(admitAs(t, s, kind, policy, "", nil)); message != "" {
				t.Errorf("no user: %s", message)
			}
			want := kind + `.admissionregistration.k8s.io "p" is invalid: spec.paramKind: Forbidden: user &{jane  [developers] map[]} ` +
				`must have "get" permission on all objects of the referenced paramKind (kind=ConfigMap, apiVersion=v1)`
			if message := forbiddenMessage(admitAs(t, s, kind, policy, "", jane)); message != want {
				t.Errorf("jane: %q, want %q", message, want)
			}

			// Allowed by a rule on the resolved resource, every name and namespace.
			s.authz = &rulesAuthorizer{rules: []authorizerRule{{Users: []string{"jane"}, Verbs: []string{"get"},
				APIGroups: []string{""}, Resources: []string{"configmaps"}, Names: []string{"*"},
				Namespaces: []string{"*"}, Decision: "Allow"}}}
			created := admitAs(t, s, kind, policy, "", jane)
			if message := forbiddenMessage(created); message != "" {
				t.Fatalf("jane with get on configmaps: %s", message)
			}
			stored, err := json.Marshal(created["object"])
			if err != nil {
				t.Fatal(err)
			}

			// An update keeping the paramKind is not authorized again.
			s.authz = &rulesAuthorizer{}
			updated := strings.Replace(string(stored), `"name":"p"`, `"name":"p","labels":{"a":"b"}`, 1)
			if message := forbiddenMessage(admitAs(t, s, kind, updated, string(stored), jane)); message != "" {
				t.Errorf("update keeping the paramKind: %s", message)
			}
		})
	}
}

// The binding strategies' paramRef check (validatingadmissionpolicybinding/authz.go and the
// mutating one): "get" on the named param ("list" without a name) of the bound policy's paramKind
// resource; every resource when the policy is not found; system:masters and a binding without
// paramRef skip it; an update keeping paramRef and policyName is not checked again.
func TestAdmitPolicyObjectAuthorizesTheParamRef(t *testing.T) {
	for _, kinds := range [][2]string{{kindBinding, kindPolicy}, {kindMutatingBinding, kindMutatingPolicy}} {
		bindingKind, policyKind := kinds[0], kinds[1]
		t.Run(bindingKind, func(t *testing.T) {
			policy := strings.Replace(paramPolicy, `"kind":"ValidatingAdmissionPolicy"`, `"kind":"`+policyKind+`"`, 1)
			binding := `{"apiVersion":"admissionregistration.k8s.io/v1","kind":"` + bindingKind + `",` +
				`"metadata":{"name":"b"},"spec":{"policyName":"p","paramRef":{"name":"limits","namespace":"team",` +
				`"parameterNotFoundAction":"Deny"}` + map[bool]string{true: `,"validationActions":["Deny"]`}[bindingKind == kindBinding] + `}}`
			admit := func(s *server, object, old string, u *userInfoJSON, withPolicy bool) string {
				req := &request{Op: "admitPolicyObject", Kind: bindingKind, Object: json.RawMessage(object),
					UserInfo: u, Resources: servedConfigMaps}
				if old != "" {
					req.OldObject = json.RawMessage(old)
				}
				if withPolicy {
					req.Policy = json.RawMessage(policy)
				}
				response, err := s.admitPolicyObject(req)
				if err != nil {
					t.Fatal(err)
				}
				return forbiddenMessage(response)
			}
			s := newServer()
			jane := &userInfoJSON{Username: "jane", Groups: []string{"developers"}}
			admin := &userInfoJSON{Username: "admin", Groups: []string{"system:masters"}}
			if message := admit(s, binding, "", admin, true); message != "" {
				t.Errorf("system:masters: %s", message)
			}
			if message := admit(s, binding, "", nil, true); message != "" {
				t.Errorf("no user: %s", message)
			}
			prefix := bindingKind + `.admissionregistration.k8s.io "b" is invalid: spec.paramRef: Forbidden: `
			// mutatingadmissionpolicybinding/authz.go passes verb and user the other way round
			// (v1.37.2, line 133): kube-apiserver says "user get does not have "&{jane ...}"".
			denied := func(verb string) string {
				if bindingKind == kindMutatingBinding {
					return prefix + `user ` + verb + ` does not have "&{jane  [developers] map[]}" permission on the object referenced by paramRef`
				}
				return prefix + `user &{jane  [developers] map[]} does not have "` + verb + `" permission on the object referenced by paramRef`
			}
			want := denied("get")
			if message := admit(s, binding, "", jane, true); message != want {
				t.Errorf("jane: %q, want %q", message, want)
			}
			want = prefix + `unable to get policy p to determine minimum required permissions and user &{jane  [developers] map[]} ` +
				`does not have "get" permission for all groups, versions and resources`
			if message := admit(s, binding, "", jane, false); message != want {
				t.Errorf("jane, no policy: %q, want %q", message, want)
			}
			withoutRef := strings.Replace(binding, `"paramRef":{"name":"limits","namespace":"team","parameterNotFoundAction":"Deny"}`,
				`"paramRef":{"selector":{},"namespace":"team","parameterNotFoundAction":"Deny"}`, 1)
			want = denied("list")
			if message := admit(s, withoutRef, "", jane, true); message != want {
				t.Errorf("jane, selector: %q, want %q", message, want)
			}

			// Allowed: get on that one ConfigMap in that namespace.
			s.authz = &rulesAuthorizer{rules: []authorizerRule{{Users: []string{"jane"}, Verbs: []string{"get"},
				APIGroups: []string{""}, Resources: []string{"configmaps"}, Names: []string{"limits"},
				Namespaces: []string{"team"}, Decision: "Allow"}}}
			if message := admit(s, binding, "", jane, true); message != "" {
				t.Fatalf("jane with get on team/limits: %s", message)
			}
			// An update keeping paramRef and policyName is authorized again all the same: authz.go
			// compares the two ParamRef structs, whose parameterNotFoundAction (required) is a
			// pointer, so two decoded objects never compare equal; kube-apiserver does the same.
			s.authz = &rulesAuthorizer{}
			relabeled := strings.Replace(binding, `"name":"b"`, `"name":"b","labels":{"a":"b"}`, 1)
			want = denied("get")
			if message := admit(s, relabeled, binding, jane, true); message != want {
				t.Errorf("update keeping the paramRef: %q, want %q", message, want)
			}
		})
	}
}
