package main

// podTemplateHash: the pod-template-hash the deployment controller gives a new ReplicaSet
// (k8s.io/kubernetes pkg/controller/deployment/sync.go getNewReplicaSet:
// controller.ComputeHash(&d.Spec.Template, d.Status.CollisionCount)). ComputeHash writes
// hashutil.DeepHashObject's spew dump of the Go struct into FNV-32a, so only the Go type gives the
// value a cluster computes: the template is decoded into a v1.PodTemplateSpec as the
// controller's informer decodes it, and Kubernetes' own function hashes it.

import (
	"bytes"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/controller"
)

func podTemplateHash(object json.RawMessage, collisionCount *int32) (map[string]any, error) {
	if len(bytes.TrimSpace(object)) == 0 || bytes.Equal(bytes.TrimSpace(object), []byte("null")) {
		return nil, fmt.Errorf("podTemplateHash needs object (a PodTemplateSpec)")
	}
	var template v1.PodTemplateSpec
	if err := json.Unmarshal(object, &template); err != nil {
		return nil, fmt.Errorf("podTemplateHash: object is not a PodTemplateSpec: %v", err)
	}
	return map[string]any{"hash": controller.ComputeHash(&template, collisionCount)}, nil
}
