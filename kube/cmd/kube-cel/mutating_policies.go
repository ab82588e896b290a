package main

// MutatingAdmissionPolicy dispatch with Kubernetes' own code (k8s.io/apiserver pkg/admission/
// plugin/policy/mutating): the request's policies and bindings become mutating.PolicyHooks (each
// policy compiled as mutating.compilePolicy does, cached by the policy's content, i.e. once per
// generation), and mutating.NewDispatcher(...).Dispatch matches, collects params, evaluates
// matchConditions and variables, applies the ApplyConfiguration and JSONPatch mutations in order,
// and decides failurePolicy. The patched object, the plugin's error and whether a reinvocation is
// wanted are returned.
//
// Reinvocation (dispatcher.go dispatchInvocations, reinvocationcontext.go): the plugin keeps its
// state (the last output, the IfNeeded policies invoked so far) in the request's
// admission.ReinvocationContext between round 0 and the reinvocation round. That state lives
// here, per request id, from the round-0 call until the simulator's releaseMutatingPolicies (or
// the reinvocation call, the last one a request can make).

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/kube-openapi/pkg/builder3"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
)

// reinvocationJSON names the request and the round of the mutating chain.
type reinvocationJSON struct {
	Request    string `json:"request"`
	IsReinvoke bool   `json:"isReinvoke"`
}

// --- compilation, cached by content ---

type mutatingPolicyCache struct {
	*policyStore[*admissionregistrationv1.MutatingAdmissionPolicy,
		*admissionregistrationv1.MutatingAdmissionPolicyBinding, mutating.PolicyEvaluator]
	// The plugin's reinvocation state per request (see the file comment), oldest first; under
	// the store's lock.
	requests     map[string]*requestReinvocation
	requestOrder []string
}

func newMutatingPolicyCache() *mutatingPolicyCache {
	return &mutatingPolicyCache{
		policyStore: newPolicyStore(decodeAs[admissionregistrationv1.MutatingAdmissionPolicy]("policies"),
			decodeAs[admissionregistrationv1.MutatingAdmissionPolicyBinding]("bindings"),
			compileMutatingPolicy, mutating.NewMutatingAdmissionPolicyAccessor,
			mutating.NewMutatingAdmissionPolicyBindingAccessor),
		requests: map[string]*requestReinvocation{},
	}
}

// maxOpenRequests bounds the reinvocation states kept for requests the simulator has not
// released; beyond it the oldest is dropped (its request can then only miss a reinvocation).
const maxOpenRequests = 4096

// reinvocation gives the request's state, made on its first call.
func (c *mutatingPolicyCache) reinvocation(id string) *requestReinvocation {
	if state, ok := c.requests[id]; ok {
		return state
	}
	if len(c.requestOrder) >= maxOpenRequests {
		delete(c.requests, c.requestOrder[0])
		c.requestOrder = c.requestOrder[1:]
	}
	state := &requestReinvocation{values: map[string]any{}}
	c.requests[id] = state
	c.requestOrder = append(c.requestOrder, id)
	return state
}

func (c *mutatingPolicyCache) release(id string) {
	if _, ok := c.requests[id]; !ok {
		return
	}
	delete(c.requests, id)
	for i, seen := range c.requestOrder {
		if seen == id {
			c.requestOrder = append(c.requestOrder[:i], c.requestOrder[i+1:]...)
			break
		}
	}
}

