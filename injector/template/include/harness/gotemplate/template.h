#pragma once

// Go's text/template, the subset (in practice: all of it) that Istio's sidecar injection
// templates use, with Go's exact syntax, semantics and error texts.
//
// Followed: golang/go src/text/template/parse/lex.go (tokens, trim markers, comments),
// parse/parse.go (grammar and parse errors), parse/node.go (node String forms used in error
// contexts), exec.go (evaluation, truth, range/with/if, variables, error format) and funcs.go
// (builtins). The Go version followed is 1.23+ ({{break}}/{{continue}}, range over integers,
// {{else with}}).
//
// Data is nlohmann::json (see value.h for the value model). Go's template data for Istio is a
// struct; here every JSON object is a map[string]interface{}, which is what Go does for maps:
//   * a missing key gives the invalid value ("<no value>" when printed) under the default
//     missingkey option, Go's behaviour for maps (a missing *struct field* would be a Go error);
//   * ExecOptions::struct_fields adds the parts of Go's struct behaviour the Istio templates
//     rely on (Go field names over JSON keys, zero values, protobuf getters); see below.
//
// Errors are Go's texts:
//   parse: "template: <name>:<line>: <message>"
//   exec:  "template: <name>:<line>:<col>: executing \"<name>\" at <<node>>: <message>"
// (the column is Go's: the 0-based byte offset of the node on its line).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/gotemplate/value.h"

namespace harness::gotemplate {

using core::Error;
using core::Result;

// The Go type of one function parameter. It decides how template arguments are converted and
// which errors Go reports ("wrong type for value; expected string; got int", "expected integer;
// found \"x\"", "invalid value; expected string").
struct ParamType {
  enum class Kind {
    kAny,          // interface{}: any value; invalid becomes nil
    kValue,        // reflect.Value (builtins): passed as is, invalid stays invalid
    kString,       // string
    kInt,          // int (also int64 parameters)
    kFloat,        // float64
    kBool,         // bool
    kMap,          // map[string]interface{}
    kStringMap,    // map[string]string
    kSlice,        // []interface{} or any other slice
    kStruct,       // a named struct (go_name, e.g. "v1.ObjectMeta"): a JSON object
    kStructSlice,  // a slice of named structs (go_name, e.g. "[]v1.Container")
    kPointer,      // a pointer to a message (go_name, e.g. "*durationpb.Duration"): any or nil
  };
  Kind kind = Kind::kAny;
  std::string go_name;  // the Go type name used in error messages

  static ParamType any() { return {Kind::kAny, "interface {}"}; }
  static ParamType value() { return {Kind::kValue, "reflect.Value"}; }
  static ParamType string() { return {Kind::kString, "string"}; }
  static ParamType integer() { return {Kind::kInt, "int"}; }
  static ParamType float64() { return {Kind::kFloat, "float64"}; }
  static ParamType boolean() { return {Kind::kBool, "bool"}; }
  static ParamType map() { return {Kind::kMap, "map[string]interface {}"}; }
  static ParamType stringMap() { return {Kind::kStringMap, "map[string]string"}; }
  static ParamType slice() { return {Kind::kSlice, "[]interface {}"}; }
  static ParamType structNamed(std::string name) { return {Kind::kStruct, std::move(name)}; }
  static ParamType structSlice(std::string name) { return {Kind::kStructSlice, std::move(name)}; }
  static ParamType pointer(std::string name) { return {Kind::kPointer, std::move(name)}; }
};

// A template function. Like a Go function with one result, or a result and an error: a
// returned Error aborts execution with "error calling <name>: <message>".
// `args` holds one converted Value per argument (variadic arguments included).
using FunctionBody = std::function<Result<Value>(std::vector<Value>& args)>;

struct Function {
  std::vector<ParamType> params;  // for a variadic function the last entry is the element type
  bool variadic = false;
  FunctionBody body;
};

// Functions by name. User functions shadow the builtins (as Template.Funcs does in Go).
using FuncMap = std::map<std::string, Function, std::less<>>;

// Go's Option("missingkey=..."): what a missing map key evaluates to.
enum class MissingKey {
  kDefault,  // "default"/"invalid": the invalid value, printed "<no value>"
  kZero,     // "zero": the zero value of the map's element type
  kError,    // "error": execution stops with "map has no entry for key \"x\""
};

struct ExecOptions {
  MissingKey missing_key = MissingKey::kDefault;

