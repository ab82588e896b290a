// Sprig's template functions (Masterminds/sprig v3): functions.go for the names and argument
// types, defaults.go (default, empty, coalesce, all, any, compact, fromJson, toJson,
// toPrettyJson, toRawJson, ternary), strings.go (quote, squote, cat, indent, nindent, replace,
// plural, trunc, join, split, splitn, substr, strval), dict.go, list.go, numeric.go with
// spf13/cast (ToInt64E, ToFloat64E, trimZeroDecimal), regex.go. Error texts are the ones the Go
// functions return or panic with (a panic inside a template function becomes "error calling
// <name>: <panic text>" through text/template's safeCall).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "funcs_common.h"
#include "harness/core/field_errors.h"
#include "harness/core/utf8.h"
#include "harness/go/base64.h"
#include "harness/go/regexp.h"
#include "harness/go/strconv.h"
#include "harness/gotemplate/funcs.h"
#include "harness/gotemplate/go_fmt.h"
#include "harness/gotemplate/go_json.h"
#include "parse.h"

namespace harness::gotemplate {
namespace {

using detail::kindName;
using detail::str;
using detail::strval;

constexpr std::size_t kMaxResultBytes = 64u << 20;   // no function builds a larger string
const char* const kNilDeref = "runtime error: invalid memory address or nil pointer dereference";

ParamType any() { return ParamType::any(); }
ParamType string() { return ParamType::string(); }
ParamType integer() { return ParamType::integer(); }

Function fn(std::vector<ParamType> params, FunctionBody body, bool variadic = false) {
  return Function{std::move(params), variadic, std::move(body)};
}

// spf13/cast's trimZeroDecimal: "12.00" -> "12", "12.01" unchanged.
std::string trimZeroDecimal(const std::string& s) {
  bool found_zero = false;
  for (std::size_t i = s.size(); i > 0; --i) {
    const char c = s[i - 1];
    if (c == '.') {
      if (found_zero) return s.substr(0, i - 1);
    } else if (c == '0') {
      found_zero = true;
    } else {
      return s;
    }
  }
  return s;
}

std::int64_t floatToInt64(double d) {
  if (std::isnan(d)) return INT64_MIN;
  if (d >= 9.2233720368547758e18 || d < -9.2233720368547758e18) return INT64_MIN;
  return static_cast<std::int64_t>(d);
}

// cast.ToInt64 (errors give 0).
std::int64_t toInt64(const Value& v) {
  if (!v.valid() || v.isNil()) return 0;
  const auto& j = v.json();
  switch (v.kind()) {
    case GoKind::kInt:
    case GoKind::kUint:
      return j.is_number_unsigned() ? static_cast<std::int64_t>(j.get<std::uint64_t>())
                                    : j.get<std::int64_t>();
    case GoKind::kFloat: return floatToInt64(j.get<double>());
    case GoKind::kBool: return j.get<bool>() ? 1 : 0;
    case GoKind::kString: {
      auto r = go::parseInt(trimZeroDecimal(j.get<std::string>()), 0, 0);
      return r.ok() ? *r : 0;
    }
    default: return 0;
  }
}

// cast.ToFloat64 (errors give 0).
double toFloat64(const Value& v) {
  if (!v.valid() || v.isNil()) return 0;
  const auto& j = v.json();
  switch (v.kind()) {
    case GoKind::kInt:
    case GoKind::kUint:
      return j.is_number_unsigned() ? static_cast<double>(j.get<std::uint64_t>())
                                    : static_cast<double>(j.get<std::int64_t>());
    case GoKind::kFloat: return j.get<double>();
    case GoKind::kBool: return j.get<bool>() ? 1 : 0;
    case GoKind::kString: {
      auto r = go::parseFloat(j.get<std::string>());
      return r.ok() ? *r : 0;
    }
    default: return 0;
  }
}

// Go's integer arithmetic wraps around.
std::int64_t wrapAdd(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}
std::int64_t wrapMul(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b));
}

// Sprig's empty: nil, zero numbers, false, and empty strings/maps/slices.
bool sprigEmpty(const Value& v) {
  if (!v.valid() || v.isNil()) return true;
  return !goTruth(v.withBoxed(false));
}

// strslice: a list as strings, nils dropped; a nil gives []; a scalar gives [strval].
std::vector<std::string> strslice(const Value& v) {
  std::vector<std::string> out;
  if (!v.valid() || v.isNil()) return out;
  if (v.kind() == GoKind::kSlice) {
    for (const auto& e : v.json()) {
      if (!e.is_null()) out.push_back(strval(Value(e)));
    }
    return out;
  }
  out.push_back(strval(v));
  return out;
}

// reflect.DeepEqual over JSON values with Go's types (int 1 != float64 1).
bool deepEqual(const nlohmann::json& a, const nlohmann::json& b) {
  const GoKind ka = goKindOf(a);
  const GoKind kb = goKindOf(b);
  if (ka != kb) return false;
  switch (ka) {
    case GoKind::kMap: {
      if (a.size() != b.size()) return false;
      for (auto it = a.begin(); it != a.end(); ++it) {
        const auto jt = b.find(it.key());
        if (jt == b.end() || !deepEqual(it.value(), *jt)) return false;
      }
      return true;
    }
    case GoKind::kSlice:
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!deepEqual(a[i], b[i])) return false;
      }
      return true;
    default: return a == b;
  }
}

