// Strategic merge patch, server side: k8s.io/apimachinery pkg/util/strategicpatch patch.go
// (mergeMap, mergeSlice, mergePatchIntoOriginal, normalizeElementOrder, removeDirectives, ...;
// read at v0.36) and pkg/util/mergepatch errors.go for the error texts. Patch metadata comes from
// the patchStrategy/patchMergeKey struct tags of k8s.io/api core/v1, apps/v1, batch/v1 types.go
// and apimachinery meta/v1 ObjectMeta. JSON merge patch: evanphx/json-patch v4 merge.go.
//
// The Go code ranges over maps (random order); we walk keys in sorted order. Go values are
// modelled on nlohmann::json with apimachinery's number decoding: integers are int64, other
// numbers float64, and values of different Go types are never equal.

#include "harness/core/strategic_merge.h"

#include <cstdint>
#include <exception>
#include <limits>
#include <set>
#include <unordered_map>

#include "harness/core/json_pointer.h"
#include "harness/go/fmt.h"
#include "harness/go/strconv.h"
#include "harness/go/sort.h"

namespace harness::core {

namespace {

using json = nlohmann::json;

constexpr std::string_view kDirectiveMarker = "$patch";
constexpr std::string_view kDeleteDirective = "delete";
constexpr std::string_view kReplaceDirective = "replace";
constexpr std::string_view kMergeDirective = "merge";
constexpr std::string_view kRetainKeysStrategy = "retainKeys";
constexpr std::string_view kRetainKeysDirective = "$retainKeys";
constexpr std::string_view kDeleteFromPrimitiveListPrefix = "$deleteFromPrimitiveList";
constexpr std::string_view kSetElementOrderPrefix = "$setElementOrder";

// mergepatch/errors.go
constexpr std::string_view kErrBadJSONDoc = "invalid JSON document";
constexpr std::string_view kErrNoListOfLists = "lists of lists are not supported";
constexpr std::string_view kErrBadPatchFormatForPrimitiveList =
    "invalid patch format of primitive list";
constexpr std::string_view kErrBadPatchFormatForRetainKeys = "invalid patch format of retainKeys";
constexpr std::string_view kErrBadPatchFormatForSetElementOrderList =
    "invalid patch format of setElementOrder list";

// A failure, with the pointer (into the patch) where it happened. Thrown inside this file only.
struct MergeFailure {
  std::string path;
  std::string message;
};

[[noreturn]] void fail(const std::string& path, std::string message) {
  throw MergeFailure{path, std::move(message)};
}

// Where upstream would panic (e.g. Go's == on two maps), we fail with the runtime's text.
[[noreturn]] void panicLike(const std::string& path, const std::string& runtime_error) {
  fail(path, "runtime error: " + runtime_error + " (upstream panics here)");
}

std::string childPath(const std::string& path, std::string_view key) {
  return path + "/" + escapePointerToken(key);
}
std::string childPath(const std::string& path, std::size_t index) {
  return path + "/" + std::to_string(index);
}

bool hasPrefix(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// ---------------------------------------------------------------------------------------------
// Go values.

// The decoded values' Go types and fmt verbs: harness/go/fmt.h.
using GoType = go::DecodedType;

// Go's == on two interface{} values: different dynamic types are unequal; two maps or two
// slices panic.
bool goEqual(const json& a, const json& b, const std::string& path) {
  const GoType ta = go::decodedTypeOf(a);
  const GoType tb = go::decodedTypeOf(b);
  if (ta != tb) return false;
  if (ta == GoType::kMap || ta == GoType::kSlice) {
    panicLike(path, "comparing uncomparable type " + go::decodedTypeName(ta));
  }
  return a == b;
}

// A hashable identity for a comparable Go value (map key semantics).
std::string goKey(const json& v) {
  switch (go::decodedTypeOf(v)) {
    case GoType::kNil:
      return "n";
    case GoType::kBool:
      return v.get<bool>() ? "bt" : "bf";
    case GoType::kString:
      return "s" + v.get<std::string>();
    case GoType::kInt64:
      return "i" + v.dump();
    case GoType::kFloat64:
      return "f" + go::formatFloat(v.get<double>());
    default:
      return "";
  }
}

bool isUncomparable(const json& v) { return v.is_object() || v.is_array(); }

// mergepatch.ErrBadArgType(expected, actual)
std::string errBadArgType(GoType expected, const json& actual) {
  return "expected a " + go::decodedTypeName(expected) + ", but received a " + go::decodedTypeName(go::decodedTypeOf(actual));
}

// mergepatch.ErrNoMergeKey(m, k)
std::string errNoMergeKey(const json& m, const std::string& key) {
  return "map: " + go::sprintV(m) + " does not contain declared merge key: " + key;
}

// mergepatch.ErrBadPatchType(t, m)
std::string errBadPatchType(const json& directive, const json& m) {
  return "unknown patch type: " + go::sprintS(directive) + " in map: " + go::sprintV(m);
}

bool isDirective(const json& value, std::string_view directive) {
  return value.is_string() && value.get_ref<const std::string&>() == directive;
}

// Capacity of the []interface{} Go's JSON decoder builds for n elements: it appends one element at
// a time to make([]interface{}, 0), so runtime.growslice (16-byte elements) and the allocator's
// size classes decide. Needed because upstream relies on slice aliasing (see goAliasedOriginal).
std::size_t goDecodedSliceCap(std::size_t n) {
  static constexpr std::size_t kSizeClasses[] = {
      8,     16,    24,    32,    48,    64,    80,    96,    112,   128,   144,   160,
      176,   192,   208,   224,   240,   256,   288,   320,   352,   384,   416,   448,
      480,   512,   576,   640,   704,   768,   896,   1024,  1152,  1280,  1408,  1536,
      1792,  2048,  2304,  2688,  3072,  3200,  3456,  4096,  4864,  5376,  6144,  6528,
      6784,  6912,  8192,  9472,  9728,  10240, 10880, 12288, 13568, 14336, 16384, 18432,
      19072, 20480, 21760, 24576, 27264, 28672, 32768};
  constexpr std::size_t kElementSize = 16;
  constexpr std::size_t kPageSize = 8192;
  auto roundUpSize = [&](std::size_t size) {
    for (std::size_t cls : kSizeClasses) {
      if (cls >= size) return cls;
    }
    return (size + kPageSize - 1) / kPageSize * kPageSize;
  };
  std::size_t cap = 0;
  for (std::size_t len = 0; len < n; ++len) {
    if (len < cap) continue;
    const std::size_t new_len = len + 1;
    std::size_t new_cap = cap;
    if (new_len > 2 * cap) {
      new_cap = new_len;
    } else if (cap < 256) {
      new_cap = 2 * cap;
    } else {
      while (new_cap < new_len) new_cap += (new_cap + std::size_t{3} * 256) / 4;
    }
    cap = roundUpSize(new_cap * kElementSize) / kElementSize;
  }
  return cap;
}

// ---------------------------------------------------------------------------------------------
// The index() helper: position of an item (or of its merge key value) in a list, with Go ==
// semantics, precomputed so that sorting long lists is not quadratic.

class OrderIndex {
 public:
  OrderIndex(const std::vector<json>& list, const std::string& merge_key, bool maps,
             std::string path)
      : merge_key_(merge_key), maps_(maps), path_(std::move(path)) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      const json value = keyOf(list[i]);
      if (value.is_object()) {
        has_map_ = true;
      } else if (value.is_array()) {
        has_slice_ = true;
      } else {
        first_.emplace(goKey(value), static_cast<std::int64_t>(i));
      }
    }
  }

