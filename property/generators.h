#pragma once

// rapidcheck generators for the JSON documents and Kubernetes objects the properties use.

#include <rapidcheck.h>

#include <nlohmann/json.hpp>

namespace harness::property {

// Short keys from a small alphabet (so that documents share keys and diffs are interesting),
// including the characters JSON Pointer must escape.
inline rc::Gen<std::string> genKey() {
  return rc::gen::oneOf(rc::gen::element<std::string>("a", "b", "c", "name", "a/b", "m~n", ""),
                        rc::gen::container<std::string>(rc::gen::inRange('a', 'e')));
}

inline rc::Gen<nlohmann::json> genScalar() {
  return rc::gen::oneOf(
      rc::gen::just(nlohmann::json(nullptr)),
      rc::gen::map(rc::gen::arbitrary<bool>(), [](bool b) { return nlohmann::json(b); }),
      rc::gen::map(rc::gen::inRange<std::int64_t>(-1000, 1000),
                   [](std::int64_t i) { return nlohmann::json(i); }),
      rc::gen::map(rc::gen::element<std::string>("", "x", "true", "yes", "1", "a b", "null",
                                                 "multi\nline", "~", "- item", "key: value"),
                   [](std::string s) { return nlohmann::json(s); }));
}

inline rc::Gen<nlohmann::json> genJson(int depth) {
  if (depth <= 0) return genScalar();
  auto child = rc::gen::lazy([depth] { return genJson(depth - 1); });
  return rc::gen::oneOf(
      genScalar(),
      rc::gen::map(rc::gen::container<std::vector<nlohmann::json>>(child),
                   [](std::vector<nlohmann::json> items) { return nlohmann::json(items); }),
      rc::gen::map(rc::gen::container<std::map<std::string, nlohmann::json>>(genKey(), child),
                   [](std::map<std::string, nlohmann::json> m) { return nlohmann::json(m); }));
}

// A variant of `doc`: some values replaced, keys added or removed, array elements inserted or
// removed, so that diffs between a document and its variant are realistic.
inline rc::Gen<nlohmann::json> genVariant(const nlohmann::json& doc, int depth) {
  return rc::gen::exec([doc, depth] {
    if (depth <= 0 || !*rc::gen::inRange(0, 4)) return *genJson(1);
    nlohmann::json out = doc;
    if (out.is_object()) {
      for (auto it = out.begin(); it != out.end();) {
        const int choice = *rc::gen::inRange(0, 4);
        if (choice == 0) {
          it = out.erase(it);
          continue;
        }
        if (choice == 1) it.value() = *genVariant(it.value(), depth - 1);
        ++it;
      }
      if (*rc::gen::inRange(0, 3) == 0) out[*genKey()] = *genJson(depth - 1);
    } else if (out.is_array()) {
      nlohmann::json arr = nlohmann::json::array();
      for (auto& item : out) {
        const int choice = *rc::gen::inRange(0, 5);
        if (choice == 0) continue;  // removed
        if (choice == 1) arr.push_back(*genJson(depth - 1));  // inserted before
        arr.push_back(choice == 2 ? *genVariant(item, depth - 1) : item);
      }
      if (*rc::gen::inRange(0, 3) == 0) arr.push_back(*genJson(depth - 1));
      out = std::move(arr);
    } else {
      out = *genJson(depth - 1);
    }
    return out;
  });
}

// Kubernetes objects are JSON objects at the root; so are the documents kube-apiserver patches
// (evanphx/json-patch v4 cannot even decode another root).
inline rc::Gen<nlohmann::json> genObject(int depth) {
  return rc::gen::map(rc::gen::container<std::map<std::string, nlohmann::json>>(
                          genKey(), rc::gen::lazy([depth] { return genJson(depth - 1); })),
                      [](std::map<std::string, nlohmann::json> m) { return nlohmann::json(m); });
}

inline rc::Gen<nlohmann::json> genObjectVariant(const nlohmann::json& doc, int depth) {
  return rc::gen::map(genVariant(doc, depth), [doc](nlohmann::json v) {
    return v.is_object() ? v : nlohmann::json{{"replaced", v}};
  });
}

}  // namespace harness::property
