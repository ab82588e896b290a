#pragma once

// In-process X.509 material for tests and the simulator's endpoints (OpenSSL 3, EC P-256 keys,
// X.509 v3): a CA, serving/client certificates it signs, self-signed certificates, and writing
// them to files for net::Server. Replaces shelling out to openssl where a process must mint
// certificates at run time (a scenario starting stub webhooks and the injector).
//
// The certificates follow what Go's crypto/x509 verifier expects of a webhook's serving
// certificate (docs/admission-chain.md §4.5): host names and IP addresses in the subjectAltName
// (Go ignores the Common Name), serverAuth in the extended key usage.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/result.h"

namespace harness::net {

// A certificate and its private key as OpenSSL objects (X509, EVP_PKEY), immutable once made,
// so one may be shared by several threads and servers (OpenSSL 3 allows concurrent read-only
// use: signing with a key or sending a certificate does not change them). Decoding a private
// key's PEM costs OpenSSL 3 millions of instructions (its decoder lookup), so what is made in
// the process is kept in this form beside its PEM. net::Server serves these objects directly
// when its certificate and key files are the ones writePemFiles wrote from them (unchanged since).
struct TlsIdentity;

struct CertificateAuthority {
  std::string certificate_pem;  // the CA certificate (a caBundle)
  std::string private_key_pem;  // PKCS#8 PEM
  // The two above parsed once (create() sets it; copies share it), used by issueCertificate
  // instead of decoding the PEM on every call. Only while it still holds exactly the PEM above:
  // a CA whose PEM was replaced, or one built from PEM by hand, is parsed on each call.
  std::shared_ptr<const TlsIdentity> parsed;
  // One key for every leaf this CA issues (create(..., LeafKeys::kShared)): P-256 key
  // generation and its PEM encoding happen once instead of once per certificate. Each leaf is
  // still its own certificate (serial, names); they only share the key pair.
  std::shared_ptr<const TlsIdentity> leaf_key;

  enum class LeafKeys { kFreshPerCertificate, kShared };

  // A self-signed CA: basicConstraints CA:TRUE (critical), keyUsage keyCertSign, cRLSign,
  // digitalSignature (critical). Valid from five minutes ago (clock skew) for `validity`.
  static core::Result<CertificateAuthority> create(
      std::string_view common_name, std::chrono::hours validity = std::chrono::hours(24 * 365),
      LeafKeys leaf_keys = LeafKeys::kFreshPerCertificate);
};

struct IssuedCertificate {
  std::string certificate_pem;  // the leaf certificate only
  std::string private_key_pem;  // PKCS#8 PEM
  // The same certificate and key as OpenSSL objects (a server can use them without decoding
  // the PEM again).
  std::shared_ptr<const TlsIdentity> parsed;
};

// A serving (and client) certificate signed by `ca`: subject CN=`common_name`, one SAN per entry
// of `sans` (an entry that parses as an IPv4 or IPv6 address becomes an IP SAN, anything else a
// DNS SAN), keyUsage digitalSignature+keyEncipherment, extendedKeyUsage serverAuth+clientAuth,
// CA:FALSE. Errors: an unusable CA (PEM that does not parse, a key that does not match), an empty
// SAN entry, a non-positive validity, an empty organization.
//
// `organizations` become O= entries of the subject: kube-apiserver's client-certificate
// authenticator takes the user name from CN and the groups from O (k8s.io/apiserver
// pkg/authentication/request/x509/x509.go, CommonNameUserConversion), e.g. CN=admin,
// O=system:masters for a cluster administrator.
core::Result<IssuedCertificate> issueCertificate(
    const CertificateAuthority& ca, std::string_view common_name,
    const std::vector<std::string>& sans,
    std::chrono::hours validity = std::chrono::hours(24 * 365),
    const std::vector<std::string>& organizations = {});

// A fresh EC P-256 key pair (e.g. for service-account tokens, which kube-apiserver and
// kube-controller-manager sign as ES256): the private key as PKCS#8 PEM ("PRIVATE KEY"), the
// public key as SubjectPublicKeyInfo PEM ("PUBLIC KEY", what --service-account-key-file reads).
struct KeyPair {
  std::string private_key_pem;
  std::string public_key_pem;
};
core::Result<KeyPair> generateKeyPair();

// The same kind of leaf, but signed by its own key (issuer == subject): a client that trusts any
// CA rejects it as "x509: certificate signed by unknown authority".
core::Result<IssuedCertificate> selfSignedCertificate(std::string_view common_name,
                                                      const std::vector<std::string>& sans);

// Writes `content` to `path` atomically (a temporary file in the same directory, then rename)
// with permission bits `mode` whatever the umask; missing parent directories are created. Errors
// name the file.
core::Result<void> writeFileAtomically(const std::filesystem::path& path, const std::string& content,
                                       unsigned mode);

// Writes both PEM files atomically (a temporary file in the same directory, then rename), the
// certificate with mode 0644 and the key with mode 0600; missing parent directories are created.
// While the files stay as written and `certificate.parsed` lives, a net::Server of this process
// given these two files uses the parsed objects instead of decoding them.
core::Result<void> writePemFiles(const IssuedCertificate& certificate,
                                 const std::filesystem::path& cert_file,
                                 const std::filesystem::path& key_file);

}  // namespace harness::net
