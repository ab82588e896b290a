#pragma once

// admission.Attributes (kubernetes/apiserver pkg/admission/interfaces.go): what every step of the
// chain knows about the request being admitted. Objects are the versioned JSON of the resource
// the client called (e.g. apps/v1 Deployment), as the webhook dispatchers see them.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/admission_review.h"
#include "harness/core/object.h"

namespace harness::sim {

inline constexpr std::string_view kOperationCreate = "CREATE";
inline constexpr std::string_view kOperationUpdate = "UPDATE";
inline constexpr std::string_view kOperationDelete = "DELETE";
inline constexpr std::string_view kOperationConnect = "CONNECT";

struct AdmissionAttributes {
  std::string operation;               // CREATE, UPDATE, DELETE, CONNECT
  core::GroupVersionKind kind;         // kind of `object` as requested ("apps/v1, Kind=Deployment")
  core::GroupVersionResource resource;  // resource the client called
  std::string subresource;             // "" for the main resource; "status", "scale", "exec"...
  std::string namespace_name;          // "" for cluster-scoped resources
  std::string name;                    // may be "" on CREATE with generateName
  std::optional<nlohmann::json> object;      // nullopt for DELETE
  std::optional<nlohmann::json> old_object;  // nullopt for CREATE and CONNECT
  std::optional<nlohmann::json> options;     // CreateOptions/UpdateOptions/DeleteOptions; nullopt for CONNECT
  bool dry_run = false;
  core::UserInfo user_info;
  // True in the reinvocation pass (round 1) of the mutating phase (admission.Attributes
  // IsReinvoke via the reinvocation context).
  bool reinvoke = false;
};

}  // namespace harness::sim
