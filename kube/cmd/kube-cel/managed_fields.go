package main

// applyFields and updateFields: server-side apply and managedFields with Kubernetes' own field
// manager, built as kube-apiserver builds it for a built-in resource:
//   - the type converter from the generated OpenAPI definitions (k8s.io/kubernetes
//     pkg/generated/openapi GetOpenAPIDefinitions, wrapped by pkg/controlplane/apiserver
//     config.go's GetOpenAPIDefinitionsWithoutDisabledFeatures, named by
//     openapinamer.NewDefinitionNamer over the schemes cmd/kube-apiserver/app/config.go passes),
//     the resources' definitions built with kube-openapi builder3.BuildOpenAPIDefinitionsForResources
//     and managedfields.NewTypeConverter, as k8s.io/apiserver pkg/server/genericapiserver.go
//     getOpenAPIModels does;
//   - managedfields.NewDefaultFieldManager with the legacy scheme as converter, defaulter and
//     creater, the endpoint's kind, its internal hub version and the subresource, as
//     pkg/endpoints/installer.go registerResourceHandlers does (no reset fields: the status
//     strategies' reset fields are not modelled);
//   - applyFields is patch.go applyPatcher (applyPatchToCurrentObject, createNewObject:
//     FieldManager.Apply of the YAML patch on the live object, or on a new empty one), with
//     force; a conflict is upstream's 409 (internal.NewConflictError);
//   - updateFields is the FieldManager.UpdateNoErrors every other write runs (create.go,
//     update.go, patch.go applyPatch) with managerOrUserAgent's manager: it answers the
//     managedFields the written object gets (the object itself is the simulator's).

import (
	"encoding/json"
	"fmt"
	"sync"

	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/util/openapi"
	aggregatorscheme "k8s.io/kube-aggregator/pkg/apiserver/scheme"
	openapibuilder3 "k8s.io/kube-openapi/pkg/builder3"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	generatedopenapi "k8s.io/kubernetes/pkg/generated/openapi"
	"sigs.k8s.io/yaml"
)

var (
	typeConverterOnce sync.Once
	typeConverter     managedfields.TypeConverter
	typeConverterErr  error
	fieldManagersMu   sync.Mutex
	fieldManagers     = map[string]*managedfields.FieldManager{}
)

// The type converter of the legacy scheme's resources (built once: about a second).
func kubeTypeConverter() (managedfields.TypeConverter, error) {
	typeConverterOnce.Do(func() {
		definitions := openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
		namer := openapinamer.NewDefinitionNamer(legacyscheme.Scheme, apiextensionsapiserver.Scheme, aggregatorscheme.Scheme)
		config := genericapiserver.DefaultOpenAPIV3Config(definitions, namer)
		known := definitions(func(string) spec.Ref { return spec.Ref{} })
		names := []string{}
		seen := map[string]bool{}
		for gvk := range legacyscheme.Scheme.AllKnownTypes() {
			if gvk.Version == runtime.APIVersionInternal {
				continue
			}
			obj, err := legacyscheme.Scheme.New(gvk)
			if err != nil {
				continue
			}
			name := openapiutil.GetCanonicalTypeName(obj)
			if _, ok := known[name]; !ok || seen[name] {
				continue
			}
			if _, err := meta.Accessor(obj); err != nil {
				continue // not an object with metadata (options, lists, events of a watch)
			}
			seen[name] = true
			names = append(names, name)
		}
		spec, err := openapibuilder3.BuildOpenAPIDefinitionsForResources(config, names...)
		if err != nil {
			typeConverterErr = fmt.Errorf("building the OpenAPI definitions: %v", err)
			return
		}
		typeConverter, typeConverterErr = managedfields.NewTypeConverter(spec, false)
	})
	return typeConverter, typeConverterErr
}

// The field manager of one endpoint (kind and subresource), as installer.go makes it.
func fieldManagerFor(gvk schema.GroupVersionKind, subresource string) (*managedfields.FieldManager, error) {
	key := gvk.String() + "/" + subresource
	fieldManagersMu.Lock()
	defer fieldManagersMu.Unlock()
	if manager, ok := fieldManagers[key]; ok {
		return manager, nil
	}
	converter, err := kubeTypeConverter()
	if err != nil {
		return nil, err
	}
	hub := schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal}
	manager, err := managedfields.NewDefaultFieldManager(converter, legacyscheme.Scheme, legacyscheme.Scheme,
		legacyscheme.Scheme, gvk, hub, subresource, nil)
	if err != nil {
		return nil, err
	}
	fieldManagers[key] = manager
	return manager, nil
}

