package main

// CustomResourceDefinitions and their custom resources as kube-apiserver's apiextensions-apiserver
// (k8s.io/apiextensions-apiserver v0.37.2) serves them, for the simulator:
//
//   - admitCustomResourceDefinition: the CRD registry strategy (pkg/registry/
//     customresourcedefinition/strategy.go: PrepareForCreate/PrepareForUpdate, Validate/
//     ValidateUpdate with validation.ValidateCustomResourceDefinition, WarningsOnCreate/Update,
//     and the status strategy for /status), after the v1 scheme's defaults.
//   - customResourceDefinitionStatus: what the naming controller (pkg/controller/status/
//     naming_controller.go calculateNamesAndConditions) and then the establishing controller
//     (pkg/controller/establish/establishing_controller.go sync) write into a CRD's status.
//   - admitCustomResource: a custom resource through the steps of pkg/apiserver/
//     customresource_handler.go: "decode" (the request codec: schemaCoercingDecoder's pruning and
//     ObjectMeta coercion, then unstructuredDefaulter), "default" (the defaulter alone, as the
//     mutating webhook dispatcher runs it on a patched object), "validate" (customresource's
//     strategy or status strategy: PrepareForCreate/Update, Validate/ValidateUpdate with the
//     OpenAPI schema, embedded ObjectMeta, list types and x-kubernetes-validations CEL rules,
//     the finalizer warnings) and "store" (the storage codec: pruning with malformed metadata
//     dropped, then the defaulter, as a read from etcd returns it).
//   - customResourceTable: the Table of customresource/tableconvertor for the version's
//     additionalPrinterColumns (Age when it has none: apiserver/helpers.go
//     serveDefaultColumnsIfEmpty).
//
// A CRD's compiled schemas, validators and CEL programs are kept per uid and resourceVersion (the
// handler's crdInfo, rebuilt when the CRD changes), for the last maxCachedDefinitions CRDs.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresourcedefinition"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/util/webhook"
)

const maxCachedDefinitions = 64

var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
}()

var crdGroupKind = schema.GroupKind{Group: apiextensions.GroupName, Kind: "CustomResourceDefinition"}

// decodeCRD decodes a v1 CRD with the scheme's defaults (SetObjectDefaults_CustomResourceDefinition).
func decodeCRD(raw json.RawMessage) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(raw, crd); err != nil {
		return nil, err
	}
	crdScheme.Default(crd)
	return crd, nil
}

func crdToInternal(in *apiextensionsv1.CustomResourceDefinition) (*apiextensions.CustomResourceDefinition, error) {
	out := &apiextensions.CustomResourceDefinition{}
	if err := crdScheme.Convert(in, out, nil); err != nil {
		return nil, err
	}
	return out, nil
}