// Requires a list (slice) argument; Sprig's kind errors otherwise.
Result<const nlohmann::json*> listArg(const Value& v, const std::string& what) {
  if (!v.valid() || v.isNil()) return Error{kNilDeref};
  if (v.kind() != GoKind::kSlice) return Error{what + kindName(v)};
  return &v.json();
}

std::string repeatString(const std::string& s, std::int64_t count) {
  std::string out;
  out.reserve(s.size() * static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) out += s;
  return out;
}

Result<std::string> sprigIndent(std::int64_t spaces, const std::string& v) {
  if (spaces < 0) return Error{"strings: negative Repeat count"};
  const std::size_t lines = static_cast<std::size_t>(std::count(v.begin(), v.end(), '\n')) + 1;
  if (static_cast<std::uint64_t>(spaces) * lines + v.size() > kMaxResultBytes) {
    return Error{"result exceeds " + std::to_string(kMaxResultBytes) + " bytes"};
  }
  const std::string pad(static_cast<std::size_t>(spaces), ' ');
  std::string out = pad;
  for (const char c : v) {
    out.push_back(c);
    if (c == '\n') out += pad;
  }
  return out;
}

// strings.Replace(s, old, new, -1).
std::string replaceAll(const std::string& s, const std::string& old_s, const std::string& new_s) {
  std::string out;
  if (old_s.empty()) {
    // Inserts new at the start and after each UTF-8 sequence.
    out += new_s;
    for (std::size_t i = 0; i < s.size();) {
      std::size_t w = 1;
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0xF0) {
        w = 4;
      } else if (c >= 0xE0) {
        w = 3;
      } else if (c >= 0xC0) {
        w = 2;
      }
      w = std::min(w, s.size() - i);
      out.append(s, i, w);
      out += new_s;
      i += w;
    }
    return out;
  }
  std::size_t pos = 0;
  for (;;) {
    const std::size_t f = s.find(old_s, pos);
    if (f == std::string::npos) break;
    out.append(s, pos, f - pos);
    out += new_s;
    pos = f + old_s.size();
  }
  out.append(s, pos, std::string::npos);
  return out;
}

// strings.Split / SplitN (n < 0: all).
std::vector<std::string> splitN(const std::string& s, const std::string& sep, std::int64_t n) {
  std::vector<std::string> out;
  if (n == 0) return out;
  if (sep.empty()) {
    for (std::size_t i = 0; i < s.size();) {
      std::size_t w = 1;
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0xF0) {
        w = 4;
      } else if (c >= 0xE0) {
        w = 3;
      } else if (c >= 0xC0) {
        w = 2;
      }
      w = std::min(w, s.size() - i);
      if (n > 0 && static_cast<std::int64_t>(out.size()) == n - 1) {
        out.push_back(s.substr(i));
        return out;
      }
      out.push_back(s.substr(i, w));
      i += w;
    }
    return out;
  }
  std::size_t pos = 0;
  for (;;) {
    if (n > 0 && static_cast<std::int64_t>(out.size()) == n - 1) break;
    const std::size_t f = s.find(sep, pos);
    if (f == std::string::npos) break;
    out.push_back(s.substr(pos, f - pos));
    pos = f + sep.size();
  }
  out.push_back(s.substr(pos));
  return out;
}

bool isAsciiSpace(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

std::string trimSpace(const std::string& s) {
  std::size_t b = 0;
  std::size_t e = s.size();
  while (b < e && isAsciiSpace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && isAsciiSpace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Decodes the runes of s (invalid bytes become U+FFFD).
std::vector<std::pair<std::uint32_t, std::size_t>> runes(const std::string& s) {
  std::vector<std::pair<std::uint32_t, std::size_t>> out;  // rune, byte length
  for (std::size_t i = 0; i < s.size();) {
    // kLeadBits, as this function always decoded: overlong forms and surrogates pass as runes.
    const core::Rune r = core::decodeUtf8(s, i, core::Utf8Check::kLeadBits);
    out.emplace_back(r.code_point, r.length);
    i += r.length;
  }
  return out;
}

// strings.Trim(s, cutset).
std::string trimCutset(const std::string& s, const std::string& cutset) {
  std::set<std::uint32_t> cut;
  for (const auto& [r, len] : runes(cutset)) cut.insert(r);
  const auto rs = runes(s);
  std::size_t b = 0;
  std::size_t e = rs.size();
  while (b < e && cut.count(rs[b].first) != 0) ++b;
  while (e > b && cut.count(rs[e - 1].first) != 0) --e;
  std::size_t start = 0;
  for (std::size_t i = 0; i < b; ++i) start += rs[i].second;
  std::size_t len = 0;
  for (std::size_t i = b; i < e; ++i) len += rs[i].second;
  return s.substr(start, len);
}

std::string asciiUpper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// path.Clean.
std::string pathClean(const std::string& p) {
  if (p.empty()) return ".";
  const bool rooted = p[0] == '/';
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i < p.size()) {
    while (i < p.size() && p[i] == '/') ++i;
    const std::size_t start = i;
    while (i < p.size() && p[i] != '/') ++i;
    const std::string elem = p.substr(start, i - start);
    if (elem.empty() || elem == ".") continue;
    if (elem == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!rooted) {
        parts.push_back("..");
      }
      continue;
    }
    parts.push_back(elem);
  }
  std::string out = rooted ? "/" : "";
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (k > 0) out += "/";
    out += parts[k];
  }
  return out.empty() ? "." : out;
}

