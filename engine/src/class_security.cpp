// engine/class_security.h with OpenSSL's libcrypto (the library Fast DDS verifies with): no
// `openssl` program needed, and every failure is an exception naming the file.
#include <engine/class_security.h>

#include "markup.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace sim::engine::security {

namespace fs = std::filesystem;

namespace {

template <class T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using Cert = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using Pkcs7 = std::unique_ptr<PKCS7, Deleter<PKCS7, PKCS7_free>>;

// The last OpenSSL error as text (the queue is cleared).
std::string sslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

[[noreturn]] void fail(const std::string& file, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {} ({})", file, what, sslError()));
}

// Opens PATH for writing with MODE, refusing to overwrite (O_EXCL): keys are created 0600.
std::FILE* createFile(const std::string& path, mode_t mode) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, mode);
  if (fd < 0) {
    throw std::runtime_error(fmt::format("{}: cannot create ({})", path,
                                         errno == EEXIST ? "it exists already" : "no permission?"));
  }
  std::FILE* f = ::fdopen(fd, "w");
  if (f == nullptr) {
    ::close(fd);
    throw std::runtime_error(path + ": cannot open for writing");
  }
  return f;
}

void writeText(const std::string& path, const std::string& text) {
  std::FILE* f = createFile(path, 0644);
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error(path + ": write failed");
}

std::string readText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Key newKey() {
  Key key(EVP_EC_gen("P-256"));
  if (!key) throw std::runtime_error("cannot generate an EC P-256 key: " + sslError());
  return key;
}

void writeKey(const std::string& path, EVP_PKEY* key) {
  std::FILE* f = createFile(path, 0600);
  const bool ok = PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  if (std::fclose(f) != 0 || !ok) fail(path, "cannot write the private key");
}

void writeCert(const std::string& path, X509* cert) {
  std::FILE* f = createFile(path, 0644);
  const bool ok = PEM_write_X509(f, cert) == 1;
  if (std::fclose(f) != 0 || !ok) fail(path, "cannot write the certificate");
}

// The first PEM object of PATH read by `read` (PEM_read_X509, PEM_read_PrivateKey), `what` it is.
template <class Owner, class Read>
Owner readPem(const std::string& path, const char* what, Read read) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr)
    throw std::runtime_error(fmt::format("{}: missing or unreadable ({})", path, what));
  Owner object(read(f, nullptr, nullptr, nullptr));
  std::fclose(f);
  if (!object) fail(path, fmt::format("not {}", what));
  return object;
}

Cert readCert(const std::string& path) {
  return readPem<Cert>(path, "a PEM certificate", PEM_read_X509);
}

Key readKey(const std::string& path) {
  return readPem<Key>(path, "a PEM private key", PEM_read_PrivateKey);
}

void addExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr || X509_add_ext(cert, ext, -1) != 1) {
    X509_EXTENSION_free(ext);
    throw std::runtime_error(fmt::format("certificate extension {}: {}", value, sslError()));
  }
  X509_EXTENSION_free(ext);
}

// A certificate for `key` with subject O=centre[, OU=unit], CN=cn, signed by issuer_key (self
// signed when issuer is null).
Cert makeCert(EVP_PKEY* key, const std::string& centre, const std::string& unit,
              const std::string& cn, int days, X509* issuer, EVP_PKEY* issuer_key) {
  Cert cert(X509_new());
  X509_set_version(cert.get(), 2);  // v3
  std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>> serial(BN_new());
  BN_rand(serial.get(), 63, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
  BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get()));
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // an hour of clock skew
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 86400L * days);
  X509_NAME* name = X509_get_subject_name(cert.get());
  auto add = [&](const char* field, const std::string& value) {
    X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1, 0);
  };
  add("O", centre);
  if (!unit.empty()) add("OU", unit);
  add("CN", cn);
  X509_set_issuer_name(cert.get(), issuer ? X509_get_subject_name(issuer) : name);
  X509_set_pubkey(cert.get(), key);
  X509* signer = issuer ? issuer : cert.get();
  addExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  if (issuer == nullptr) {
    addExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE");
    addExtension(cert.get(), signer, NID_key_usage,
                 "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    addExtension(cert.get(), signer, NID_authority_key_identifier, "keyid:always");
    addExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE");
    addExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature,keyAgreement");
  }
  // ECDSA with SHA-256: the algorithm Fast DDS's PKI-DH and Access-Permissions accept.
  if (X509_sign(cert.get(), issuer_key ? issuer_key : key, EVP_sha256()) == 0)
    throw std::runtime_error("cannot sign the certificate of " + cn + ": " + sslError());
  return cert;
}

