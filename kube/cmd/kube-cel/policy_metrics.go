package main

// The admission policy plugins' metrics as kube-apiserver exposes them on /metrics: the
// dispatchers kube-cel runs (validating/dispatcher.go, mutating/dispatcher.go) record them in the
// process's legacy registry (k8s.io/apiserver pkg/admission/plugin/policy/validating/metrics and
// mutating/metrics: apiserver_validating_admission_policy_check_total and
// _check_duration_seconds labelled policy, policy_binding, error_type, enforcement_action;
// apiserver_mutating_admission_policy_check_total and _check_duration_seconds labelled policy,
// policy_binding, error_type). The simulator appends them to its own /metrics.

import (
	"bytes"
	"strings"

	"github.com/prometheus/common/expfmt"
	"k8s.io/component-base/metrics/legacyregistry"
)

var policyMetricPrefixes = []string{
	"apiserver_validating_admission_policy_",
	"apiserver_mutating_admission_policy_",
}

// policyMetrics answers {"text": the families in Prometheus' text format}, only those observed
// so far (as a vector without children is not exposed).
func policyMetrics() (map[string]any, error) {
	families, err := legacyregistry.DefaultGatherer.Gather()
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	for _, family := range families {
		for _, prefix := range policyMetricPrefixes {
			if strings.HasPrefix(family.GetName(), prefix) {
				if _, err := expfmt.MetricFamilyToText(&out, family); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	return map[string]any{"text": out.String()}, nil
}