std::string pathBase(std::string p) {
  if (p.empty()) return ".";
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  if (p == "/") return "/";
  const std::size_t slash = p.rfind('/');
  if (slash != std::string::npos) p = p.substr(slash + 1);
  return p.empty() ? "/" : p;
}

std::string pathDir(const std::string& p) {
  const std::size_t slash = p.rfind('/');
  return pathClean(slash == std::string::npos ? "" : p.substr(0, slash + 1));
}

std::string pathExt(const std::string& p) {
  for (std::size_t i = p.size(); i > 0; --i) {
    if (p[i - 1] == '/') break;
    if (p[i - 1] == '.') return p.substr(i - 1);
  }
  return "";
}

// Sprig's regex functions (Masterminds/sprig regex.go) call regexp.MustCompile, whose panic the
// template engine returns as the call's error; the must* variants return Compile's error.
Result<go::Regexp> compileRegex(const std::string& expr, bool must_variant) {
  auto re = go::Regexp::compile(expr);
  if (!re && !must_variant) return Error{go::mustCompilePanic(expr, re.error())};
  return re;
}

Value stringList(const std::vector<std::string>& items) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& s : items) arr.push_back(s);
  return Value(std::move(arr));
}

// mergo.Merge / MergeWithOverwrite on maps.
void mergeInto(nlohmann::json& dst, const nlohmann::json& src, bool overwrite, int depth) {
  if (depth > kMaxJsonDepth) return;
  for (auto it = src.begin(); it != src.end(); ++it) {
    const nlohmann::json& s = it.value();
    auto d = dst.find(it.key());
    if (d == dst.end()) {
      dst[it.key()] = s;
      continue;
    }
    if (d->is_object() && s.is_object()) {
      mergeInto(*d, s, overwrite, depth + 1);
      continue;
    }
    const bool src_empty = sprigEmpty(Value(s));
    const bool dst_empty = sprigEmpty(Value(*d));
    if (!src_empty && (overwrite || dst_empty)) *d = s;
  }
}

}  // namespace

