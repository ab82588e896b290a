// Followed: apiserver pkg/admission/reinvocation.go (reinvoker.Admit: the chain once, and once
// more when ShouldReinvoke).

#include "reinvocation.h"

namespace harness::sim::detail {

DispatchError admitWithReinvocation(ReinvocationContext& context, const MutatingPass& pass) {
  if (DispatchError error = pass(context)) return error;
  if (!context.should_reinvoke) return std::nullopt;
  context.is_reinvoke = true;
  return pass(context);
}

}  // namespace harness::sim::detail
