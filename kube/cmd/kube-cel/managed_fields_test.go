package main

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var configMapKind = &groupVersionKind{Version: "v1", Kind: "ConfigMap"}

func applyConfigMap(t *testing.T, live json.RawMessage, manager, value string, force bool) map[string]any {
	t.Helper()
	patch := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},` +
		`"data":{"x":"` + value + `"}}`
	response, err := applyFields(&request{Op: "applyFields", Object: live, Data: []byte(patch),
		Manager: manager, Force: force, InvocationKind: configMapKind})
	if err != nil {
		t.Fatal(err)
	}
	return response
}

func managersOf(t *testing.T, object json.RawMessage) map[string]string {
	t.Helper()
	var decoded struct {
		Metadata struct {
			ManagedFields []metav1.ManagedFieldsEntry `json:"managedFields"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(object, &decoded); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, entry := range decoded.Metadata.ManagedFields {
		out[entry.Manager] = string(entry.Operation) + " " + string(entry.FieldsV1.Raw)
	}
	return out
}

// Upstream's field manager: an apply that creates, a second manager's conflicting apply (409 with
// upstream's text), the same apply forced (the field changes owner).
func TestApplyFieldsConflictsAndForce(t *testing.T) {
	created := applyConfigMap(t, nil, "alice", "1", false)
	object, ok := created["object"].(json.RawMessage)
	if !ok {
		t.Fatalf("no object: %v", created)
	}
	if got := managersOf(t, object)["alice"]; got != `Apply {"f:data":{"f:x":{}}}` {
		t.Fatalf("alice's entry: %q", got)
	}
	conflict := applyConfigMap(t, object, "bob", "2", false)
	status, ok := conflict["status"].(metav1.Status)
	if !ok || status.Code != 409 || status.Message != `Apply failed with 1 conflict: conflict with "alice": .data.x` {
		t.Fatalf("conflict: %#v", conflict)
	}
	forced := applyConfigMap(t, object, "bob", "2", true)
	managers := managersOf(t, forced["object"].(json.RawMessage))
	if _, still := managers["alice"]; still || !strings.HasPrefix(managers["bob"], "Apply ") {
		t.Fatalf("after force: %v", managers)
	}
}

// Every other write records an Update entry for its manager, with the defaulted fields.
func TestUpdateFieldsRecordsTheWriter(t *testing.T) {
	pod := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},` +
		`"spec":{"containers":[{"name":"c","image":"nginx"}]}}`
	response, err := updateFields(&request{Op: "updateFields", Object: json.RawMessage(pod),
		Manager: "kubectl-create", InvocationKind: &groupVersionKind{Version: "v1", Kind: "Pod"}})
	if err != nil {
		t.Fatal(err)
	}
	entries, ok := response["managedFields"].([]metav1.ManagedFieldsEntry)
	if !ok || len(entries) != 1 || entries[0].Manager != "kubectl-create" ||
		entries[0].Operation != metav1.ManagedFieldsOperationUpdate {
		t.Fatalf("entries: %#v", response)
	}
	if fields := string(entries[0].FieldsV1.Raw); !strings.Contains(fields, `"f:terminationMessagePath"`) {
		t.Fatalf("the defaulted fields are not recorded: %s", fields)
	}
}

// The field manager's share of a write (go test -bench FieldManager ./cmd/kube-cel): one
// UpdateNoErrors of a Pod and one Apply of a ConfigMap over its live object, as the ops run them.
func BenchmarkFieldManagerUpdatePod(b *testing.B) {
	pod := json.RawMessage(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},` +
		`"spec":{"containers":[{"name":"c","image":"nginx"},{"name":"d","image":"busybox"}]}}`)
	kind := &groupVersionKind{Version: "v1", Kind: "Pod"}
	for i := 0; i < b.N; i++ {
		if _, err := updateFields(&request{Object: pod, OldObject: pod, Manager: "kubectl", InvocationKind: kind}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFieldManagerApplyConfigMap(b *testing.B) {
	patch := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":{"x":"1"}}`)
	created, err := applyFields(&request{Data: patch, Manager: "alice", InvocationKind: configMapKind})
	if err != nil {
		b.Fatal(err)
	}
	live := created["object"].(json.RawMessage)
	for i := 0; i < b.N; i++ {
		if _, err := applyFields(&request{Object: live, Data: patch, Manager: "alice", InvocationKind: configMapKind}); err != nil {
			b.Fatal(err)
		}
	}
}
