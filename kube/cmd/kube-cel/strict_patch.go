package main

// strictPatch: fieldValidation on a PATCH, as k8s.io/apiserver pkg/endpoints/handlers/patch.go
// runs it with Strict or Warn (Warn is the default when the query has none: rest.go
// fieldValidation), for the three patch types the simulator applies itself:
//   - JSON patch and merge patch (jsonPatcher.applyJSPatch, applyPatchToCurrentObject): the patch
//     bytes are decoded with sigs.k8s.io/json UnmarshalStrict (duplicate fields; a JSON patch's
//     are prefixed "json patch "), the patch is applied to the stored object as the endpoint's
//     version encodes it, and the result is decoded by the strict serializer (unknown fields);
//   - strategic merge patch (strategicPatchObject, applyPatchToObject): UnmarshalStrict of the
//     patch, StrategicMergeMapPatch on the stored object's map, then
//     DefaultUnstructuredConverter.FromUnstructuredWithValidation (unknown fields).
// With Warn each error is a Warning; with Strict they are one 422 Invalid of the field "patch"
// whose value is the patched JSON (JSON and merge patch) or the patch map printed with %+v
// (strategic merge patch). A patch body that does not decode strictly is a 400. Errors of the
// patching itself are left to the simulator ({}), as are requests without these directives.

import (
	"encoding/json"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	kjson "sigs.k8s.io/json"
)

// patch.go jsonPatchOp: what a JSON patch operation decodes into.
type jsonPatchOp struct {
	Op    string      `json:"op"`
	Path  string      `json:"path"`
	From  string      `json:"from"`
	Value interface{} `json:"value"`
}

func statusAnswer(err *apierrors.StatusError) map[string]any {
	return map[string]any{"status": err.ErrStatus}
}

// strictAnswer: Warnings with Warn, else the 422 with `value` as the patch's value.
func strictAnswer(errs []error, directive, value string) map[string]any {
	if directive == metav1.FieldValidationWarn {
		warnings := []string{}
		for _, e := range errs {
			warnings = append(warnings, e.Error())
		}
		return map[string]any{"warnings": warnings}
	}
	return statusAnswer(apierrors.NewInvalid(schema.GroupKind{}, "", field.ErrorList{
		field.Invalid(field.NewPath("patch"), value, runtime.NewStrictDecodingError(errs).Error()),
	}))
}

func strictPatch(current json.RawMessage, patch []byte, patchType, directive string,
	kind *groupVersionKind) (map[string]any, error) {
	if kind == nil || kind.Version == "" || kind.Kind == "" {
		return nil, fmt.Errorf("strictPatch needs invocationKind (the endpoint's group, version and kind)")
	}
	if directive != metav1.FieldValidationStrict && directive != metav1.FieldValidationWarn {
		return map[string]any{}, nil
	}
	gvk := schema.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind}
	gv := gvk.GroupVersion()
	info, ok := runtime.SerializerInfoForMediaType(legacyscheme.Codecs.SupportedMediaTypes(), runtime.ContentTypeJSON)
	if !ok || info.StrictSerializer == nil {
		return nil, fmt.Errorf("strictPatch: no JSON serializers")
	}
	// The stored object in the endpoint's version (the registry holds it internally and the
	// patcher encodes it for the version).
	versioned, _, err := legacyscheme.Codecs.UniversalDeserializer().Decode(current, &gvk, nil)
	if err != nil {
		return nil, fmt.Errorf("strictPatch: the current object does not decode: %v", err)
	}
	switch types.PatchType(patchType) {
	case types.JSONPatchType, types.MergePatchType:
		hub := schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}
		codec := runtime.NewCodec(legacyscheme.Codecs.EncoderForVersion(info.Serializer, gv),
			legacyscheme.Codecs.DecoderToVersion(info.StrictSerializer, hub))
		versionedJS, err := runtime.Encode(codec, versioned)
		if err != nil {
			return nil, fmt.Errorf("strictPatch: encoding the current object: %v", err)
		}
		var strictErrs []error
		var patchedJS []byte
		if types.PatchType(patchType) == types.JSONPatchType {
			var v []jsonPatchOp
			if strictErrs, err = kjson.UnmarshalStrict(patch, &v); err != nil {
				return statusAnswer(apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))), nil
			}
			for i, e := range strictErrs {
				strictErrs[i] = fmt.Errorf("json patch %v", e)
			}
			operations, err := jsonpatch.DecodePatch(patch)
			if err != nil {
				return map[string]any{}, nil
			}
			if patchedJS, err = operations.Apply(versionedJS); err != nil {
				return map[string]any{}, nil
			}
		} else {
			v := map[string]any{}
			if strictErrs, err = kjson.UnmarshalStrict(patch, &v); err != nil {
				return statusAnswer(apierrors.NewBadRequest(fmt.Sprintf("error decoding patch: %v", err))), nil
			}
			if patchedJS, err = jsonpatch.MergePatch(versionedJS, patch); err != nil {
				return map[string]any{}, nil
			}
		}
		objToUpdate, err := legacyscheme.Scheme.New(hub.WithKind(gvk.Kind))
		if err != nil {
			return nil, fmt.Errorf("strictPatch: %v", err)
		}
		if err := runtime.DecodeInto(codec, patchedJS, objToUpdate); err != nil {
			strictError, isStrict := runtime.AsStrictDecodingError(err)
			if !isStrict {
				return map[string]any{}, nil
			}
			return strictAnswer(append(strictErrs, strictError.Errors()...), directive, string(patchedJS)), nil
		}
		if len(strictErrs) > 0 {
			return strictAnswer(strictErrs, directive, string(patchedJS)), nil
		}
		return map[string]any{}, nil
	case types.StrategicMergePatchType:
		originalMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(versioned)
		if err != nil {
			return nil, fmt.Errorf("strictPatch: %v", err)
		}
		patchMap := map[string]interface{}{}
		strictErrs, err := kjson.UnmarshalStrict(patch, &patchMap)
		if err != nil {
			return statusAnswer(apierrors.NewBadRequest(err.Error())), nil
		}
		schemaReference, err := legacyscheme.Scheme.New(gvk)
		if err != nil {
			return nil, fmt.Errorf("strictPatch: %v", err)
		}
		patchedMap, err := strategicpatch.StrategicMergeMapPatch(originalMap, patchMap, schemaReference)
		if err != nil {
			return map[string]any{}, nil
		}
		objToUpdate, _ := legacyscheme.Scheme.New(gvk)
		if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(patchedMap, objToUpdate, true); err != nil {
			strictError, isStrict := runtime.AsStrictDecodingError(err)
			if !isStrict {
				return map[string]any{}, nil
			}
			return strictAnswer(append(strictErrs, strictError.Errors()...), directive, fmt.Sprintf("%+v", patchMap)), nil
		}
		if len(strictErrs) > 0 {
			return strictAnswer(strictErrs, directive, fmt.Sprintf("%+v", patchMap)), nil
		}
		return map[string]any{}, nil
	}
	return map[string]any{}, nil
}
