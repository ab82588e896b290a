#include "harness/injector/istio/validate.h"

#include <arpa/inet.h>

#include <cctype>
#include <vector>

#include "harness/core/quantity.h"
#include "harness/go/strconv.h"
#include "harness/injector/istio/proxy_config.h"

// Followed: istio/istio pkg/kube/inject/validate.go (the validator table and every message,
// validateProxyConfig), go-multierror's ListFormatFunc, Go's net/netip ParsePrefix messages
// (the common ones). The resource-quantity and interface-name checks are in the table at the
// reference's commit (docs/istio-injector.md §4.3) but not in the validate.go we could read, so their
// texts are ours: the quantity errors are apimachinery's, the interface rule is the kernel's
// (dev_valid_name: 1-15 bytes, not "." or "..", no '/', ':' or whitespace).

namespace harness::injector::istio {

namespace {

using core::Error;
using core::Result;

std::string trimSpace(std::string_view s) {
  const char* ws = " \t\r\n\v\f";
  const auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string dquote(std::string_view s) { return "\"" + std::string(s) + "\""; }

Result<void> parsePort(std::string_view port) {
  auto r = go::parseUint(trimSpace(port), 10, 16);
  if (!r) return Error{"failed parsing port '" + std::string(port) + "': " + r.error().message};
  return {};
}

// netip.ParsePrefix, with its error texts for the usual mistakes.
Result<void> parsePrefix(std::string_view cidr) {
  const std::string prefix = "netip.ParsePrefix(" + dquote(cidr) + "): ";
  const auto slash = cidr.rfind('/');
  if (slash == std::string_view::npos) return Error{prefix + "no '/'"};
  const std::string addr(cidr.substr(0, slash));
  const std::string bits(cidr.substr(slash + 1));
  unsigned char buf[16];
  bool v4 = addr.find(':') == std::string::npos;
  if (inet_pton(v4 ? AF_INET : AF_INET6, addr.c_str(), buf) != 1) {
    return Error{prefix + "ParseAddr(" + dquote(addr) + "): unable to parse IP"};
  }
  if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != std::string::npos ||
      (bits.size() > 1 && bits[0] == '0')) {
    return Error{prefix + "bad bits after slash: " + dquote(bits)};
  }
  if (std::stoi(bits) > (v4 ? 32 : 128)) return Error{prefix + "prefix length out of range"};
  return {};
}

Result<void> validateCIDRList(std::string_view cidrs) {
  if (cidrs.empty()) return {};
  for (const auto& c : split(cidrs, ',')) {
    if (auto r = parsePrefix(c); !r) {
      return Error{"failed parsing cidr '" + c + "': " + r.error().message};
    }
  }
  return {};
}

// A comma-separated list of network interface names ("" is an empty list).
Result<void> validateInterfaceList(std::string_view parameter, std::string_view value) {
  if (trimSpace(value).empty()) return {};
  for (const auto& raw : split(value, ',')) {
    const std::string name = trimSpace(raw);
    bool ok = !name.empty() && name.size() <= 15 && name != "." && name != "..";
    for (unsigned char c : name) {
      if (c == '/' || c == ':' || std::isspace(c) != 0 || c < 0x20 || c == 0x7f) ok = false;
    }
    if (!ok) {
      return Error{std::string(parameter) + " invalid: invalid interface name '" + raw + "'"};
    }
  }
  return {};
}

Result<void> validateQuantity(std::string_view value) {
  for (unsigned char c : value) {
    if (c < 0x20 || c == 0x7f) return Error{"quantity contains control characters"};
  }
  auto q = core::Quantity::parse(value);
  if (!q) return q.error();
  return {};
}

}  // namespace

Result<void> validatePortList(std::string_view parameter, std::string_view ports) {
  const std::string trimmed = trimSpace(ports);
  if (trimmed.empty()) return {};
  for (const auto& p : split(trimmed, ',')) {
    if (auto r = parsePort(p); !r) {
      return Error{std::string(parameter) + " invalid: failed parsing port '" + p +
                   "': " + r.error().message};
    }
  }
  return {};
}

Result<void> validateAnnotation(std::string_view name, std::string_view value) {
  if (name == "sidecar.istio.io/interceptionMode") {
    if (value == "REDIRECT" || value == "TPROXY" || value == "NONE") return {};
    return Error{"interceptionMode invalid, use REDIRECT,TPROXY,NONE: " + std::string(value)};
  }
  if (name == "status.sidecar.istio.io/port") {
    if (auto r = parsePort(value); !r) return Error{"excludeInboundPorts invalid: " + r.error().message};
    return {};
  }
  if (name == "readiness.status.sidecar.istio.io/initialDelaySeconds" ||
      name == "readiness.status.sidecar.istio.io/periodSeconds" ||
      name == "readiness.status.sidecar.istio.io/failureThreshold") {
    auto r = go::parseUint(value, 10, 32);
    if (!r) return r.error();
    return {};
  }
  if (name == "traffic.sidecar.istio.io/includeOutboundIPRanges") {
    if (value == "*") return {};
    if (auto r = validateCIDRList(value); !r) return Error{"includeIPRanges invalid: " + r.error().message};
    return {};
  }
  if (name == "traffic.sidecar.istio.io/excludeOutboundIPRanges") {
    if (auto r = validateCIDRList(value); !r) return Error{"excludeIPRanges invalid: " + r.error().message};
    return {};
  }
  if (name == "traffic.sidecar.istio.io/includeInboundPorts") {
    if (value == "*") return {};
    return validatePortList("includeInboundPorts", value);
  }
  if (name == "traffic.sidecar.istio.io/excludeInboundPorts") {
    return validatePortList("excludeInboundPorts", value);
  }
  if (name == "traffic.sidecar.istio.io/excludeOutboundPorts") {
    return validatePortList("excludeOutboundPorts", value);
  }
  if (name == "traffic.sidecar.istio.io/excludeInterfaces") {
    return validateInterfaceList("excludeInterfaces", value);
  }
  if (name == "traffic.sidecar.istio.io/kubevirtInterfaces") {
    return validateInterfaceList("kubevirtInterfaces", value);
  }
  if (name == "istio.io/reroute-virtual-interfaces") {
    return validateInterfaceList("rerouteVirtualInterfaces", value);
  }
  if (name == "proxy.istio.io/config") return validateProxyConfigAnnotation(value);
  if (name == "prometheus.istio.io/merge-metrics") {
    auto r = go::parseBool(value);
    if (!r) return r.error();
    return {};
  }
  if (name == "sidecar.istio.io/proxyCPU" || name == "sidecar.istio.io/proxyMemory" ||
      name == "sidecar.istio.io/proxyCPULimit" || name == "sidecar.istio.io/proxyMemoryLimit") {
    return validateQuantity(value);
  }
  return {};
}

Result<void> validateAnnotations(const std::map<std::string, std::string>& annotations) {
  std::vector<std::string> errors;
  for (const auto& [name, value] : annotations) {
    if (auto r = validateAnnotation(name, value); !r) {
      std::string error = "invalid value '";
      error.append(value).append("' for annotation '").append(name).append("': ");
      error.append(r.error().message);
      errors.push_back(std::move(error));
    }
  }
  if (errors.empty()) return {};
  std::string out = std::to_string(errors.size()) +
                    (errors.size() == 1 ? " error occurred:\n" : " errors occurred:\n");
  for (const auto& e : errors) out += "\t* " + e + "\n";
  return Error{out + "\n"};
}

}  // namespace harness::injector::istio