FuncMap sprigFuncMap() {
  FuncMap m;
  const ParamType map = ParamType::map();

  // ---- strings
  m["trunc"] = fn({integer(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::int64_t c = a[0].json().get<std::int64_t>();
    const std::string s = str(a[1]);
    const auto len = static_cast<std::int64_t>(s.size());
    if (c < 0 && len + c > 0) return Value(s.substr(static_cast<std::size_t>(len + c)));
    if (c >= 0 && len > c) return Value(s.substr(0, static_cast<std::size_t>(c)));
    return Value(s);
  });
  m["trim"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(trimSpace(str(a[0])));
  });
  m["upper"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(asciiUpper(str(a[0])));
  });
  m["lower"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(detail::asciiLower(str(a[0])));
  });
  m["title"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    std::string s = str(a[0]);
    bool prev_sep = true;
    for (char& c : s) {
      const auto u = static_cast<unsigned char>(c);
      if (prev_sep && std::islower(u)) c = static_cast<char>(std::toupper(u));
      prev_sep = !(std::isalnum(u) || u == '_' || u >= 0x80);
    }
    return Value(s);
  });
  m["untitle"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    std::string s = str(a[0]);
    if (!s.empty()) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
    return Value(s);
  });
  m["substr"] = fn({integer(), integer(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::int64_t start = a[0].json().get<std::int64_t>();
    const std::int64_t end = a[1].json().get<std::int64_t>();
    const std::string s = str(a[2]);
    const auto len = static_cast<std::int64_t>(s.size());
    auto bounds = [&](std::int64_t lo, std::int64_t hi, bool has_lo) -> Error {
      if (hi > len || hi < 0) {
        return Error{"runtime error: slice bounds out of range [" +
                     (has_lo ? std::to_string(lo) : std::string()) + ":" + std::to_string(hi) +
                     "] with length " + std::to_string(len)};
      }
      return Error{"runtime error: slice bounds out of range [" + std::to_string(lo) + ":" +
                   std::to_string(hi) + "]"};
    };
    if (start < 0) {
      if (end < 0 || end > len) return bounds(0, end, false);
      return Value(s.substr(0, static_cast<std::size_t>(end)));
    }
    if (end < 0 || end > len) {
      if (start > len) return bounds(start, len, true);
      return Value(s.substr(static_cast<std::size_t>(start)));
    }
    if (start > end) return bounds(start, end, true);
    return Value(s.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start)));
  });
  m["repeat"] = fn({integer(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::int64_t count = a[0].json().get<std::int64_t>();
    const std::string s = str(a[1]);
    if (count < 0) return Error{"strings: negative Repeat count"};
    if (!s.empty() && static_cast<std::uint64_t>(count) > kMaxResultBytes / s.size()) {
      return Error{"result exceeds " + std::to_string(kMaxResultBytes) + " bytes"};
    }
    return Value(repeatString(s, count));
  });
  const auto trim_all = [](std::vector<Value>& a) -> Result<Value> {
    return Value(trimCutset(str(a[1]), str(a[0])));
  };
  m["trimAll"] = fn({string(), string()}, trim_all);
  m["trimall"] = fn({string(), string()}, trim_all);
  m["trimSuffix"] = fn({string(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::string suffix = str(a[0]);
    const std::string s = str(a[1]);
    if (s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0) {
      return Value(s.substr(0, s.size() - suffix.size()));
    }
    return Value(s);
  });
  m["trimPrefix"] = fn({string(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::string prefix = str(a[0]);
    const std::string s = str(a[1]);
    if (s.compare(0, prefix.size(), prefix) == 0) return Value(s.substr(prefix.size()));
    return Value(s);
  });
  m["nospace"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    std::string out;
    for (const char c : str(a[0])) {
      if (!isAsciiSpace(static_cast<unsigned char>(c))) out.push_back(c);
    }
    return Value(out);
  });
  m["contains"] = fn({string(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(str(a[1]).find(str(a[0])) != std::string::npos);
  });
  m["hasPrefix"] = fn({string(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(str(a[1]).rfind(str(a[0]), 0) == 0);
  });
  m["hasSuffix"] = fn({string(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::string suffix = str(a[0]);
    const std::string s = str(a[1]);
    return Value(s.size() >= suffix.size() &&
                 s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0);
  });
  m["quote"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    std::string out;
    bool first = true;
    for (const Value& v : a) {
      if (v.isNil() || !v.valid()) continue;
      if (!first) out.push_back(' ');
      first = false;
      out += go::quote(strval(v));
    }
    return Value(out);
  }, true);
  m["squote"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    std::string out;
    bool first = true;
    for (const Value& v : a) {
      if (v.isNil() || !v.valid()) continue;
      if (!first) out.push_back(' ');
      first = false;
      out += "'" + goPrintValue(v) + "'";
    }
    return Value(out);
  }, true);
  m["cat"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    std::string out;
    bool first = true;
    for (const Value& v : a) {
      if (v.isNil() || !v.valid()) continue;
      if (!first) out.push_back(' ');
      first = false;
      out += goPrintValue(v);
    }
    return Value(out);
  }, true);
  m["indent"] = fn({integer(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    auto r = sprigIndent(a[0].json().get<std::int64_t>(), str(a[1]));
    if (!r) return r.error();
    return Value(std::move(*r));
  });
  m["nindent"] = fn({integer(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    auto r = sprigIndent(a[0].json().get<std::int64_t>(), str(a[1]));
    if (!r) return r.error();
    return Value("\n" + *r);
  });
  m["replace"] = fn({string(), string(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(replaceAll(str(a[2]), str(a[0]), str(a[1])));
  });
  m["plural"] = fn({string(), string(), integer()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(a[2].json().get<std::int64_t>() == 1 ? str(a[0]) : str(a[1]));
  });
  m["toString"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(strval(a[0]));
  });
  m["atoi"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    auto r = go::atoi(str(a[0]));
    return Value(r.ok() ? *r : std::int64_t{0});
  });
  m["int64"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(toInt64(a[0]));
  });
  m["int"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(toInt64(a[0]));
  });
  m["float64"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(toFloat64(a[0]));
  });
  m["split"] = fn({string(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    const auto parts = splitN(str(a[1]), str(a[0]), -1);
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t i = 0; i < parts.size(); ++i) out["_" + std::to_string(i)] = parts[i];
    return Value(std::move(out)).withStringMap(true);
  });
  m["splitn"] = fn({string(), integer(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    const auto parts = splitN(str(a[2]), str(a[0]), a[1].json().get<std::int64_t>());
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t i = 0; i < parts.size(); ++i) out["_" + std::to_string(i)] = parts[i];
    return Value(std::move(out)).withStringMap(true);
  });
  m["splitList"] = fn({string(), string()}, [](std::vector<Value>& a) -> Result<Value> {
    return stringList(splitN(str(a[1]), str(a[0]), -1));
  });
  m["toStrings"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return stringList(strslice(a[0]));
  });
  m["join"] = fn({string(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    const auto parts = strslice(a[1]);
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (i > 0) out += str(a[0]);
      out += parts[i];
    }
    return Value(out);
  });
  m["sortAlpha"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    if (a[0].kind() != GoKind::kSlice) return stringList({strval(a[0])});
    auto parts = strslice(a[0]);
    std::sort(parts.begin(), parts.end());
    return stringList(parts);
  });

  // ---- arithmetic
  m["add1"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(wrapAdd(toInt64(a[0]), 1));
  });
  m["add"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    std::int64_t sum = 0;
    for (const Value& v : a) sum = wrapAdd(sum, toInt64(v));
    return Value(sum);
  }, true);
  m["sub"] = fn({any(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(wrapAdd(toInt64(a[0]), -toInt64(a[1])));
  });
  m["mul"] = fn({any(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    std::int64_t v = toInt64(a[0]);
    for (std::size_t i = 1; i < a.size(); ++i) v = wrapMul(v, toInt64(a[i]));
    return Value(v);
  }, true);
  const auto divide = [](bool mod) {
    return [mod](std::vector<Value>& a) -> Result<Value> {
      const std::int64_t x = toInt64(a[0]);
      const std::int64_t y = toInt64(a[1]);
      if (y == 0) return Error{"runtime error: integer divide by zero"};
      if (x == INT64_MIN && y == -1) return Value(mod ? std::int64_t{0} : x);
      return Value(mod ? x % y : x / y);
    };
  };
  m["div"] = fn({any(), any()}, divide(false));
  m["mod"] = fn({any(), any()}, divide(true));
  const auto extremum = [](bool want_max) {
    return [want_max](std::vector<Value>& a) -> Result<Value> {
      std::int64_t v = toInt64(a[0]);
      for (std::size_t i = 1; i < a.size(); ++i) {
        const std::int64_t b = toInt64(a[i]);
        if (want_max ? b > v : b < v) v = b;
      }
      return Value(v);
    };
  };
  m["max"] = fn({any(), any()}, extremum(true), true);
  m["biggest"] = fn({any(), any()}, extremum(true), true);
  m["min"] = fn({any(), any()}, extremum(false), true);
  const auto extremum_f = [](bool want_max) {
    return [want_max](std::vector<Value>& a) -> Result<Value> {
      double v = toFloat64(a[0]);
      for (std::size_t i = 1; i < a.size(); ++i) {
        v = want_max ? std::fmax(v, toFloat64(a[i])) : std::fmin(v, toFloat64(a[i]));
      }
      return Value(v);
    };
  };
  m["maxf"] = fn({any(), any()}, extremum_f(true), true);
  m["minf"] = fn({any(), any()}, extremum_f(false), true);
  m["floor"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(std::floor(toFloat64(a[0])));
  });
  m["ceil"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(std::ceil(toFloat64(a[0])));
  });
  m["round"] = fn({any(), integer(), ParamType::float64()}, [](std::vector<Value>& a) -> Result<Value> {
    const double round_on = a.size() > 2 ? a[2].json().get<double>() : 0.5;
    const double val = toFloat64(a[0]);
    const double pow = std::pow(10.0, static_cast<double>(a[1].json().get<std::int64_t>()));
    const double digit = pow * val;
    double int_part = 0;
    const double frac = std::modf(digit, &int_part);
    const double r = frac >= round_on ? std::ceil(digit) : std::floor(digit);
    return Value(r / pow);
  }, true);
  m["until"] = fn({integer()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::int64_t count = a[0].json().get<std::int64_t>();
    if (count > 10000000 || count < -10000000) return Error{"until: count too large"};
    nlohmann::json out = nlohmann::json::array();
    const std::int64_t step = count < 0 ? -1 : 1;
    for (std::int64_t i = 0; count < 0 ? i > count : i < count; i += step) out.push_back(i);
    return Value(std::move(out));
  });
  m["untilStep"] = fn({integer(), integer(), integer()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::int64_t start = a[0].json().get<std::int64_t>();
    const std::int64_t stop = a[1].json().get<std::int64_t>();
    const std::int64_t step = a[2].json().get<std::int64_t>();
    nlohmann::json out = nlohmann::json::array();
    if (step != 0 && std::llabs(stop - start) / std::llabs(step) > 10000000) {
      return Error{"untilStep: too many elements"};
    }
    if (stop < start) {
      if (step >= 0) return Value(std::move(out));
      for (std::int64_t i = start; i > stop; i += step) out.push_back(i);
      return Value(std::move(out));
    }
    if (step <= 0) return Value(std::move(out));
    for (std::int64_t i = start; i < stop; i += step) out.push_back(i);
    return Value(std::move(out));
  });

  // ---- defaults and JSON
  m["default"] = fn({any(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    if (a.size() < 2 || sprigEmpty(a[1])) return a[0];
    return a[1];
  }, true);
  m["empty"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(sprigEmpty(a[0]));
  });
  m["coalesce"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    for (const Value& v : a) {
      if (!sprigEmpty(v)) return v;
    }
    return Value(nlohmann::json(nullptr));
  }, true);
  m["all"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(std::none_of(a.begin(), a.end(), sprigEmpty));
  }, true);
  m["any"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(!std::all_of(a.begin(), a.end(), sprigEmpty));
  }, true);
  const auto compact = [](std::vector<Value>& a) -> Result<Value> {
    if (!a[0].valid() || a[0].isNil()) return Error{kNilDeref};
    if (a[0].kind() != GoKind::kSlice) return Error{"Cannot compact on type " + kindName(a[0])};
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : a[0].json()) {
      if (!sprigEmpty(Value(e))) out.push_back(e);
    }
    return Value(std::move(out));
  };
  m["compact"] = fn({any()}, compact);
  m["mustCompact"] = fn({any()}, compact);
  m["fromJson"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    auto r = goJsonUnmarshal(str(a[0]));
    return r.ok() ? Value(std::move(*r)) : Value(nlohmann::json(nullptr));
  });
  m["mustFromJson"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    auto r = goJsonUnmarshal(str(a[0]));
    if (!r) return r.error();
    return Value(std::move(*r));
  });
  const auto to_json = [](bool must, const GoJsonOptions& options) {
    return [must, options](std::vector<Value>& a) -> Result<Value> {
      const nlohmann::json& j = a[0].valid() ? a[0].json() : nlohmann::json(nullptr);
      auto r = goJsonMarshal(j, options);
      if (!r) {
        if (must) return r.error();
        return Value(std::string());
      }
      return Value(std::move(*r));
    };
  };
  m["toJson"] = fn({any()}, to_json(false, {}));
  m["mustToJson"] = fn({any()}, to_json(true, {}));
  m["toPrettyJson"] = fn({any()}, to_json(false, GoJsonOptions{true, "  "}));
  m["mustToPrettyJson"] = fn({any()}, to_json(true, GoJsonOptions{true, "  "}));
  m["toRawJson"] = fn({any()}, to_json(false, GoJsonOptions{false, ""}));
  m["mustToRawJson"] = fn({any()}, to_json(true, GoJsonOptions{false, ""}));
  m["ternary"] = fn({any(), any(), ParamType::boolean()}, [](std::vector<Value>& a) -> Result<Value> {
    return a[2].json().get<bool>() ? a[0] : a[1];
  });
  const auto deep_copy = [](std::vector<Value>& a) -> Result<Value> {
    return Value(a[0].valid() ? a[0].json() : nlohmann::json(nullptr));
  };
  m["deepCopy"] = fn({any()}, deep_copy);
  m["mustDeepCopy"] = fn({any()}, deep_copy);

  // ---- reflection
  m["typeOf"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(a[0].isNil() || !a[0].valid() ? std::string("<nil>") : a[0].concreteTypeName());
  });
  m["kindOf"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(kindName(a[0]));
  });
  m["typeIs"] = fn({string(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(str(a[0]) == (a[1].isNil() ? std::string("<nil>") : a[1].concreteTypeName()));
  });
  m["typeIsLike"] = fn({string(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    const std::string t = a[1].isNil() ? std::string("<nil>") : a[1].concreteTypeName();
    return Value(str(a[0]) == t || str(a[0]) == "*" + t);
  });
  m["kindIs"] = fn({string(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(str(a[0]) == kindName(a[1]));
  });
  m["deepEqual"] = fn({any(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(deepEqual(a[0].json(), a[1].json()));
  });

  // ---- paths (path and path/filepath agree on Linux)
  for (const char* prefix : {"", "os"}) {
    const std::string p = prefix;
    m[p.empty() ? "base" : "osBase"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
      return Value(pathBase(str(a[0])));
    });
    m[p.empty() ? "dir" : "osDir"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
      return Value(pathDir(str(a[0])));
    });
    m[p.empty() ? "clean" : "osClean"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
      return Value(pathClean(str(a[0])));
    });
    m[p.empty() ? "ext" : "osExt"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
      return Value(pathExt(str(a[0])));
    });
    m[p.empty() ? "isAbs" : "osIsAbs"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
      return Value(!str(a[0]).empty() && str(a[0])[0] == '/');
    });
  }

  // ---- encoding
  m["b64enc"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(go::base64Encode(str(a[0])));
  });
  m["b64dec"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    auto r = go::base64Decode(str(a[0]));
    return Value(r.ok() ? *r : r.error().message);
  });

  // ---- dictionaries
  m["list"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = nlohmann::json::array();
    for (const Value& v : a) out.push_back(v.valid() ? v.json() : nlohmann::json(nullptr));
    return Value(std::move(out));
  }, true);
  m["tuple"] = m["list"];
  m["dict"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t i = 0; i < a.size(); i += 2) {
      const std::string key = strval(a[i]);
      out[key] = i + 1 < a.size() && a[i + 1].valid() ? a[i + 1].json() : nlohmann::json("");
    }
    return Value(std::move(out));
  }, true);
  m["get"] = fn({map, string()}, [](std::vector<Value>& a) -> Result<Value> {
    if (a[0].isNil()) return Value(std::string());
    const auto it = a[0].json().find(str(a[1]));
    if (it == a[0].json().end()) return Value(std::string());
    return a[0].element(*it).withBoxed(false);
  });
  m["set"] = fn({map, string(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    if (a[0].isNil()) return Error{"assignment to entry in nil map"};
    nlohmann::json updated = a[0].json();
    updated[str(a[1])] = a[2].json();
    a[0].replace(std::move(updated));
    return a[0];
  });
  m["unset"] = fn({map, string()}, [](std::vector<Value>& a) -> Result<Value> {
    if (a[0].isNil()) return a[0];
    nlohmann::json updated = a[0].json();
    updated.erase(str(a[1]));
    a[0].replace(std::move(updated));
    return a[0];
  });
  m["hasKey"] = fn({map, string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(!a[0].isNil() && a[0].json().contains(str(a[1])));
  });
  m["pluck"] = fn({string(), map}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t i = 1; i < a.size(); ++i) {
      if (a[i].isNil()) continue;
      const auto it = a[i].json().find(str(a[0]));
      if (it != a[i].json().end()) out.push_back(*it);
    }
    return Value(std::move(out));
  }, true);
  m["keys"] = fn({map}, [](std::vector<Value>& a) -> Result<Value> {
    // Go's map order is random; the keys come out sorted here.
    std::vector<std::string> out;
    for (const Value& d : a) {
      if (d.isNil()) continue;
      for (auto it = d.json().begin(); it != d.json().end(); ++it) out.push_back(it.key());
    }
    return stringList(out);
  }, true);
  m["pick"] = fn({map, string()}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t i = 1; i < a.size(); ++i) {
      if (a[0].isNil()) break;
      const auto it = a[0].json().find(str(a[i]));
      if (it != a[0].json().end()) out[str(a[i])] = *it;
    }
    return Value(std::move(out));
  }, true);
  m["omit"] = fn({map, string()}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = a[0].isNil() ? nlohmann::json::object() : a[0].json();
    for (std::size_t i = 1; i < a.size(); ++i) out.erase(str(a[i]));
    return Value(std::move(out));
  }, true);
  const auto merge = [](bool overwrite) {
    return [overwrite](std::vector<Value>& a) -> Result<Value> {
      if (a[0].isNil()) return Error{"src and dst must be of same type"};
      nlohmann::json dst = a[0].json();
      for (std::size_t i = 1; i < a.size(); ++i) {
        if (!a[i].isNil()) mergeInto(dst, a[i].json(), overwrite, 0);
      }
      a[0].replace(std::move(dst));
      return a[0];
    };
  };
  m["merge"] = fn({map, map}, merge(false), true);
  m["mustMerge"] = fn({map, map}, merge(false), true);
  m["mergeOverwrite"] = fn({map, map}, merge(true), true);
  m["mustMergeOverwrite"] = fn({map, map}, merge(true), true);
  m["values"] = fn({map}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = nlohmann::json::array();
    if (!a[0].isNil()) {
      for (const auto& e : a[0].json()) out.push_back(e);
    }
    return Value(std::move(out));
  });
  m["dig"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    if (a.size() < 3) return Error{"dig needs at least three arguments"};
    const Value& dict = a.back();
    if (dict.kind() != GoKind::kMap) return Error{"interface conversion: interface {} is " +
                                                  dict.concreteTypeName() +
                                                  ", not map[string]interface {}"};
    const nlohmann::json* cur = &dict.json();
    for (std::size_t i = 0; i + 2 < a.size(); ++i) {
      const auto it = cur->find(strval(a[i]));
      if (it == cur->end()) return a[a.size() - 2];
      if (i + 3 == a.size()) return dict.element(*it).withBoxed(false);
      if (!it->is_object()) return Error{"interface conversion: interface {} is " +
                                         Value(*it).concreteTypeName() +
                                         ", not map[string]interface {}"};
      cur = &*it;
    }
    return a[a.size() - 2];
  }, true);

  // ---- lists
  const auto push = [](bool front) {
    return [front](std::vector<Value>& a) -> Result<Value> {
      auto list = listArg(a[0], front ? "Cannot prepend on type " : "Cannot push on type ");
      if (!list) return list.error();
      nlohmann::json out = **list;
      const nlohmann::json v = a[1].valid() ? a[1].json() : nlohmann::json(nullptr);
      if (front) {
        out.insert(out.begin(), v);
      } else {
        out.push_back(v);
      }
      return Value(std::move(out));
    };
  };
  m["append"] = fn({any(), any()}, push(false));
  m["push"] = m["append"];
  m["mustAppend"] = m["append"];
  m["mustPush"] = m["append"];
  m["prepend"] = fn({any(), any()}, push(true));
  m["mustPrepend"] = m["prepend"];
  const auto ends = [](bool first) {
    return [first](std::vector<Value>& a) -> Result<Value> {
      auto list = listArg(a[0], first ? "Cannot find first on type " : "Cannot find last on type ");
      if (!list) return list.error();
      if ((*list)->empty()) return Value(nlohmann::json(nullptr));
      return Value(first ? (*list)->front() : (*list)->back());
    };
  };
  m["first"] = fn({any()}, ends(true));
  m["mustFirst"] = m["first"];
  m["last"] = fn({any()}, ends(false));
  m["mustLast"] = m["last"];
  const auto rest_or_initial = [](bool rest) {
    return [rest](std::vector<Value>& a) -> Result<Value> {
      auto list = listArg(a[0], rest ? "Cannot find rest on type " : "Cannot find initial on type ");
      if (!list) return list.error();
      // Sprig returns a nil []interface{}, which prints "[]" (the value model has no typed nil
      // slice: an empty list is the closest, and only toJson tells them apart).
      if ((*list)->empty()) return Value(nlohmann::json::array());
      nlohmann::json out = **list;
      out.erase(rest ? out.begin() : out.end() - 1);
      return Value(std::move(out));
    };
  };
  m["rest"] = fn({any()}, rest_or_initial(true));
  m["mustRest"] = m["rest"];
  m["initial"] = fn({any()}, rest_or_initial(false));
  m["mustInitial"] = m["initial"];
  m["reverse"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    auto list = listArg(a[0], "Cannot find reverse on type ");
    if (!list) return list.error();
    nlohmann::json out = **list;
    std::reverse(out.begin(), out.end());
    return Value(std::move(out));
  });
  m["mustReverse"] = m["reverse"];
  m["uniq"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    auto list = listArg(a[0], "Cannot find uniq on type ");
    if (!list) return list.error();
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : **list) {
      if (std::none_of(out.begin(), out.end(),
                       [&](const nlohmann::json& o) { return deepEqual(o, e); })) {
        out.push_back(e);
      }
    }
    return Value(std::move(out));
  });
  m["mustUniq"] = m["uniq"];
  m["without"] = fn({any(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    auto list = listArg(a[0], "Cannot find without on type ");
    if (!list) return list.error();
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : **list) {
      bool omit = false;
      for (std::size_t i = 1; i < a.size(); ++i) {
        if (deepEqual(a[i].json(), e)) omit = true;
      }
      if (!omit) out.push_back(e);
    }
    return Value(std::move(out));
  }, true);
  m["mustWithout"] = m["without"];
  m["has"] = fn({any(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    auto list = listArg(a[1], "Cannot find has on type ");
    if (!list) return list.error();
    const nlohmann::json needle = a[0].valid() ? a[0].json() : nlohmann::json(nullptr);
    return Value(std::any_of((*list)->begin(), (*list)->end(),
                             [&](const nlohmann::json& e) { return deepEqual(needle, e); }));
  });
  m["mustHas"] = m["has"];
  m["slice"] = fn({any(), any()}, [](std::vector<Value>& a) -> Result<Value> {
    auto list = listArg(a[0], "list should be type of slice or array but ");
    if (!list) return list.error();
    const auto len = static_cast<std::int64_t>((*list)->size());
    if (len == 0) return Value(nlohmann::json(nullptr));
    const std::int64_t start = a.size() > 1 ? toInt64(a[1]) : 0;
    const std::int64_t end = a.size() > 2 ? toInt64(a[2]) : len;
    if (start < 0 || end < start || end > len) {
      return Error{"reflect.Value.Slice: slice index out of bounds"};
    }
    nlohmann::json out = nlohmann::json::array();
    for (std::int64_t i = start; i < end; ++i) out.push_back((**list)[static_cast<std::size_t>(i)]);
    return Value(std::move(out));
  }, true);
  m["mustSlice"] = m["slice"];
  m["concat"] = fn({any()}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = nlohmann::json::array();
    for (const Value& v : a) {
      if (!v.valid() || v.isNil()) return Error{kNilDeref};
      if (v.kind() != GoKind::kSlice) return Error{"Cannot concat type " + kindName(v) + " as list"};
      for (const auto& e : v.json()) out.push_back(e);
    }
    return Value(std::move(out));
  }, true);

  // ---- regular expressions (Go's regexp on RE2: linear time, so inputs need no size cap)
  const auto regex_match = [](bool must) {
    return [must](std::vector<Value>& a) -> Result<Value> {
      // regexMatch is regexp.MatchString with the error dropped.
      auto re = go::Regexp::compile(str(a[0]));
      if (!re) {
        if (must) return re.error();
        return Value(false);
      }
      return Value(re->matchString(str(a[1])));
    };
  };
  m["regexMatch"] = fn({string(), string()}, regex_match(false));
  m["mustRegexMatch"] = fn({string(), string()}, regex_match(true));
  const auto regex_find = [](bool must) {
    return [must](std::vector<Value>& a) -> Result<Value> {
      auto re = compileRegex(str(a[0]), must);
      if (!re) return re.error();
      return Value(re->findString(str(a[1])));
    };
  };
  m["regexFind"] = fn({string(), string()}, regex_find(false));
  m["mustRegexFind"] = fn({string(), string()}, regex_find(true));
  const auto regex_find_all = [](bool must) {
    return [must](std::vector<Value>& a) -> Result<Value> {
      auto re = compileRegex(str(a[0]), must);
      if (!re) return re.error();
      return stringList(re->findAllString(str(a[1]), a[2].json().get<std::int64_t>()));
    };
  };
  m["regexFindAll"] = fn({string(), string(), integer()}, regex_find_all(false));
  m["mustRegexFindAll"] = fn({string(), string(), integer()}, regex_find_all(true));
  const auto regex_replace = [](bool literal, bool must) {
    return [literal, must](std::vector<Value>& a) -> Result<Value> {
      auto re = compileRegex(str(a[0]), must);
      if (!re) return re.error();
      std::string out = literal ? re->replaceAllLiteralString(str(a[1]), str(a[2]))
                                : re->replaceAllString(str(a[1]), str(a[2]));
      if (out.size() > kMaxResultBytes) {
        return Error{"result exceeds " + std::to_string(kMaxResultBytes) + " bytes"};
      }
      return Value(std::move(out));
    };
  };
  m["regexReplaceAll"] = fn({string(), string(), string()}, regex_replace(false, false));
  m["mustRegexReplaceAll"] = fn({string(), string(), string()}, regex_replace(false, true));
  m["regexReplaceAllLiteral"] = fn({string(), string(), string()}, regex_replace(true, false));
  m["mustRegexReplaceAllLiteral"] = fn({string(), string(), string()}, regex_replace(true, true));
  const auto regex_split = [](bool must) {
    return [must](std::vector<Value>& a) -> Result<Value> {
      auto re = compileRegex(str(a[0]), must);
      if (!re) return re.error();
      return stringList(re->split(str(a[1]), a[2].json().get<std::int64_t>()));
    };
  };
  m["regexSplit"] = fn({string(), string(), integer()}, regex_split(false));
  m["mustRegexSplit"] = fn({string(), string(), integer()}, regex_split(true));
  m["regexQuoteMeta"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    std::string out;
    for (const char c : str(a[0])) {
      if (std::string_view("\\.+*?()|[]{}^$").find(c) != std::string_view::npos) out.push_back('\\');
      out.push_back(c);
    }
    return Value(out);
  });

  // ---- flow control
  m["fail"] = fn({string()}, [](std::vector<Value>& a) -> Result<Value> {
    return Error{str(a[0])};
  });

  return m;
}