func crdToV1(in *apiextensions.CustomResourceDefinition) (*apiextensionsv1.CustomResourceDefinition, error) {
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := crdScheme.Convert(in, out, nil); err != nil {
		return nil, err
	}
	out.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return out, nil
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// admitCustomResourceDefinition gives the CRD as the registry stores it (v1 JSON) with the
// strategy's warnings, or the 422 Status of its validation.
func admitCustomResourceDefinition(rawObject, rawOld json.RawMessage, subresource string) (map[string]any, error) {
	v1Object, err := decodeCRD(rawObject)
	if err != nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	obj, err := crdToInternal(v1Object)
	if err != nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	ctx := context.Background()
	strategy := customresourcedefinition.NewStrategy(crdScheme)
	var errs field.ErrorList
	var warnings []string
	if isNull(rawOld) {
		if subresource != "" {
			return nil, fmt.Errorf("a create of the %s subresource", subresource)
		}
		strategy.PrepareForCreate(ctx, obj)
		errs = strategy.Validate(ctx, obj)
		warnings = strategy.WarningsOnCreate(ctx, obj)
	} else {
		v1Old, err := decodeCRD(rawOld)
		if err != nil {
			return nil, fmt.Errorf("oldObject: %v", err)
		}
		old, err := crdToInternal(v1Old)
		if err != nil {
			return nil, fmt.Errorf("oldObject: %v", err)
		}
		switch subresource {
		case "":
			strategy.PrepareForUpdate(ctx, obj, old)
			errs = strategy.ValidateUpdate(ctx, obj, old)
			warnings = strategy.WarningsOnUpdate(ctx, obj, old)
		case "status":
			status := customresourcedefinition.NewStatusStrategy(crdScheme)
			status.PrepareForUpdate(ctx, obj, old)
			errs = status.ValidateUpdate(ctx, obj, old)
		default:
			return nil, fmt.Errorf("CustomResourceDefinitions have no %q subresource", subresource)
		}
	}
	if len(errs) > 0 {
		return map[string]any{"status": apierrors.NewInvalid(crdGroupKind, obj.Name, errs).ErrStatus}, nil
	}
	out, err := crdToV1(obj)
	if err != nil {
		return nil, err
	}
	response := map[string]any{"object": out}
	if len(warnings) > 0 {
		response["warnings"] = warnings
	}
	return response, nil
}

// customResourceDefinitionStatus gives the statuses the naming controller and then the
// establishing controller write for `object` given the other CRDs stored (`crds`): each a whole
// CRD with the new status, in the order they are written; none when neither writes.
func customResourceDefinitionStatus(rawObject json.RawMessage, rawOthers []json.RawMessage) (map[string]any, error) {
	crd, err := decodeCRD(rawObject)
	if err != nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	var others []*apiextensionsv1.CustomResourceDefinition
	for i, raw := range rawOthers {
		other, err := decodeCRD(raw)
		if err != nil {
			return nil, fmt.Errorf("crds[%d]: %v", i, err)
		}
		others = append(others, other)
	}
	writes := []any{}
	// naming_controller.go sync: nothing to do when the accepted names are the requested ones.
	if !apiequality.Semantic.DeepEqual(crd.Spec.Names, crd.Status.AcceptedNames) {
		names, naming, established := calculateNamesAndConditions(crd, others)
		if !reflect.DeepEqual(crd.Status.AcceptedNames, names) ||
			!apihelpers.IsCRDConditionEquivalent(&naming, apihelpers.FindCRDCondition(crd, apiextensionsv1.NamesAccepted)) {
			crd = crd.DeepCopy()
			crd.Status.AcceptedNames = names
			apihelpers.SetCRDCondition(crd, naming)
			apihelpers.SetCRDCondition(crd, established)
			crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
			writes = append(writes, crd)
		}
	}
	// establishing_controller.go sync.
	if apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.NamesAccepted) &&
		!apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
		crd = crd.DeepCopy()
		condition := apiextensionsv1.CustomResourceDefinitionCondition{
			Type:    apiextensionsv1.Established,
			Status:  apiextensionsv1.ConditionTrue,
			Reason:  "InitialNamesAccepted",
			Message: "the initial names have been accepted",
		}
		if c := crd.Spec.Conversion; c != nil && c.Webhook != nil && c.Webhook.ClientConfig != nil &&
			len(webhook.ValidateCABundle(field.NewPath(""), c.Webhook.ClientConfig.CABundle)) > 0 {
			condition = apiextensionsv1.CustomResourceDefinitionCondition{
				Type:    apiextensionsv1.Established,
				Status:  apiextensionsv1.ConditionFalse,
				Reason:  "InvalidCABundle",
				Message: "The conversion webhook CABundle is invalid",
			}
		}
		apihelpers.SetCRDCondition(crd, condition)
		crd.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
		writes = append(writes, crd)
	}
	return map[string]any{"writes": writes}, nil
}

