#pragma once

// JSON Patch (RFC 6902) exactly as kube-apiserver applies a mutating webhook's patch, and patch
// generation (the diff an injector sends back).
//
// Applying follows evanphx/json-patch v4 (the root package of github.com/evanphx/json-patch,
// vendored by kube-apiserver as gopkg.in/evanphx/json-patch.v4 v4.13.0, patch.go/errors.go),
// including its departures from the RFC and its exact error texts. See
// docs/admission-chain.md §5 ("JSONPatch engine quirks"). The most visible ones:
//   - `replace` of a missing object member succeeds and adds it;
//   - `remove` of a missing member fails (`error in remove for path: '<p>': Unable to remove
//     nonexistent key: <k>: missing value`);
//   - `add` below a missing parent fails (`add operation does not apply: doc is missing path:
//     "<p>": missing value`);
//   - negative array indices count from the end (-1 is the last element; for `add`, -1 appends);
//   - `test` of a missing member against `null` (or without `value`) succeeds;
//   - `copy` from a missing object member copies `null`;
//   - a member whose value is `null` cannot be traversed;
//   - paths are split on "/" and the text before the first "/" is ignored; "~0"/"~1" are decoded
//     leniently (any other "~" is kept);
//   - an unknown op fails with `Unexpected kind: <op>` when it is reached (ops before it apply).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::core {

// The generic apiserver Config defaults JSONPatchMaxCopyBytes to 3 MiB (k8s.io/apiserver
// pkg/server/config.go NewConfig) and New() stores it in the package-global
// jsonpatch.AccumulatedCopySizeLimit of gopkg.in/evanphx/json-patch.v4, the package the mutating
// webhook dispatcher applies patches with (mutating/dispatcher.go: patchObj.Apply). So webhook
// patches run with negative indices on and this copy limit.
inline constexpr std::int64_t kApiserverJsonPatchMaxCopyBytes = std::int64_t{3} * 1024 * 1024;

struct JsonPatchOptions {
  // evanphx SupportNegativeIndices; kube-apiserver never changes the default (true).
  bool support_negative_indices = true;
  // evanphx AccumulatedCopySizeLimit; 0 disables the limit.
  std::int64_t accumulated_copy_size_limit = kApiserverJsonPatchMaxCopyBytes;
};

// One operation. Built in code with the factories below, or decoded by decodePatch.
// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct PatchOperation {
  // v4 Operation.Kind(): the "op" member, or "unknown" when it is absent, null or not a string.
  std::string op;
  // The "path"/"from" members when they are strings ("" otherwise; then `raw` tells why).
  std::string path;
  std::string from;
  // nullopt: no "value" member. json(nullptr): an explicit `"value": null`.
  std::optional<nlohmann::json> value;
  // The operation exactly as decoded (an object, or null for a `null` element). When it is an
  // object it decides whether path/from are present and strings. Operations built in code leave
  // it null; their path/from then count as present.
  nlohmann::json raw;

  static PatchOperation add(std::string path, nlohmann::json value);
  static PatchOperation remove(std::string path);
  static PatchOperation replace(std::string path, nlohmann::json value);
  static PatchOperation move(std::string from, std::string path);
  static PatchOperation copy(std::string from, std::string path);
  static PatchOperation test(std::string path, nlohmann::json value);

  friend bool operator==(const PatchOperation& a, const PatchOperation& b) {
    return a.op == b.op && a.path == b.path && a.from == b.from && a.value == b.value;
  }
};

using JsonPatch = std::vector<PatchOperation>;

// Decodes a patch document like v4 DecodePatch (Go encoding/json into []map[string]RawMessage):
//   - malformed JSON fails with Go's syntax error text, e.g. `unexpected end of JSON input`,
//     `invalid character '}' looking for beginning of value`;
//   - a document that is not an array fails with e.g.
//     `json: cannot unmarshal object into Go value of type jsonpatch.Patch`;
//   - an element that is neither an object nor null fails with e.g.
//     `json: cannot unmarshal string into Go value of type jsonpatch.Operation`;
//   - `null` decodes to an empty patch, and a `null` element to an operation of kind "unknown"
//     (it fails with `Unexpected kind: unknown` only when applied).
// The kube-apiserver wraps a decode error as `received undecodable patch in webhook response:
// <err>` (a calling error); see docs/admission-chain.md §4.4.
Result<JsonPatch> decodePatch(std::string_view text);

// Applies `patch` to `doc` (an object or an array, like the Go encoding of the object being
// admitted). Returns the first error with evanphx's exact text; the input is never modified.
Result<nlohmann::json> applyPatch(const nlohmann::json& doc, const JsonPatch& patch,
                                  const JsonPatchOptions& options = {});
// The same, taking the document and the patch: the document is patched in place and each
// operation's value is moved into it rather than copied (for a caller done with both, such as
// `injector inject` applying a webhook's patch to a large object).
Result<nlohmann::json> applyPatch(nlohmann::json&& doc, JsonPatch&& patch,
                                  const JsonPatchOptions& options = {});

// The patch as a JSON array: decoded operations are emitted as decoded (`raw`, and `null` for a
// `null` element), built ones as {"op", "path"[, "from"][, "value"]}.
nlohmann::json encodePatch(const JsonPatch& patch);

// A small patch that turns `from` into `to` under applyPatch (json_diff.cc): recursive on objects,
// common prefix/suffix plus a bounded Myers edit script on arrays (pairwise fallback beyond the
// bound), so e.g. one changed env var among thousands is one `replace`, a container inserted at
// index 0 one `add`. Paths are RFC 6901 escaped. Roots of different kinds, or scalar roots, give a
// single `replace` of "" (which the v4 engine accepts only for an object or array value).
JsonPatch createPatch(const nlohmann::json& from, const nlohmann::json& to);

}  // namespace harness::core
