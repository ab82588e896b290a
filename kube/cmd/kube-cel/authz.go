package main

import (
	"context"
	"fmt"
	"slices"

	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// authorizerRule is one decision the CEL "authorizer" variable can be given, first match wins.
// An empty list matches anything, as does "*". Without a matching rule a user in the
// system:masters group is allowed (the privileged-group authorizer every kube-apiserver runs
// first, pkg/kubeapiserver/authorizer/config.go) and anyone else gets NoOpinion, which is what
// RBAC answers when no role grants the request (CEL's allowed() is then false).
type authorizerRule struct {
	Users           []string `json:"users,omitempty"`
	Groups          []string `json:"groups,omitempty"`
	Verbs           []string `json:"verbs,omitempty"`
	APIGroups       []string `json:"apiGroups,omitempty"`
	Resources       []string `json:"resources,omitempty"`
	Subresources    []string `json:"subresources,omitempty"`
	Namespaces      []string `json:"namespaces,omitempty"`
	Names           []string `json:"names,omitempty"`
	NonResourceURLs []string `json:"nonResourceURLs,omitempty"`
	Decision        string   `json:"decision"`
	Reason          string   `json:"reason,omitempty"`
}

var decisions = map[string]authorizer.Decision{
	"Allow":     authorizer.DecisionAllow,
	"Deny":      authorizer.DecisionDeny,
	"NoOpinion": authorizer.DecisionNoOpinion,
}

func validateRules(rules []authorizerRule) error {
	for i, r := range rules {
		if _, ok := decisions[r.Decision]; !ok {
			return fmt.Errorf("rules[%d].decision: %q is not Allow, Deny or NoOpinion", i, r.Decision)
		}
	}
	return nil
}

type rulesAuthorizer struct {
	rules []authorizerRule
}

func matchesAny(values []string, value string) bool {
	return len(values) == 0 || slices.Contains(values, "*") || slices.Contains(values, value)
}

func (r *rulesAuthorizer) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	u := a.GetUser()
	for _, rule := range r.rules {
		if len(rule.Users) > 0 && (u == nil || !slices.Contains(rule.Users, u.GetName())) {
			continue
		}
		if len(rule.Groups) > 0 && (u == nil || !slices.ContainsFunc(u.GetGroups(), func(g string) bool { return slices.Contains(rule.Groups, g) })) {
			continue
		}
		if !matchesAny(rule.Verbs, a.GetVerb()) {
			continue
		}
		if a.IsResourceRequest() {
			if len(rule.NonResourceURLs) > 0 || !matchesAny(rule.APIGroups, a.GetAPIGroup()) ||
				!matchesAny(rule.Resources, a.GetResource()) || !matchesAny(rule.Subresources, a.GetSubresource()) ||
				!matchesAny(rule.Namespaces, a.GetNamespace()) || !matchesAny(rule.Names, a.GetName()) {
				continue
			}
		} else if !matchesAny(rule.NonResourceURLs, a.GetPath()) {
			continue
		}
		return decisions[rule.Decision], rule.Reason, nil
	}
	if u != nil && slices.Contains(u.GetGroups(), "system:masters") {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}