// calculateNamesAndConditions is the naming controller's, with the names the other CRDs of the
// group have been given (getAcceptedNamesForGroup) from `others`.
func calculateNamesAndConditions(in *apiextensionsv1.CustomResourceDefinition, others []*apiextensionsv1.CustomResourceDefinition) (apiextensionsv1.CustomResourceDefinitionNames, apiextensionsv1.CustomResourceDefinitionCondition, apiextensionsv1.CustomResourceDefinitionCondition) {
	allResources, allKinds := sets.New[string](), sets.New[string]()
	for _, item := range others {
		if item.Spec.Group != in.Spec.Group || item.Name == in.Name {
			continue
		}
		allResources.Insert(item.Status.AcceptedNames.Plural, item.Status.AcceptedNames.Singular)
		allResources.Insert(item.Status.AcceptedNames.ShortNames...)
		allKinds.Insert(item.Status.AcceptedNames.Kind, item.Status.AcceptedNames.ListKind)
	}
	// The controller lists every CRD of the group, this one included (its own accepted names
	// are in the set; equalToAcceptedOrFresh lets them through).
	allResources.Insert(in.Status.AcceptedNames.Plural, in.Status.AcceptedNames.Singular)
	allResources.Insert(in.Status.AcceptedNames.ShortNames...)
	allKinds.Insert(in.Status.AcceptedNames.Kind, in.Status.AcceptedNames.ListKind)

	naming := apiextensionsv1.CustomResourceDefinitionCondition{Type: apiextensionsv1.NamesAccepted, Status: apiextensionsv1.ConditionUnknown}
	requested, accepted := in.Spec.Names, in.Status.AcceptedNames
	names := in.Status.AcceptedNames
	conflict := func(reason string, err error) {
		naming.Status, naming.Reason, naming.Message = apiextensionsv1.ConditionFalse, reason, err.Error()
	}
	if err := equalToAcceptedOrFresh(requested.Plural, accepted.Plural, allResources); err != nil {
		conflict("PluralConflict", err)
	} else {
		names.Plural = requested.Plural
	}
	if err := equalToAcceptedOrFresh(requested.Singular, accepted.Singular, allResources); err != nil {
		conflict("SingularConflict", err)
	} else {
		names.Singular = requested.Singular
	}
	if !reflect.DeepEqual(requested.ShortNames, accepted.ShortNames) {
		var message string
		existing := sets.New[string](accepted.ShortNames...)
		var conflicts []string
		for _, shortName := range requested.ShortNames {
			if existing.Has(shortName) {
				continue
			}
			if err := equalToAcceptedOrFresh(shortName, "", allResources); err != nil {
				conflicts = append(conflicts, err.Error())
			}
		}
		if len(conflicts) > 0 {
			// utilerrors.NewAggregate's message: one error as is, more in brackets.
			message = conflicts[0]
			if len(conflicts) > 1 {
				message = "["
				for i, c := range conflicts {
					if i > 0 {
						message += ", "
					}
					message += c
				}
				message += "]"
			}
			naming.Status, naming.Reason, naming.Message = apiextensionsv1.ConditionFalse, "ShortNamesConflict", message
		} else {
			names.ShortNames = requested.ShortNames
		}
	}
	if err := equalToAcceptedOrFresh(requested.Kind, accepted.Kind, allKinds); err != nil {
		conflict("KindConflict", err)
	} else {
		names.Kind = requested.Kind
	}
	if err := equalToAcceptedOrFresh(requested.ListKind, accepted.ListKind, allKinds); err != nil {
		conflict("ListKindConflict", err)
	} else {
		names.ListKind = requested.ListKind
	}
	names.Categories = requested.Categories
	if naming.Status == apiextensionsv1.ConditionUnknown {
		naming.Status, naming.Reason, naming.Message = apiextensionsv1.ConditionTrue, "NoConflicts", "no conflicts found"
	}
	established := apiextensionsv1.CustomResourceDefinitionCondition{
		Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
		Reason: "NotAccepted", Message: "not all names are accepted",
	}
	if old := apihelpers.FindCRDCondition(in, apiextensionsv1.Established); old != nil {
		established = *old
	}
	if established.Status != apiextensionsv1.ConditionTrue && naming.Status == apiextensionsv1.ConditionTrue {
		established = apiextensionsv1.CustomResourceDefinitionCondition{
			Type: apiextensionsv1.Established, Status: apiextensionsv1.ConditionFalse,
			Reason: "Installing", Message: "the initial names have been accepted",
		}
	}
	return names, naming, established
}

func equalToAcceptedOrFresh(requestedName, acceptedName string, usedNames sets.Set[string]) error {
	if requestedName == acceptedName || !usedNames.Has(requestedName) {
		return nil
	}
	return fmt.Errorf("%q is already in use", requestedName)
}

