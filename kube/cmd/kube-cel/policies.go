package main

// ValidatingAdmissionPolicy dispatch with Kubernetes' own code: the request's policies and
// bindings become generic.PolicyHooks as generic.policySource.calculatePolicyData builds them
// (each policy compiled as validating.compilePolicy does, cached by the policy's content, i.e.
// once per generation), and validating.NewDispatcher(...).Dispatch decides: matching
// (matchConstraints, binding matchResources, namespace and object selectors, resourceRules,
// excludeResourceRules, matchPolicy), params (generic.CollectParams: name or selector, namespace,
// parameterNotFoundAction), matchConditions, variables, validations, messageExpression,
// auditAnnotations, validationActions and failurePolicy; its error is the request's Status, its
// warnings and audit annotations are returned as they were recorded.
//
// What the simulator supplies in place of the apiserver's informers: the namespace of the
// request (for namespaceSelector and namespaceObject), the objects of each paramKind, and the
// resources equivalent to the requested one (matchPolicy Equivalent).

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/generic"
	"k8s.io/apiserver/pkg/admission/plugin/policy/matching"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/warning"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

type paramKindJSON struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Resource is the plural the kind is served as; empty when the apiserver does not serve the
	// kind (the REST mapping fails).
	Resource   string            `json:"resource"`
	Namespaced bool              `json:"namespaced"`
	Objects    []json.RawMessage `json:"objects"`
}

type equivalentJSON struct {
	Group    string           `json:"group"`
	Version  string           `json:"version"`
	Resource string           `json:"resource"`
	Kind     groupVersionKind `json:"kind"`
}

type annotationJSON struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	Level string `json:"level"`
}

// --- compilation, cached by content ---

// validatingPolicies is the ValidatingAdmissionPolicy plugin's store.
type validatingPolicies = policyStore[*admissionregistrationv1.ValidatingAdmissionPolicy,
	*admissionregistrationv1.ValidatingAdmissionPolicyBinding, validating.Validator]

func newPolicyCache() *validatingPolicies {
	return newPolicyStore(decodeAs[admissionregistrationv1.ValidatingAdmissionPolicy]("policies"),
		decodeAs[admissionregistrationv1.ValidatingAdmissionPolicyBinding]("bindings"),
		compileValidatingPolicy, validating.NewValidatingAdmissionPolicyAccessor,
		validating.NewValidatingAdmissionPolicyBindingAccessor)
}

var (
	compositionEnv     *environment.EnvSet
	compositionEnvOnce sync.Once
)

// compileValidatingPolicy is validating.compilePolicy (k8s.io/apiserver pkg/admission/plugin/
// policy/validating/plugin.go), which the package does not export, with the same exported
// parts: the composition environment with strict cost, variables compiled and stored, the
// matchConditions matcher, and the validation, audit annotation and messageExpression filters.
func compileValidatingPolicy(policy *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	compositionEnvOnce.Do(func() {
		compositionEnv = environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion())
	})
	hasParam := policy.Spec.ParamKind != nil
	optionalVars := celplugin.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: true}
	expressionOptionalVars := celplugin.OptionalVariableDeclarations{HasParams: hasParam, HasAuthorizer: false}
	failurePolicy := policy.Spec.FailurePolicy
	filterCompiler, err := celplugin.NewCompositedCompiler(compositionEnv)
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, failurePolicy, err)
	}
	variables := make([]celplugin.NamedExpressionAccessor, len(policy.Spec.Variables))
	for i, v := range policy.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	filterCompiler.CompileAndStoreVariables(variables, optionalVars, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if conditions := policy.Spec.MatchConditions; len(conditions) > 0 {
		accessors := make([]celplugin.ExpressionAccessor, len(conditions))
		for i := range conditions {
			accessors[i] = (*matchconditions.MatchCondition)(&conditions[i])
		}
		matcher = matchconditions.NewMatcher(filterCompiler.CompileCondition(accessors, optionalVars, environment.StoredExpressions),
			failurePolicy, "policy", "validate", policy.Name)
	}
	validations := make([]celplugin.ExpressionAccessor, len(policy.Spec.Validations))
	messages := make([]celplugin.ExpressionAccessor, len(policy.Spec.Validations))
	for i, v := range policy.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	annotations := make([]celplugin.ExpressionAccessor, len(policy.Spec.AuditAnnotations))
	for i, a := range policy.Spec.AuditAnnotations {
		annotations[i] = &validating.AuditAnnotationCondition{Key: a.Key, ValueExpression: a.ValueExpression}
	}
	return validating.NewValidator(
		filterCompiler.CompileCondition(validations, optionalVars, environment.StoredExpressions),
		matcher,
		filterCompiler.CompileCondition(annotations, optionalVars, environment.StoredExpressions),
		filterCompiler.CompileCondition(messages, expressionOptionalVars, environment.StoredExpressions),
		failurePolicy,
		nil,
	)
}

