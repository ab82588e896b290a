#pragma once

// Field errors formatted exactly like k8s.io/apimachinery/pkg/util/validation/field
// (errors.go: Error.Error / ErrorBody, ErrorList aggregation) and the apiserver's
// NewInvalid status message ("<Kind>.<group> \"<name>\" is invalid: [...]").

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/result.h"

namespace harness::core {

enum class FieldErrorType {
  kNotFound,
  kRequired,
  kDuplicate,
  kInvalid,
  kNotSupported,
  kForbidden,
  kTooLong,
  kTooMany,
  kInternal,
  kTypeInvalid,
};

// The text Go prints for the type ("Invalid value", "Required value", ...).
std::string_view fieldErrorTypeText(FieldErrorType type);

struct FieldError {
  FieldErrorType type = FieldErrorType::kInvalid;
  std::string field;  // e.g. webhooks[0].clientConfig.url
  // The bad value as Go would print it inside the message (already quoted for strings);
  // nullopt means "omitted" (Required, Forbidden, TooLong, Internal never print a value).
  std::optional<std::string> bad_value;
  std::string detail;

  // "<field>: <Type text>[: <value>][: <detail>]"
  [[nodiscard]] std::string toString() const;
  // "<Type text>[: <value>][: <detail>]" (field.Error.ErrorBody).
  [[nodiscard]] std::string body() const;

  static FieldError invalid(std::string field, std::string_view value, std::string detail);
  static FieldError invalid(std::string field, std::int64_t value, std::string detail);
  static FieldError required(std::string field, std::string detail = {});
  static FieldError duplicate(std::string field, std::string_view value);
  static FieldError notSupported(std::string field, std::string_view value,
                                 const std::vector<std::string>& supported);
  static FieldError forbidden(std::string field, std::string detail);
  static FieldError internal(std::string field, std::string detail);  // field.InternalError
  static FieldError tooMany(std::string field, std::int64_t actual, std::int64_t max);
};

using FieldErrors = std::vector<FieldError>;

// "e" for one error, "[e1, e2]" for several (apimachinery utilerrors.NewAggregate; duplicates
// collapsed), "" for none.
std::string aggregate(const FieldErrors& errors);

// The FieldError as an Error: code kInvalid (kInternal for an InternalError), its field, its body
// as the detail, and toString() as the message.
Error toError(const FieldError& error);
// The FieldErrors as one Error with the aggregate() message; field and detail are those of the
// error when there is only one (after de-duplication), empty otherwise.
Error toError(const FieldErrors& errors);

// `<kind>.<group> "<name>" is invalid: <aggregate>`; the group part is omitted for the core group
// (apimachinery errors.NewInvalid).
std::string invalidObjectMessage(std::string_view kind, std::string_view group,
                                 std::string_view name, const FieldErrors& errors);

}  // namespace harness::core