  [[nodiscard]] std::int64_t find(const json& item) const {
    const json value = keyOf(item);
    if (value.is_object()) {
      if (has_map_) panicLike(path_, "comparing uncomparable type map[string]interface {}");
      return -1;
    }
    if (value.is_array()) {
      if (has_slice_) panicLike(path_, "comparing uncomparable type []interface {}");
      return -1;
    }
    auto it = first_.find(goKey(value));
    return it == first_.end() ? -1 : it->second;
  }

 private:
  [[nodiscard]] json keyOf(const json& item) const {
    if (!maps_) return item;
    if (!item.is_object()) return nullptr;
    auto it = item.find(merge_key_);
    return it == item.end() ? json(nullptr) : *it;
  }

  std::string merge_key_;
  bool maps_;
  std::string path_;
  std::unordered_map<std::string, std::int64_t> first_;
  bool has_map_ = false;
  bool has_slice_ = false;
};

std::vector<json> toVector(const json& array) {
  return std::vector<json>(array.begin(), array.end());
}

std::vector<json> toVector(json&& array) {
  std::vector<json> out;
  out.reserve(array.size());
  for (json& item : array) out.push_back(std::move(item));
  return out;
}

// What index() reads of an original list element: only its merge key (the whole element when it
// has none, so that errors print it as Go does). Saves copying big elements.
json mergeKeyStub(const json& item, const std::string& merge_key) {
  if (item.is_object()) {
    if (auto it = item.find(merge_key); it != item.end()) return json{{merge_key, *it}};
  }
  return item;
}

json toArray(std::vector<json> items) {
  json out = json::array();
  for (json& item : items) out.push_back(std::move(item));
  return out;
}

// ---------------------------------------------------------------------------------------------
// The merge, function by function as in patch.go.

class Merger {
 public:
  explicit Merger(const StrategicSchema& any) : any_(any) {}

  json mergeMap(json original, json patch, const StrategicSchema& schema, const std::string& path);

 private:
  const StrategicSchema& subschema(const StrategicFieldMeta& meta) const {
    return meta.schema != nullptr ? *meta.schema : any_;
  }

  // extractRetainKeysPatchStrategy: the strategy other than retainKeys.
  static std::string patchStrategy(const StrategicFieldMeta& meta, const std::string& path) {
    const auto& s = meta.patch_strategies;
    switch (s.size()) {
      case 0:
        return "";
      case 1:
        return s[0] == kRetainKeysStrategy ? "" : s[0];
      case 2:
        if (s[0] == kRetainKeysStrategy) return s[1];
        if (s[1] == kRetainKeysStrategy) return s[0];
        [[fallthrough]];
      default: {
        std::string list = "[";
        for (std::size_t i = 0; i < s.size(); ++i) list += (i ? " " : "") + s[i];
        fail(path, "unexpected patch strategy: " + list + "]");
      }
    }
  }

  static json handleDirectiveInMergeMap(const json& directive, json patch,
                                        const std::string& path) {
    if (isDirective(directive, kReplaceDirective)) {
      patch.erase(std::string(kDirectiveMarker));
      return patch;
    }
    if (isDirective(directive, kDeleteDirective)) return json::object();
    fail(path, errBadPatchType(directive, patch));
  }

  // removeDirectives: drops maps holding "$patch" (and list elements that are such maps).
  static std::pair<json, bool> removeDirectives(json obj) {
    if (obj.is_object()) {
      if (obj.contains(kDirectiveMarker)) return {nullptr, false};
      for (auto it = obj.begin(); it != obj.end();) {
        auto [value, keep] = removeDirectives(std::move(it.value()));
        if (keep) {
          it.value() = std::move(value);
          ++it;
        } else {
          it = obj.erase(it);
        }
      }
      return {std::move(obj), true};
    }
    if (obj.is_array()) {
      json res = json::array();
      for (json& v : obj) {
        auto [value, keep] = removeDirectives(std::move(v));
        if (keep) res.push_back(std::move(value));
      }
      return {std::move(res), true};
    }
    return {std::move(obj), true};
  }