// --- what the informers would give ---

// syncedInformer is a param informer whose cache is filled: CollectParams only asks whether it
// has synced and lists or gets through its lister.
type syncedInformer struct {
	cache.SharedIndexInformer
}

func (syncedInformer) HasSynced() bool { return true }

type paramInformer struct {
	lister cache.GenericLister
}

func (p paramInformer) Informer() cache.SharedIndexInformer { return syncedInformer{} }
func (p paramInformer) Lister() cache.GenericLister         { return p.lister }

var _ informers.GenericInformer = paramInformer{}

func newIndexer() cache.Indexer {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

// namespaceClient answers the namespace matcher's direct read after a lister miss as the
// storage does for a namespace that does not exist.
type namespaceClient struct{ kubernetes.Interface }
type coreClient struct{ corev1client.CoreV1Interface }
type namespaces struct {
	corev1client.NamespaceInterface
}

func (namespaceClient) CoreV1() corev1client.CoreV1Interface   { return coreClient{} }
func (coreClient) Namespaces() corev1client.NamespaceInterface { return namespaces{} }
func (namespaces) Get(_ context.Context, name string, _ metav1.GetOptions) (*corev1.Namespace, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, name)
}

// objectInterfaces: the simulator's objects are JSON in the requested version; converting one
// to an equivalent kind sets apiVersion and kind (as the simulator's webhook requests do).
type objectInterfaces struct {
	equivalents []equivalentJSON
}

func (o *objectInterfaces) GetObjectCreater() runtime.ObjectCreater     { return o }
func (o *objectInterfaces) GetObjectTyper() runtime.ObjectTyper         { return nil }
func (o *objectInterfaces) GetObjectDefaulter() runtime.ObjectDefaulter { return nil }
func (o *objectInterfaces) GetObjectConvertor() runtime.ObjectConvertor { return o }
func (o *objectInterfaces) GetEquivalentResourceMapper() runtime.EquivalentResourceMapper {
	return o
}

func (o *objectInterfaces) New(schema.GroupVersionKind) (runtime.Object, error) {
	return &unstructured.Unstructured{}, nil
}

func (o *objectInterfaces) Convert(in, out, _ interface{}) error {
	u, ok := in.(*unstructured.Unstructured)
	target, ok2 := out.(*unstructured.Unstructured)
	if !ok || !ok2 {
		return fmt.Errorf("cannot convert %T to %T", in, out)
	}
	target.Object = u.DeepCopy().Object
	return nil
}

func (o *objectInterfaces) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}

func (o *objectInterfaces) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (o *objectInterfaces) EquivalentResourcesFor(schema.GroupVersionResource, string) []schema.GroupVersionResource {
	out := make([]schema.GroupVersionResource, len(o.equivalents))
	for i, e := range o.equivalents {
		out[i] = schema.GroupVersionResource{Group: e.Group, Version: e.Version, Resource: e.Resource}
	}
	return out
}

func (o *objectInterfaces) KindFor(resource schema.GroupVersionResource, _ string) schema.GroupVersionKind {
	for _, e := range o.equivalents {
		if e.Group == resource.Group && e.Version == resource.Version && e.Resource == resource.Resource {
			return schema.GroupVersionKind{Group: e.Kind.Group, Version: e.Kind.Version, Kind: e.Kind.Kind}
		}
	}
	return schema.GroupVersionKind{}
}

// recordingAttributes records the audit annotations the dispatcher adds (admission's
// attributesRecord keeps them at level Metadata for AddAnnotation).
type recordingAttributes struct {
	admission.Attributes
	annotations []annotationJSON
}

func (r *recordingAttributes) AddAnnotation(key, value string) error {
	return r.AddAnnotationWithLevel(key, value, auditinternal.LevelMetadata)
}

func (r *recordingAttributes) AddAnnotationWithLevel(key, value string, level auditinternal.Level) error {
	for i := range r.annotations {
		if r.annotations[i].Key == key {
			if r.annotations[i].Value == value {
				return nil
			}
			return fmt.Errorf("admission annotations are not allowd to be overwritten, key:%q, old value: %q, new value:%q", key, r.annotations[i].Value, value)
		}
	}
	r.annotations = append(r.annotations, annotationJSON{Key: key, Value: value, Level: string(level)})
	return nil
}

type warningRecorder struct{ warnings []string }

func (w *warningRecorder) AddWarning(_, text string) {
	for _, seen := range w.warnings {
		if seen == text {
			return
		}
	}
	w.warnings = append(w.warnings, text)
}

func decodeUnstructured(raw json.RawMessage) (*unstructured.Unstructured, error) {
	var content map[string]any
	if err := utiljson.Unmarshal(raw, &content); err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: content}, nil
}

