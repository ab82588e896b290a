package main

// bootstrapPolicy: the RBAC objects kube-apiserver creates when it starts (k8s.io/kubernetes
// pkg/registry/rbac/rest/storage_rbac.go PostStartHook: ClusterRoles and ControllerRoles,
// ClusterRoleBindings and ControllerRoleBindings, NamespaceRoles, NamespaceRoleBindings of
// plugin/pkg/auth/authorizer/rbac/bootstrappolicy), as rbac.authorization.k8s.io/v1 JSON with
// their labels and annotations. The simulator stores them and aggregates the roles with an
// aggregationRule as the clusterrole-aggregation controller does (in C++, over the store).

import (
	"sort"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac/bootstrappolicy"
)

func bootstrapPolicy() (map[string]any, error) {
	var clusterRoles, clusterRoleBindings, roles, roleBindings []any
	for _, role := range append(bootstrappolicy.ClusterRoles(), bootstrappolicy.ControllerRoles()...) {
		role.TypeMeta.APIVersion, role.TypeMeta.Kind = rbacv1.SchemeGroupVersion.String(), "ClusterRole"
		clusterRoles = append(clusterRoles, role)
	}
	for _, binding := range append(bootstrappolicy.ClusterRoleBindings(), bootstrappolicy.ControllerRoleBindings()...) {
		binding.TypeMeta.APIVersion, binding.TypeMeta.Kind = rbacv1.SchemeGroupVersion.String(), "ClusterRoleBinding"
		clusterRoleBindings = append(clusterRoleBindings, binding)
	}
	namespaceRoles := bootstrappolicy.NamespaceRoles()
	namespaceRoleBindings := bootstrappolicy.NamespaceRoleBindings()
	for _, namespace := range sortedKeys(namespaceRoles) {
		for _, role := range namespaceRoles[namespace] {
			role.TypeMeta.APIVersion, role.TypeMeta.Kind = rbacv1.SchemeGroupVersion.String(), "Role"
			role.Namespace = namespace
			roles = append(roles, role)
		}
	}
	for _, namespace := range sortedKeys(namespaceRoleBindings) {
		for _, binding := range namespaceRoleBindings[namespace] {
			binding.TypeMeta.APIVersion, binding.TypeMeta.Kind = rbacv1.SchemeGroupVersion.String(), "RoleBinding"
			binding.Namespace = namespace
			roleBindings = append(roleBindings, binding)
		}
	}
	return map[string]any{
		"clusterRoles":        clusterRoles,
		"clusterRoleBindings": clusterRoleBindings,
		"roles":               roles,
		"roleBindings":        roleBindings,
	}, nil
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for key := range m {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	return keys
}
