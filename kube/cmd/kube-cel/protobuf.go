package main

// decodeProtobuf: a request body in Kubernetes' protobuf encoding (application/vnd.kubernetes.
// protobuf: the "k8s\x00" magic and a runtime.Unknown envelope naming apiVersion and kind), as
// kubectl's typed clients send it (`kubectl create namespace`, `kubectl auth can-i`), decoded
// with the protobuf serializer of k8s.io/apimachinery (runtime/serializer/protobuf) into the
// versioned Go type of k8s.io/client-go's scheme and answered as that object's JSON, which the
// simulator then handles as a JSON body.

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/client-go/kubernetes/scheme"
)

func decodeProtobuf(data []byte) (map[string]any, error) {
	serializer := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
	object, gvk, err := serializer.Decode(data, nil, nil)
	if err != nil {
		return map[string]any{"decodeError": err.Error()}, nil
	}
	object.GetObjectKind().SetGroupVersionKind(*gvk)
	encoded, err := json.Marshal(object)
	if err != nil {
		return nil, fmt.Errorf("decodeProtobuf: %v", err)
	}
	return map[string]any{"object": json.RawMessage(encoded)}, nil
}
