package main

// The requests kube-cel answers (one JSON object per line; "id" is echoed):
//
//	{"op":"version"}
//	  -> {"kubernetes":"v1.37.2","celCompatibilityVersion":"1.36"}
//	{"op":"compileMatchConditions","conditions":[{"name":"n","expression":"e"}],"stored":["e"]}
//	  -> {"results":[null | {"type":"Invalid"|"Required"|"InternalError","detail":"..."}]}
//	     create-time validation of each expression, as validateMatchConditionsExpression in
//	     k8s.io/kubernetes pkg/apis/admissionregistration/validation does it: the NewExpressions
//	     environment, or StoredExpressions for an expression listed in "stored" (already in the
//	     object being updated). Blank expressions are the caller's (field.Required).
//	{"op":"evaluateMatchConditions","conditions":[...],"invocationKind":{...},"attributes":{...}}
//	  -> {"results":[{"value":true|false} | {"error":"..."}]} or {"filterError":"..."}
//	     one result per condition in order, from ConditionEvaluator.ForInput with the arguments
//	     matchconditions.matcher.Match passes (StoredExpressions environment, authorizer
//	     declared, no params, the matchConditions cost budget).
//	{"op":"admitPolicyObject","kind":"ValidatingAdmissionPolicy"|"ValidatingAdmissionPolicyBinding"|
//	 "MutatingAdmissionPolicy"|"MutatingAdmissionPolicyBinding",
//	 "object":{...},"oldObject":{...}|null,"userInfo":{...}?,"resources":[...]?,"policy":{...}?}
//	  -> {"object":{...}} the object as the registry stores it (v1 defaults, PrepareForCreate/
//	     Update), or {"status":{...}} the 422 of its validation (policy_objects.go), with the
//	     policies' paramKind and the bindings' paramRef authorization for userInfo over the
//	     served resources (a binding's policy: the one its policyName names, as stored).
//	{"op":"dispatchValidatingPolicies","policies":[...],"bindings":[...],"params":[{"apiVersion",
//	 "kind","resource","namespaced","objects":[...]}],"namespace":{...}|null,"equivalents":[...],
//	 "attributes":{...}}
//	  -> {"status":{...}?,"warnings":[...],"annotations":[{"key","value","level"}]}
//	     the ValidatingAdmissionPolicy plugin's decision for one request (policies.go).
//	{"op":"dispatchMutatingPolicies", the fields of dispatchValidatingPolicies,
//	 "reinvocation":{"request":"<id>","isReinvoke":false|true}}
//	  -> {"status":{...}?,"object":{...},"shouldReinvoke":bool,"warnings":[...],"annotations":[...]}
//	     the MutatingAdmissionPolicy plugin's pass for one round of the request's mutating chain
//	     (mutating_policies.go): the object as the mutations left it; the plugin's reinvocation
//	     state is kept under the request id until the reinvocation round or
//	{"op":"releaseMutatingPolicies","reinvocation":{"request":"<id>"}}   -> {}
//	{"op":"setAuthorizer","rules":[...]}   -> {}
//	     the decisions the "authorizer" variable returns (authz.go).
//	{"op":"typeCheckValidatingPolicy","object":{policy},"resources":[{"group","version","resource",
//	 "kind","namespaced"}]}
//	  -> {"status":{"observedGeneration":N,"typeChecking":{"expressionWarnings":[...]}}} or {} when
//	     the generation is not past status.observedGeneration: what kube-controller-manager's
//	     ValidatingAdmissionPolicy status controller writes (type_checking.go).
//	{"op":"policyMetrics"}   -> {"text":"..."}
//	     the admission policy plugins' metrics observed so far, in Prometheus' text format
//	     (policy_metrics.go).
//	{"op":"podTemplateHash","object":{PodTemplateSpec},"collisionCount":N?} -> {"hash":"..."}
//	     controller.ComputeHash of the template (pod_template_hash.go).
//	{"op":"decodeProtobuf","data":"<base64 of the body>"}
//	  -> {"object":{...}} the body's object as JSON, or {"decodeError":"..."} (protobuf.go).
//	{"op":"validatePodUpdate","object":{v1 Pod},"oldObject":{v1 Pod}}
//	  -> {} or {"status":{...}} the 422 of the pod strategy's update validation
//	     (rest.ValidateUpdate with pod.Strategy: ValidatePodUpdate; pod_update.go).
//	{"op":"strictDecode","data":"<base64 of the body>","contentType":"application/json",
//	 "invocationKind":{the endpoint's group, version, kind}}
//	  -> {} | {"strictErrors":["unknown field \"spec.foo\"",...],"message":"<the Strict 400>"}
//	     | {"decodeError":"..."}: fieldValidation's strict decoding of a body (strict_decode.go).
//	{"op":"strictPatch","object":{the stored object},"data":"<base64 of the patch>",
//	 "contentType":"application/merge-patch+json","fieldValidation":"Strict",
//	 "invocationKind":{...}}
//	  -> {} | {"warnings":["unknown field \"spec.foo\"",...]} | {"status":{the 422 or 400}}:
//	     fieldValidation on a PATCH (strict_patch.go).
//	{"op":"bootstrapPolicy"} -> {"clusterRoles":[...],"clusterRoleBindings":[...],"roles":[...],
//	  "roleBindings":[...]}: the RBAC objects kube-apiserver creates at start (bootstrap_policy.go).
//	{"op":"admitCustomResourceDefinition","object":{v1 CRD},"oldObject":{...}|null,"subresource":""|"status"}
//	  -> {"object":{...},"warnings":[...]?} | {"status":{the 422}} (custom_resources.go).
//	{"op":"customResourceDefinitionStatus","object":{v1 CRD},"crds":[the other CRDs]}
//	  -> {"writes":[CRD,...]}: the status writes of the naming and establishing controllers.
//	{"op":"admitCustomResource","crd":{...},"step":"decode"|"default"|"validate"|"store",
//	 "object":{...},"oldObject":{...}|null,"subresource":""|"status"}
//	  -> {"object":{...},"unknownFields":[...]?,"warnings":[...]?} | {"status":{the 400 or 422}}.
//	{"op":"customResourceTable","crd":{...},"version":"v1","resourceVersion":"12",
//	 "objects":[...],"single":bool,"noHeaders":bool} -> {"table":{meta.k8s.io/v1 Table}}.
//
// A request that cannot be decoded or names an unknown op gets {"error":"..."}; the stream goes on.