// TEXT signed with the CA as detached S/MIME, as `openssl smime -sign -text` does (Fast DDS
// verifies with PKCS7_TEXT).
void writeSigned(const std::string& path, const std::string& text, X509* ca, EVP_PKEY* ca_key) {
  const int flags = PKCS7_DETACHED | PKCS7_TEXT | PKCS7_STREAM;
  Bio in(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
  Pkcs7 p7(PKCS7_sign(ca, ca_key, nullptr, in.get(), flags));
  if (!p7) fail(path, "cannot sign");
  std::FILE* f = createFile(path, 0644);
  Bio out(BIO_new_fp(f, BIO_CLOSE));
  if (SMIME_write_PKCS7(out.get(), p7.get(), in.get(), flags) != 1) fail(path, "cannot write");
}

// The subject as Fast DDS compares it with a grant's subject_name (RFC 2253).
std::string subjectOf(X509* cert) {
  Bio out(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(out.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  BUF_MEM* mem = nullptr;
  BIO_get_mem_ptr(out.get(), &mem);
  return std::string(mem->data, mem->length);
}

std::string field(X509* cert, int nid) {
  X509_NAME* name = X509_get_subject_name(cert);
  const int at = X509_NAME_get_index_by_NID(name, nid, -1);
  if (at < 0) return "";
  const ASN1_STRING* value = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, at));
  return std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(value)),
                     static_cast<std::size_t>(ASN1_STRING_length(value)));
}

// The class's topics are all "simtrainer/..." (engine/src/remote_bus.cpp); domains 0..232.
constexpr const char* kDomains =
    "<domains><id_range><min>0</min><max>232</max></id_range></domains>";

