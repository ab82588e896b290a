package main

// strictDecode: the strict decoding kube-apiserver runs on a create or update body when
// fieldValidation is Strict or Warn (Warn is the default: k8s.io/apiserver
// pkg/endpoints/handlers/rest.go fieldValidation). create.go and update.go decode the body with
// the content type's StrictSerializer of the CodecFactory; a *runtime.strictDecodingError lists
// unknown and duplicate fields as the versioned Go type sees them (sigs.k8s.io/json
// UnmarshalStrict: `unknown field "spec.foo"`, `duplicate field "metadata"`). With Strict it is
// the 400 of transformDecodeError (rest.go); with Warn each error is a Warning.
// Only Go's types know which fields exist, so the simulator asks here.

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
)

// strictDecode answers {"strictErrors":[...],"message":"..."} when the body has unknown or
// duplicate fields, {} when it has none, and {"decodeError":"..."} when it does not decode for
// another reason (the simulator keeps its own answer for those).
func strictDecode(data []byte, contentType string, kind *groupVersionKind) (map[string]any, error) {
	if kind == nil || kind.Version == "" || kind.Kind == "" {
		return nil, fmt.Errorf("strictDecode needs invocationKind (the endpoint's group, version and kind)")
	}
	if contentType == "" {
		contentType = runtime.ContentTypeJSON
	}
	info, ok := runtime.SerializerInfoForMediaType(legacyscheme.Codecs.SupportedMediaTypes(), contentType)
	if !ok || info.StrictSerializer == nil {
		return nil, fmt.Errorf("strictDecode: no strict serializer for %q", contentType)
	}
	scopeKind := schema.GroupVersionKind{Group: kind.Group, Version: kind.Version, Kind: kind.Kind}
	defaultGVK := scopeKind
	_, gvk, err := info.StrictSerializer.Decode(data, &defaultGVK, nil)
	if err == nil {
		return map[string]any{}, nil
	}
	strict, isStrict := runtime.AsStrictDecodingError(err)
	if !isStrict {
		return map[string]any{"decodeError": err.Error()}, nil
	}
	errs := []string{}
	for _, e := range strict.Errors() {
		errs = append(errs, e.Error())
	}
	if gvk == nil || gvk.Kind == "" {
		return map[string]any{"decodeError": err.Error()}, nil
	}
	// transformDecodeError: the body's kind and version, and the kind of the endpoint's object.
	message := fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", gvk.Kind, gvk.Version, scopeKind.Kind, err)
	return map[string]any{"strictErrors": errs, "message": message}, nil
}
