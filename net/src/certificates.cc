#include "harness/net/certificates.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <vector>
#include <utility>
#include <system_error>

#include <fmt/format.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "tls_identity.h"
#include "tls_support.h"

namespace harness::net {

namespace {

struct OpenSslFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(BIO* p) const { BIO_free(p); }
  void operator()(BIGNUM* p) const { BN_free(p); }
  void operator()(GENERAL_NAMES* p) const { GENERAL_NAMES_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, detail::OpenSslObjectFree>;
using CertPtr = std::unique_ptr<X509, detail::OpenSslObjectFree>;
using BioPtr = std::unique_ptr<BIO, OpenSslFree>;

// Five minutes of tolerance for clocks that disagree (Go's own test certificates start an hour
// back; a few minutes is enough between processes on one machine).
constexpr long kBackdateSeconds = 5L * 60;

core::Error openSslError(std::string_view what) {
  return core::makeError(fmt::format("{}: {}", what, detail::takeOpenSslErrors()));
}

core::Result<KeyPtr> generateKey() {
  KeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return openSslError("cannot generate an EC P-256 key");
  return key;
}

core::Result<std::string> bioContents(BIO* bio) {
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  if (size < 0 || (size > 0 && data == nullptr)) return openSslError("cannot read PEM buffer");
  return std::string(data, static_cast<std::size_t>(size));
}

core::Result<std::string> certificatePem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) {
    return openSslError("cannot encode certificate");
  }
  return bioContents(bio.get());
}

core::Result<std::string> privateKeyPem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio ||
      PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return openSslError("cannot encode private key");
  }
  return bioContents(bio.get());
}

// A random positive 127-bit serial number, as Go's tooling uses (RFC 5280 §4.1.2.2: at most
// 20 octets, positive).
core::Result<void> setRandomSerial(X509* cert) {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return openSslError("cannot generate a serial number");
  bytes[0] &= 0x7f;
  bytes[0] |= 0x01;  // never zero
  std::unique_ptr<BIGNUM, OpenSslFree> bn(BN_bin2bn(bytes, sizeof bytes, nullptr));
  if (!bn || !BN_to_ASN1_INTEGER(bn.get(), X509_get_serialNumber(cert))) {
    return openSslError("cannot set the serial number");
  }
  return {};
}

core::Result<void> setValidity(X509* cert, std::chrono::hours validity) {
  if (validity.count() <= 0) {
    return core::makeError(
        fmt::format("certificate validity must be positive, got {}h", validity.count()));
  }
  const std::time_t now = std::time(nullptr);
  const long hours = static_cast<long>(validity.count());
  if (!ASN1_TIME_adj(X509_getm_notBefore(cert), now, 0, -kBackdateSeconds) ||
      !ASN1_TIME_adj(X509_getm_notAfter(cert), now, static_cast<int>(hours / 24),
                     (hours % 24) * 3600)) {
    return openSslError("cannot set the validity period");
  }
  return {};
}

core::Result<void> setSubject(X509* cert, std::string_view common_name,
                              const std::vector<std::string>& organizations = {}) {
  X509_NAME* name = X509_get_subject_name(cert);
  for (const auto& organization : organizations) {
    if (organization.empty() ||
        X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(organization.c_str()),
                                   -1, -1, 0) != 1) {
      return openSslError(fmt::format("invalid organization \"{}\"", organization));
    }
  }
  if (!common_name.empty()) {
    const std::string cn(common_name);
    if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                   reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                   0) != 1) {
      return openSslError(fmt::format("invalid common name \"{}\"", cn));
    }
  }
  return {};
}

core::Result<void> addExtension(X509* cert, X509V3_CTX* ctx, int nid, const char* value) {
  std::unique_ptr<X509_EXTENSION, OpenSslFree> ext(
      X509V3_EXT_conf_nid(nullptr, ctx, nid, value));
  if (!ext || X509_add_ext(cert, ext.get(), -1) != 1) {
    return openSslError(fmt::format("cannot add extension {} = {}", OBJ_nid2sn(nid), value));
  }
  return {};
}

