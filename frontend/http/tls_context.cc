#include "frontend/http/tls_context.h"

#include <boost/asio/ssl/context.hpp>

namespace llmserve::frontend::http {

namespace ssl = boost::asio::ssl;

StatusOr<std::shared_ptr<ssl::context>> MakeTlsContext(const TlsOptions& options) {
  if (options.certfile.empty()) {
    return Status::InvalidArgument("--ssl-keyfile needs --ssl-certfile (the certificate the key belongs to)");
  }
  if (options.cert_reqs < 0 || options.cert_reqs > 2) {
    return Status::InvalidArgument("--ssl-cert-reqs must be 0 (CERT_NONE), 1 (CERT_OPTIONAL) or 2 (CERT_REQUIRED), got " +
                                   std::to_string(options.cert_reqs));
  }
  if (options.cert_reqs > 0 && options.ca_certs.empty()) {
    return Status::InvalidArgument("--ssl-cert-reqs " + std::to_string(options.cert_reqs) +
                                   " checks client certificates: give the CA bundle with --ssl-ca-certs");
  }
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                       ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
  boost::system::error_code ec;
  auto failed = [&](const char* flag, const std::string& path) {
    return Status::InvalidArgument(std::string(flag) + " '" + path + "': " + ec.message());
  };
  context->use_certificate_chain_file(options.certfile, ec);
  if (ec) return failed("--ssl-certfile", options.certfile);
  const std::string& key = options.keyfile.empty() ? options.certfile : options.keyfile;
  context->use_private_key_file(key, ssl::context::pem, ec);
  if (ec) return failed(options.keyfile.empty() ? "--ssl-certfile (no --ssl-keyfile, so its key)" : "--ssl-keyfile", key);
  if (!options.ca_certs.empty()) {
    context->load_verify_file(options.ca_certs, ec);
    if (ec) return failed("--ssl-ca-certs", options.ca_certs);
  }
  ssl::verify_mode mode = ssl::verify_none;
  if (options.cert_reqs == 1) mode = ssl::verify_peer;
  if (options.cert_reqs == 2) mode = ssl::verify_peer | ssl::verify_fail_if_no_peer_cert;
  context->set_verify_mode(mode, ec);
  if (ec) return Status::InvalidArgument("--ssl-cert-reqs: " + ec.message());
  return context;
}

}  // namespace llmserve::frontend::http