// paramSource is what ensureParamsForPolicyLocked resolves for one paramKind: its informer and
// scope.
type paramSource struct {
	informer informers.GenericInformer
	scope    meta.RESTScope
}

// policyRequest is what both policy plugins are given for one request in place of the
// apiserver's informers: the attributes, the matcher over the request's namespace, and the param
// informers by kind.
type policyRequest struct {
	attributes *recordingAttributes
	matcher    *matching.Matcher
	params     map[schema.GroupVersionKind]paramSource
}

func newPolicyRequest(req *request) (*policyRequest, error) {
	if req.Attributes == nil {
		return nil, fmt.Errorf("%s needs attributes", req.Op)
	}
	object, err := decodeObject(req.Attributes.Object, "object")
	if err != nil {
		return nil, err
	}
	oldObject, err := decodeObject(req.Attributes.OldObject, "oldObject")
	if err != nil {
		return nil, err
	}
	options, err := decodeObject(req.Attributes.Options, "options")
	if err != nil {
		return nil, err
	}
	a := req.Attributes
	userInfo := userInfoOf(a)
	attributes := &recordingAttributes{Attributes: admission.NewAttributesRecord(object, oldObject,
		schema.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind},
		a.Namespace, a.Name,
		schema.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource},
		a.Subresource, admission.Operation(a.Operation), options, a.DryRun, userInfo)}

	// The namespace lister: the request's namespace, when it exists.
	namespaceIndexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if len(req.Namespace) > 0 && string(req.Namespace) != "null" {
		namespace := &corev1.Namespace{}
		if err := json.Unmarshal(req.Namespace, namespace); err != nil {
			return nil, fmt.Errorf("namespace: %v", err)
		}
		_ = namespaceIndexer.Add(namespace)
	}
	matcher := matching.NewMatcher(listersv1.NewNamespaceLister(namespaceIndexer), namespaceClient{})

	// Param informers by kind, as ensureParamsForPolicyLocked resolves them.
	paramSources := map[schema.GroupVersionKind]paramSource{}
	for _, p := range req.Params {
		gv, err := schema.ParseGroupVersion(p.APIVersion)
		if err != nil || p.Resource == "" {
			continue
		}
		indexer := newIndexer()
		for i, raw := range p.Objects {
			u, err := decodeUnstructured(raw)
			if err != nil {
				return nil, fmt.Errorf("params[%s].objects[%d]: %v", p.Kind, i, err)
			}
			_ = indexer.Add(u)
		}
		scope := meta.RESTScopeRoot
		if p.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		gvr := gv.WithResource(p.Resource)
		paramSources[gv.WithKind(p.Kind)] = paramSource{
			informer: paramInformer{lister: cache.NewGenericLister(indexer, gvr.GroupResource())},
			scope:    scope,
		}
	}
	return &policyRequest{attributes: attributes, matcher: matcher, params: paramSources}, nil
}

// paramsFor resolves a policy's paramKind as calculatePolicyData does: ok false when the
// apiVersion does not parse (the policy is left out), a configuration error when no resource
// serves the kind.
func (r *policyRequest) paramsFor(paramKind *admissionregistrationv1.ParamKind) (source paramSource, configErr error, ok bool) {
	if paramKind == nil {
		return paramSource{}, nil, true
	}
	gv, err := schema.ParseGroupVersion(paramKind.APIVersion)
	if err != nil {
		return paramSource{}, nil, false // "failed to parse paramKind APIVersion"
	}
	gvk := gv.WithKind(paramKind.Kind)
	if source, found := r.params[gvk]; found {
		return source, nil, true
	}
	return paramSource{}, fmt.Errorf("failed to find resource referenced by paramKind: '%v'", gvk), true
}

// dispatchValidatingPolicies admits one request through the ValidatingAdmissionPolicy plugin.
func (s *server) dispatchValidatingPolicies(req *request) (map[string]any, error) {
	r, err := newPolicyRequest(req)
	if err != nil {
		return nil, err
	}
	attributes := r.attributes

	hooks, err := s.policies.hooks(r, req.Policies, req.Bindings)
	if err != nil {
		return nil, err
	}

	recorder := &warningRecorder{}
	ctx := warning.WithWarningRecorder(context.Background(), recorder)
	dispatcher := validating.NewDispatcher(s.authz, generic.NewPolicyMatcher(r.matcher))
	response := map[string]any{}
	if err := dispatcher.Dispatch(ctx, attributes, &objectInterfaces{equivalents: req.Equivalents}, hooks); err != nil {
		response["status"] = responsewriters.ErrorToAPIStatus(err)
	}
	response["warnings"] = recorder.warnings
	response["annotations"] = attributes.annotations
	return response, nil
}