  // discardNullValuesFromPatch: drops null members of maps, recursively (also inside lists).
  static void discardNullValues(json& v) {
    if (v.is_object()) {
      for (auto it = v.begin(); it != v.end();) {
        if (it->is_null()) {
          it = v.erase(it);
        } else {
          discardNullValues(*it);
          ++it;
        }
      }
    } else if (v.is_array()) {
      for (json& element : v) discardNullValues(element);
    }
  }

  // Takes the patch value where there is nothing (or something of another type) to merge into.
  static void takePatchValue(json& original, const std::string& key, json patch_value) {
    discardNullValues(patch_value);
    auto [value, keep] = removeDirectives(std::move(patch_value));
    if (keep) {
      original[key] = std::move(value);
    } else {
      original.erase(key);
    }
  }

  // extractKey
  static std::string extractKey(const std::string& s, std::string_view prefix,
                                const std::string& path) {
    const auto slash = s.find('/');
    if (slash == std::string::npos || std::string_view(s).substr(0, slash) != prefix) {
      if (prefix == kDeleteFromPrimitiveListPrefix) {
        fail(path, std::string(kErrBadPatchFormatForPrimitiveList));
      }
      fail(path, std::string(kErrBadPatchFormatForSetElementOrderList));
    }
    return s.substr(slash + 1);
  }

  static void applyRetainKeysDirective(json& original, json& patch, const std::string& path) {
    auto found = patch.find(kRetainKeysDirective);
    if (found == patch.end()) return;
    const json retain = std::move(*found);
    patch.erase(found);
    const std::string at = childPath(path, kRetainKeysDirective);
    if (!retain.is_array()) fail(at, std::string(kErrBadPatchFormatForRetainKeys));
    std::set<std::string> keys;
    for (const json& v : retain) {
      if (isUncomparable(v)) panicLike(at, "hash of unhashable type " + go::decodedTypeName(go::decodedTypeOf(v)));
      if (v.is_string()) keys.insert(v.get<std::string>());
    }
    for (const auto& [k, v] : patch.items()) {
      if (v.is_null() || hasPrefix(k, kDeleteFromPrimitiveListPrefix) ||
          hasPrefix(k, kSetElementOrderPrefix)) {
        continue;
      }
      if (keys.count(k) == 0) fail(at, std::string(kErrBadPatchFormatForRetainKeys));
    }
    for (auto it = original.begin(); it != original.end();) {
      if (keys.count(it.key()) == 0) {
        it = original.erase(it);
      } else {
        ++it;
      }
    }
  }

  // sliceElementType: all elements of all lists share one Go type, which is not a list.
  static GoType sliceElementType(std::initializer_list<const std::vector<json>*> slices,
                                 const std::string& path) {
    std::optional<GoType> prev;
    for (const auto* slice : slices) {
      for (const json& v : *slice) {
        const GoType current = go::decodedTypeOf(v);
        if (!prev) {
          if (current == GoType::kNil) {
            panicLike(path, "invalid memory address or nil pointer dereference");
          }
          if (current == GoType::kSlice) fail(path, std::string(kErrNoListOfLists));
          prev = current;
        } else if (*prev != current) {
          std::string all = "[";
          bool first = true;
          for (const auto* s : slices) {
            if (!first) all.push_back(' ');
            first = false;
            all += go::sprintV(toArray(*s));
          }
          fail(path, "list element types are not identical: " + all + "]");
        }
      }
    }
    if (!prev) fail(path, "no elements in any of the given slices");
    return *prev;
  }

  // findMapInSliceBasedOnKeyValue
  static std::optional<std::size_t> findMapInSlice(const std::vector<json>& list,
                                                   const std::string& key, const json& value,
                                                   const std::string& path) {
    for (std::size_t k = 0; k < list.size(); ++k) {
      if (!list[k].is_object()) fail(path, "value for key " + std::to_string(k) + " is not a map");
      auto it = list[k].find(key);
      if (it != list[k].end() && goEqual(*it, value, path)) return k;
    }
    return std::nullopt;
  }

  static void validateMergeKeyInLists(const std::string& merge_key, const std::vector<json>& list,
                                      const std::string& path) {
    for (const json& item : list) {
      if (!item.is_object()) fail(path, errBadArgType(GoType::kMap, item));
      if (!item.contains(merge_key)) fail(path, errNoMergeKey(item, merge_key));
    }
  }

  // extractToDeleteItems: (items to keep, items with "$patch": "delete").
  static std::pair<std::vector<json>, std::vector<json>> extractToDeleteItems(
      std::vector<json> list, const std::string& path) {
    std::vector<json> keep;
    std::vector<json> to_delete;
    for (json& v : list) {
      if (!v.is_object()) fail(path, errBadArgType(GoType::kMap, v));
      auto it = v.find(kDirectiveMarker);
      if (it != v.end() && isDirective(*it, kDeleteDirective)) {
        to_delete.push_back(std::move(v));
      } else {
        keep.push_back(std::move(v));
      }
    }
    return {std::move(keep), std::move(to_delete)};
  }

  // normalizeSliceOrder: sorts `to_sort` by the position of each item in `order`.
  static std::vector<json> normalizeSliceOrder(std::vector<json> to_sort,
                                               const std::vector<json>& order,
                                               const std::string& merge_key, bool maps,
                                               const std::string& path) {
    std::vector<json> to_delete;
    if (maps) {
      validateMergeKeyInLists(merge_key, to_sort, path);
      validateMergeKeyInLists(merge_key, order, path);
      std::tie(to_sort, to_delete) = extractToDeleteItems(std::move(to_sort), path);
    }
    const OrderIndex index(order, merge_key, maps, path);
    go::sliceStable(to_sort, [&](const json& a, const json& b) {
      const std::int64_t ia = index.find(a);
      if (ia >= 0) {
        const std::int64_t ib = index.find(b);
        if (ib >= 0) return ia < ib;
      }
      return true;
    });
    for (json& v : to_delete) to_sort.push_back(std::move(v));
    return to_sort;
  }