// The extensions in order; the first that cannot be added is the error.
core::Result<void> addExtensions(X509* cert, X509V3_CTX* ctx,
                                 std::initializer_list<std::pair<int, const char*>> extensions) {
  for (const auto& [nid, value] : extensions) {
    if (auto r = addExtension(cert, ctx, nid, value); !r) return r;
  }
  return {};
}

// One GENERAL_NAME per entry: an IP SAN when the text parses as an address (inet_pton is
// strict, unlike OpenSSL's a2i_IPADDRESS, which accepts "1.2.3.4.example.com"), else a DNS SAN.
// Go's x509.CreateCertificate refuses names that are not IA5 (ASCII); so do we.
core::Result<void> addSubjectAltNames(X509* cert, const std::vector<std::string>& sans) {
  if (sans.empty()) return {};
  std::unique_ptr<GENERAL_NAMES, OpenSslFree> names(sk_GENERAL_NAME_new_null());
  if (!names) return openSslError("cannot allocate subjectAltName");
  for (std::size_t i = 0; i < sans.size(); ++i) {
    const std::string& san = sans[i];
    if (san.empty()) return core::makeError(fmt::format("sans[{}]: empty name", i));
    unsigned char address[16];
    int address_length = 0;
    if (inet_pton(AF_INET, san.c_str(), address) == 1) {
      address_length = 4;
    } else if (inet_pton(AF_INET6, san.c_str(), address) == 1) {
      address_length = 16;
    }
    GENERAL_NAME* name = GENERAL_NAME_new();
    if (!name) return openSslError("cannot allocate a subjectAltName entry");
    if (address_length > 0) {
      ASN1_OCTET_STRING* ip = ASN1_OCTET_STRING_new();
      if (!ip || ASN1_OCTET_STRING_set(ip, address, address_length) != 1) {
        ASN1_OCTET_STRING_free(ip);
        GENERAL_NAME_free(name);
        return openSslError("cannot encode an IP subjectAltName");
      }
      GENERAL_NAME_set0_value(name, GEN_IPADD, ip);
    } else {
      for (unsigned char c : san) {
        if (c < 0x20 || c > 0x7e) {
          GENERAL_NAME_free(name);
          return core::makeError(fmt::format(
              "sans[{}]: x509: \"{}\" cannot be encoded as an IA5String", i, san));
        }
      }
      ASN1_IA5STRING* dns = ASN1_IA5STRING_new();
      if (!dns || ASN1_STRING_set(dns, san.data(), static_cast<int>(san.size())) != 1) {
        ASN1_IA5STRING_free(dns);
        GENERAL_NAME_free(name);
        return openSslError("cannot encode a DNS subjectAltName");
      }
      GENERAL_NAME_set0_value(name, GEN_DNS, dns);
    }
    if (sk_GENERAL_NAME_push(names.get(), name) <= 0) {
      GENERAL_NAME_free(name);
      return openSslError("cannot add a subjectAltName entry");
    }
  }
  if (X509_add1_ext_i2d(cert, NID_subject_alt_name, names.get(), 0, X509V3_ADD_DEFAULT) != 1) {
    return openSslError("cannot add subjectAltName");
  }
  return {};
}

core::Result<CertPtr> newCertificate(EVP_PKEY* subject_key, std::string_view common_name,
                                     std::chrono::hours validity,
                                     const std::vector<std::string>& organizations = {}) {
  CertPtr cert(X509_new());
  if (!cert || X509_set_version(cert.get(), X509_VERSION_3) != 1) {
    return openSslError("cannot create a certificate");
  }
  if (auto r = setRandomSerial(cert.get()); !r) return r.error();
  if (auto r = setValidity(cert.get(), validity); !r) return r.error();
  if (auto r = setSubject(cert.get(), common_name, organizations); !r) return r.error();
  if (X509_set_pubkey(cert.get(), subject_key) != 1) return openSslError("cannot set public key");
  return cert;
}

