// In-process certificates: issued by a CA, served by net::Server over real TLS on 127.0.0.1,
// verified by net::HttpClient with Go's error texts; bad CA material; the PEM files.

#include "harness/net/certificates.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdint>
#include <memory>

#include "harness/net/client.h"
#include "harness/net/server.h"
#include "harness/testing/support.h"
#include "../src/tls_identity.h"

namespace harness::net {
namespace {

using namespace std::chrono_literals;
using harness::testing::readFile;
using harness::testing::ScratchDir;

struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};

std::unique_ptr<X509, X509Free> parsePem(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return std::unique_ptr<X509, X509Free>(cert);
}

CertificateAuthority makeCa(std::string_view name = "test-ca") {
  auto ca = CertificateAuthority::create(name);
  EXPECT_TRUE(ca.ok()) << ca.error().message;
  return ca.ok() ? *ca : CertificateAuthority{};
}

class ServedCertificateTest : public ::testing::Test {
 protected:
  // Serves `certificate` on 127.0.0.1:0.
  void serve(const IssuedCertificate& certificate) {
    auto written = writePemFiles(certificate, dir_ / "tls.crt", dir_ / "tls.key");
    ASSERT_TRUE(written.ok()) << written.error().message;
    Router router;
    router.fallback([](const Request&) { return Response::text(200, "hello"); });
    ServerOptions options;
    options.tls = TlsServerConfig{(dir_ / "tls.crt").string(), (dir_ / "tls.key").string()};
    options.tls->reload_check_interval = 0ms;
    server_ = std::make_unique<Server>(options, std::move(router));
    auto started = server_->start();
    ASSERT_TRUE(started.ok()) << started.error().message;
  }

  ClientResponse get(const std::string& ca_pem, const std::string& host = "127.0.0.1") {
    ClientOptions options;
    options.ca_pem = ca_pem;
    HttpClient client(options);
    ClientRequest request;
    request.method = "POST";
    request.url = "https://" + host + ":" + std::to_string(server_->port()) + "/";
    request.connect_to = "127.0.0.1:" + std::to_string(server_->port());
    request.deadline = std::chrono::steady_clock::now() + 10s;
    url_ = request.url;
    return client.sendSync(std::move(request));
  }

  ScratchDir dir_{"certificates"};
  std::unique_ptr<Server> server_;
  std::string url_;
};

TEST_F(ServedCertificateTest, ClientTrustingTheCaConnectsByIp) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "webhook", {"127.0.0.1", "localhost"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  serve(*leaf);
  auto res = get(ca.certificate_pem);
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.body, "hello");
}

// A server's TLS context made ahead (prepareServerTls) is the one its start uses: the start makes
// none, and the server serves with it. Without it, the start makes one.
TEST_F(ServedCertificateTest, APreparedContextIsTheOneTheServerStartsWith) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "webhook", {"127.0.0.1", "localhost"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  prepareServerTls(*leaf);
  const std::uint64_t prepared = serverTlsContextsMade();
  prepareServerTls(*leaf);  // made once
  EXPECT_EQ(serverTlsContextsMade(), prepared);
  serve(*leaf);
  EXPECT_EQ(serverTlsContextsMade(), prepared);
  auto res = get(ca.certificate_pem);
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.body, "hello");

  auto other = issueCertificate(ca, "webhook", {"127.0.0.1", "localhost"});
  ASSERT_TRUE(other.ok()) << other.error().message;
  serve(*other);
  EXPECT_EQ(serverTlsContextsMade(), prepared + 1);
  // TLS 1.3 only is another context.
  prepareServerTls(*other, /*tls13_only=*/true);
  EXPECT_EQ(serverTlsContextsMade(), prepared + 2);
}

TEST_F(ServedCertificateTest, ClientTrustingTheCaConnectsByDnsName) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "webhook", {"127.0.0.1", "webhook.ns.svc"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  serve(*leaf);
  auto res = get(ca.certificate_pem, "webhook.ns.svc");
  ASSERT_TRUE(res.ok()) << res.error_message;
}