  // mergeSortedSlice: interleaves server-only items (left) into patch items (right).
  static std::vector<json> mergeSortedSlice(std::vector<json> left, std::vector<json> right,
                                            const std::vector<json>& server_order,
                                            const std::string& merge_key, bool maps,
                                            const std::string& path) {
    const OrderIndex index(server_order, merge_key, maps, path);
    std::vector<json> out;
    out.reserve(left.size() + right.size());
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < left.size() && j < right.size()) {
      const std::int64_t li = index.find(left[i]);
      const std::int64_t ri = index.find(right[j]);
      if (li >= 0 && ri >= 0 && li < ri) {
        out.push_back(std::move(left[i++]));
      } else {
        out.push_back(std::move(right[j++]));
      }
    }
    for (; i < left.size(); ++i) out.push_back(std::move(left[i]));
    for (; j < right.size(); ++j) out.push_back(std::move(right[j]));
    return out;
  }

  static std::vector<json> normalizeElementOrder(std::vector<json> patch,
                                                 std::vector<json> server_only,
                                                 const std::vector<json>& patch_order,
                                                 const std::vector<json>& server_order,
                                                 const std::string& merge_key, bool maps,
                                                 const std::string& path) {
    patch = normalizeSliceOrder(std::move(patch), patch_order, merge_key, maps, path);
    server_only = normalizeSliceOrder(std::move(server_only), server_order, merge_key, maps, path);
    return mergeSortedSlice(std::move(server_only), std::move(patch), server_order, merge_key, maps,
                            path);
  }

  // partitionPrimitivesByPresentInList
  static std::pair<std::vector<json>, std::vector<json>> partitionPrimitives(
      std::vector<json> original, const std::vector<json>& partition_by, const std::string& path) {
    std::set<std::string> in_patch;
    for (const json& v : partition_by) {
      if (isUncomparable(v)) panicLike(path, "hash of unhashable type " + go::decodedTypeName(go::decodedTypeOf(v)));
      in_patch.insert(goKey(v));
    }
    std::vector<json> patch;
    std::vector<json> server_only;
    for (json& v : original) {
      if (isUncomparable(v)) panicLike(path, "hash of unhashable type " + go::decodedTypeName(go::decodedTypeOf(v)));
      (in_patch.count(goKey(v)) ? patch : server_only).push_back(std::move(v));
    }
    return {std::move(patch), std::move(server_only)};
  }

  // partitionMapsByPresentInList
  static std::pair<std::vector<json>, std::vector<json>> partitionMaps(
      std::vector<json> original, const std::vector<json>& partition_by,
      const std::string& merge_key, const std::string& path) {
    std::vector<json> patch;
    std::vector<json> server_only;
    for (json& v : original) {
      if (!v.is_object()) fail(path, errBadArgType(GoType::kMap, v));
      auto it = v.find(merge_key);
      if (it == v.end()) fail(path, errNoMergeKey(v, merge_key));
      const bool found = findMapInSlice(partition_by, merge_key, *it, path).has_value();
      (found ? patch : server_only).push_back(std::move(v));
    }
    return {std::move(patch), std::move(server_only)};
  }

  // deduplicateScalars, with its element-swapping order.
  static std::vector<json> deduplicateScalars(std::vector<json> s, const std::string& path) {
    if (s.empty()) return s;
    std::size_t length = s.size() - 1;
    for (std::size_t i = 0; i < length; ++i) {
      for (std::size_t j = i + 1; j <= length; ++j) {
        if (goEqual(s[i], s[j], path)) {
          s[j] = s[length];
          s.resize(length);
          --length;
          --j;
        }
      }
    }
    return s;
  }

  // deleteFromSlice
  static std::vector<json> deleteFromSlice(const std::vector<json>& current,
                                           const std::vector<json>& to_delete,
                                           const std::string& path) {
    std::set<std::string> keys;
    for (const json& v : to_delete) {
      if (isUncomparable(v)) panicLike(path, "hash of unhashable type " + go::decodedTypeName(go::decodedTypeOf(v)));
      keys.insert(goKey(v));
    }
    std::vector<json> out;
    for (const json& v : current) {
      if (isUncomparable(v)) panicLike(path, "hash of unhashable type " + go::decodedTypeName(go::decodedTypeOf(v)));
      if (keys.count(goKey(v)) == 0) out.push_back(v);
    }
    return out;
  }

  // mergeSliceWithSpecialElements: applies "$patch" list elements; returns the (possibly
  // filtered) original and the patch without them (empty patch and the patch as original when
  // the list is to be replaced).
  static std::pair<std::vector<json>, std::vector<json>> mergeSliceWithSpecialElements(
      std::vector<json> original, const std::vector<json>& patch, const std::string& merge_key,
      const std::string& path) {
    std::vector<json> without_special;
    bool replace = false;
    for (std::size_t i = 0; i < patch.size(); ++i) {
      const json& v = patch[i];
      auto directive = v.find(kDirectiveMarker);
      if (directive == v.end()) {
        without_special.push_back(v);
        continue;
      }
      const std::string at = childPath(path, i);
      if (isDirective(*directive, kDeleteDirective)) {
        auto merge_value = v.find(merge_key);
        if (merge_value == v.end()) fail(at, errNoMergeKey(v, merge_key));
        while (auto found = findMapInSlice(original, merge_key, *merge_value, at)) {
          original.erase(original.begin() + static_cast<std::ptrdiff_t>(*found));
        }
      } else if (isDirective(*directive, kReplaceDirective)) {
        replace = true;
      } else if (isDirective(*directive, kMergeDirective)) {
        fail(at, "merging lists cannot yet be specified in the patch");
      } else {
        fail(at, errBadPatchType(*directive, v));
      }
    }
    if (replace) return {std::move(without_special), std::vector<json>{}};
    return {std::move(original), std::move(without_special)};
  }

