#include "harness/core/field_errors.h"

#include <cstdio>
#include <set>

#include "harness/go/strconv.h"

namespace harness::core {

std::string_view fieldErrorTypeText(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kNotFound: return "Not found";
    case FieldErrorType::kRequired: return "Required value";
    case FieldErrorType::kDuplicate: return "Duplicate value";
    case FieldErrorType::kInvalid: return "Invalid value";
    case FieldErrorType::kNotSupported: return "Unsupported value";
    case FieldErrorType::kForbidden: return "Forbidden";
    case FieldErrorType::kTooLong: return "Too long";
    case FieldErrorType::kTooMany: return "Too many";
    case FieldErrorType::kInternal: return "Internal error";
    case FieldErrorType::kTypeInvalid: return "Invalid value";
  }
  return "Invalid value";
}

std::string FieldError::toString() const { return field + ": " + body(); }

std::string FieldError::body() const {
  std::string s(fieldErrorTypeText(type));
  const bool value_printed = type != FieldErrorType::kRequired &&
                             type != FieldErrorType::kForbidden &&
                             type != FieldErrorType::kTooLong && type != FieldErrorType::kInternal;
  if (value_printed && bad_value) s += ": " + *bad_value;
  if (!detail.empty()) s += ": " + detail;
  return s;
}

FieldError FieldError::invalid(std::string field, std::string_view value, std::string detail) {
  return {FieldErrorType::kInvalid, std::move(field), go::quote(value), std::move(detail)};
}

FieldError FieldError::invalid(std::string field, std::int64_t value, std::string detail) {
  return {FieldErrorType::kInvalid, std::move(field), std::to_string(value), std::move(detail)};
}

FieldError FieldError::required(std::string field, std::string detail) {
  return {FieldErrorType::kRequired, std::move(field), std::nullopt, std::move(detail)};
}

FieldError FieldError::duplicate(std::string field, std::string_view value) {
  return {FieldErrorType::kDuplicate, std::move(field), go::quote(value), {}};
}

FieldError FieldError::notSupported(std::string field, std::string_view value,
                                    const std::vector<std::string>& supported) {
  std::string detail;
  if (!supported.empty()) {
    detail = "supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) detail += ", ";
      detail += go::quote(supported[i]);
    }
  }
  return {FieldErrorType::kNotSupported, std::move(field), go::quote(value), std::move(detail)};
}

FieldError FieldError::forbidden(std::string field, std::string detail) {
  return {FieldErrorType::kForbidden, std::move(field), std::nullopt, std::move(detail)};
}

FieldError FieldError::internal(std::string field, std::string detail) {
  return {FieldErrorType::kInternal, std::move(field), std::nullopt, std::move(detail)};
}

FieldError FieldError::tooMany(std::string field, std::int64_t actual, std::int64_t max) {
  std::string detail = "must have at most " + std::to_string(max) + (max == 1 ? " item" : " items");
  std::optional<std::string> value;
  if (actual >= 0) value = std::to_string(actual);
  return {FieldErrorType::kTooMany, std::move(field), std::move(value), std::move(detail)};
}

std::string aggregate(const FieldErrors& errors) {
  // utilerrors.NewAggregate(...).Error(): one message bare; several in brackets, de-duplicated
  // in first-seen order.
  std::vector<std::string> messages;
  std::set<std::string> seen;
  for (const auto& e : errors) {
    auto text = e.toString();
    if (seen.insert(text).second) messages.push_back(std::move(text));
  }
  if (messages.empty()) return {};
  if (messages.size() == 1) return messages.front();
  std::string out = "[";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out += ", ";
    out += messages[i];
  }
  return out + "]";
}

Error toError(const FieldError& error) {
  return Error{error.toString(),
               error.type == FieldErrorType::kInternal ? ErrorCode::kInternal : ErrorCode::kInvalid,
               error.field, error.body()};
}

Error toError(const FieldErrors& errors) {
  if (errors.empty()) return makeError({}, ErrorCode::kInvalid);
  Error out = toError(errors.front());
  out.message = aggregate(errors);
  // Several distinct errors: the message lists them all, so it is about no single field.
  if (out.message != errors.front().toString()) {
    out.field.clear();
    out.detail.clear();
  }
  return out;
}

std::string invalidObjectMessage(std::string_view kind, std::string_view group,
                                 std::string_view name, const FieldErrors& errors) {
  std::string qualified(kind);
  if (!group.empty()) qualified += "." + std::string(group);
  return qualified + " " + go::quote(name) + " is invalid: " + aggregate(errors);
}

}  // namespace harness::core