// Builds and signs a leaf. `issuer`/`issuer_key` null: self-signed.
// `shared_key`: the leaf's key (a CA's leaf_key), else a fresh one.
core::Result<IssuedCertificate> makeLeaf(X509* issuer, EVP_PKEY* issuer_key,
                                         std::string_view common_name,
                                         const std::vector<std::string>& sans,
                                         std::chrono::hours validity,
                                         const std::vector<std::string>& organizations = {},
                                         const TlsIdentity* shared_key = nullptr) {
  ERR_clear_error();
  KeyPtr key;
  if (shared_key != nullptr) {
    if (EVP_PKEY_up_ref(shared_key->key.get()) != 1) return openSslError("cannot share the key");
    key.reset(shared_key->key.get());
  } else {
    auto fresh = generateKey();
    if (!fresh) return fresh.error();
    key = std::move(*fresh);
  }
  auto cert = newCertificate(key.get(), common_name, validity, organizations);
  if (!cert) return cert.error();
  X509* leaf = cert->get();
  const bool self_signed = issuer == nullptr;
  if (self_signed) {
    issuer = leaf;
    issuer_key = key.get();
  }
  if (X509_set_issuer_name(leaf, X509_get_subject_name(issuer)) != 1) {
    return openSslError("cannot set issuer");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, leaf, nullptr, nullptr, 0);
  if (auto r = addExtensions(leaf, &ctx,
                             {{NID_basic_constraints, "critical,CA:FALSE"},
                              {NID_key_usage, "critical,digitalSignature,keyEncipherment"},
                              {NID_ext_key_usage, "serverAuth,clientAuth"},
                              {NID_subject_key_identifier, "hash"}});
      !r) {
    return r.error();
  }
  if (!self_signed) {
    if (auto r = addExtension(leaf, &ctx, NID_authority_key_identifier, "keyid:always"); !r) {
      return r.error();
    }
  }
  if (auto r = addSubjectAltNames(leaf, sans); !r) return r.error();
  if (X509_sign(leaf, issuer_key, EVP_sha256()) <= 0) return openSslError("cannot sign");
  auto cert_pem = certificatePem(leaf);
  if (!cert_pem) return cert_pem.error();
  std::string key_pem;
  if (shared_key != nullptr) {
    key_pem = shared_key->private_key_pem;
  } else {
    auto encoded = privateKeyPem(key.get());
    if (!encoded) return encoded.error();
    key_pem = std::move(*encoded);
  }
  auto parsed = std::make_shared<TlsIdentity>();
  parsed->certificate = std::move(*cert);
  parsed->key = std::move(key);
  parsed->certificate_pem = *cert_pem;
  parsed->private_key_pem = key_pem;
  return IssuedCertificate{std::move(*cert_pem), std::move(key_pem), std::move(parsed)};
}

// The CA's certificate and key decoded from PEM and checked (what issueCertificate did on
// every call before CertificateAuthority::parsed).
core::Result<std::shared_ptr<const TlsIdentity>> parseAuthority(const CertificateAuthority& ca) {
  BioPtr cert_bio(BIO_new_mem_buf(ca.certificate_pem.data(),
                                  static_cast<int>(ca.certificate_pem.size())));
  CertPtr ca_cert(cert_bio ? PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)
                           : nullptr);
  if (!ca_cert) return openSslError("CA certificate: cannot parse PEM");
  BioPtr key_bio(BIO_new_mem_buf(ca.private_key_pem.data(),
                                 static_cast<int>(ca.private_key_pem.size())));
  KeyPtr ca_key(key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr)
                        : nullptr);
  if (!ca_key) return openSslError("CA private key: cannot parse PEM");
  if (X509_check_private_key(ca_cert.get(), ca_key.get()) != 1) {
    ERR_clear_error();
    return core::makeError("CA private key does not match the CA certificate");
  }
  if (X509_check_ca(ca_cert.get()) == 0) {
    return core::makeError("CA certificate is not a certificate authority (no CA:TRUE)");
  }
  auto parsed = std::make_shared<TlsIdentity>();
  parsed->certificate = std::move(ca_cert);
  parsed->key = std::move(ca_key);
  parsed->certificate_pem = ca.certificate_pem;
  parsed->private_key_pem = ca.private_key_pem;
  return std::shared_ptr<const TlsIdentity>(std::move(parsed));
}


}  // namespace