  std::vector<json> mergeSlice(std::vector<json> original, std::vector<json> patch,
                               const StrategicSchema& schema, const std::string& merge_key,
                               bool is_delete_list, const std::string& path) {
    if (original.empty() && patch.empty()) return original;
    const GoType type = sliceElementType({&original, &patch}, path);
    const bool maps = type == GoType::kMap;
    std::vector<json> merged;
    std::vector<json> server_order;  // the original list, as far as ordering looks at it
    if (!maps) {
      if (is_delete_list) return deleteFromSlice(original, patch, path);
      server_order = original;
      std::vector<json> both = std::move(original);
      both.insert(both.end(), patch.begin(), patch.end());
      merged = deduplicateScalars(std::move(both), path);
    } else {
      if (merge_key.empty()) {
        fail(path, "cannot merge lists without merge key for " + schema.goKind());
      }
      std::tie(original, patch) =
          mergeSliceWithSpecialElements(std::move(original), patch, merge_key, path);
      // mergeSliceWithoutSpecialElements. Go merges into `original` in place and appends to a
      // copy of the slice header, so the caller's `original` (the server order below) never
      // sees the appended items; merged elements keep their merge key, so it sees no difference.
      // `original` was moved from above, then assigned anew through std::tie.
      // NOLINTNEXTLINE(bugprone-use-after-move)
      server_order.reserve(original.size());
      for (const json& item : original) server_order.push_back(mergeKeyStub(item, merge_key));
      merged = std::move(original);
      for (std::size_t i = 0; i < patch.size(); ++i) {
        const json& v = patch[i];
        const std::string at = childPath(path, i);
        auto merge_value = v.find(merge_key);
        if (merge_value == v.end()) fail(at, errNoMergeKey(v, merge_key));
        if (auto found = findMapInSlice(merged, merge_key, *merge_value, at)) {
          merged[*found] = mergeMap(std::move(merged[*found]), v, schema, at);
        } else {
          merged.push_back(v);
        }
      }
    }
    std::vector<json> patch_items;
    std::vector<json> server_only;
    if (merge_key.empty()) {
      std::tie(patch_items, server_only) = partitionPrimitives(std::move(merged), patch, path);
    } else {
      std::tie(patch_items, server_only) = partitionMaps(std::move(merged), patch, merge_key, path);
    }
    return normalizeElementOrder(std::move(patch_items), std::move(server_only), patch,
                                 server_order, merge_key, maps, path);
  }

  json mergeSliceHandler(json original, json patch, const StrategicSchema& schema,
                         const std::string& strategy, const std::string& merge_key,
                         bool is_delete_list, const std::string& path) {
    // Delete lists are handled the same way whatever the field's strategy.
    if (strategy == kMergeDirective || is_delete_list) {
      return toArray(mergeSlice(toVector(std::move(original)), toVector(std::move(patch)), schema,
                                merge_key, is_delete_list, path));
    }
    return patch;
  }

  // validatePatchWithSetOrderList
  static void validatePatchWithSetOrderList(const std::vector<json>& patch_list,
                                            const std::vector<json>& set_order,
                                            const std::string& merge_key, const std::string& path) {
    if (set_order.empty() || patch_list.empty()) return;
    std::vector<json> non_delete = patch_list;
    if (!merge_key.empty()) non_delete = extractToDeleteItems(patch_list, path).first;
    std::size_t pi = 0;
    std::size_t si = 0;
    while (pi < non_delete.size() && si < set_order.size()) {
      if (non_delete[pi].is_object() && non_delete[pi].contains(kDirectiveMarker)) {
        ++pi;
        continue;
      }
      // mergeKeyValueEqual
      bool equal = false;
      if (merge_key.empty()) {
        equal = goEqual(non_delete[pi], set_order[si], path);
      } else {
        const json& left = non_delete[pi];
        const json& right = set_order[si];
        if (!left.is_object()) fail(path, errBadArgType(GoType::kMap, left));
        if (!right.is_object()) fail(path, errBadArgType(GoType::kMap, right));
        auto l = left.find(merge_key);
        if (l == left.end()) fail(path, errNoMergeKey(left, merge_key));
        auto r = right.find(merge_key);
        if (r == right.end()) fail(path, errNoMergeKey(right, merge_key));
        equal = goEqual(*l, *r, path);
      }
      if (equal) ++pi;
      ++si;
    }
    if (pi < non_delete.size() && si >= set_order.size()) {
      fail(path, "the order in patch list:\n" + go::sprintV(toArray(patch_list)) +
                     "\n doesn't match " + std::string(kSetElementOrderPrefix) + " list:\n" +
                     go::sprintV(toArray(set_order)));
    }
  }

