// AdmissionReview decoding: a webhook's answer as the apiserver decodes it
// (core::decodeAdmissionReview, then verifyAdmissionResponse for every request shape) and a
// request as a webhook server decodes it (core::decodeRequestReview). Checked: no crash, and
// re-encoding is stable (decode(encode(r)) encodes to the same bytes).

#include "fuzz_support.h"
#include "harness/core/admission_review.h"

namespace {

using namespace harness;

void checkStableEncoding(const core::AdmissionReview& review) {
  const std::string encoded = core::encodeAdmissionReview(review);
  auto again = core::decodeAdmissionReview(encoded);
  FUZZ_CHECK(again.ok(), encoded + "\n" + again.error().message);
  FUZZ_CHECK(core::encodeAdmissionReview(*again) == encoded, encoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body = fuzz::asText(data, size);
  auto review = core::decodeAdmissionReview(body);
  if (review.ok()) {
    checkStableEncoding(*review);
    for (auto version : {core::ReviewVersion::kV1, core::ReviewVersion::kV1beta1}) {
      for (bool mutating : {true, false}) {
        const std::string uid = review->response ? review->response->uid : std::string("uid");
        auto verified = core::verifyAdmissionResponse(version, uid, mutating, *review);
        (void)verified;
      }
    }
  }
  auto request = core::decodeRequestReview(body);
  if (request.ok()) {
    FUZZ_CHECK(request->request.has_value(), std::string(body));
    checkStableEncoding(*request);
    (void)core::makeResponseReview(*request, core::AdmissionResponse{});
  }
  return 0;
}
