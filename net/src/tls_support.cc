#include "tls_support.h"

#include "tls_identity.h"

#include "harness/core/recent_cache.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <arpa/inet.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <memory>
#include <utility>
#include <vector>

namespace harness::net::detail {

namespace ssl = boost::asio::ssl;

FileFingerprint fingerprintOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  FileFingerprint fp;
  fp.exists = true;
  fp.device = st.st_dev;
  fp.inode = st.st_ino;
  fp.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  fp.size = st.st_size;
  return fp;
}

std::string takeOpenSslErrors() {
  std::string out;
  while (unsigned long code = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(code, buf, sizeof buf);
    if (!out.empty()) out += "; ";
    const char* reason = ERR_reason_error_string(code);
    out += reason ? reason : buf;
  }
  return out.empty() ? "unknown TLS error" : out;
}

namespace {

// Server contexts made from identities this process wrote (writtenIdentity), for servers that
// load the same certificate and key with the same settings and no client CA: the simulator
// starts stub webhooks with the same certificate in scenario after scenario, and OpenSSL 3
// spends over a million instructions on a new SSL_CTX (issue 19). Nothing changes a context
// once made; a reload with other files makes another one.
struct SharedServerContext {
  std::weak_ptr<const TlsIdentity> identity;  // the key's pointer, while it is alive
  std::shared_ptr<ssl::context> context;
};
using ServerContextKey = std::pair<const TlsIdentity*, bool>;  // identity, TLS 1.3 only

core::RecentCache<ServerContextKey, SharedServerContext>& sharedServerContexts() {
  static core::RecentCache<ServerContextKey, SharedServerContext> contexts(32);
  return contexts;
}

// The shared context kept for `identity`, or null. The identity's address is the key; an entry
// whose identity died (and whose address a new one may now have) is no match.
std::shared_ptr<ssl::context> findSharedContext(const std::shared_ptr<const TlsIdentity>& identity,
                                                bool tls13_only) {
  auto shared = sharedServerContexts().find({identity.get(), tls13_only});
  if (shared && shared->identity.lock() == identity) return shared->context;
  return nullptr;
}

void keepSharedContext(const std::shared_ptr<const TlsIdentity>& identity, bool tls13_only,
                       std::shared_ptr<ssl::context> context) {
  // Contexts of identities that died since go first: their certificates are of no further use.
  sharedServerContexts().eraseIf(
      [](const SharedServerContext& shared) { return shared.identity.expired(); });
  sharedServerContexts().insert({identity.get(), tls13_only}, {identity, std::move(context)});
}

std::atomic<std::uint64_t> server_contexts_made{0};

// A server context with the settings every server of this library has, and no certificate yet.
std::shared_ptr<ssl::context> newServerContext(bool tls13_only) {
  ++server_contexts_made;
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
  ERR_clear_error();
  SSL_CTX* native = ctx->native_handle();
  SSL_CTX_set_min_proto_version(native, tls13_only ? TLS1_3_VERSION : TLS1_2_VERSION);
  SSL_CTX_set_options(native, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
                                  SSL_OP_CIPHER_SERVER_PREFERENCE);
  // A Go server picks by this order for a client that lists AES-GCM first, as OpenSSL's and Go's
  // do on AES hardware (handshake_server_tls13.go; ChaCha20 first for one that does not).
  SSL_CTX_set_ciphersuites(native, kGoTls13CipherSuites);
  // An idle connection gives back its record buffers (about 34 KiB each) instead of keeping
  // them until it closes.
  SSL_CTX_set_mode(native, SSL_MODE_RELEASE_BUFFERS);
  // No session resumption: kube-apiserver's webhook client never resumes (client-go
  // transport/transport.go TLSConfigFor sets no ClientSessionCache), so each of the two TLS 1.3
  // tickets OpenSSL sends after a handshake by default, and each session kept in its server-side
  // cache, was work for nothing on every new connection (the client parsed the tickets too).
  SSL_CTX_set_num_tickets(native, 0);
  SSL_CTX_set_options(native, SSL_OP_NO_TICKET);
  SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_OFF);
  // HTTP/1.1 only (the webhook client never negotiates h2).
  return ctx;
}

// Puts `identity`'s certificate and key in `native` (each takes its own reference).
bool useIdentity(SSL_CTX* native, const TlsIdentity& identity) {
  return SSL_CTX_use_certificate(native, identity.certificate.get()) == 1 &&
         SSL_CTX_use_PrivateKey(native, identity.key.get()) == 1;
}

}  // namespace

void prepareServerContext(const std::shared_ptr<const TlsIdentity>& identity, bool tls13_only) {
  if (!identity || !identity->certificate || !identity->key) return;
  if (findSharedContext(identity, tls13_only)) return;
  auto ctx = newServerContext(tls13_only);
  // A certificate that does not fit is left to the server's start, which says why.
  if (!useIdentity(ctx->native_handle(), *identity) ||
      SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    ERR_clear_error();
    return;
  }
  keepSharedContext(identity, tls13_only, std::move(ctx));
}

