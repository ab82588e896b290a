#pragma once

// The reinvocation pass of the mutating chain (docs/admission-chain.md §6).
// Followed: apiserver pkg/admission/reinvocation.go (reinvoker.Admit).

#include <functional>

#include "dispatch.h"
#include "reinvocation_context.h"

namespace harness::sim::detail {

// One pass of the mutating chain: the in-tree mutating plugins, then the mutating webhooks, with
// `context.is_reinvoke` telling which pass it is.
using MutatingPass = std::function<DispatchError(ReinvocationContext& context)>;

// reinvoker.Admit: runs the pass; when it admitted and a webhook changed the object
// (ShouldReinvoke), marks the context as the reinvocation (SetIsReinvoke) and runs the pass once
// more: the in-tree plugins all again, the webhooks only as WebhookReinvokeContext says. Never a
// third pass.
DispatchError admitWithReinvocation(ReinvocationContext& context, const MutatingPass& pass);

}  // namespace harness::sim::detail
