#pragma once

// TLS helpers shared by the server and the client (private to harness::net).

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "harness/core/result.h"
#include "harness/net/server.h"

namespace harness::net::detail {

// Identity of a file's current content, following symlinks (a ConfigMap mount swaps the
// `..data` symlink; the target's inode and mtime change).
struct FileFingerprint {
  bool exists = false;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t size = 0;
  bool operator==(const FileFingerprint&) const = default;
};
FileFingerprint fingerprintOf(const std::string& path);

// The TLS 1.3 cipher suites in Go's order (crypto/tls defaults.go defaultCipherSuitesTLS13, on a
// machine with AES hardware): what kube-apiserver's client offers first and what a Go webhook
// server picks. OpenSSL's own order puts AES-256-GCM first, so two OpenSSL ends agreed on a
// suite no Go pair would (and its SHA-384 key schedule costs a little more).
inline constexpr const char* kGoTls13CipherSuites =
    "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256";

core::Result<std::shared_ptr<boost::asio::ssl::context>> makeServerContext(
    const TlsServerConfig& config);
// Makes and keeps the context makeServerContext will share for `identity` (no client CA);
// nothing when one is kept or the certificate and key do not fit (the server's start says why).
void prepareServerContext(const std::shared_ptr<const TlsIdentity>& identity, bool tls13_only);

// OpenSSL's error queue as one line (and clears it).
std::string takeOpenSslErrors();

// Go's crypto/x509 wording for a failed verification (without the "tls: failed to verify
// certificate: " prefix): unknown authority, HostnameError, CertificateInvalidError.
std::string describeVerifyFailure(long verify_result, X509* leaf, const std::string& host,
                                  bool host_is_ip);

}  // namespace harness::net::detail
