package main

// The status kube-controller-manager's ValidatingAdmissionPolicy status controller writes
// (k8s.io/kubernetes pkg/controller/validatingadmissionpolicystatus/controller.go reconcile):
// for a policy whose generation is past status.observedGeneration, the warnings of upstream's
// validating.TypeChecker (k8s.io/apiserver pkg/admission/plugin/policy/validating/
// typechecking.go) as status.typeChecking.expressionWarnings, with observedGeneration set to the
// policy's generation. The checker is built as cmd/kube-controller-manager/app/
// validatingadmissionpolicystatus.go builds it: the schemas of the generated OpenAPI definitions
// of client-go's and apiextensions' schemes (the simulator serves no CustomResourceDefinitions,
// so the discovery resolver it is combined with adds nothing), and a REST mapper of the
// resources the simulator serves (the controller's comes from discovery).

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsscheme "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/scheme"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	k8sscheme "k8s.io/client-go/kubernetes/scheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// servedResourceJSON is one resource of the simulator's discovery.
type servedResourceJSON struct {
	Group      string `json:"group"`
	Version    string `json:"version"`
	Resource   string `json:"resource"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
}

var (
	definitionsResolver     resolver.SchemaResolver
	definitionsResolverOnce sync.Once
)

func typeCheckSchemaResolver() resolver.SchemaResolver {
	definitionsResolverOnce.Do(func() {
		definitionsResolver = resolver.NewDefinitionsSchemaResolver(generatedopenapi.GetOpenAPIDefinitions,
			k8sscheme.Scheme, apiextensionsscheme.Scheme)
	})
	return definitionsResolver
}

// servedRESTMapper maps the served resources (subresources left out) to their kinds.
func servedRESTMapper(resources []servedResourceJSON) (meta.RESTMapper, error) {
	mapper := meta.NewDefaultRESTMapper(nil)
	for i, r := range resources {
		if r.Version == "" || r.Resource == "" || r.Kind == "" {
			return nil, fmt.Errorf("resources[%d]: version, resource and kind are required", i)
		}
		if strings.Contains(r.Resource, "/") {
			continue
		}
		scope := meta.RESTScopeRoot
		if r.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		gv := schema.GroupVersion{Group: r.Group, Version: r.Version}
		mapper.AddSpecific(gv.WithKind(r.Kind), gv.WithResource(r.Resource),
			gv.WithResource(strings.ToLower(r.Kind)), scope)
	}
	return mapper, nil
}

// typeCheckValidatingPolicy answers the status the controller would write for the policy, or
// no status when it writes none (generation not past observedGeneration).
func (s *server) typeCheckValidatingPolicy(req *request) (map[string]any, error) {
	if len(req.Object) == 0 {
		return nil, fmt.Errorf("typeCheckValidatingPolicy needs object")
	}
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{}
	if err := json.Unmarshal(req.Object, policy); err != nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	if policy.Generation <= policy.Status.ObservedGeneration {
		return map[string]any{}, nil
	}
	mapper, err := servedRESTMapper(req.Resources)
	if err != nil {
		return nil, err
	}
	checker := &validating.TypeChecker{SchemaResolver: typeCheckSchemaResolver(), RestMapper: mapper}
	status := admissionregistrationv1.ValidatingAdmissionPolicyStatus{ObservedGeneration: policy.Generation}
	// The controller applies typeChecking with the warnings (ApplyStatus, server-side apply);
	// without any, the empty typeChecking is not kept: kube-apiserver v1.37.2 stores
	// {observedGeneration: N} alone (found by kube_policy_status_real_test, a policy updated from
	// three warnings to none).
	if warnings := checker.Check(policy); len(warnings) > 0 {
		status.TypeChecking = &admissionregistrationv1.TypeChecking{ExpressionWarnings: warnings}
	}
	return map[string]any{"status": status}, nil
}
