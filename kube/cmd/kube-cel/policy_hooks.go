package main

// The hooks both policy plugins dispatch, built as generic.policySource.calculatePolicyData
// (k8s.io/apiserver pkg/admission/plugin/policy/generic/policy_source.go) builds them, once for
// ValidatingAdmissionPolicy and once for MutatingAdmissionPolicy: upstream's source is generic
// over the policy, binding and evaluator types and reads them through the plugin's accessors
// (validating/accessor.go, mutating/accessor.go); so is this one.

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
)

// compiled is a decoded policy with what compiling it gave.
type compiled[P runtime.Object, E generic.Evaluator] struct {
	policy    P
	evaluator E
}

// policyStore holds one plugin's decoded policies (compiled once per content, i.e. once per
// generation) and bindings.
type policyStore[P runtime.Object, B runtime.Object, E generic.Evaluator] struct {
	mu                 sync.Mutex
	policies           *contentCache[compiled[P, E]]
	bindings           *contentCache[B]
	newPolicyAccessor  func(P) generic.PolicyAccessor
	newBindingAccessor func(B) generic.BindingAccessor
}

// decodeAs decodes a v1 object (defaulted); field names the request's list in errors.
func decodeAs[T any, PT interface {
	*T
	runtime.Object
}](field string) func(json.RawMessage) (PT, error) {
	return func(raw json.RawMessage) (PT, error) {
		object := PT(new(T))
		if err := decodeV1(raw, object); err != nil {
			return nil, fmt.Errorf("%s: %v", field, err)
		}
		return object, nil
	}
}

func newPolicyStore[P runtime.Object, B runtime.Object, E generic.Evaluator](
	decodePolicy func(json.RawMessage) (P, error), decodeBinding func(json.RawMessage) (B, error),
	compile func(P) E, newPolicyAccessor func(P) generic.PolicyAccessor,
	newBindingAccessor func(B) generic.BindingAccessor) *policyStore[P, B, E] {
	return &policyStore[P, B, E]{
		policies: newContentCache(func(raw json.RawMessage) (compiled[P, E], error) {
			policy, err := decodePolicy(raw)
			if err != nil {
				return compiled[P, E]{}, err
			}
			return compiled[P, E]{policy: policy, evaluator: compile(policy)}, nil
		}),
		bindings:           newContentCache(decodeBinding),
		newPolicyAccessor:  newPolicyAccessor,
		newBindingAccessor: newBindingAccessor,
	}
}

// hooks is calculatePolicyData over the request's policies and bindings: each policy that has
// bindings, with its bindings and its param informer (or the configuration error when no
// resource serves its paramKind); bindings naming a policy that does not exist are skipped, and
// so is a policy whose paramKind apiVersion does not parse. Upstream walks a map (random order);
// here policies and each policy's bindings are sorted by name, so that which denial is reported
// first and the order mutations apply in are reproducible.
func (s *policyStore[P, B, E]) hooks(r *policyRequest, rawPolicies, rawBindings []json.RawMessage) ([]generic.PolicyHook[P, B, E], error) {
	s.mu.Lock()
	policies := map[string]compiled[P, E]{}
	for _, raw := range rawPolicies {
		p, err := s.policies.get(raw)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		policies[s.newPolicyAccessor(p.policy).GetName()] = p
	}
	bindingsByPolicy := map[string][]B{}
	for _, raw := range rawBindings {
		b, err := s.bindings.get(raw)
		if err != nil {
			s.mu.Unlock()
			return nil, err
		}
		name := s.newBindingAccessor(b).GetPolicyName().Name
		bindingsByPolicy[name] = append(bindingsByPolicy[name], b)
	}
	s.mu.Unlock()

	names := make([]string, 0, len(bindingsByPolicy))
	for name := range bindingsByPolicy {
		if _, ok := policies[name]; ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	hooks := make([]generic.PolicyHook[P, B, E], 0, len(names))
	for _, name := range names {
		p := policies[name]
		source, configErr, ok := r.paramsFor(s.newPolicyAccessor(p.policy).GetParamKind())
		if !ok {
			continue
		}
		bindings := bindingsByPolicy[name]
		sort.Slice(bindings, func(i, j int) bool {
			return s.newBindingAccessor(bindings[i]).GetName() < s.newBindingAccessor(bindings[j]).GetName()
		})
		hooks = append(hooks, generic.PolicyHook[P, B, E]{
			Policy: p.policy, Bindings: bindings, Evaluator: p.evaluator,
			ParamInformer: source.informer, ParamScope: source.scope, ConfigurationError: configErr,
		})
	}
	return hooks, nil
}
