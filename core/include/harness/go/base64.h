#pragma once

// Go's encoding/base64: standard base64 (RFC 4648 §4, padded) with the exact behaviour of
// StdEncoding, which encoding/json uses for []byte fields such as
// AdmissionResponse.patch and WebhookClientConfig.caBundle.

#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace harness::go {

// StdEncoding.EncodeToString: padded with '=', no line breaks.
std::string base64Encode(std::string_view bytes);

// StdEncoding.DecodeString (Go src/encoding/base64/base64.go decodeQuantum): padding is required,
// '\r' and '\n' anywhere are ignored, unused trailing bits need not be zero (the encoding is not
// Strict). Errors carry Go's CorruptInputError text, "illegal base64 data at input byte <n>", where
// <n> is the offset Go reports.
core::Result<std::string> base64Decode(std::string_view text);

}  // namespace harness::go