// servedVersion is one version of a CRD as the handler serves it (crdInfo's per-version parts).
type servedVersion struct {
	kind       schema.GroupVersionKind
	structural *structuralschema.Structural
	strategy   rest.RESTUpdateStrategy
	create     rest.RESTCreateStrategy
	status     rest.RESTUpdateStrategy // nil without the status subresource
	table      rest.TableConvertor
}

type crdInfo struct {
	preserveUnknownFields bool
	structural            map[string]*structuralschema.Structural // by version, for the coercer
	versions              map[string]*servedVersion
}

type crdCache struct {
	mu      sync.Mutex
	entries map[string]*crdInfo
	order   []string
}

func newCRDCache() *crdCache { return &crdCache{entries: map[string]*crdInfo{}} }

// get builds or returns the served form of `raw` (the CRD as stored).
func (c *crdCache) get(raw json.RawMessage) (*crdInfo, *apiextensionsv1.CustomResourceDefinition, error) {
	crd, err := decodeCRD(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("crd: %v", err)
	}
	key := string(crd.UID) + "/" + crd.ResourceVersion
	if crd.UID == "" || crd.ResourceVersion == "" {
		key = ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if info, ok := c.entries[key]; ok && key != "" {
		return info, crd, nil
	}
	info, err := buildCRDInfo(crd)
	if err != nil {
		return nil, nil, err
	}
	if key != "" {
		if len(c.order) >= maxCachedDefinitions {
			delete(c.entries, c.order[0])
			c.order = c.order[1:]
		}
		c.entries[key] = info
		c.order = append(c.order, key)
	}
	return info, crd, nil
}

// buildCRDInfo follows customresource_handler.go getOrCreateServingInfoFor.
func buildCRDInfo(crd *apiextensionsv1.CustomResourceDefinition) (*crdInfo, error) {
	info := &crdInfo{
		preserveUnknownFields: crd.Spec.PreserveUnknownFields,
		structural:            map[string]*structuralschema.Structural{},
		versions:              map[string]*servedVersion{},
	}
	for _, v := range crd.Spec.Versions {
		val, err := apihelpers.GetSchemaForVersion(crd, v.Name)
		if err != nil {
			return nil, err
		}
		if val == nil {
			continue
		}
		internal := &apiextensions.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(val, internal, nil); err != nil {
			return nil, fmt.Errorf("failed converting CRD validation to internal version: %v", err)
		}
		s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if !crd.Spec.PreserveUnknownFields && err != nil {
			return nil, fmt.Errorf("the server could not properly serve the CR schema: %v", err)
		}
		if !crd.Spec.PreserveUnknownFields {
			s = s.DeepCopy()
			if err := structuraldefaulting.PruneDefaults(s); err != nil {
				return nil, fmt.Errorf("the server could not properly serve the CR schema: %v", err)
			}
		}
		info.structural[v.Name] = s
	}
	for _, v := range crd.Spec.Versions {
		kind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Status.AcceptedNames.Kind}
		if kind.Kind == "" {
			kind.Kind = crd.Spec.Names.Kind
		}
		validationSchema, err := apihelpers.GetSchemaForVersion(crd, v.Name)
		if err != nil {
			return nil, err
		}
		var schemaProps *apiextensions.JSONSchemaProps
		var internalValidation *apiextensions.CustomResourceValidation
		if validationSchema != nil {
			internalValidation = &apiextensions.CustomResourceValidation{}
			if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(validationSchema, internalValidation, nil); err != nil {
				return nil, fmt.Errorf("failed to convert CRD validation to internal version: %v", err)
			}
			schemaProps = internalValidation.OpenAPIV3Schema
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(schemaProps)
		if err != nil {
			return nil, err
		}
		subresources, err := apihelpers.GetSubresourcesForVersion(crd, v.Name)
		if err != nil {
			return nil, err
		}
		var statusSpec *apiextensions.CustomResourceSubresourceStatus
		var statusValidator apiservervalidation.SchemaValidator
		if subresources != nil && subresources.Status != nil {
			statusSpec = &apiextensions.CustomResourceSubresourceStatus{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceStatus_To_apiextensions_CustomResourceSubresourceStatus(subresources.Status, statusSpec, nil); err != nil {
				return nil, err
			}
			if internalValidation != nil && internalValidation.OpenAPIV3Schema != nil && internalValidation.OpenAPIV3Schema.Properties != nil {
				if statusSchema, ok := internalValidation.OpenAPIV3Schema.Properties["status"]; ok {
					statusValidator, _, err = apiservervalidation.NewSchemaValidator(&statusSchema)
					if err != nil {
						return nil, err
					}
				}
			}
		}
		var scaleSpec *apiextensions.CustomResourceSubresourceScale
		if subresources != nil && subresources.Scale != nil {
			scaleSpec = &apiextensions.CustomResourceSubresourceScale{}
			if err := apiextensionsv1.Convert_v1_CustomResourceSubresourceScale_To_apiextensions_CustomResourceSubresourceScale(subresources.Scale, scaleSpec, nil); err != nil {
				return nil, err
			}
		}
		strategy := customresource.NewStrategy(crdserverscheme.NewUnstructuredObjectTyper(),
			crd.Spec.Scope == apiextensionsv1.NamespaceScoped, kind, validator, statusValidator,
			info.structural[v.Name], statusSpec, scaleSpec, v.SelectableFields)
		served := &servedVersion{kind: kind, structural: info.structural[v.Name], strategy: strategy, create: strategy}
		if statusSpec != nil {
			served.status = customresource.NewStatusStrategy(strategy)
		}
		columns := v.AdditionalPrinterColumns
		if len(columns) == 0 {
			columns = []apiextensionsv1.CustomResourceColumnDefinition{{Name: "Age", Type: "date",
				Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"], JSONPath: ".metadata.creationTimestamp"}}
		}
		// An invalid printer specification falls back to the default printing (the convertor
		// New returns along with its error).
		served.table, _ = tableconvertor.New(columns)
		info.versions[v.Name] = served
	}
	return info, nil
}

// coerce is unstructuredSchemaCoercer.apply: ObjectMeta read apart, the rest pruned to the
// schema (unless unknown fields are preserved) with non-nullable nulls dropped, ObjectMeta of
// embedded resources coerced, then ObjectMeta and the type fields put back. It returns the
// unknown fields' paths.
func coerce(u map[string]any, info *crdInfo, gk schema.GroupKind, dropInvalidMetadata bool) ([]string, error) {
	obj := &unstructured.Unstructured{Object: u}
	kind, foundKind, err := unstructured.NestedString(u, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u, "apiVersion")
	if err != nil {
		return nil, err
	}
	objectMeta, foundObjectMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u, schemaobjectmeta.ObjectMetaOptions{
		DropMalformedFields: dropInvalidMetadata, ReturnUnknownFieldPaths: true,
	})
	if err != nil {
		return nil, err
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, err
	}
	if gv.Group == gk.Group && kind == gk.Kind {
		if !info.preserveUnknownFields {
			unknown = append(unknown, structuralpruning.PruneWithOptions(u, info.structural[gv.Version], true,
				structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, info.structural[gv.Version])
		}
		err, paths := schemaobjectmeta.CoerceWithOptions(nil, u, info.structural[gv.Version], false,
			schemaobjectmeta.CoerceOptions{DropInvalidFields: dropInvalidMetadata, ReturnUnknownFieldPaths: true})
		if err != nil {
			return nil, err
		}
		unknown = append(unknown, paths...)
		if dropInvalidMetadata && objectMeta.Generation == 0 {
			objectMeta.Generation = 1 // repairGeneration, with the storage codec
		}
	}
	if foundKind {
		obj.SetKind(kind)
	}
	if foundAPIVersion {
		obj.SetAPIVersion(apiVersion)
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// objectOf decodes one object as the apiserver's unstructured decoding does (integers as int64).
func objectOf(raw json.RawMessage, what string) (map[string]any, error) {
	u, err := decodeUnstructured(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	if u.Object == nil {
		return nil, fmt.Errorf("%s: not an object", what)
	}
	return u.Object, nil
}

// admitCustomResource runs one step of a custom resource's write (see the file's comment).
func (s *server) admitCustomResource(req *request) (map[string]any, error) {
	info, crd, err := s.crds.get(req.CRD)
	if err != nil {
		return nil, err
	}
	u, err := objectOf(req.Object, "object")
	if err != nil {
		return nil, err
	}
	apiVersion, _, _ := unstructured.NestedString(u, "apiVersion")
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("object: %v", err)
	}
	version, ok := info.versions[gv.Version]
	if !ok || gv.Group != crd.Spec.Group {
		return nil, fmt.Errorf("object: %s is not a version of %s", apiVersion, crd.Name)
	}
	gk := version.kind.GroupKind()
	switch req.Step {
	case "decode", "store":
		unknown, err := coerce(u, info, gk, req.Step == "store")
		if err != nil {
			if req.Step == "decode" {
				// The codec's decoding error: a 400 BadRequest (the handler's
				// errors.NewBadRequest(err.Error())).
				return map[string]any{"status": apierrors.NewBadRequest(err.Error()).ErrStatus}, nil
			}
			return nil, err
		}
		structuraldefaulting.Default(u, info.structural[gv.Version])
		response := map[string]any{"object": u}
		if len(unknown) > 0 {
			response["unknownFields"] = unknown
		}
		return response, nil
	case "default":
		structuraldefaulting.Default(u, info.structural[gv.Version])
		return map[string]any{"object": u}, nil
	case "validate":
		return validateCustomResource(version, u, req.OldObject, req.Subresource)
	default:
		return nil, fmt.Errorf("admitCustomResource: step %q is not decode, default, validate or store", req.Step)
	}
}

func validateCustomResource(version *servedVersion, u map[string]any, rawOld json.RawMessage, subresource string) (map[string]any, error) {
	ctx := context.Background()
	obj := &unstructured.Unstructured{Object: u}
	var errs field.ErrorList
	var warnings []string
	if isNull(rawOld) {
		if subresource != "" {
			return nil, fmt.Errorf("a create of the %s subresource", subresource)
		}
		version.create.PrepareForCreate(ctx, obj)
		errs = version.create.Validate(ctx, obj)
		warnings = version.create.WarningsOnCreate(ctx, obj)
	} else {
		oldU, err := objectOf(rawOld, "oldObject")
		if err != nil {
			return nil, err
		}
		old := &unstructured.Unstructured{Object: oldU}
		strategy := version.strategy
		switch subresource {
		case "":
		case "status":
			if version.status == nil {
				return nil, fmt.Errorf("%s has no status subresource", version.kind)
			}
			strategy = version.status
		default:
			return nil, fmt.Errorf("custom resources have no %q subresource here", subresource)
		}
		strategy.PrepareForUpdate(ctx, obj, old)
		errs = strategy.ValidateUpdate(ctx, obj, old)
		warnings = strategy.WarningsOnUpdate(ctx, obj, old)
	}
	if len(errs) > 0 {
		return map[string]any{"status": apierrors.NewInvalid(version.kind.GroupKind(), obj.GetName(), errs).ErrStatus}, nil
	}
	response := map[string]any{"object": obj.Object}
	if len(warnings) > 0 {
		response["warnings"] = warnings
	}
	return response, nil
}

// customResourceTable converts stored objects of one version into the Table kubectl asks for.
func (s *server) customResourceTable(req *request) (map[string]any, error) {
	info, crd, err := s.crds.get(req.CRD)
	if err != nil {
		return nil, err
	}
	version, ok := info.versions[req.Version]
	if !ok {
		return nil, fmt.Errorf("%s has no version %q", crd.Name, req.Version)
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{}}
	list.SetResourceVersion(req.ResourceVersion)
	for i, raw := range req.Objects {
		u, err := objectOf(raw, fmt.Sprintf("objects[%d]", i))
		if err != nil {
			return nil, err
		}
		list.Items = append(list.Items, unstructured.Unstructured{Object: u})
	}
	var target runtime.Object = list
	if req.Single && len(list.Items) == 1 {
		target = &list.Items[0]
	}
	table, err := version.table.ConvertToTable(context.Background(), target, &metav1.TableOptions{NoHeaders: req.NoHeaders})
	if err != nil {
		return nil, err
	}
	table.SetGroupVersionKind(metav1.SchemeGroupVersion.WithKind("Table"))
	return map[string]any{"table": table}, nil
}