import (
	"bytes"
	"encoding/json"
	"fmt"
)

type request struct {
	ID             json.RawMessage   `json:"id,omitempty"`
	Op             string            `json:"op"`
	Conditions     []conditionJSON   `json:"conditions,omitempty"`
	Stored         []string          `json:"stored,omitempty"`
	InvocationKind *groupVersionKind `json:"invocationKind,omitempty"`
	Attributes     *attributesJSON   `json:"attributes,omitempty"`
	Rules          []authorizerRule  `json:"rules,omitempty"`
	// admitPolicyObject (object and oldObject also for validatePodUpdate)
	Kind      string          `json:"kind,omitempty"`
	Object    json.RawMessage `json:"object,omitempty"`
	OldObject json.RawMessage `json:"oldObject,omitempty"`
	// dispatchValidatingPolicies
	Policies    []json.RawMessage `json:"policies,omitempty"`
	Bindings    []json.RawMessage `json:"bindings,omitempty"`
	Params      []paramKindJSON   `json:"params,omitempty"`
	Namespace   json.RawMessage   `json:"namespace,omitempty"`
	Equivalents []equivalentJSON  `json:"equivalents,omitempty"`
	// dispatchMutatingPolicies, releaseMutatingPolicies
	Reinvocation *reinvocationJSON `json:"reinvocation,omitempty"`
	// admitPolicyObject: the requesting user; it and typeCheckValidatingPolicy: the served
	// resources
	UserInfo  *userInfoJSON        `json:"userInfo,omitempty"`
	Resources []servedResourceJSON `json:"resources,omitempty"`
	// admitPolicyObject of a binding: the policy its policyName names, as stored (absent: none)
	Policy json.RawMessage `json:"policy,omitempty"`
	// podTemplateHash
	CollisionCount *int32 `json:"collisionCount,omitempty"`
	// decodeProtobuf, strictDecode, strictPatch (the patch; contentType its patch type)
	Data        []byte `json:"data,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	// strictPatch: Strict, Warn or Ignore
	FieldValidation string `json:"fieldValidation,omitempty"`
	// applyFields, updateFields: the field manager's name, apply's force, the subresource
	Manager     string `json:"manager,omitempty"`
	Force       bool   `json:"force,omitempty"`
	Subresource string `json:"subresource,omitempty"`
	// admitCustomResource, customResourceTable: the CRD as stored; the step; customResourceTable:
	// the version, the list's resourceVersion, the objects, one object alone, no headers;
	// customResourceDefinitionStatus: the other CRDs stored
	CRD             json.RawMessage   `json:"crd,omitempty"`
	Step            string            `json:"step,omitempty"`
	Version         string            `json:"version,omitempty"`
	ResourceVersion string            `json:"resourceVersion,omitempty"`
	Objects         []json.RawMessage `json:"objects,omitempty"`
	Single          bool              `json:"single,omitempty"`
	NoHeaders       bool              `json:"noHeaders,omitempty"`
	CRDs            []json.RawMessage `json:"crds,omitempty"`
}

type conditionJSON struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type groupVersionResource struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

type userInfoJSON struct {
	Username string              `json:"username"`
	UID      string              `json:"uid"`
	Groups   []string            `json:"groups"`
	Extra    map[string][]string `json:"extra"`
}

// attributesJSON is admission.Attributes as the simulator holds them (apiserver-sim
// AdmissionAttributes): objects are the versioned JSON of the resource the client called.
type attributesJSON struct {
	Operation   string               `json:"operation"`
	Kind        groupVersionKind     `json:"kind"`
	Resource    groupVersionResource `json:"resource"`
	Subresource string               `json:"subresource"`
	Namespace   string               `json:"namespace"`
	Name        string               `json:"name"`
	Object      json.RawMessage      `json:"object"`
	OldObject   json.RawMessage      `json:"oldObject"`
	Options     json.RawMessage      `json:"options"`
	DryRun      bool                 `json:"dryRun"`
	UserInfo    userInfoJSON         `json:"userInfo"`
}

type compileError struct {
	Type   string `json:"type"`
	Detail string `json:"detail"`
}

type conditionResult struct {
	Value *bool   `json:"value,omitempty"`
	Error *string `json:"error,omitempty"`
}

type server struct {
	conditions *conditionCache
	policies   *validatingPolicies
	mutating   *mutatingPolicyCache
	authz      *rulesAuthorizer
	crds       *crdCache
}

func newServer() *server {
	return &server{conditions: newConditionCache(), policies: newPolicyCache(), mutating: newMutatingPolicyCache(), authz: &rulesAuthorizer{}, crds: newCRDCache()}
}

func errorResponse(id json.RawMessage, message string) map[string]any {
	response := map[string]any{"error": message}
	if len(id) > 0 {
		response["id"] = id
	}
	return response
}

func (s *server) handle(line []byte) map[string]any {
	var req request
	decoder := json.NewDecoder(bytes.NewReader(line))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&req); err != nil {
		return errorResponse(nil, "cannot decode request: "+err.Error())
	}
	response, err := s.dispatch(&req)
	if err != nil {
		return errorResponse(req.ID, err.Error())
	}
	if len(req.ID) > 0 {
		response["id"] = req.ID
	}
	return response
}

func (s *server) dispatch(req *request) (map[string]any, error) {
	switch req.Op {
	case "version":
		return map[string]any{
			"kubernetes":              kubernetesVersion(),
			"celCompatibilityVersion": compatibilityVersion(),
		}, nil
	case "compileMatchConditions":
		return map[string]any{"results": compileMatchConditions(req.Conditions, req.Stored)}, nil
	case "evaluateMatchConditions":
		if req.Attributes == nil || req.InvocationKind == nil {
			return nil, fmt.Errorf("evaluateMatchConditions needs attributes and invocationKind")
		}
		results, filterErr, err := s.evaluateMatchConditions(req.Conditions, *req.InvocationKind, req.Attributes)
		if err != nil {
			return nil, err
		}
		if filterErr != nil {
			return map[string]any{"filterError": filterErr.Error()}, nil
		}
		return map[string]any{"results": results}, nil
	case "admitPolicyObject":
		return s.admitPolicyObject(req)
	case "dispatchValidatingPolicies":
		return s.dispatchValidatingPolicies(req)
	case "dispatchMutatingPolicies":
		return s.dispatchMutatingPolicies(req)
	case "releaseMutatingPolicies":
		return s.releaseMutatingPolicies(req)
	case "setAuthorizer":
		if err := validateRules(req.Rules); err != nil {
			return nil, err
		}
		s.authz = &rulesAuthorizer{rules: req.Rules}
		return map[string]any{}, nil
	case "typeCheckValidatingPolicy":
		return s.typeCheckValidatingPolicy(req)
	case "policyMetrics":
		return policyMetrics()
	case "podTemplateHash":
		return podTemplateHash(req.Object, req.CollisionCount)
	case "decodeProtobuf":
		return decodeProtobuf(req.Data)
	case "validatePodUpdate":
		return validatePodUpdate(req.Object, req.OldObject)
	case "strictDecode":
		return strictDecode(req.Data, req.ContentType, req.InvocationKind)
	case "strictPatch":
		return strictPatch(req.Object, req.Data, req.ContentType, req.FieldValidation, req.InvocationKind)
	case "applyFields":
		return applyFields(req)
	case "updateFields":
		return updateFields(req)
	case "bootstrapPolicy":
		return bootstrapPolicy()
	case "admitCustomResourceDefinition":
		return admitCustomResourceDefinition(req.Object, req.OldObject, req.Subresource)
	case "customResourceDefinitionStatus":
		return customResourceDefinitionStatus(req.Object, req.CRDs)
	case "admitCustomResource":
		return s.admitCustomResource(req)
	case "customResourceTable":
		return s.customResourceTable(req)
	case "":
		return nil, fmt.Errorf("request has no op")
	default:
		return nil, fmt.Errorf("unknown op %q (version, compileMatchConditions, evaluateMatchConditions, admitPolicyObject, dispatchValidatingPolicies, dispatchMutatingPolicies, releaseMutatingPolicies, setAuthorizer, typeCheckValidatingPolicy, policyMetrics, podTemplateHash, decodeProtobuf, validatePodUpdate, strictDecode, strictPatch, applyFields, updateFields, bootstrapPolicy, admitCustomResourceDefinition, customResourceDefinitionStatus, admitCustomResource, customResourceTable)", req.Op)
	}
}