  // Go-struct emulation for data that stands for Go structs (Istio's SidecarTemplateData). When
  // on, a field lookup that misses the exact key:
  //   * tries the JSON name of the Go field (first letter lower-cased: Annotations ->
  //     annotations), then a case-insensitive match (APIVersion -> apiVersion);
  //   * gives the zero value of the field's type when `field_types` names it (a Go struct
  //     always has all its fields: ServiceAccountName -> "", Annotations -> empty
  //     map[string]string);
  // and protobuf getters work on JSON: X.String on a scalar is its text (enums), X.GetValue on
  // a wrapper is the wrapped scalar, X.GetFoo is field Foo, all nil-safe as in Go.
  bool struct_fields = false;
  // Zero-value types of Go struct fields, by field name (used only with struct_fields), and
  // the fields that hold a map[string]string (used always: indexing a missing key gives "").
  enum class FieldType { kString, kBool, kInt, kStringMap, kMap, kSlice, kStruct };
  std::map<std::string, FieldType, std::less<>> field_types;
  // Protobuf enum fields by Go field name, with the name of their zero value: a missing field
  // (and its GetX getter) gives that name, as Go prints an unset enum (used with struct_fields).
  std::map<std::string, std::string, std::less<>> enum_zeros;
  // Protobuf wrapper fields (*wrapperspb.BoolValue, ...) by Go field name, with the wrapped
  // type's zero: `.X.GetValue` on an unset X gives it, as the nil-safe Go getter does.
  std::map<std::string, nlohmann::json, std::less<>> wrapper_zeros;

  // Guards against runaway templates; exceeding one is an execution error.
  int max_template_depth = 1000;             // nested {{template}} calls (Go: 100000)
  // Nested statements, pipelines and template calls together (Go: none). Each level takes a
  // few hundred bytes of C++ stack; the default stays within about 1 MiB. Parsing nests at
  // most 300 levels (control structures, parentheses), also within about 1 MiB.
  int max_nesting = 2500;
  std::size_t max_output_bytes = 64u << 20;  // bytes written
  std::int64_t max_range_iterations = 1000000;  // iterations of one {{range}} over an integer
  std::int64_t max_steps = 50000000;         // evaluation steps in one execution
};

// The field types of Istio's SidecarTemplateData (pkg/kube/inject/inject.go) and the Kubernetes
// structs it embeds, as far as the chart templates read them, for ExecOptions::field_types.
std::map<std::string, ExecOptions::FieldType, std::less<>> istioFieldTypes();

namespace detail {
struct Tree;
}

// A set of named templates parsed together with the same functions: Go's *Template with its
// associated templates (Template.New(name).Funcs(...).Parse(text), {{define}}, {{block}}).
class TemplateSet {
 public:
  explicit TemplateSet(FuncMap funcs = {});

  // Parses `text` as the template `name` and adds every {{define}}/{{block}} in it. Within one
  // call a name defined twice with non-empty bodies is an error; across calls a later
  // non-empty definition replaces the earlier one (Go's AddParseTree). On error the set is
  // unchanged.
  Result<void> parse(std::string_view name, std::string_view text);

  [[nodiscard]] bool has(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> names() const;
  [[nodiscard]] const FuncMap& funcs() const { return funcs_; }
  [[nodiscard]] std::shared_ptr<const detail::Tree> lookup(std::string_view name) const;
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  FuncMap funcs_;
  std::string name_;  // the name of the first parse call (Go's t.name, used in errors)
  std::map<std::string, std::shared_ptr<const detail::Tree>, std::less<>> trees_;
};

// template.New(name).Funcs(funcs).Parse(text).
Result<TemplateSet> parse(std::string_view name, std::string_view text, const FuncMap& funcs);

// Executes the template `name` of `set` on `data` (ExecuteTemplate). The data is copied into
// the execution, so functions that mutate maps never touch the caller's JSON.
Result<std::string> execute(const TemplateSet& set, std::string_view name,
                            const nlohmann::json& data, const ExecOptions& options = {});

}  // namespace harness::gotemplate
