#pragma once

// Result<T>: the return type of every core function that can fail on input.
// Input errors are data, never exceptions: the caller decides what is fatal.
//
// An Error is a message for people plus the data callers branch on: a code and, when the error
// is about one field, that field's path and the message's text about it. Callers never parse the
// message (absl::Status keeps a code beside its message for the same reason; Kubernetes'
// metav1.Status carries a reason and causes {field, message} beside its message).

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace harness::core {

// What kind of failure an Error is. The names follow absl::StatusCode and metav1.StatusReason
// where those fit what the project needs.
enum class ErrorCode {
  kUnknown,             // not classified (the default)
  kInvalid,             // a value breaks a rule (StatusReasonInvalid, absl kInvalidArgument)
  kDecode,              // text that does not parse as JSON, YAML, a number... (BadRequest)
  kNotFound,            // something named is missing: a file, a binary, a path in a document
  kAlreadyExists,       // StatusReasonAlreadyExists
  kConflict,            // StatusReasonConflict
  kFailedPrecondition,  // the system is not in the state the operation needs: a port in use,
                        // a work directory that is not empty (absl kFailedPrecondition)
  kForbidden,           // StatusReasonForbidden
  kTimeout,             // StatusReasonTimeout, absl kDeadlineExceeded
  kUnavailable,         // StatusReasonServiceUnavailable, absl kUnavailable
  kInternal,            // StatusReasonInternalError, absl kInternal
};

// "Unknown", "Invalid", "Decode", "NotFound", ... (for logs and test output).
std::string_view errorCodeName(ErrorCode code);

// An input error: a complete, human-readable message that names what is wrong and where
// (document/line/column for YAML, a field path for objects, an RFC 6901 pointer for patches).
struct Error {
  std::string message;
  ErrorCode code = ErrorCode::kUnknown;
  // The path of the field the error is about, as the message names it
  // ("spec.containers[0].image", "stub.responses[1].respond.delay", an RFC 6901 pointer for
  // patches); empty when the error is about the whole input.
  std::string field;
  // The message's own text without the prefixes put before it (context, location, field),
  // like metav1.StatusCause.message beside Status.message; empty when it is the whole message.
  std::string detail;

  // The text without prefixes: `detail`, or the message when there is none.
  [[nodiscard]] const std::string& text() const { return detail.empty() ? message : detail; }

  // Returns a copy whose message is prefixed with `context: `, e.g. a file name; the code, the
  // field and the text stay.
  [[nodiscard]] Error within(const std::string& context) const {
    return Error{context + ": " + message, code, field, text()};
  }
};

// An error with no field: `message`, classified as `code`.
inline Error makeError(std::string message, ErrorCode code = ErrorCode::kUnknown) {
  return Error{std::move(message), code, {}, {}};
}

// An error about one field: the message is "<field>: <detail>" (field.Error's format).
Error fieldError(ErrorCode code, std::string field, std::string detail);

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : state_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  [[nodiscard]] bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { assert(ok()); return std::get<0>(state_); }
  const T& value() const& { assert(ok()); return std::get<0>(state_); }
  T&& value() && { assert(ok()); return std::get<0>(std::move(state_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!ok()); return std::get<1>(state_); }

 private:
  std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT

  [[nodiscard]] bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { assert(!ok_); return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace harness::core

// Evaluates `expr` (a Result) and returns its Error from the enclosing function when it failed;
// the value, if any, is discarded. The one propagation macro of the project (absl's
// RETURN_IF_ERROR, Envoy's RETURN_IF_NOT_OK).
#define HARNESS_TRY(expr)                                        \
  do {                                                           \
    auto&& harness_try_result_ = (expr);                         \
    if (!harness_try_result_.ok()) {                             \
      return harness_try_result_.error();                        \
    }                                                            \
  } while (0)
