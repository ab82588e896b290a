#include "harness/core/result.h"

namespace harness::core {

std::string_view errorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kUnknown:
      return "Unknown";
    case ErrorCode::kInvalid:
      return "Invalid";
    case ErrorCode::kDecode:
      return "Decode";
    case ErrorCode::kNotFound:
      return "NotFound";
    case ErrorCode::kAlreadyExists:
      return "AlreadyExists";
    case ErrorCode::kConflict:
      return "Conflict";
    case ErrorCode::kFailedPrecondition:
      return "FailedPrecondition";
    case ErrorCode::kForbidden:
      return "Forbidden";
    case ErrorCode::kTimeout:
      return "Timeout";
    case ErrorCode::kUnavailable:
      return "Unavailable";
    case ErrorCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

Error fieldError(ErrorCode code, std::string field, std::string detail) {
  std::string message = field + ": " + detail;
  return Error{std::move(message), code, std::move(field), std::move(detail)};
}

}  // namespace harness::core
