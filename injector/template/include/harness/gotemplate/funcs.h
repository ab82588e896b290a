#pragma once

// Template function maps: Sprig's TxtFuncMap (the functions templates reach) and Istio's
// InjectionFuncmap. Istio parses its injection templates with
//   template.New("inject").Funcs(sprig.TxtFuncMap()).Funcs(inject.InjectionFuncmap)
// so Istio's functions shadow Sprig's of the same name (contains, indent, omit, env, toYaml).
//
// Followed: Masterminds/sprig functions.go (names), defaults.go, strings.go, dict.go, list.go,
// numeric.go (and spf13/cast's ToInt64/ToFloat64 for int/int64/float64/add/...), regex.go;
// istio/istio pkg/kube/inject/template.go (InjectionFuncmap and its functions) and
// pkg/config/mesh/mesh.go (DefaultProxyConfig, for protoToJSON's cleaning).

#include <map>
#include <string>

#include "harness/gotemplate/template.h"

namespace harness::gotemplate {

// The process environment Istio's `env` function reads (os.Getenv in istiod), injected so the
// library stays pure. A missing or empty variable gives the default.
using Environment = std::map<std::string, std::string, std::less<>>;

// Sprig's text/template functions (see sprig_funcs.cc for the list). Functions Sprig has but
// this library does not implement (crypto, dates, random, network, semver) are left out, so a
// template using one fails to parse (at load, never per request) with Go's "function \"now\"
// not defined", which adds that Sprig's function is not implemented here.
FuncMap sprigFuncMap();

// Behaviour of Istio's functions that changed between Istio releases; the defaults are the
// newest releases'.
struct IstioFuncOptions {
  // appendMultusNetwork splits "<namespace>/<name>" into JSON's "name" and "namespace" (and
  // matches an existing entry on both) since istio/istio#55000 (February 2025: 1.25, and the
  // 1.23/1.24 patch releases after it); before, it appended and matched {"name": "<ns>/<name>"}.
  bool multus_namespace_split = true;
};

// Istio's InjectionFuncmap alone.
FuncMap istioInjectionFuncMap(Environment env, IstioFuncOptions options = {});

// What Istio parses injection templates with: Sprig's functions, then Istio's on top.
FuncMap istioFuncMap(Environment env = {}, IstioFuncOptions options = {});

// Execution options for Istio's template data (SidecarTemplateData as JSON): Go-struct
// emulation on, with istioFieldTypes() for zero values and map[string]string fields.
ExecOptions istioExecOptions();

}  // namespace harness::gotemplate
