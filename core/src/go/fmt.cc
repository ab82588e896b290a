#include "harness/go/fmt.h"

#include "harness/go/strconv.h"

namespace harness::go {

std::string stringSliceGoSyntax(const std::vector<std::string>& values, EmptySlice empty,
                                std::string_view type) {
  if (values.empty() && empty == EmptySlice::kNil) return std::string(type) + "(nil)";
  std::string out = std::string(type) + "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += quote(values[i]);
  }
  return out + "}";
}

}  // namespace harness::go