  // What Go's mergeSlice leaves visible in its caller's copy of the original list (a list of
  // maps). mergeSliceWithSpecialElements deletes in place (append(s[:k], s[k+1:]...)) and
  // mergeSliceWithoutSpecialElements appends in place while the decoded slice has spare capacity,
  // so mergePatchIntoOriginal's `originalFieldValue`, which it then uses as the server order, sees
  // those writes. Upstream's own fixture "add map and delete map from merging list" depends on it.
  static std::vector<json> goAliasedOriginal(const std::vector<json>& original,
                                             const std::vector<json>& patch,
                                             const std::string& merge_key,
                                             const std::string& path) {
    const std::size_t visible = original.size();
    const std::size_t cap = goDecodedSliceCap(visible);
    std::vector<json> backing = original;  // the shared array; the caller sees [0, visible)
    std::vector<json> current = original;  // the callee's slice
    bool shared = true;
    bool replace = false;
    for (const json& v : patch) {
      auto directive = v.find(kDirectiveMarker);
      if (directive == v.end()) continue;
      if (isDirective(*directive, kReplaceDirective)) replace = true;
      if (!isDirective(*directive, kDeleteDirective)) continue;
      auto merge_value = v.find(merge_key);
      if (merge_value == v.end()) continue;
      while (auto found = findMapInSlice(current, merge_key, *merge_value, path)) {
        current.erase(current.begin() + static_cast<std::ptrdiff_t>(*found));
        for (std::size_t k = *found; k < current.size(); ++k) backing[k] = current[k];
      }
    }
    if (replace) return backing;
    for (const json& v : patch) {
      if (v.contains(kDirectiveMarker)) continue;
      auto merge_value = v.find(merge_key);
      if (merge_value == v.end()) continue;
      if (findMapInSlice(current, merge_key, *merge_value, path)) continue;
      if (shared && current.size() < cap) {
        if (current.size() < visible) backing[current.size()] = v;
      } else {
        shared = false;
      }
      current.push_back(v);
    }
    return backing;
  }

  // mergePatchIntoOriginal: processes each "$setElementOrder/<field>" with its list.
  void mergePatchIntoOriginal(json& original, json& patch, const StrategicSchema& schema,
                              const std::string& path) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : patch.items()) {
      if (hasPrefix(key, kSetElementOrderPrefix)) keys.push_back(key);
    }
    for (const std::string& key : keys) {
      const json set_order_value = std::move(patch[key]);
      patch.erase(key);
      const std::string at = childPath(path, key);
      if (!set_order_value.is_array()) fail(at, errBadArgType(GoType::kSlice, set_order_value));
      const std::vector<json> set_order = toVector(set_order_value);
      const std::string original_key = extractKey(key, kSetElementOrderPrefix, at);

      auto original_it = original.find(original_key);
      auto patch_it = patch.find(original_key);
      const bool found_original = original_it != original.end();
      const bool found_patch = patch_it != patch.end();
      std::vector<json> original_list;
      std::vector<json> patch_list;
      if (found_original) {
        if (!original_it->is_array()) fail(at, errBadArgType(GoType::kSlice, *original_it));
        original_list = toVector(*original_it);
      }
      if (found_patch) {
        if (!patch_it->is_array()) fail(at, errBadArgType(GoType::kSlice, *patch_it));
        patch_list = toVector(*patch_it);
      }
      const StrategicFieldMeta& meta = schema.lookup(original_key);
      const std::string strategy = patchStrategy(meta, at);
      const std::string& merge_key = meta.patch_merge_key;
      validatePatchWithSetOrderList(patch_list, set_order, merge_key, at);

      std::vector<json> merged;
      if (found_original && !found_patch) {
        merged = original_list;
      } else if (!found_original && found_patch) {
        merged = toVector(removeDirectives(*patch_it).first);
      } else if (found_original && found_patch) {
        merged = toVector(mergeSliceHandler(*original_it, *patch_it, subschema(meta), strategy,
                                            merge_key, false, childPath(path, original_key)));
      } else {
        continue;
      }

      std::vector<json> patch_items;
      std::vector<json> server_only;
      if (merge_key.empty()) {
        std::tie(patch_items, server_only) = partitionPrimitives(std::move(merged), set_order, at);
      } else {
        std::tie(patch_items, server_only) =
            partitionMaps(std::move(merged), set_order, merge_key, at);
      }
      const GoType type = sliceElementType({&original_list, &patch_list}, at);
      const bool maps = type == GoType::kMap;
      std::vector<json> server_order = original_list;
      if (found_original && found_patch && strategy == kMergeDirective && maps &&
          !merge_key.empty()) {
        server_order = goAliasedOriginal(original_list, patch_list, merge_key, at);
      }
      original[original_key] =
          toArray(normalizeElementOrder(std::move(patch_items), std::move(server_only), set_order,
                                        server_order, merge_key, maps, at));
      patch.erase(original_key);
    }
  }

  const StrategicSchema& any_;
};

json Merger::mergeMap(json original, json patch, const StrategicSchema& schema,
                      const std::string& path) {
  if (auto directive = patch.find(kDirectiveMarker); directive != patch.end()) {
    const json value = *directive;
    return handleDirectiveInMergeMap(value, std::move(patch), path);
  }
  if (original.is_null()) original = json::object();
  applyRetainKeysDirective(original, patch, path);
  mergePatchIntoOriginal(original, patch, schema, path);

  for (auto& item : patch.items()) {
    const std::string& patch_key = item.key();
    json& patch_value = item.value();
    const std::string at = childPath(path, patch_key);
    std::string key = patch_key;
    bool is_delete_list = false;
    // preprocessDeletionListForMerging
    if (hasPrefix(patch_key, kDeleteFromPrimitiveListPrefix)) {
      is_delete_list = true;
      const std::string stripped = extractKey(patch_key, kDeleteFromPrimitiveListPrefix, at);
      if (!stripped.empty()) key = stripped;
    }

    if (patch_value.is_null()) {
      original.erase(key);
      continue;  // IgnoreUnmatchedNulls
    }
    auto existing = original.find(key);
    if (existing == original.end()) {
      if (!is_delete_list) takePatchValue(original, key, std::move(patch_value));
      continue;
    }
    const GoType original_type = go::decodedTypeOf(*existing);
    if (original_type != go::decodedTypeOf(patch_value)) {
      if (!is_delete_list) takePatchValue(original, key, std::move(patch_value));
      continue;
    }
    switch (original_type) {
      case GoType::kMap: {
        const StrategicFieldMeta& meta = schema.lookup(key);
        const std::string strategy = patchStrategy(meta, at);
        if (strategy != kReplaceDirective) {
          *existing = mergeMap(std::move(*existing), std::move(patch_value), subschema(meta), at);
        } else {
          *existing = std::move(patch_value);
        }
        break;
      }
      case GoType::kSlice: {
        const StrategicFieldMeta& meta = schema.lookup(key);
        const std::string strategy = patchStrategy(meta, at);
        *existing = mergeSliceHandler(std::move(*existing), std::move(patch_value), subschema(meta),
                                      strategy, meta.patch_merge_key, is_delete_list, at);
        break;
      }
      default: {
        auto [value, keep] = removeDirectives(std::move(patch_value));
        if (keep) {
          *existing = std::move(value);
        } else {
          original.erase(existing);
        }
      }
    }
  }
  return original;
}