// Everything protected: no unauthenticated participant, join access control, discovery,
// liveliness and every message encrypted, read and write access checked against the permissions.
// Element order as the DDS Security schema (Fast DDS's parser insists on it).
std::string governanceXml() {
  return fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_governance.xsd">
  <domain_access_rules>
    <domain_rule>
      {}
      <allow_unauthenticated_participants>false</allow_unauthenticated_participants>
      <enable_join_access_control>true</enable_join_access_control>
      <discovery_protection_kind>ENCRYPT</discovery_protection_kind>
      <liveliness_protection_kind>ENCRYPT</liveliness_protection_kind>
      <rtps_protection_kind>ENCRYPT</rtps_protection_kind>
      <topic_access_rules>
        <topic_rule>
          <topic_expression>simtrainer/*</topic_expression>
          <enable_discovery_protection>true</enable_discovery_protection>
          <enable_liveliness_protection>true</enable_liveliness_protection>
          <enable_read_access_control>true</enable_read_access_control>
          <enable_write_access_control>true</enable_write_access_control>
          <metadata_protection_kind>ENCRYPT</metadata_protection_kind>
          <data_protection_kind>ENCRYPT</data_protection_kind>
        </topic_rule>
      </topic_access_rules>
    </domain_rule>
  </domain_access_rules>
</dds>
)",
                     kDomains);
}

std::string isoTime(const ASN1_TIME* t) {
  std::tm tm{};
  ASN1_TIME_to_tm(t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  return text;
}

std::string topicList(std::initializer_list<const char*> topics) {
  std::string out = "<topics>";
  for (const char* t : topics) out += fmt::format("<topic>simtrainer/{}</topic>", t);
  return out + "</topics>";
}

// What each role may do. Fast DDS checks an endpoint's partitions against every partition of the
// rule's publish (or subscribe) list, whatever the topic, so a role's writers share one list.
std::string permissionsXml(Role role, const std::string& name, X509* cert) {
  std::string publish, subscribe;
  const std::string any = "<partitions><partition>*</partition></partitions>";
  const std::string readers = topicList({"identity", "state", "event", "status"}) + any;
  switch (role) {
    case Role::Server:
      publish = topicList({"identity", "state", "event"}) + any;
      subscribe = topicList({"pult", "command"}) + any;
      break;
    case Role::Station:
      publish = topicList({"pult", "status"}) +
                fmt::format("<partitions><partition>*.station.{}</partition></partitions>", name);
      subscribe = readers;
      break;
    case Role::Instructor:
      publish =
          topicList({"command", "status"}) +
          fmt::format("<partitions><partition>*.instructor.{}</partition></partitions>", name);
      subscribe = readers;
      break;
  }
  return fmt::format(R"(<?xml version="1.0" encoding="UTF-8"?>
<dds xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
     xsi:noNamespaceSchemaLocation="http://www.omg.org/spec/DDS-SECURITY/20170901/omg_shared_ca_permissions.xsd">
  <permissions>
    <grant name="{role}-{name}">
      <subject_name>{subject}</subject_name>
      <validity><not_before>{from}</not_before><not_after>{to}</not_after></validity>
      <allow_rule>
        {domains}
        <publish>{publish}</publish>
        <subscribe>{subscribe}</subscribe>
      </allow_rule>
      <default>DENY</default>
    </grant>
  </permissions>
</dds>
)",
                     fmt::arg("role", roleName(role)), fmt::arg("name", name),
                     fmt::arg("subject", detail::escapeMarkup(subjectOf(cert))),
                     fmt::arg("from", isoTime(X509_get0_notBefore(cert))),
                     fmt::arg("to", isoTime(X509_get0_notAfter(cert))),
                     fmt::arg("domains", kDomains), fmt::arg("publish", publish),
                     fmt::arg("subscribe", subscribe));
}

bool validName(const std::string& name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

void copyFile(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::copy_file(from, to, ec))
    throw std::runtime_error(
        fmt::format("{}: cannot copy to {} ({})", from.string(), to.string(), ec.message()));
}

}  // namespace

const char* roleName(Role role) {
  switch (role) {
    case Role::Server: return "server";
    case Role::Station: return "station";
    case Role::Instructor: return "instructor";
  }
  return "?";
}

std::string writerPartition(const std::string& class_partition, Role role,
                            const std::string& name) {
  return fmt::format("{}.{}.{}", class_partition, roleName(role), name);
}

void initAuthority(const std::string& dir, const AuthorityOptions& options) {
  if (options.days < 1) throw std::runtime_error("--days: must be at least 1");
  if (options.centre.empty()) throw std::runtime_error("--centre: must not be empty");
  const fs::path d(dir);
  std::error_code ec;
  fs::create_directories(d, ec);
  if (!fs::is_directory(d)) throw std::runtime_error(dir + ": cannot create the directory");
  if (fs::exists(d / "ca.key"))
    throw std::runtime_error((d / "ca.key").string() +
                             ": exists already (one authority per directory; a new one would "
                             "invalidate every certificate it issued)");
  Key key = newKey();
  Cert ca = makeCert(key.get(), options.centre, "", options.centre + " CA", options.days, nullptr,
                     nullptr);
  writeKey((d / "ca.key").string(), key.get());
  writeCert((d / "ca.pem").string(), ca.get());
  const std::string governance = governanceXml();
  writeText((d / "governance.xml").string(), governance);
  writeSigned((d / "governance.p7s").string(), governance, ca.get(), key.get());
}

std::string issue(const std::string& dir, Role role, const std::string& name, int days) {
  if (!validName(name))
    throw std::runtime_error(
        fmt::format("--name \"{}\": expected 1 to 64 letters, digits, '_' or '-'", name));
  if (days < 1) throw std::runtime_error("--days: must be at least 1");
  const fs::path d(dir);
  const Cert ca = readCert((d / "ca.pem").string());
  const Key ca_key = readKey((d / "ca.key").string());
  if (X509_check_private_key(ca.get(), ca_key.get()) != 1)
    fail((d / "ca.key").string(), "not the key of " + (d / "ca.pem").string());
  if (!fs::exists(d / "governance.p7s"))
    throw std::runtime_error((d / "governance.p7s").string() +
                             ": missing (made by `simtrainer security init`)");
  const fs::path out = d / fmt::format("{}-{}", roleName(role), name);
  if (fs::exists(out)) throw std::runtime_error(out.string() + ": exists already (issued before)");
  // The participant's certificate expires with the CA at the latest.
  const std::time_t ca_end = [&] {
    std::tm tm{};
    ASN1_TIME_to_tm(X509_get0_notAfter(ca.get()), &tm);
    return timegm(&tm);
  }();
  const long max_days = static_cast<long>((ca_end - std::time(nullptr)) / 86400);
  if (max_days < 1) throw std::runtime_error((d / "ca.pem").string() + ": the CA has expired");
  if (days > max_days) days = static_cast<int>(max_days);
  fs::create_directories(out);
  Key key = newKey();
  Cert cert = makeCert(key.get(), field(ca.get(), NID_organizationName), roleName(role), name, days,
                       ca.get(), ca_key.get());
  writeKey((out / "identity.key").string(), key.get());
  writeCert((out / "identity.pem").string(), cert.get());
  const std::string permissions = permissionsXml(role, name, cert.get());
  writeText((out / "permissions.xml").string(), permissions);
  writeSigned((out / "permissions.p7s").string(), permissions, ca.get(), ca_key.get());
  copyFile(d / "ca.pem", out / "ca.pem");
  copyFile(d / "governance.p7s", out / "governance.p7s");
  return out.string();
}

void signDocument(const std::string& dir, const std::string& xml, const std::string& out) {
  const fs::path d(dir);
  const Cert ca = readCert((d / "ca.pem").string());
  const Key ca_key = readKey((d / "ca.key").string());
  writeSigned(out, readText(xml), ca.get(), ca_key.get());
}

Credentials loadCredentials(const std::string& dir) {
  const fs::path d = fs::absolute(dir);
  if (!fs::is_directory(d))
    throw std::runtime_error(
        dir +
        ": --security expects the folder `simtrainer security issue` made (ca.pem, "
        "identity.pem, identity.key, governance.p7s, permissions.p7s)");
  Credentials c;
  c.ca = (d / "ca.pem").string();
  c.certificate = (d / "identity.pem").string();
  c.key = (d / "identity.key").string();
  c.governance = (d / "governance.p7s").string();
  c.permissions = (d / "permissions.p7s").string();
  for (const std::string* file : {&c.ca, &c.certificate, &c.key, &c.governance, &c.permissions}) {
    if (::access(file->c_str(), R_OK) != 0)
      throw std::runtime_error(*file + ": missing or unreadable (made by `simtrainer security`)");
  }
  if (fs::exists(d / "crl.pem")) c.crl = (d / "crl.pem").string();
  const Cert ca = readCert(c.ca);
  const Cert cert = readCert(c.certificate);
  const Key key = readKey(c.key);
  if (X509_check_private_key(cert.get(), key.get()) != 1)
    fail(c.key, "not the key of " + c.certificate);
  Key ca_public(X509_get_pubkey(ca.get()));
  if (X509_verify(cert.get(), ca_public.get()) != 1)
    fail(c.certificate, "not signed by the authority in " + c.ca);
  const std::string unit = field(cert.get(), NID_organizationalUnitName);
  if (unit == "server") {
    c.role = Role::Server;
  } else if (unit == "station") {
    c.role = Role::Station;
  } else if (unit == "instructor") {
    c.role = Role::Instructor;
  } else {
    throw std::runtime_error(fmt::format(
        "{}: subject OU \"{}\": expected server, station or instructor", c.certificate, unit));
  }
  c.name = field(cert.get(), NID_commonName);
  if (!validName(c.name))
    throw std::runtime_error(
        fmt::format("{}: subject CN \"{}\": expected 1 to 64 letters, digits, '_' or '-'",
                    c.certificate, c.name));
  return c;
}

}  // namespace sim::engine::security