// The versioned object of a JSON document (defaulted as the request decoder defaults it), or a
// new empty one of the kind when the document is absent.
func versionedObject(data json.RawMessage, gvk schema.GroupVersionKind, defaulted bool) (runtime.Object, error) {
	if len(data) == 0 || string(data) == "null" {
		obj, err := legacyscheme.Scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		return obj, nil
	}
	obj, _, err := legacyscheme.Codecs.UniversalDeserializer().Decode(data, &gvk, nil)
	if err != nil {
		return nil, err
	}
	if defaulted {
		legacyscheme.Scheme.Default(obj)
	}
	return obj, nil
}

// The object as the endpoint's version encodes it.
func encodeVersioned(obj runtime.Object, gvk schema.GroupVersionKind) (json.RawMessage, error) {
	versioned, err := legacyscheme.Scheme.ConvertToVersion(obj, gvk.GroupVersion())
	if err != nil {
		return nil, err
	}
	versioned.GetObjectKind().SetGroupVersionKind(gvk)
	return json.Marshal(versioned)
}

// The endpoint's kind, its field manager and the live object (`live`: null for a create) of an
// applyFields or updateFields request.
func fieldManagerInput(req *request, op string, live json.RawMessage) (schema.GroupVersionKind,
	*managedfields.FieldManager, runtime.Object, error) {
	kind := req.InvocationKind
	if kind == nil || kind.Version == "" || kind.Kind == "" {
		return schema.GroupVersionKind{}, nil, nil, fmt.Errorf("%s needs invocationKind (the endpoint's group, version and kind)", op)
	}
	gvk := schema.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind}
	manager, err := fieldManagerFor(gvk, req.Subresource)
	if err != nil {
		return gvk, nil, nil, fmt.Errorf("%s: %v", op, err)
	}
	liveObj, err := versionedObject(live, gvk, false)
	if err != nil {
		return gvk, nil, nil, fmt.Errorf("%s: the live object does not decode: %v", op, err)
	}
	return gvk, manager, liveObj, nil
}

// applyFields: {"object": the live object | null, "data": the apply patch (YAML), "manager",
// "force", "subresource", "invocationKind"} -> {"object": the applied object} | {"status": ...}.
func applyFields(req *request) (map[string]any, error) {
	gvk, manager, live, err := fieldManagerInput(req, "applyFields", req.Object)
	if err != nil {
		return nil, err
	}
	patchObj := &unstructured.Unstructured{Object: map[string]interface{}{}}
	if err := yaml.Unmarshal(req.Data, &patchObj.Object); err != nil {
		return statusAnswer(apierrors.NewBadRequest(fmt.Sprintf("error decoding YAML: %v", err))), nil
	}
	obj, err := manager.Apply(live, patchObj, req.Manager, req.Force)
	if err != nil {
		if status, ok := err.(apierrors.APIStatus); ok {
			return map[string]any{"status": status.Status()}, nil
		}
		// patch.go returns the field manager's other errors as they are (a 500).
		return statusAnswer(apierrors.NewInternalError(err)), nil
	}
	encoded, err := encodeVersioned(obj, gvk)
	if err != nil {
		return nil, fmt.Errorf("applyFields: %v", err)
	}
	return map[string]any{"object": encoded}, nil
}

// updateFields: {"object": the object written, "oldObject": the live object | null, "manager",
// "subresource", "invocationKind"} -> {"managedFields": [...]}.
func updateFields(req *request) (map[string]any, error) {
	gvk, manager, live, err := fieldManagerInput(req, "updateFields", req.OldObject)
	if err != nil {
		return nil, err
	}
	// The request body as the handler holds it: decoded and defaulted.
	written, err := versionedObject(req.Object, gvk, true)
	if err != nil {
		return nil, fmt.Errorf("updateFields: the object does not decode: %v", err)
	}
	updated := manager.UpdateNoErrors(live, written, req.Manager)
	accessor, err := meta.Accessor(updated)
	if err != nil {
		return nil, fmt.Errorf("updateFields: %v", err)
	}
	managed := accessor.GetManagedFields()
	if managed == nil {
		return map[string]any{"managedFields": []any{}}, nil
	}
	return map[string]any{"managedFields": managed}, nil
}
