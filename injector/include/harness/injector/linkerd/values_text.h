#pragma once

// The linkerd-config values as the proxy-injector reads them from its mounted ConfigMap
// (controller/proxy-injector webhook.go Inject: config.Values), from text: shared by the HTTPS
// shell, which re-reads the file on every request, and the offline `inject` command.

#include <string>

#include "harness/core/result.h"
#include "harness/injector/linkerd/values.h"

namespace harness::injector::linkerd {

// Reads a linkerd-config values document: the `values` YAML itself, or a dumped ConfigMap
// (kind: ConfigMap, data.values), onto the chart defaults (parseValues); errors name `where`
// (the file).
core::Result<Values> parseValuesText(const std::string& text, const std::string& where);

}  // namespace harness::injector::linkerd