TEST_F(ServedCertificateTest, ClientTrustingAnotherCaGetsUnknownAuthority) {
  const auto ca = makeCa();
  const auto other = makeCa("other-ca");
  auto leaf = issueCertificate(ca, "webhook", {"127.0.0.1"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  serve(*leaf);
  auto res = get(other.certificate_pem);
  EXPECT_EQ(res.error, ClientErrorKind::kTls);
  EXPECT_EQ(res.error_message, "Post \"" + url_ +
                                   "\": tls: failed to verify certificate: x509: certificate "
                                   "signed by unknown authority");
}

TEST_F(ServedCertificateTest, SelfSignedCertificateIsAnUnknownAuthority) {
  const auto ca = makeCa();
  auto leaf = selfSignedCertificate("webhook", {"127.0.0.1"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  serve(*leaf);
  auto res = get(ca.certificate_pem);
  EXPECT_EQ(res.error, ClientErrorKind::kTls);
  EXPECT_EQ(res.error_message, "Post \"" + url_ +
                                   "\": tls: failed to verify certificate: x509: certificate "
                                   "signed by unknown authority");
}

TEST_F(ServedCertificateTest, WrongHostNameNamesTheValidNames) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "webhook", {"127.0.0.1", "a.ns.svc", "b.ns.svc"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  serve(*leaf);
  auto res = get(ca.certificate_pem, "c.ns.svc");
  EXPECT_EQ(res.error, ClientErrorKind::kTls);
  EXPECT_EQ(res.error_message, "Post \"" + url_ +
                                   "\": tls: failed to verify certificate: x509: certificate is "
                                   "valid for a.ns.svc, b.ns.svc, not c.ns.svc");
}

TEST_F(ServedCertificateTest, WrongIpAddressNamesTheValidAddresses) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "webhook", {"192.0.2.1", "localhost"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  serve(*leaf);
  auto res = get(ca.certificate_pem);
  EXPECT_EQ(res.error_message, "Post \"" + url_ +
                                   "\": tls: failed to verify certificate: x509: certificate is "
                                   "valid for 192.0.2.1, not 127.0.0.1");
}

TEST(IssueCertificate, SortsSansIntoIpAndDnsEntries) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "webhook", {"10.0.0.1", "::1", "1.2.3.4.example.com"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  auto cert = parsePem(leaf->certificate_pem);
  ASSERT_TRUE(cert);
  auto* names = static_cast<GENERAL_NAMES*>(
      X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr));
  ASSERT_NE(names, nullptr);
  ASSERT_EQ(sk_GENERAL_NAME_num(names), 3);
  EXPECT_EQ(sk_GENERAL_NAME_value(names, 0)->type, GEN_IPADD);
  EXPECT_EQ(sk_GENERAL_NAME_value(names, 1)->type, GEN_IPADD);
  EXPECT_EQ(sk_GENERAL_NAME_value(names, 2)->type, GEN_DNS);
  GENERAL_NAMES_free(names);
}

TEST(IssueCertificate, CarriesServerAndClientAuthAndIsNotACa) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "webhook", {"localhost"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  auto cert = parsePem(leaf->certificate_pem);
  ASSERT_TRUE(cert);
  EXPECT_TRUE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_SERVER);
  EXPECT_TRUE(X509_get_extended_key_usage(cert.get()) & XKU_SSL_CLIENT);
  EXPECT_EQ(X509_check_ca(cert.get()), 0);
  auto ca_cert = parsePem(ca.certificate_pem);
  ASSERT_TRUE(ca_cert);
  EXPECT_NE(X509_check_ca(ca_cert.get()), 0);
  EXPECT_EQ(X509_check_issued(ca_cert.get(), cert.get()), X509_V_OK);
}

TEST(IssueCertificate, OrganizationsBecomeSubjectOEntries) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "admin", {}, std::chrono::hours(24),
                               {"system:masters", "team:a"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  auto cert = parsePem(leaf->certificate_pem);
  ASSERT_TRUE(cert);
  char subject[256];
  X509_NAME_oneline(X509_get_subject_name(cert.get()), subject, sizeof subject);
  EXPECT_STREQ(subject, "/O=system:masters/O=team:a/CN=admin");
  EXPECT_FALSE(issueCertificate(ca, "admin", {}, std::chrono::hours(24), {""}).ok());
}

TEST(GenerateKeyPair, IsAFreshEcKeyAndItsPublicKey) {
  auto first = generateKeyPair();
  auto second = generateKeyPair();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->private_key_pem.rfind("-----BEGIN PRIVATE KEY-----", 0), 0u);
  EXPECT_EQ(first->public_key_pem.rfind("-----BEGIN PUBLIC KEY-----", 0), 0u);
  EXPECT_NE(first->private_key_pem, second->private_key_pem);
  using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
  auto read = [](const std::string& pem, auto reader) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(
        BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
    return KeyPtr(reader(bio.get(), nullptr, nullptr, nullptr), EVP_PKEY_free);
  };
  KeyPtr key = read(first->private_key_pem, PEM_read_bio_PrivateKey);
  ASSERT_TRUE(key);
  EXPECT_EQ(EVP_PKEY_get_base_id(key.get()), EVP_PKEY_EC);
  KeyPtr public_key = read(first->public_key_pem, PEM_read_bio_PUBKEY);
  ASSERT_TRUE(public_key);
  EXPECT_EQ(EVP_PKEY_eq(key.get(), public_key.get()), 1);  // the pair matches
}

TEST(IssueCertificate, RejectsACaWhosePemDoesNotParse) {
  CertificateAuthority broken{"not a certificate", "not a key"};
  auto leaf = issueCertificate(broken, "webhook", {"localhost"});
  ASSERT_FALSE(leaf.ok());
  EXPECT_TRUE(leaf.error().message.starts_with("CA certificate: cannot parse PEM"))
      << leaf.error().message;
}

TEST(IssueCertificate, RejectsACaKeyThatDoesNotMatch) {
  auto ca = makeCa();
  ca.private_key_pem = makeCa("other").private_key_pem;
  auto leaf = issueCertificate(ca, "webhook", {"localhost"});
  ASSERT_FALSE(leaf.ok());
  EXPECT_EQ(leaf.error().message, "CA private key does not match the CA certificate");
}

TEST(IssueCertificate, RejectsALeafUsedAsCa) {
  const auto ca = makeCa();
  auto leaf = issueCertificate(ca, "webhook", {"localhost"});
  ASSERT_TRUE(leaf.ok());
  auto grandchild = issueCertificate(
      CertificateAuthority{leaf->certificate_pem, leaf->private_key_pem}, "x", {"localhost"});
  ASSERT_FALSE(grandchild.ok());
  EXPECT_EQ(grandchild.error().message,
            "CA certificate is not a certificate authority (no CA:TRUE)");
}

TEST(IssueCertificate, RejectsAnEmptySan) {
  auto leaf = issueCertificate(makeCa(), "webhook", {"localhost", ""});
  ASSERT_FALSE(leaf.ok());
  EXPECT_EQ(leaf.error().message, "sans[1]: empty name");
}

TEST(IssueCertificate, RejectsANonAsciiDnsName) {
  auto leaf = issueCertificate(makeCa(), "webhook", {"caf\xc3\xa9.example"});
  ASSERT_FALSE(leaf.ok());
  EXPECT_EQ(leaf.error().message,
            "sans[0]: x509: \"caf\xc3\xa9.example\" cannot be encoded as an IA5String");
}

TEST(IssueCertificate, RejectsANonPositiveValidity) {
  auto leaf = issueCertificate(makeCa(), "webhook", {"localhost"}, std::chrono::hours(0));
  ASSERT_FALSE(leaf.ok());
  EXPECT_EQ(leaf.error().message, "certificate validity must be positive, got 0h");
}

TEST(WritePemFiles, WritesTheKeyOwnerOnlyAndTheCertificateWorldReadable) {
  ScratchDir dir{"pem"};
  auto leaf = issueCertificate(makeCa(), "webhook", {"localhost"});
  ASSERT_TRUE(leaf.ok());
  auto written = writePemFiles(*leaf, dir / "sub/tls.crt", dir / "sub/tls.key");
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(readFile(dir / "sub/tls.crt"), leaf->certificate_pem);
  EXPECT_EQ(readFile(dir / "sub/tls.key"), leaf->private_key_pem);
  struct stat key_stat {};
  struct stat cert_stat {};
  ASSERT_EQ(::stat((dir / "sub/tls.key").c_str(), &key_stat), 0);
  ASSERT_EQ(::stat((dir / "sub/tls.crt").c_str(), &cert_stat), 0);
  EXPECT_EQ(key_stat.st_mode & 0777, 0600u);
  EXPECT_EQ(cert_stat.st_mode & 0777, 0644u);
  // Nothing but the two files is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir / "sub"),
                          std::filesystem::directory_iterator()),
            2);
}