core::Result<CertificateAuthority> CertificateAuthority::create(std::string_view common_name,
                                                                std::chrono::hours validity,
                                                                LeafKeys leaf_keys) {
  ERR_clear_error();
  auto key = generateKey();
  if (!key) return key.error();
  auto cert = newCertificate(key->get(), common_name, validity);
  if (!cert) return cert.error();
  X509* ca = cert->get();
  if (X509_set_issuer_name(ca, X509_get_subject_name(ca)) != 1) {
    return openSslError("cannot set issuer");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, ca, ca, nullptr, nullptr, 0);
  if (auto r = addExtensions(ca, &ctx,
                             {{NID_basic_constraints, "critical,CA:TRUE"},
                              {NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature"},
                              {NID_subject_key_identifier, "hash"}});
      !r) {
    return r.error();
  }
  if (X509_sign(ca, key->get(), EVP_sha256()) <= 0) return openSslError("cannot sign the CA");
  // Caches the extensions (X509_check_ca computes them once, under the certificate's lock), so
  // that later signing only reads the certificate.
  if (X509_check_ca(ca) == 0) return openSslError("the new CA is not a CA");
  auto cert_pem = certificatePem(ca);
  if (!cert_pem) return cert_pem.error();
  auto key_pem = privateKeyPem(key->get());
  if (!key_pem) return key_pem.error();
  auto parsed = std::make_shared<TlsIdentity>();
  parsed->certificate = std::move(*cert);
  parsed->key = std::move(*key);
  parsed->certificate_pem = *cert_pem;
  parsed->private_key_pem = *key_pem;
  CertificateAuthority authority{std::move(*cert_pem), std::move(*key_pem), std::move(parsed),
                                 nullptr};
  if (leaf_keys == LeafKeys::kShared) {
    auto leaf_key = generateKey();
    if (!leaf_key) return leaf_key.error();
    auto leaf_pem = privateKeyPem(leaf_key->get());
    if (!leaf_pem) return leaf_pem.error();
    auto shared = std::make_shared<TlsIdentity>();
    shared->key = std::move(*leaf_key);
    shared->private_key_pem = std::move(*leaf_pem);
    authority.leaf_key = std::move(shared);
  }
  return authority;
}

core::Result<IssuedCertificate> issueCertificate(const CertificateAuthority& ca,
                                                 std::string_view common_name,
                                                 const std::vector<std::string>& sans,
                                                 std::chrono::hours validity,
                                                 const std::vector<std::string>& organizations) {
  ERR_clear_error();
  std::shared_ptr<const TlsIdentity> authority = ca.parsed;
  if (!authority || !authority->certificate || authority->certificate_pem != ca.certificate_pem ||
      authority->private_key_pem != ca.private_key_pem) {
    auto parsed = parseAuthority(ca);
    if (!parsed) return parsed.error();
    authority = std::move(*parsed);
  }
  return makeLeaf(authority->certificate.get(), authority->key.get(), common_name, sans,
                  validity, organizations, ca.leaf_key.get());
}

core::Result<IssuedCertificate> selfSignedCertificate(std::string_view common_name,
                                                      const std::vector<std::string>& sans) {
  return makeLeaf(nullptr, nullptr, common_name, sans, std::chrono::hours(24 * 365));
}

core::Result<void> writeFileAtomically(const std::filesystem::path& path,
                                       const std::string& content, unsigned mode) {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return core::makeError(
          fmt::format("cannot create {}: {}", path.parent_path().string(), ec.message()));
    }
  }
  const std::string tmp =
      fmt::format("{}.tmp-{}-{}", path.string(), ::getpid(), counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    return core::makeError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
  }
  auto fail = [&](const char* what) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return core::makeError(fmt::format("cannot {} {}: {}", what, tmp, std::strerror(saved)));
  };
  if (::fchmod(fd, mode) != 0) return fail("chmod");  // the umask may have narrowed `mode`
  std::size_t written = 0;
  while (written < content.size()) {
    const ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return fail("write");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    return core::makeError(fmt::format("cannot write {}: {}", tmp, std::strerror(saved)));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    return core::makeError(
        fmt::format("cannot rename {} to {}: {}", tmp, path.string(), std::strerror(saved)));
  }
  return {};
}

