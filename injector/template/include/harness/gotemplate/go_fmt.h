#pragma once

// Go's fmt package over template values (golang/go src/fmt/print.go, format.go):
// fmt.Sprint, fmt.Sprintf and fmt.Sprintln as the print/printf/println builtins call them.
//
// Values print the way Go prints the interface{} values JSON decodes to: strings raw, integers
// in decimal, float64 in %g shortest form (1e+06, 1.5), maps as map[k:v ...] with sorted keys,
// slices as [a b], nil as <nil>. Verbs: %v %+v %#v %T %t %d %b %o %O %x %X %c %q %U %e %E %f
// %F %g %G %s %%, flags '-' '+' '#' ' ' '0', width and precision (also '*'). Bad verbs,
// missing and extra arguments are reported inline as Go does ("%!d(string=x)",
// "%!s(MISSING)", "%!(EXTRA int=1)", "%!(NOVERB)", "%!(BADWIDTH)", "%!(BADPREC)").
// Not supported: explicit argument indexes ("%[1]d" gives "%!(BADINDEX)"), %p, %x on floats.

#include <string>
#include <string_view>
#include <vector>

#include "harness/gotemplate/value.h"

namespace harness::gotemplate {

// fmt.Sprint: spaces between operands when neither side is a string. Invalid values print as
// "<nil>" (they reach fmt as nil interfaces).
std::string goSprint(const std::vector<Value>& args);

// fmt.Sprintln: operands separated by spaces, then a newline.
std::string goSprintln(const std::vector<Value>& args);

// fmt.Sprintf.
std::string goSprintf(std::string_view format, const std::vector<Value>& args);

// fmt.Sprint of one value (%v), as text/template prints an action's result.
std::string goPrintValue(const Value& v);

}  // namespace harness::gotemplate
