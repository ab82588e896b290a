#include "harness/sim/kube_cel_session.h"

#include "harness/sim/field_manager.h"
#include "harness/sim/field_validation.h"
#include "harness/sim/go_types.h"
#include "harness/sim/rest_api.h"

namespace harness::sim {

KubeCelSession::KubeCelSession() {
  const auto kube_cel = cel_.kubeCel();
  if (!kube_cel) return;
  setProtobufDecoder(cel::protobufDecoder(kube_cel));
  setStrictFieldChecker(cel::strictFieldChecker(kube_cel));
  setStrictPatchChecker(cel::strictPatchChecker(kube_cel));
  setFieldManager({cel::fieldManagerApply(kube_cel), cel::fieldManagerUpdate(kube_cel)});
}

KubeCelSession::~KubeCelSession() {
  setProtobufDecoder({});
  setStrictFieldChecker({});
  setStrictPatchChecker({});
  setFieldManager({});
}

}  // namespace harness::sim