core::Result<KeyPair> generateKeyPair() {
  ERR_clear_error();
  auto key = generateKey();
  if (!key) return key.error();
  auto private_pem = privateKeyPem(key->get());
  if (!private_pem) return private_pem.error();
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PUBKEY(bio.get(), key->get()) != 1) {
    return openSslError("cannot encode public key");
  }
  auto public_pem = bioContents(bio.get());
  if (!public_pem) return public_pem.error();
  return KeyPair{std::move(*private_pem), std::move(*public_pem)};
}

namespace detail {
namespace {

struct WrittenIdentity {
  std::string certificate_file, key_file;
  FileFingerprint certificate_fingerprint, key_fingerprint;
  std::weak_ptr<const TlsIdentity> identity;
};

std::mutex written_mutex;
std::vector<WrittenIdentity> written;  // guarded by written_mutex

}  // namespace

void rememberWrittenIdentity(const std::string& certificate_file, const std::string& key_file,
                             const std::shared_ptr<const TlsIdentity>& identity) {
  WrittenIdentity entry{certificate_file, key_file, fingerprintOf(certificate_file),
                        fingerprintOf(key_file), identity};
  std::lock_guard lock(written_mutex);
  std::erase_if(written, [&](const WrittenIdentity& old) {
    return old.identity.expired() ||
           (old.certificate_file == certificate_file && old.key_file == key_file);
  });
  if (entry.certificate_fingerprint.exists && entry.key_fingerprint.exists) {
    written.push_back(std::move(entry));
  }
}

std::shared_ptr<const TlsIdentity> writtenIdentity(const std::string& certificate_file,
                                                   const std::string& key_file) {
  std::lock_guard lock(written_mutex);
  for (const auto& entry : written) {
    if (entry.certificate_file != certificate_file || entry.key_file != key_file) continue;
    if (fingerprintOf(certificate_file) != entry.certificate_fingerprint ||
        fingerprintOf(key_file) != entry.key_fingerprint) {
      return nullptr;
    }
    return entry.identity.lock();
  }
  return nullptr;
}

}  // namespace detail

core::Result<void> writePemFiles(const IssuedCertificate& certificate,
                                 const std::filesystem::path& cert_file,
                                 const std::filesystem::path& key_file) {
  // The key first: a watcher that sees the new certificate then finds its key already there.
  if (auto r = writeFileAtomically(key_file, certificate.private_key_pem, 0600); !r) return r;
  if (auto r = writeFileAtomically(cert_file, certificate.certificate_pem, 0644); !r) return r;
  // Only objects that encode to exactly the PEM written (a caller may have edited the PEM).
  if (const auto& parsed = certificate.parsed;
      parsed && parsed->certificate && parsed->certificate_pem == certificate.certificate_pem &&
      parsed->private_key_pem == certificate.private_key_pem) {
    detail::rememberWrittenIdentity(cert_file.string(), key_file.string(), parsed);
  }
  return {};
}

}  // namespace harness::net
