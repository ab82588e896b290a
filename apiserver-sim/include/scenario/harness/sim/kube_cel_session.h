#pragma once

// Kubernetes' own code for one process's scenarios: kube-cel started (CEL for matchConditions
// and admission policies, installed process-wide by cel::ProcessCel) and, while it lives, what
// it gives the REST handlers: protobuf bodies (kubectl's typed clients) decoded by Kubernetes'
// serializer, fieldValidation (Strict, Warn) as its Go types see the fields, and its field
// manager (server-side apply, managedFields). For `run`, `compare`, `serve` and whatever else
// plays scenarios as they do (the benchmarks); without kube-cel only the CEL hooks say why.
// Create it before loading scenarios: their matchConditions compile when they load.

#include <memory>
#include <string>

#include "harness/sim/cel.h"

namespace harness::sim {

class KubeCelSession {
 public:
  KubeCelSession();
  ~KubeCelSession();
  KubeCelSession(const KubeCelSession&) = delete;
  KubeCelSession& operator=(const KubeCelSession&) = delete;

  [[nodiscard]] const cel::ProcessCel& cel() const { return cel_; }
  [[nodiscard]] bool available() const { return cel_.available(); }
  // One line: "kube-cel v1.37.2 (CEL environment 1.36)" or why CEL is unavailable.
  [[nodiscard]] const std::string& status() const { return cel_.status(); }

 private:
  cel::ProcessCel cel_;
};

}  // namespace harness::sim