std::string issuerCommonName(const std::string& certificate_pem) {
  auto cert = parsePem(certificate_pem);
  if (!cert) return "";
  char name[256] = {0};
  X509_NAME_get_text_by_NID(X509_get_issuer_name(cert.get()), NID_commonName, name, sizeof name);
  return name;
}

TEST(CertificateAuthority, SignsWithTheParsedCaOnlyWhileItsPemIsUnchanged) {
  const CertificateAuthority one = makeCa("one");
  const CertificateAuthority two = makeCa("two");
  ASSERT_TRUE(one.parsed);
  auto leaf = issueCertificate(one, "webhook", {"localhost"});
  ASSERT_TRUE(leaf.ok()) << leaf.error().message;
  EXPECT_EQ(issuerCommonName(leaf->certificate_pem), "one");
  // A copy whose PEM was replaced still carries the first CA's objects: the PEM wins.
  CertificateAuthority replaced = one;
  replaced.certificate_pem = two.certificate_pem;
  replaced.private_key_pem = two.private_key_pem;
  auto other = issueCertificate(replaced, "webhook", {"localhost"});
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(issuerCommonName(other->certificate_pem), "two");
}

TEST(CertificateAuthority, SharedLeafKeyIsOneKeyForEveryLeafItIssues) {
  auto shared = CertificateAuthority::create("shared", std::chrono::hours(24),
                                             CertificateAuthority::LeafKeys::kShared);
  ASSERT_TRUE(shared.ok()) << shared.error().message;
  auto a = issueCertificate(*shared, "a", {"localhost"});
  auto b = issueCertificate(*shared, "b", {"localhost"});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->private_key_pem, b->private_key_pem);
  EXPECT_NE(a->certificate_pem, b->certificate_pem);
  const CertificateAuthority fresh = makeCa("fresh");
  auto c = issueCertificate(fresh, "c", {"localhost"});
  auto d = issueCertificate(fresh, "d", {"localhost"});
  ASSERT_TRUE(c.ok() && d.ok());
  EXPECT_NE(c->private_key_pem, d->private_key_pem);
}

