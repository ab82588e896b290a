#pragma once

// YAML <-> JSON with the scalar rules Kubernetes' own YAML decoding uses: sigs.k8s.io/yaml
// (YAMLToJSON, yaml.go) on go-yaml v2 (resolve.go, decode.go), i.e. YAML 1.1 plain scalars:
//
//   * y Y yes Yes YES on On ON true True TRUE   -> true    (n N no ... off ... false -> false)
//   * "" ~ null Null NULL                         -> null
//   * 12, +12, -12, 0x1F, 012 (octal), 0o12, 0b101, 1_000 -> integers (int64, else uint64)
//   * 1.5, 1e3, .5, 08 (not octal, so decimal float) -> numbers, written the way Go's
//     encoding/json writes a float64: an integral float below 1e21 becomes a JSON integer
//     ("1.0" and "1e3" read as 1 and 1000); numbers beyond uint64 become floats
//   * .inf .nan and friends -> an error: JSON cannot hold them (json.Marshal refuses)
//   * timestamps (2001-12-14) stay strings; quoted, block (| >) and !!str scalars are strings
//   * !!int !!float !!bool !!null !!str !!timestamp !!binary tags are honoured (a value that does
//     not fit its tag is an error, as in go-yaml: "cannot decode !!str `x` as a !!int")
//   * non-string mapping keys become strings (1 -> "1", true -> "true", 1.5 -> "1.5"); null,
//     sequence and mapping keys are errors
//   * anchors/aliases and `<<` merge keys work as in go-yaml v2: entries are written in document
//     order, so a key after `<<` overrides the merged value and a key before it is overridden;
//     in a merged sequence earlier maps win
//   * duplicate keys: the last one wins (yaml.Unmarshal is not strict)
//
// Errors name the document (1-based, counting empty documents too), line and column (1-based):
// "document 2, line 3, column 5: <what>".

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::core {

// Nesting deeper than this (after alias expansion) is an error rather than a stack overflow.
// yaml-cpp itself refuses YAML text nested deeper than about 500 levels.
inline constexpr int kMaxYamlDepth = 1000;

// Every document of a YAML stream, in order. Empty documents and documents that are only `null`
// are skipped, as kubectl does (k8s.io/cli-runtime resource/visitor.go). Text whose first
// non-whitespace character is `{` is read as a stream of JSON values, like apimachinery's
// YAMLOrJSONDecoder (util/yaml/decoder.go hasJSONPrefix).
Result<std::vector<nlohmann::json>> parseYamlDocuments(std::string_view text);

// Exactly one document: an empty stream gives null (as YAMLToJSON does); two or more non-empty
// documents are an error.
Result<nlohmann::json> parseYaml(std::string_view text);

// kubectl-style block YAML (go-yaml v2 emitter conventions): 2-space indentation, sequences under
// a key not indented ("key:\n- a"), keys in nlohmann's (byte) order, `{}` / `[]` for empty
// collections, strings quoted when a plain scalar would read back as something else ("true",
// "1", "", "null", " x", "a: b", ...), multi-line strings as `|` / `|-` / `|+` block scalars.
// Always ends with a newline. parseYaml(toYaml(j)) == j for every finite JSON value j.
// Long strings are folded only as YamlWriteOptions says.
// A value nested deeper than kMaxYamlDepth is written in flow style on one line instead (never
// folded).
struct YamlWriteOptions {
  // go-yaml v2's emitter (best_width) folds a plain, single- or double-quoted scalar at a space
  // once its line is past this many columns: the space becomes a line break and the next line
  // starts two columns right of the scalar's key or "- " (the value reads back the same). 0: every
  // scalar stays on one line.
  int fold_column = 0;
};
// As sigs.k8s.io/yaml's Marshal writes (go-yaml v2 v2.4, best_width 80): istioctl kube-inject.
inline constexpr YamlWriteOptions kGoYamlMarshal{.fold_column = 80};

std::string toYaml(const nlohmann::json& value, const YamlWriteOptions& options = {});

// Documents joined by "---\n".
std::string toYamlDocuments(const std::vector<nlohmann::json>& documents,
                            const YamlWriteOptions& options = {});

// The raw text of every document of a YAML stream, split as apimachinery's YAMLReader splits it
// (k8s.io/apimachinery pkg/util/yaml/decoder.go YAMLReader.Read): a line that starts with "---"
// ends a document and is not part of either; only spaces or a comment may follow the "---" on
// that line ("invalid Yaml document separator: <rest>" otherwise); an empty document between two
// separators is skipped, but one of blank lines or comments is returned as it is; a last line
// without a newline is kept as it is. Each piece is the input's bytes, unchanged.
Result<std::vector<std::string>> splitYamlDocuments(std::string_view text);

}  // namespace harness::core
