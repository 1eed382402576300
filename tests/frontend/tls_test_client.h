#pragma once
// TestClient over TLS (OpenSSL): the server's certificate is checked against
// a CA file and the name 127.0.0.1; a client certificate is sent when given.
// Also MakeTestPki: a CA, and a server and a client certificate it signed,
// made with the openssl command in a directory.

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cstdlib>
#include <string>

#include "tests/frontend/http_test_client.h"

namespace llmserve::frontend::testing {

class TlsTestClient : public TestClient {
 public:
  ~TlsTestClient() override {
    if (ssl_) SSL_free(ssl_);
    if (ctx_) SSL_CTX_free(ctx_);
  }

  // The TLS handshake over the socket Connect() opened; false (see error())
  // when it fails.
  bool Handshake(const std::string& ca_file, const std::string& cert_file = "", const std::string& key_file = "") {
    ctx_ = SSL_CTX_new(TLS_client_method());
    if (!ctx_ || SSL_CTX_load_verify_locations(ctx_, ca_file.c_str(), nullptr) != 1) return Fail("CA file");
    SSL_CTX_set_verify(ctx_, SSL_VERIFY_PEER, nullptr);
    if (!cert_file.empty() && (SSL_CTX_use_certificate_chain_file(ctx_, cert_file.c_str()) != 1 ||
                               SSL_CTX_use_PrivateKey_file(ctx_, key_file.c_str(), SSL_FILETYPE_PEM) != 1)) {
      return Fail("client certificate");
    }
    ssl_ = SSL_new(ctx_);
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), "127.0.0.1");
    SSL_set_fd(ssl_, fd_);
    if (SSL_connect(ssl_) != 1) return Fail("handshake");
    return true;
  }

  const std::string& error() const { return error_; }

 protected:
  ssize_t WriteSome(const char* data, size_t n) override {
    int r = SSL_write(ssl_, data, static_cast<int>(n));
    return r > 0 ? r : -1;
  }
  ssize_t ReadSome(char* data, size_t n) override {
    int r = SSL_read(ssl_, data, static_cast<int>(n));
    return r > 0 ? r : 0;
  }
  bool InputBuffered() const override { return SSL_pending(ssl_) > 0; }

 private:
  bool Fail(const char* what) {
    char text[256] = "";
    ERR_error_string_n(ERR_get_error(), text, sizeof(text));
    error_ = std::string(what) + ": " + text;
    return false;
  }

  SSL_CTX* ctx_ = nullptr;
  SSL* ssl_ = nullptr;
  std::string error_;
};

// Writes DIR/ca.pem (+ ca.key), DIR/server.pem + server.key (for 127.0.0.1)
// and DIR/client.pem + client.key, the two signed by the CA, and
// DIR/other-ca.pem (a CA that signed neither). False if openssl failed.
inline bool MakeTestPki(const std::string& dir) {
  const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
  const std::string cmd =
      "cd '" + dir + "' && (printf 'subjectAltName=IP:127.0.0.1\\n' > san.ext"
      " && openssl req -x509" + ec + "-keyout ca.key -out ca.pem -days 2 -subj /CN=llmserve-test-ca"
      " && openssl req -x509" + ec + "-keyout other-ca.key -out other-ca.pem -days 2 -subj /CN=other-ca"
      " && openssl req" + ec + "-keyout server.key -out server.csr -subj /CN=127.0.0.1"
      " && openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2"
      "    -extfile san.ext -out server.pem"
      " && openssl req" + ec + "-keyout client.key -out client.csr -subj /CN=test-client"
      " && openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 -out client.pem"
      ") >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

}  // namespace llmserve::frontend::testing