namespace detail {

// Sprig's TxtFuncMap entries this library does not implement (dates, randomness, crypto,
// network, semver, ...). They are not in sprigFuncMap(), so a template calling one fails to
// parse; the parse error says why (see parse.cc). Nothing is left to fail at execution time.
bool unimplementedSprigFunction(std::string_view name) {
  static const std::set<std::string, std::less<>> kNames = {
      "hello", "ago", "date", "date_in_zone", "date_modify", "dateInZone", "dateModify",
      "duration", "durationRound", "htmlDate", "htmlDateInZone", "must_date_modify",
      "mustDateModify", "mustToDate", "now", "toDate", "unixEpoch", "abbrev", "abbrevboth",
      "initials", "randAlphaNum", "randAlpha", "randAscii", "randNumeric", "randSeededNumeric",
      "swapcase", "shuffle", "snakecase", "camelcase", "kebabcase", "wrap", "wrapWith",
      "sha1sum", "sha256sum", "adler32sum", "seq", "toDecimal", "randInt", "add1f", "addf",
      "subf", "divf", "mulf", "b32enc", "b32dec", "env", "expandenv", "getHostByName", "chunk",
      "mustChunk", "bcrypt", "htpasswd", "genPrivateKey", "derivePassword", "buildCustomCert",
      "genCA", "genCAWithKey", "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert",
      "genSignedCertWithKey", "encryptAES", "decryptAES", "randBytes", "uuidv4", "semver",
      "semverCompare", "urlParse", "urlJoin"
  };
  return kNames.contains(name);
}

}  // namespace detail

}  // namespace harness::gotemplate