core::Result<std::shared_ptr<ssl::context>> makeServerContext(const TlsServerConfig& config) {
  // Files this process wrote from objects it still has: those objects, not the PEM decoded again.
  const std::shared_ptr<const TlsIdentity> identity =
      writtenIdentity(config.certificate_file, config.private_key_file);
  const bool shareable = identity && !config.client_ca_file;
  if (shareable) {
    if (auto shared = findSharedContext(identity, config.tls13_only)) return shared;
  }
  auto ctx = newServerContext(config.tls13_only);
  SSL_CTX* native = ctx->native_handle();
  if (identity) {
    if (!useIdentity(native, *identity)) {
      return core::makeError("tls: cannot use the certificate " + config.certificate_file + ": " +
                             takeOpenSslErrors());
    }
  } else if (SSL_CTX_use_certificate_chain_file(native, config.certificate_file.c_str()) != 1) {
    return core::makeError("tls: cannot load certificate " + config.certificate_file + ": " +
                           takeOpenSslErrors());
  }
  if (!identity &&
      SSL_CTX_use_PrivateKey_file(native, config.private_key_file.c_str(), SSL_FILETYPE_PEM) !=
          1) {
    return core::makeError("tls: cannot load private key " + config.private_key_file + ": " +
                           takeOpenSslErrors());
  }
  if (SSL_CTX_check_private_key(native) != 1) {
    return core::makeError("tls: private key " + config.private_key_file +
                           " does not match certificate " + config.certificate_file);
  }
  if (config.client_ca_file) {
    if (SSL_CTX_load_verify_locations(native, config.client_ca_file->c_str(), nullptr) != 1) {
      return core::makeError("tls: cannot load client CA " + *config.client_ca_file + ": " +
                             takeOpenSslErrors());
    }
    int mode = SSL_VERIFY_PEER;
    if (config.require_client_certificate) mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
    SSL_CTX_set_verify(native, mode, nullptr);
    // Offer the CA names so clients pick the right certificate.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.client_ca_file->c_str())) {
      SSL_CTX_set_client_CA_list(native, names);
    }
  }
  if (shareable) keepSharedContext(identity, config.tls13_only, ctx);
  return ctx;
}

namespace {

std::vector<std::string> subjectAltNames(X509* cert, int type) {
  std::vector<std::string> out;
  auto* names =
      static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  if (!names) return out;
  for (int i = 0; i < sk_GENERAL_NAME_num(names); ++i) {
    const GENERAL_NAME* name = sk_GENERAL_NAME_value(names, i);
    if (name->type != type) continue;
    if (type == GEN_DNS) {
      const auto* s = name->d.dNSName;
      out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)),
                       static_cast<size_t>(ASN1_STRING_length(s)));
    } else if (type == GEN_IPADD) {
      const auto* s = name->d.iPAddress;
      const unsigned char* p = ASN1_STRING_get0_data(s);
      char buf[64] = {0};
      if (ASN1_STRING_length(s) == 4) {
        std::snprintf(buf, sizeof buf, "%u.%u.%u.%u", p[0], p[1], p[2], p[3]);
        out.emplace_back(buf);
      } else if (ASN1_STRING_length(s) == 16) {
        // Go prints IPv6 in its canonical compressed form; inet_ntop does the same.
        char text[64];
        if (inet_ntop(AF_INET6, p, text, sizeof text)) out.emplace_back(text);
      }
    }
  }
  GENERAL_NAMES_free(names);
  return out;
}

std::string goTime(const ASN1_TIME* t) {
  struct tm tm {};
  if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return "?";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string joinComma(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

}  // namespace

std::string describeVerifyFailure(long verify_result, X509* leaf, const std::string& host,
                                  bool host_is_ip) {
  switch (verify_result) {
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH: {
      // crypto/x509 verify.go HostnameError.Error().
      if (!leaf) return "x509: certificate is not valid for " + host;
      std::string valid;
      if (host_is_ip) {
        auto ips = subjectAltNames(leaf, GEN_IPADD);
        if (ips.empty()) {
          return "x509: cannot validate certificate for " + host +
                 " because it doesn't contain any IP SANs";
        }
        valid = joinComma(ips);
      } else {
        auto dns = subjectAltNames(leaf, GEN_DNS);
        if (dns.empty() && subjectAltNames(leaf, GEN_IPADD).empty()) {
          return "x509: certificate relies on legacy Common Name field, use SANs instead";
        }
        valid = joinComma(dns);
      }
      if (valid.empty()) {
        return "x509: certificate is not valid for any names, but wanted to match " + host;
      }
      return "x509: certificate is valid for " + valid + ", not " + host;
    }
    case X509_V_ERR_CERT_HAS_EXPIRED:
    case X509_V_ERR_CERT_NOT_YET_VALID: {
      std::time_t now = std::time(nullptr);
      struct tm tm {};
      gmtime_r(&now, &tm);
      char buf[64];
      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
      const bool expired = verify_result == X509_V_ERR_CERT_HAS_EXPIRED;
      return std::string("x509: certificate has expired or is not yet valid: current time ") +
             buf + (expired ? " is after " + goTime(leaf ? X509_get0_notAfter(leaf) : nullptr)
                            : " is before " + goTime(leaf ? X509_get0_notBefore(leaf) : nullptr));
    }
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
      return "x509: certificate signed by unknown authority";
    default:
      return std::string("x509: ") + X509_verify_cert_error_string(verify_result);
  }
}

}  // namespace harness::net::detail

namespace harness::net {

void prepareServerTls(const IssuedCertificate& certificate, bool tls13_only) {
  detail::prepareServerContext(certificate.parsed, tls13_only);
}

std::uint64_t serverTlsContextsMade() { return detail::server_contexts_made.load(); }

}  // namespace harness::net
