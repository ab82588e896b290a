#pragma once

// Server-side apply and managedFields by Kubernetes' own field manager (k8s.io/apimachinery
// pkg/util/managedfields, as kube-apiserver's handlers run it: patch.go applyPatcher for
// application/apply-patch+yaml, FieldManager.UpdateNoErrors for every other create, update and
// patch). The simulator installs kube-cel's (cel::fieldManagerApply, cel::fieldManagerUpdate)
// when it runs; without one, apply is the simplified create-or-merge of writes.cc and writes
// record no managedFields (said once on stderr).

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/core/status.h"

namespace harness::sim {

// What an apply gives: the applied object (first), or the Status to answer (second).
using ApplyOutcome = std::pair<nlohmann::json, std::optional<core::Status>>;

struct FieldManager {
  // FieldManager.Apply of the apply patch `patch` (YAML or JSON) by `manager` on `live` (the
  // stored object in the endpoint's version `kind`; nullopt: the apply creates): the applied
  // object with its managedFields, or the Status to answer (the 409 conflict with upstream's
  // text, a 400 for a patch that does not decode). An error when the field manager failed.
  std::function<core::Result<ApplyOutcome>(
      const std::optional<nlohmann::json>& live, const std::string& patch,
      const std::string& manager, bool force, const std::string& subresource,
      const core::GroupVersionKind& kind)>
      apply;
  // FieldManager.UpdateNoErrors: the managedFields `object` gets when `manager` writes it over
  // `live` (nullopt: a create).
  std::function<core::Result<nlohmann::json>(
      const nlohmann::json& object, const std::optional<nlohmann::json>& live,
      const std::string& manager, const std::string& subresource,
      const core::GroupVersionKind& kind)>
      update;
};

// Process-wide; a default-constructed FieldManager uninstalls.
void setFieldManager(FieldManager manager);

// handlers/create.go managerOrUserAgent: the fieldManager option, else the User-Agent up to its
// first "/" without unprintable characters, at most 128 bytes.
std::string managerOrUserAgent(const std::string& manager, const std::string& user_agent);

}  // namespace harness::sim
