#pragma once

// The definition of net::TlsIdentity (private to harness::net: certificates.cc makes them,
// tls_support.cc serves them), and the table of the PEM files this process wrote from them.

#include <memory>
#include <string>

#include <openssl/evp.h>
#include <openssl/x509.h>

#include "harness/net/certificates.h"

namespace harness::net {

namespace detail {
struct OpenSslObjectFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
};
}  // namespace detail

struct TlsIdentity {
  // Null in a CA's leaf_key (a key without a certificate).
  std::unique_ptr<X509, detail::OpenSslObjectFree> certificate;
  std::unique_ptr<EVP_PKEY, detail::OpenSslObjectFree> key;
  // The PEM these were decoded from or encoded to: a CertificateAuthority uses `parsed` only
  // while its own PEM is still this text.
  std::string certificate_pem;
  std::string private_key_pem;
};

namespace detail {

// writePemFiles records what it wrote: the two paths, their files' fingerprints once written,
// and the objects they encode (not owned: an entry lapses with its IssuedCertificate).
void rememberWrittenIdentity(const std::string& certificate_file, const std::string& key_file,
                             const std::shared_ptr<const TlsIdentity>& identity);
// The objects of a certificate and key this process wrote to exactly these files, while both
// files are still the ones it wrote (same fingerprint) and the objects still exist; else null.
// A server loading them uses the objects instead of decoding the PEM (OpenSSL 3's private key
// decoding alone costs millions of instructions; issue 19).
std::shared_ptr<const TlsIdentity> writtenIdentity(const std::string& certificate_file,
                                                   const std::string& key_file);

}  // namespace detail

}  // namespace harness::net
