// Patch generation: createPatch(from, to) for json_patch.h.
//
// Injectors answer with a JSON Patch computed by diffing the original and the mutated object
// (Istio: gomodules.xyz/jsonpatch/v2 CreatePatch, see docs/istio-injector.md §3). That library's
// LCS is quadratic on long arrays (a pod with thousands of env vars took seconds), so this one
// works in O(n) for the common cases: objects are diffed key by key, arrays keep their common
// prefix and suffix and only the middle goes through a Myers edit script whose work is bounded;
// beyond the bound the middle is diffed pairwise.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/core/json_patch.h"
#include "harness/core/json_pointer.h"

namespace harness::core {

namespace {

using json = nlohmann::json;

// Myers work limits: D (edit distance) at most kMaxEditDistance, and D * (N + M) at most
// kMaxEditWork. Memory is O(D^2) for the trace.
constexpr std::int64_t kMaxEditDistance = 1024;
constexpr std::int64_t kMaxEditWork = 8'000'000;

enum class Edit : std::uint8_t { kKeep, kDelete, kInsert };

class Differ {
 public:
  explicit Differ(JsonPatch& out) : out_(out) {}

  // Emits operations turning `a` into `b`, both located at `path_`.
  void diffValue(const json& a, const json& b) {
    if (a.is_object() && b.is_object()) {
      diffObject(a, b);
    } else if (a.is_array() && b.is_array()) {
      diffArray(a, b);
    } else if (!sameScalar(a, b)) {
      out_.push_back(PatchOperation::replace(path_, b));
    }
  }

  // nlohmann's == treats 1 and 1.0 as equal; in JSON text (and for Go) they differ.
  static bool sameScalar(const json& a, const json& b) {
    return a == b && a.is_number_float() == b.is_number_float();
  }

 private:
  void pushToken(std::string_view token, std::size_t& saved) {
    saved = path_.size();
    path_.push_back('/');
    path_ += escapePointerToken(token);
  }
  void pushIndex(std::size_t index, std::size_t& saved) {
    saved = path_.size();
    path_.push_back('/');
    path_ += std::to_string(index);
  }
  void pop(std::size_t saved) { path_.resize(saved); }

  void diffObject(const json& a, const json& b) {
    // Both iterate in key order; walk them together.
    auto ia = a.begin();
    auto ib = b.begin();
    std::size_t saved = 0;
    while (ia != a.end() || ib != b.end()) {
      if (ib == b.end() || (ia != a.end() && ia.key() < ib.key())) {
        pushToken(ia.key(), saved);
        out_.push_back(PatchOperation::remove(path_));
        pop(saved);
        ++ia;
      } else if (ia == a.end() || ib.key() < ia.key()) {
        pushToken(ib.key(), saved);
        out_.push_back(PatchOperation::add(path_, *ib));
        pop(saved);
        ++ib;
      } else {
        pushToken(ia.key(), saved);
        diffValue(*ia, *ib);
        pop(saved);
        ++ia;
        ++ib;
      }
    }
  }

  void diffArray(const json& a, const json& b) {
    const std::size_t n = a.size();
    const std::size_t m = b.size();
    std::size_t prefix = 0;
    while (prefix < n && prefix < m && a[prefix] == b[prefix]) ++prefix;
    std::size_t suffix = 0;
    while (suffix < n - prefix && suffix < m - prefix && a[n - 1 - suffix] == b[m - 1 - suffix]) {
      ++suffix;
    }
    const std::size_t mid_a = n - prefix - suffix;
    const std::size_t mid_b = m - prefix - suffix;
    if (mid_a == 0 && mid_b == 0) return;

    std::vector<Edit> script;
    if (mid_a > 0 && mid_b > 0) script = editScript(a, b, prefix, mid_a, mid_b);
    if (script.empty()) {
      // Insert-only, delete-only, or over the work bound: one hunk, paired element by element.
      script.assign(mid_a, Edit::kDelete);
      script.insert(script.end(), mid_b, Edit::kInsert);
    }
    emitScript(a, b, prefix, n, script);
  }

  // Turns an edit script over the middle sections into operations, tracking where the current
  // element sits in the array as it is being patched. Each run of deletions and insertions (a
  // hunk) is paired up element by element (a recursive diff, usually one `replace`), and the rest
  // becomes `remove`s (from the back, so each is cheap) or `add`s (`-` when appending).
  void emitScript(const json& a, const json& b, std::size_t prefix, std::size_t n,
                  const std::vector<Edit>& script) {
    std::size_t ia = prefix;        // next element of `a` in the script
    std::size_t ib = prefix;        // next element of `b` in the script
    std::size_t position = prefix;  // index of that element in the array being patched
    std::size_t length = n;         // current length of the array being patched
    std::size_t saved = 0;
    for (std::size_t k = 0; k < script.size();) {
      if (script[k] == Edit::kKeep) {
        ++ia;
        ++ib;
        ++position;
        ++k;
        continue;
      }
      std::size_t deletes = 0;
      std::size_t inserts = 0;
      for (; k < script.size() && script[k] != Edit::kKeep; ++k) {
        (script[k] == Edit::kDelete ? deletes : inserts)++;
      }
      const std::size_t paired = std::min(deletes, inserts);
      for (std::size_t t = 0; t < paired; ++t) {
        pushIndex(position + t, saved);
        diffValue(a[ia + t], b[ib + t]);
        pop(saved);
      }
      for (std::size_t t = deletes; t > paired; --t) {
        pushIndex(position + t - 1, saved);
        out_.push_back(PatchOperation::remove(path_));
        pop(saved);
      }
      length -= deletes - paired;
      for (std::size_t t = paired; t < inserts; ++t) {
        const std::size_t index = position + t;
        if (index == length) {
          pushToken("-", saved);
        } else {
          pushIndex(index, saved);
        }
        out_.push_back(PatchOperation::add(path_, b[ib + t]));
        pop(saved);
        ++length;
      }
      ia += deletes;
      ib += inserts;
      position += inserts;
    }
  }