// ---------------------------------------------------------------------------------------------
// JSON merge patch (evanphx/json-patch v4 merge.go, MergePatch: mergeMerge = false).

void pruneNulls(json& n);

void pruneDocNulls(json& doc) {
  for (auto it = doc.begin(); it != doc.end();) {
    if (it->is_null()) {
      it = doc.erase(it);
    } else {
      pruneNulls(*it);
      ++it;
    }
  }
}

void pruneNulls(json& n) {
  if (n.is_object()) {
    pruneDocNulls(n);
  } else if (n.is_array()) {
    for (json& element : n) {
      if (!element.is_null()) pruneNulls(element);
    }
  }
}

json mergeNode(json cur, json patch);

void mergeDocs(json& doc, json& patch) {
  for (auto& item : patch.items()) {
    json& v = item.value();
    if (v.is_null()) {
      doc.erase(item.key());
      continue;
    }
    auto cur = doc.find(item.key());
    if (cur == doc.end() || cur->is_null()) {
      pruneNulls(v);
      doc[item.key()] = std::move(v);
    } else {
      *cur = mergeNode(std::move(*cur), std::move(v));
    }
  }
}

json mergeNode(json cur, json patch) {
  if (!cur.is_object()) {
    pruneNulls(patch);
    return patch;
  }
  if (!patch.is_object()) return patch;
  mergeDocs(cur, patch);
  return cur;
}

// ---------------------------------------------------------------------------------------------
// Schemas: the patchStrategy/patchMergeKey tags of the Go types.

StrategicFieldMeta mergeBy(std::string key, const StrategicSchema* elements) {
  return StrategicFieldMeta{{"merge"}, std::move(key), elements};
}
StrategicFieldMeta mergeRetainKeysBy(std::string key, const StrategicSchema* elements) {
  return StrategicFieldMeta{{"merge", "retainKeys"}, std::move(key), elements};
}
StrategicFieldMeta plain(const StrategicSchema* schema) {
  return StrategicFieldMeta{{}, "", schema};
}

struct Schemas {
  StrategicSchema any{"interface", StrategicSchema::Kind::kAny};
  StrategicSchema string{"string", StrategicSchema::Kind::kAny};
  StrategicSchema json_merge_patch{"JSONMergePatch", StrategicSchema::Kind::kJsonMergePatch};
  StrategicSchema object_meta{"ObjectMeta", StrategicSchema::Kind::kStruct};
  StrategicSchema container{"Container", StrategicSchema::Kind::kStruct};
  StrategicSchema pod_spec{"PodSpec", StrategicSchema::Kind::kStruct};
  StrategicSchema pod_status{"PodStatus", StrategicSchema::Kind::kStruct};
  StrategicSchema pod{"Pod", StrategicSchema::Kind::kStruct};
  StrategicSchema pod_template_spec{"PodTemplateSpec", StrategicSchema::Kind::kStruct};
  StrategicSchema pod_template{"PodTemplate", StrategicSchema::Kind::kStruct};
  StrategicSchema workload_status{"WorkloadStatus", StrategicSchema::Kind::kStruct};
  StrategicSchema deployment_spec{"DeploymentSpec", StrategicSchema::Kind::kStruct};
  StrategicSchema deployment{"Deployment", StrategicSchema::Kind::kStruct};
  StrategicSchema template_spec{"WorkloadSpec", StrategicSchema::Kind::kStruct};
  StrategicSchema stateful_set{"StatefulSet", StrategicSchema::Kind::kStruct};
  StrategicSchema daemon_set{"DaemonSet", StrategicSchema::Kind::kStruct};
  StrategicSchema replica_set{"ReplicaSet", StrategicSchema::Kind::kStruct};
  StrategicSchema replication_controller{"ReplicationController", StrategicSchema::Kind::kStruct};
  StrategicSchema job_spec{"JobSpec", StrategicSchema::Kind::kStruct};
  StrategicSchema job{"Job", StrategicSchema::Kind::kStruct};
  StrategicSchema job_template_spec{"JobTemplateSpec", StrategicSchema::Kind::kStruct};
  StrategicSchema cron_job_spec{"CronJobSpec", StrategicSchema::Kind::kStruct};
  StrategicSchema cron_job{"CronJob", StrategicSchema::Kind::kStruct};

