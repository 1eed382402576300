#pragma once
// The TLS server context of the HTTP server, from vLLM's --ssl-* options
// (uvicorn's meaning): a PEM certificate chain, its private key (or the key
// inside the certificate file), and optionally client certificates checked
// against a CA bundle.

#include <memory>
#include <string>

#include "base/status_or.h"

namespace boost::asio::ssl {
class context;
}

namespace llmserve::frontend::http {

struct TlsOptions {
  std::string certfile;  // --ssl-certfile: PEM certificate chain; empty = plain HTTP
  std::string keyfile;   // --ssl-keyfile: PEM private key; empty = the key is in certfile
  std::string ca_certs;  // --ssl-ca-certs: PEM CA bundle client certificates are checked against
  // --ssl-cert-reqs, Python's ssl.VerifyMode: 0 CERT_NONE (no client
  // certificate asked for), 1 CERT_OPTIONAL (checked when sent), 2 CERT_REQUIRED.
  int cert_reqs = 0;

  bool enabled() const { return !certfile.empty() || !keyfile.empty(); }
};

// A TLS 1.2+ server context (shared: its deleter lives where it is made, so
// users need not include Asio SSL); InvalidArgument naming the option and the file
// when a file cannot be read or the options do not fit together.
StatusOr<std::shared_ptr<boost::asio::ssl::context>> MakeTlsContext(const TlsOptions& options);

}  // namespace llmserve::frontend::http