  // Myers' O((N+M)D) shortest edit script over a[prefix, prefix+n) and b[prefix, prefix+m).
  // Returns an empty script when D exceeds the work bound.
  static std::vector<Edit> editScript(const json& a, const json& b, std::size_t prefix,
                                      std::size_t n_size, std::size_t m_size) {
    const auto n = static_cast<std::int64_t>(n_size);
    const auto m = static_cast<std::int64_t>(m_size);
    const std::int64_t max_d =
        std::min({n + m, kMaxEditDistance, std::max<std::int64_t>(1, kMaxEditWork / (n + m))});

    // Hashes make the (many) element comparisons cheap; equal hashes are confirmed with ==.
    std::vector<std::size_t> ha(n_size);
    std::vector<std::size_t> hb(m_size);
    for (std::size_t i = 0; i < n_size; ++i) ha[i] = std::hash<json>{}(a[prefix + i]);
    for (std::size_t j = 0; j < m_size; ++j) hb[j] = std::hash<json>{}(b[prefix + j]);
    auto equal = [&](std::int64_t x, std::int64_t y) {
      const auto xi = static_cast<std::size_t>(x);
      const auto yi = static_cast<std::size_t>(y);
      return ha[xi] == hb[yi] && a[prefix + xi] == b[prefix + yi];
    };

    // v[k + offset] = furthest x on diagonal k; trace[d] = v restricted to diagonals -d..d.
    const std::int64_t offset = max_d + 1;
    std::vector<std::int64_t> v(static_cast<std::size_t>(2 * offset + 1), 0);
    std::vector<std::vector<std::int64_t>> trace;
    std::int64_t found_d = -1;
    for (std::int64_t d = 0; d <= max_d && found_d < 0; ++d) {
      for (std::int64_t k = -d; k <= d; k += 2) {
        std::int64_t x = 0;
        if (k == -d || (k != d && v[k - 1 + offset] < v[k + 1 + offset])) {
          x = v[k + 1 + offset];
        } else {
          x = v[k - 1 + offset] + 1;
        }
        std::int64_t y = x - k;
        while (x < n && y < m && equal(x, y)) {
          ++x;
          ++y;
        }
        v[k + offset] = x;
        if (x >= n && y >= m) {
          found_d = d;
          break;
        }
      }
      trace.emplace_back(v.begin() + (offset - d), v.begin() + (offset + d + 1));
    }
    if (found_d < 0) return {};

    // Walk back from (n, m) through the trace.
    std::vector<Edit> reversed;
    std::int64_t x = n;
    std::int64_t y = m;
    for (std::int64_t d = found_d; d > 0; --d) {
      const auto& prev = trace[static_cast<std::size_t>(d - 1)];  // diagonals -(d-1)..(d-1)
      auto at = [&](std::int64_t k) { return prev[static_cast<std::size_t>(k + d - 1)]; };
      const std::int64_t k = x - y;
      std::int64_t prev_k = 0;
      if (k == -d || (k != d && at(k - 1) < at(k + 1))) {
        prev_k = k + 1;
      } else {
        prev_k = k - 1;
      }
      const std::int64_t prev_x = at(prev_k);
      const std::int64_t prev_y = prev_x - prev_k;
      while (x > prev_x && y > prev_y) {
        reversed.push_back(Edit::kKeep);
        --x;
        --y;
      }
      reversed.push_back(x == prev_x ? Edit::kInsert : Edit::kDelete);
      x = prev_x;
      y = prev_y;
    }
    while (x > 0 && y > 0) {
      reversed.push_back(Edit::kKeep);
      --x;
      --y;
    }
    return {reversed.rbegin(), reversed.rend()};
  }

  JsonPatch& out_;
  std::string path_;
};

}  // namespace

JsonPatch createPatch(const json& from, const json& to) {
  JsonPatch patch;
  Differ differ(patch);
  if ((from.is_object() && to.is_object()) || (from.is_array() && to.is_array())) {
    differ.diffValue(from, to);
  } else if (from != to || from.is_number_float() != to.is_number_float()) {
    patch.push_back(PatchOperation::replace("", to));
  }
  return patch;
}

}  // namespace harness::core
