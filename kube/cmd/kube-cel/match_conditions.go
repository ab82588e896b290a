package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	celtypes "github.com/google/cel-go/common/types"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apiserver/pkg/admission"
	celplugin "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/environment"
)

var (
	// The create-time compiler: k8s.io/kubernetes pkg/apis/admissionregistration/validation
	// getStrictStatelessCELCompiler.
	validationCompiler     celplugin.Compiler
	validationCompilerOnce sync.Once
	// The run-time compiler: k8s.io/apiserver pkg/admission/plugin/webhook/generic/webhook.go
	// NewWebhook (filterCompiler).
	filterCompiler     celplugin.ConditionCompiler
	filterCompilerOnce sync.Once
)

func getValidationCompiler() celplugin.Compiler {
	validationCompilerOnce.Do(func() {
		validationCompiler = celplugin.NewCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return validationCompiler
}

func getFilterCompiler() celplugin.ConditionCompiler {
	filterCompilerOnce.Do(func() {
		filterCompiler = celplugin.NewConditionCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	})
	return filterCompiler
}

// compileMatchConditions is validateMatchConditionsExpression + validateCELCondition +
// convertCELErrorToValidationError (k8s.io/kubernetes pkg/apis/admissionregistration/validation/
// validation.go) for each condition: nil when it compiles, else the field error's type and detail.
func compileMatchConditions(conditions []conditionJSON, stored []string) []*compileError {
	storedSet := make(map[string]bool, len(stored))
	for _, s := range stored {
		storedSet[s] = true
	}
	results := make([]*compileError, len(conditions))
	for i, c := range conditions {
		expression := strings.TrimSpace(c.Expression)
		if expression == "" {
			continue // field.Required, reported by the caller's own validation
		}
		envType := environment.NewExpressions
		if storedSet[expression] {
			envType = environment.StoredExpressions
		}
		result := getValidationCompiler().CompileCELExpression(&matchconditions.MatchCondition{Expression: expression},
			celplugin.OptionalVariableDeclarations{HasParams: false, HasAuthorizer: true}, envType)
		if result.Error == nil {
			continue
		}
		switch result.Error.Type {
		case apiservercel.ErrorTypeRequired:
			results[i] = &compileError{Type: "Required", Detail: result.Error.Detail}
		case apiservercel.ErrorTypeInvalid:
			results[i] = &compileError{Type: "Invalid", Detail: result.Error.Detail}
		default:
			// field.InternalError(fldPath, celErr): the detail is the error's Error() text.
			results[i] = &compileError{Type: "InternalError", Detail: result.Error.Error()}
		}
	}
	return results
}

// conditionCache holds compiled evaluators by their conditions, as each webhook accessor compiles
// its matcher once (accessors.go GetCompiledMatcher, sync.Once per configuration generation).
type conditionCache struct {
	entries map[string]celplugin.ConditionEvaluator
}

// contentCache holds what was decoded (and compiled) from an object's JSON, once per content
// (for a policy: once per generation). Callers hold their own lock.
type contentCache[T any] struct {
	entries map[string]T
	build   func(json.RawMessage) (T, error)
}

func newContentCache[T any](build func(json.RawMessage) (T, error)) *contentCache[T] {
	return &contentCache[T]{entries: map[string]T{}, build: build}
}

func (c *contentCache[T]) get(raw json.RawMessage) (T, error) {
	key := string(raw)
	if entry, ok := c.entries[key]; ok {
		return entry, nil
	}
	entry, err := c.build(raw)
	if err != nil {
		return entry, err
	}
	if len(c.entries) >= maxCachedEvaluators {
		c.entries = map[string]T{}
	}
	c.entries[key] = entry
	return entry, nil
}

// maxCachedEvaluators bounds the cache; beyond it the cache starts over (a run with that many
// distinct condition lists is a generated stress test, not a configuration).
const maxCachedEvaluators = 4096

func newConditionCache() *conditionCache {
	return &conditionCache{entries: map[string]celplugin.ConditionEvaluator{}}
}

func (c *conditionCache) get(conditions []conditionJSON) celplugin.ConditionEvaluator {
	keyBytes, _ := json.Marshal(conditions)
	key := string(keyBytes)
	if evaluator, ok := c.entries[key]; ok {
		return evaluator
	}
	accessors := make([]celplugin.ExpressionAccessor, len(conditions))
	for i, condition := range conditions {
		accessors[i] = &matchconditions.MatchCondition{Name: condition.Name, Expression: condition.Expression}
	}
	evaluator := getFilterCompiler().CompileCondition(accessors,
		celplugin.OptionalVariableDeclarations{HasParams: false, HasAuthorizer: true},
		environment.StoredExpressions)
	if len(c.entries) >= maxCachedEvaluators {
		c.entries = map[string]celplugin.ConditionEvaluator{}
	}
	c.entries[key] = evaluator
	return evaluator
}

// decodeObject gives the unstructured object of one JSON value; null or absent is nil. Numbers
// become int64 where they are integers, as the apiserver's unstructured decoding does.
func decodeObject(raw json.RawMessage, field string) (runtime.Object, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var content map[string]any
	if err := utiljson.Unmarshal(raw, &content); err != nil {
		return nil, fmt.Errorf("attributes.%s: %v", field, err)
	}
	return &unstructured.Unstructured{Object: content}, nil
}

// versionedAttributes builds what admission.NewVersionedAttributes gives a dispatcher: the
// request's attributes, with the object and old object in the invocation's kind. The simulator's
// objects are already in the requested version; conversion to an equivalent kind sets
// apiVersion and kind, as the simulator's webhook requests do.
func versionedAttributes(a *attributesJSON, invocation groupVersionKind) (*admission.VersionedAttributes, error) {
	object, err := decodeObject(a.Object, "object")
	if err != nil {
		return nil, err
	}
	oldObject, err := decodeObject(a.OldObject, "oldObject")
	if err != nil {
		return nil, err
	}
	options, err := decodeObject(a.Options, "options")
	if err != nil {
		return nil, err
	}
	userInfo := userInfoOf(a)
	record := admission.NewAttributesRecord(object, oldObject,
		schema.GroupVersionKind{Group: a.Kind.Group, Version: a.Kind.Version, Kind: a.Kind.Kind},
		a.Namespace, a.Name,
		schema.GroupVersionResource{Group: a.Resource.Group, Version: a.Resource.Version, Resource: a.Resource.Resource},
		a.Subresource, admission.Operation(a.Operation), options, a.DryRun, userInfo)
	kind := schema.GroupVersionKind{Group: invocation.Group, Version: invocation.Version, Kind: invocation.Kind}
	versioned := &admission.VersionedAttributes{Attributes: record, VersionedKind: kind}
	convert := func(obj runtime.Object) runtime.Object {
		u := obj.(*unstructured.Unstructured).DeepCopy()
		u.SetGroupVersionKind(kind)
		return u
	}
	if oldObject != nil {
		versioned.VersionedOldObject.Set(convert(oldObject))
	}
	if object != nil {
		versioned.VersionedObject.Set(convert(object))
	}
	return versioned, nil
}

// evaluateMatchConditions runs the filter as matchconditions.matcher.Match does and returns each
// condition's outcome; the caller (the simulator's ShouldCallHook) applies Match's decision and
// the failurePolicy. filterErr is ForInput's own error (not an expression's).
func (s *server) evaluateMatchConditions(conditions []conditionJSON, invocation groupVersionKind, a *attributesJSON) ([]conditionResult, error, error) {
	versioned, err := versionedAttributes(a, invocation)
	if err != nil {
		return nil, nil, err
	}
	evaluator := s.conditions.get(conditions)
	request := celplugin.CreateAdmissionRequest(versioned.Attributes,
		metav1.GroupVersionResource(versioned.GetResource()), metav1.GroupVersionKind(versioned.VersionedKind))
	evalResults, _, filterErr := evaluator.ForInput(context.Background(), versioned, request,
		celplugin.OptionalVariableBindings{VersionedParams: nil, Authorizer: s.authz},
		nil, celconfig.RuntimeCELCostBudgetMatchConditions)
	if filterErr != nil {
		return nil, filterErr, nil
	}
	results := make([]conditionResult, len(evalResults))
	for i, evalResult := range evalResults {
		if evalResult.Error != nil {
			text := evalResult.Error.Error()
			results[i].Error = &text
			continue
		}
		// Match skips the webhook only on celtypes.False; any other value counts as a match.
		value := evalResult.EvalResult != celtypes.False
		results[i].Value = &value
	}
	return results, nil, nil
}

func userInfoOf(a *attributesJSON) user.Info {
	return &user.DefaultInfo{Name: a.UserInfo.Username, UID: a.UserInfo.UID, Groups: a.UserInfo.Groups, Extra: a.UserInfo.Extra}
}
