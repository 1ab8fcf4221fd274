// The files of a secured class (docs/network.md, "A secured class"): one certificate authority
// per training centre, and per participant (server, station, instructor) a certificate, its key
// and the permissions of its role, all for DDS Security's builtin plugins (PKI-DH authentication,
// Access-Permissions, AES-GCM-GMAC) in Fast DDS. Made with OpenSSL's libcrypto: EC P-256 keys,
// ECDSA-SHA256 signatures, governance and permissions signed as S/MIME (PKCS#7, text mode).
#pragma once

#include <string>

namespace sim::engine::security {

enum class Role { Server, Station, Instructor };
const char* roleName(Role role);  ///< "server", "station", "instructor"

/// DIR of `security init`: the centre's authority.
struct AuthorityOptions {
  std::string centre = "simtrainer training centre";  ///< The CA's O (organisation) and CN.
  int days = 3650;                                    ///< The CA certificate's validity.
};

/// Creates DIR (if needed) with ca.pem (the CA certificate), ca.key (its private key, mode 0600),
/// governance.xml and governance.p7s (signed by the CA). Refuses (std::runtime_error naming the
/// file) when DIR/ca.key exists already: a second CA would orphan every certificate issued.
void initAuthority(const std::string& dir, const AuthorityOptions& options);

/// Issues a participant from the authority in DIR: the folder DIR/ROLE-NAME with identity.pem
/// (subject O=centre, OU=ROLE, CN=NAME), identity.key (0600), permissions.xml and
/// permissions.p7s (signed), and copies of ca.pem and governance.p7s, so that the folder alone is
/// what the participant's machine needs (`--security DIR/ROLE-NAME`; never the CA key).
/// NAME: 1..64 of [A-Za-z0-9_-]. Returns the folder. Refuses when it exists.
std::string issue(const std::string& dir, Role role, const std::string& name, int days = 365);

/// Signs the XML file `xml` (a governance or permissions document, e.g. governance.xml edited by
/// hand) with the authority in DIR as S/MIME into `out`, which must not exist.
void signDocument(const std::string& dir, const std::string& xml, const std::string& out);

/// A participant's folder (`--security DIR`), checked: every file present, the certificate
/// readable and signed by the folder's CA, its OU a role and its CN a valid name.
struct Credentials {
  std::string ca, certificate, key, governance, permissions;  ///< Absolute paths.
  std::string crl;  ///< DIR/crl.pem when present (revoked certificates), else empty.
  Role role = Role::Station;
  std::string name;
};
/// Throws std::runtime_error naming the file and what was expected.
Credentials loadCredentials(const std::string& dir);

/// The DDS partition a station or instructor writes in (its pult or commands, and its status):
/// "CLASS.station.NAME" / "CLASS.instructor.NAME". The permissions confine each participant's
/// writers to its own, so the server knows who wrote a sample from the partition of its writer.
std::string writerPartition(const std::string& class_partition, Role role, const std::string& name);

}  // namespace sim::engine::security