TEST(WritePemFiles, RemembersTheObjectsUntilTheFilesChange) {
  ScratchDir dir{"pem-remembered"};
  auto leaf = issueCertificate(makeCa(), "webhook", {"localhost"});
  ASSERT_TRUE(leaf.ok());
  const std::string cert = (dir / "tls.crt").string();
  const std::string key = (dir / "tls.key").string();
  ASSERT_TRUE(writePemFiles(*leaf, cert, key).ok());
  EXPECT_EQ(detail::writtenIdentity(cert, key), leaf->parsed);
  EXPECT_EQ(detail::writtenIdentity(cert, (dir / "other.key").string()), nullptr);
  // Another key written over the file: the server must decode the files again.
  auto other = issueCertificate(makeCa(), "webhook", {"localhost"});
  ASSERT_TRUE(other.ok());
  ASSERT_TRUE(writeFileAtomically(key, other->private_key_pem, 0600).ok());
  EXPECT_EQ(detail::writtenIdentity(cert, key), nullptr);
  // Objects that no longer exist are not kept alive by the table.
  ASSERT_TRUE(writePemFiles(*other, cert, key).ok());
  std::weak_ptr<const TlsIdentity> weak = other->parsed;
  other->parsed.reset();
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(detail::writtenIdentity(cert, key), nullptr);
}

TEST(WritePemFiles, ReportsAnUnwritableLocation) {
  ScratchDir dir{"pem"};
  harness::testing::writeFile(dir / "file", "x");
  auto leaf = issueCertificate(makeCa(), "webhook", {"localhost"});
  ASSERT_TRUE(leaf.ok());
  auto written = writePemFiles(*leaf, dir / "file/tls.crt", dir / "file/tls.key");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find((dir / "file").string()), std::string::npos)
      << written.error().message;
}

}  // namespace
}  // namespace harness::net