// compileMutatingPolicy is mutating.compilePolicy (k8s.io/apiserver pkg/admission/plugin/policy/
// mutating/compilation.go), which the package does not export, with the same exported parts:
// the composited compiler over the base environment, variables compiled and stored, the
// matchConditions matcher, one patcher per mutation in order.
func compileMutatingPolicy(policy *admissionregistrationv1.MutatingAdmissionPolicy) mutating.PolicyEvaluator {
	opts := celplugin.OptionalVariableDeclarations{HasParams: policy.Spec.ParamKind != nil, HasAuthorizer: true}
	compiler, err := celplugin.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return mutating.PolicyEvaluator{Error: &apiservercel.Error{
			Type:   apiservercel.ErrorTypeInternal,
			Detail: fmt.Sprintf("failed to initialize CEL compiler: %v", err),
		}}
	}
	var variables []celplugin.NamedExpressionAccessor
	for _, v := range policy.Spec.Variables {
		variables = append(variables, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	compiler.CompileAndStoreVariables(variables, opts, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if conditions := policy.Spec.MatchConditions; len(conditions) > 0 {
		accessors := make([]celplugin.ExpressionAccessor, len(conditions))
		for i := range conditions {
			accessors[i] = (*matchconditions.MatchCondition)(&conditions[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(accessors, opts, environment.StoredExpressions),
			policy.Spec.FailurePolicy, "policy", "validate", policy.Name)
	}
	var patchers []patch.Patcher
	patchOptions := opts
	patchOptions.HasPatchTypes = true
	for _, m := range policy.Spec.Mutations {
		switch m.PatchType {
		case admissionregistrationv1.PatchTypeJSONPatch:
			if m.JSONPatch != nil {
				result := compiler.CompileMutatingEvaluator(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression},
					patchOptions, environment.StoredExpressions)
				patchers = append(patchers, patch.NewJSONPatcher(result))
			}
		case admissionregistrationv1.PatchTypeApplyConfiguration:
			if m.ApplyConfiguration != nil {
				result := compiler.CompileMutatingEvaluator(&patch.ApplyConfigurationCondition{Expression: m.ApplyConfiguration.Expression},
					patchOptions, environment.StoredExpressions)
				patchers = append(patchers, patch.NewApplyConfigurationPatcher(result))
			}
		}
	}
	return mutating.PolicyEvaluator{Matcher: matcher, Mutators: patchers, CompositedCompiler: compiler}
}

// --- the request's reinvocation context ---

// requestReinvocation is admission.ReinvocationContext (attributes.go reinvocationContext) kept
// across the calls of one request: the plugins' values survive; IsReinvoke comes from the
// simulator's chain, ShouldReinvoke is reported back to it.
type requestReinvocation struct {
	isReinvoke     bool
	shouldReinvoke bool
	values         map[string]any
}

func (r *requestReinvocation) IsReinvoke() bool              { return r.isReinvoke }
func (r *requestReinvocation) SetIsReinvoke()                { r.isReinvoke = true }
func (r *requestReinvocation) ShouldReinvoke() bool          { return r.shouldReinvoke }
func (r *requestReinvocation) SetShouldReinvoke()            { r.shouldReinvoke = true }
func (r *requestReinvocation) SetValue(plugin string, v any) { r.values[plugin] = v }
func (r *requestReinvocation) Value(plugin string) any       { return r.values[plugin] }
func (r *requestReinvocation) begin(isReinvoke bool) {
	r.isReinvoke, r.shouldReinvoke = isReinvoke, false
}

var _ admission.ReinvocationContext = &requestReinvocation{}

type mutatingAttributes struct {
	*recordingAttributes
	reinvocation *requestReinvocation
}

func (m *mutatingAttributes) GetReinvocationContext() admission.ReinvocationContext {
	return m.reinvocation
}

// --- the type converter: kube-apiserver's OpenAPI models of the built-in kinds ---

// The dispatcher's TypeConverterManager (patch.NewTypeConverterManager in kube-apiserver, over
// its own /openapi/v3). Here the built-in kinds' models are built as the apiserver builds its
// OpenAPI v3 (genericapiserver.DefaultOpenAPIV3Config with the generated definitions and the
// scheme's definition namer, builder3.BuildOpenAPIDefinitionsForResources); the simulator serves
// no CustomResourceDefinitions.
type staticTypeConverters struct{}

var (
	builtinTypeConverter     managedfields.TypeConverter
	builtinTypeConverterErr  error
	builtinTypeConverterOnce sync.Once
)

func builtinConverter() (managedfields.TypeConverter, error) {
	builtinTypeConverterOnce.Do(func() {
		namer := openapinamer.NewDefinitionNamer(legacyscheme.Scheme)
		config := genericapiserver.DefaultOpenAPIV3Config(generatedopenapi.GetOpenAPIDefinitions, namer)
		// The kinds served as resources: those with generated definitions (not AdmissionReview & co.).
		definitions := generatedopenapi.GetOpenAPIDefinitions(func(string) spec.Ref { return spec.Ref{} })
		var names []string
		seen := map[string]bool{}
		for gvk, t := range legacyscheme.Scheme.AllKnownTypes() {
			if gvk.Version == runtime.APIVersionInternal || strings.HasSuffix(gvk.Kind, "List") ||
				!strings.HasPrefix(t.PkgPath(), "k8s.io/api/") {
				continue
			}
			name := openapiutil.GetCanonicalTypeName(reflect.New(t).Interface())
			if _, ok := definitions[name]; ok && !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
		sort.Strings(names)
		schemas, err := builder3.BuildOpenAPIDefinitionsForResources(config, names...)
		if err != nil {
			builtinTypeConverterErr = err
			return
		}
		builtinTypeConverter, builtinTypeConverterErr = managedfields.NewTypeConverter(schemas, false)
	})
	return builtinTypeConverter, builtinTypeConverterErr
}

func (staticTypeConverters) GetTypeConverter(gvk schema.GroupVersionKind) managedfields.TypeConverter {
	converter, err := builtinConverter()
	if err != nil {
		// As typeConverterManager does (utilruntime.HandleError): logged, the kind is not found.
		fmt.Fprintf(os.Stderr, "kube-cel: building the type converter of the built-in kinds: %v\n", err)
		return nil
	}
	// typeConverterManager.GetTypeConverter: a converter that cannot type an empty object of the
	// kind does not know it.
	stub := &unstructured.Unstructured{}
	stub.SetGroupVersionKind(gvk)
	if _, err := converter.ObjectToTyped(stub); err != nil {
		return nil
	}
	return converter
}

func (staticTypeConverters) Run(context.Context) {}

// --- defaulting of the patched object ---

// mutatingObjectInterfaces adds the defaulter dispatchOne applies to each mutation's result
// (o.GetObjectDefaulter().Default): kube-apiserver's objects are typed, so the scheme's
// defaults (SetObjectDefaults_*) apply; the simulator's are unstructured, so they are typed for
// it and back.
type mutatingObjectInterfaces struct {
	*objectInterfaces
}

func (o mutatingObjectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter { return o }

// GetObjectTyper: the JSON patcher's serializer asks it for the kinds of the (unstructured)
// object; the scheme answers with the object's own.
func (o mutatingObjectInterfaces) GetObjectTyper() runtime.ObjectTyper { return legacyscheme.Scheme }

func (o mutatingObjectInterfaces) Default(in runtime.Object) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		legacyscheme.Scheme.Default(in)
		return
	}
	typed, err := legacyscheme.Scheme.New(u.GroupVersionKind())
	if err != nil {
		return
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
		return
	}
	legacyscheme.Scheme.Default(typed)
	content, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return
	}
	u.Object = content
}

// --- dispatch ---

// dispatchMutatingPolicies admits one request through the MutatingAdmissionPolicy plugin, in the
// round the simulator names.
func (s *server) dispatchMutatingPolicies(req *request) (map[string]any, error) {
	if req.Reinvocation == nil || req.Reinvocation.Request == "" {
		return nil, fmt.Errorf("dispatchMutatingPolicies needs reinvocation.request")
	}
	r, err := newPolicyRequest(req)
	if err != nil {
		return nil, err
	}

	c := s.mutating
	hooks, err := c.hooks(r, req.Policies, req.Bindings)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	reinvocation := c.reinvocation(req.Reinvocation.Request)
	if req.Reinvocation.IsReinvoke {
		// The reinvocation round is the last call of a request.
		c.release(req.Reinvocation.Request)
	}
	c.mu.Unlock()

	reinvocation.begin(req.Reinvocation.IsReinvoke)
	attributes := &mutatingAttributes{recordingAttributes: r.attributes, reinvocation: reinvocation}
	recorder := &warningRecorder{}
	ctx := warning.WithWarningRecorder(context.Background(), recorder)
	dispatcher := mutating.NewDispatcher(s.authz, r.matcher, staticTypeConverters{})
	interfaces := mutatingObjectInterfaces{&objectInterfaces{equivalents: req.Equivalents}}
	response := map[string]any{}
	if err := dispatcher.Dispatch(ctx, attributes, interfaces, hooks); err != nil {
		response["status"] = responsewriters.ErrorToAPIStatus(err)
	}
	// null without an object (the dispatcher then evaluates matchConditions and patches nothing).
	response["object"] = attributes.GetObject()
	response["shouldReinvoke"] = reinvocation.shouldReinvoke
	response["warnings"] = recorder.warnings
	response["annotations"] = r.attributes.annotations
	return response, nil
}

func (s *server) releaseMutatingPolicies(req *request) (map[string]any, error) {
	if req.Reinvocation == nil || req.Reinvocation.Request == "" {
		return nil, fmt.Errorf("releaseMutatingPolicies needs reinvocation.request")
	}
	s.mutating.mu.Lock()
	s.mutating.release(req.Reinvocation.Request)
	s.mutating.mu.Unlock()
	return map[string]any{}, nil
}
