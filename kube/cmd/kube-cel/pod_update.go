package main

// validatePodUpdate: the strategy validation of a Pod update (PUT pods/<name>), as
// kube-apiserver runs it in k8s.io/apiserver pkg/registry/rest/update.go BeforeUpdate:
// rest.ValidateUpdate with the pod registry's strategy (k8s.io/kubernetes
// pkg/registry/core/pod/strategy.go podStrategy: the common ObjectMeta checks,
// corevalidation.ValidatePodUpdate with the options of podutil.GetValidationOptionsFromPodSpecAndMeta,
// then the declarative validation). Only Go gives its texts: the Forbidden error of a spec change
// ends with apimachinery's diff of the two internal PodSpecs (Go field names).
//
// The simulator sends both objects after its own defaulting and PrepareForUpdate; they are decoded
// as the apiserver decodes a v1 body (v1 defaults, conversion to the internal type).

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/registry/core/pod"
)

func decodePod(raw json.RawMessage, what string) (*api.Pod, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, fmt.Errorf("validatePodUpdate needs %s (a v1 Pod)", what)
	}
	var versioned v1.Pod
	if err := decodeV1(raw, &versioned); err != nil {
		return nil, fmt.Errorf("validatePodUpdate: %s is not a v1 Pod: %v", what, err)
	}
	var internal api.Pod
	if err := toInternal(&versioned, &internal); err != nil {
		return nil, fmt.Errorf("validatePodUpdate: %s: %v", what, err)
	}
	return &internal, nil
}

// validatePodUpdate answers {} when the update is valid, else {"status": the 422 Status}
// (apierrors.NewInvalid, as BeforeUpdate returns it).
func validatePodUpdate(rawObject, rawOld json.RawMessage) (map[string]any, error) {
	newPod, err := decodePod(rawObject, "object")
	if err != nil {
		return nil, err
	}
	oldPod, err := decodePod(rawOld, "oldObject")
	if err != nil {
		return nil, err
	}
	ctx := genericapirequest.WithNamespace(context.Background(), newPod.Namespace)
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "update", APIPrefix: "api", APIVersion: "v1",
		Namespace: newPod.Namespace, Resource: "pods", Name: newPod.Name,
	})
	errs := rest.ValidateUpdate(ctx, newPod, oldPod, pod.Strategy)
	if len(errs) == 0 {
		return map[string]any{}, nil
	}
	return map[string]any{"status": apierrors.NewInvalid(api.Kind("Pod"), newPod.Name, errs).ErrStatus}, nil
}