  Schemas() {
    // apimachinery meta/v1 types.go ObjectMeta
    object_meta.addField("ownerReferences", mergeBy("uid", &any));
    object_meta.addField("finalizers", mergeBy("", &string));

    // core/v1 types.go Container (EphemeralContainerCommon carries the same tags)
    container.addField("ports", mergeBy("containerPort", &any));
    container.addField("env", mergeBy("name", &any));
    container.addField("volumeMounts", mergeBy("mountPath", &any));
    container.addField("volumeDevices", mergeBy("devicePath", &any));

    // core/v1 types.go PodSpec
    pod_spec.addField("volumes", mergeRetainKeysBy("name", &any));
    pod_spec.addField("initContainers", mergeBy("name", &container));
    pod_spec.addField("containers", mergeBy("name", &container));
    pod_spec.addField("ephemeralContainers", mergeBy("name", &container));
    pod_spec.addField("imagePullSecrets", mergeBy("name", &any));
    pod_spec.addField("hostAliases", mergeBy("ip", &any));
    pod_spec.addField("topologySpreadConstraints", mergeBy("topologyKey", &any));
    pod_spec.addField("schedulingGates", mergeBy("name", &any));
    pod_spec.addField("resourceClaims", mergeRetainKeysBy("name", &any));

    // core/v1 types.go PodStatus
    pod_status.addField("conditions", mergeBy("type", &any));
    pod_status.addField("podIPs", mergeBy("ip", &any));
    pod_status.addField("hostIPs", mergeBy("ip", &any));
    pod_status.addField("resourceClaimStatuses", mergeRetainKeysBy("name", &any));

    pod.addField("metadata", plain(&object_meta));
    pod.addField("spec", plain(&pod_spec));
    pod.addField("status", plain(&pod_status));

    pod_template_spec.addField("metadata", plain(&object_meta));
    pod_template_spec.addField("spec", plain(&pod_spec));
    pod_template.addField("metadata", plain(&object_meta));
    pod_template.addField("template", plain(&pod_template_spec));

    // apps/v1 and batch/v1: every workload status has conditions merged by type.
    workload_status.addField("conditions", mergeBy("type", &any));

    deployment_spec.addField("template", plain(&pod_template_spec));
    deployment_spec.addField("strategy", StrategicFieldMeta{{"retainKeys"}, "", &any});
    template_spec.addField("template", plain(&pod_template_spec));
    job_spec.addField("template", plain(&pod_template_spec));
    job_template_spec.addField("metadata", plain(&object_meta));
    job_template_spec.addField("spec", plain(&job_spec));
    cron_job_spec.addField("jobTemplate", plain(&job_template_spec));

    auto workload = [&](StrategicSchema& kind, StrategicSchema& spec, StrategicSchema* status) {
      kind.addField("metadata", plain(&object_meta));
      kind.addField("spec", plain(&spec));
      if (status != nullptr) kind.addField("status", plain(status));
    };
    workload(deployment, deployment_spec, &workload_status);
    workload(stateful_set, template_spec, &workload_status);
    workload(daemon_set, template_spec, &workload_status);
    workload(replica_set, template_spec, &workload_status);
    workload(replication_controller, template_spec, &workload_status);
    workload(job, job_spec, &workload_status);
    workload(cron_job, cron_job_spec, nullptr);
  }
};

const Schemas& schemas() {
  static const Schemas instance;
  return instance;
}

}  // namespace

void StrategicSchema::addField(std::string json_name, StrategicFieldMeta meta) {
  fields_[std::move(json_name)] = std::move(meta);
}

const StrategicFieldMeta& StrategicSchema::lookup(std::string_view json_name) const {
  static const StrategicFieldMeta kNone{};
  auto it = fields_.find(json_name);
  return it == fields_.end() ? kNone : it->second;
}

const StrategicSchema& podSchema() { return schemas().pod; }

const StrategicSchema& jsonMergePatchSchema() { return schemas().json_merge_patch; }

const StrategicSchema& schemaForKind(std::string_view kind) {
  const Schemas& s = schemas();
  if (kind == "Pod") return s.pod;
  if (kind == "PodTemplate") return s.pod_template;
  if (kind == "Deployment") return s.deployment;
  if (kind == "StatefulSet") return s.stateful_set;
  if (kind == "DaemonSet") return s.daemon_set;
  if (kind == "ReplicaSet") return s.replica_set;
  if (kind == "ReplicationController") return s.replication_controller;
  if (kind == "Job") return s.job;
  if (kind == "CronJob") return s.cron_job;
  return s.json_merge_patch;
}

Result<json> strategicMerge(const json& original, const json& patch, const StrategicSchema& schema,
                            const StrategicMergeOptions& options) {
  if (schema.kind() == StrategicSchema::Kind::kJsonMergePatch) {
    return jsonMergePatch(original, patch);
  }
  // handleUnmarshal: both documents must decode into map[string]interface{} (null is an empty
  // map).
  if ((!original.is_object() && !original.is_null()) || (!patch.is_object() && !patch.is_null())) {
    return Error{std::string(kErrBadJSONDoc)};
  }
  try {
    Merger merger(schemas().any);
    return merger.mergeMap(original, patch.is_null() ? json::object() : patch, schema, "");
  } catch (const MergeFailure& failure) {
    if (options.name_path_in_errors && !failure.path.empty()) {
      return Error{failure.path + ": " + failure.message};
    }
    return Error{failure.message};
  } catch (const std::exception& e) {
    return Error{std::string("strategic merge: ") + e.what()};
  }
}

Result<json> jsonMergePatch(const json& original, const json& patch) {
  // merge.go's errBadJSONDoc / errBadJSONPatch: the apiserver answers 400 for the latter only.
  if (original.is_null()) return makeError("Invalid JSON Document", ErrorCode::kInternal);
  if (patch.is_null()) return makeError("Invalid JSON Patch", ErrorCode::kInvalid);
  try {
    if (original.is_object() && patch.is_object()) {
      json doc = original;
      json p = patch;
      mergeDocs(doc, p);
      return doc;
    }
    // Not both objects: the patch itself becomes the document.
    json result = patch;
    if (result.is_object()) {
      pruneDocNulls(result);
      return result;
    }
    if (!result.is_array()) return makeError("Invalid JSON Patch", ErrorCode::kInvalid);
    for (json& element : result) {
      if (!element.is_null()) pruneNulls(element);
    }
    return result;
  } catch (const std::exception& e) {
    return makeError(std::string("json merge patch: ") + e.what(), ErrorCode::kInternal);
  }
}

}  // namespace harness::core
