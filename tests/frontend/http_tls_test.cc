// HttpServer over TLS on 127.0.0.1, with certificates made by the openssl
// command for each run: HTTPS answers and streams, keep-alive, a plain-HTTP
// client refused while HTTPS goes on, client certificates (required and
// optional), a disconnect seen through TLS, and MakeTlsContext's errors.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <future>

#include "frontend/http/http_server.h"
#include "frontend/http/sse.h"
#include "frontend/http/tls_context.h"
#include "tests/frontend/tls_test_client.h"

namespace llmserve::frontend::http {
namespace {

using testing::ClientResponse;
using testing::TestClient;
using testing::TlsTestClient;
using namespace std::chrono_literals;

class HttpTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    char dir[] = "/tmp/llmserve-tls-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    pki_ = dir;
    ASSERT_TRUE(testing::MakeTestPki(pki_)) << "the openssl command failed (scripts/setup installs it)";
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(pki_); }

  static std::string Pki(const std::string& name) { return pki_ + "/" + name; }

  static TlsOptions ServerTls(int cert_reqs = 0) {
    return {Pki("server.pem"), Pki("server.key"), cert_reqs ? Pki("ca.pem") : "", cert_reqs};
  }

  std::unique_ptr<HttpServer> Start(Router router, TlsOptions tls) {
    HttpServerConfig config;
    config.tls = std::move(tls);
    auto server = HttpServer::Start(std::move(config), std::move(router));
    EXPECT_TRUE(server.ok()) << server.status().ToString();
    return server.ok() ? std::move(server).value() : nullptr;
  }

  static Router HelloRouter() {
    Router router;
    router.Add("GET", "/hello", [](HttpRequest, std::shared_ptr<ResponseWriter> w) {
      w->Respond(HttpResponse::Make(200, "text/plain", "hello"));
    });
    router.Add("POST", "/stream", [](HttpRequest req, std::shared_ptr<ResponseWriter> w) {
      SseStream sse(w);
      sse.Begin();
      sse.Send("one " + req.body);
      sse.Send("two");
      sse.End();
    });
    return router;
  }

  static std::string pki_;
};

std::string HttpTls::pki_;

TEST_F(HttpTls, AnswersAndStreamsOverOneKeptAliveConnection) {
  auto server = Start(HelloRouter(), ServerTls());
  ASSERT_NE(server, nullptr);
  TlsTestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.Handshake(Pki("ca.pem"))) << client.error();
  ASSERT_TRUE(client.SendRequest("GET", "/hello"));
  ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
  ASSERT_TRUE(client.SendRequest("POST", "/stream", "x"));
  r = client.ReadResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "data: one x\n\ndata: two\n\n");
  EXPECT_EQ(server->num_connections(), 1u);
}

TEST_F(HttpTls, ClientThatDoesNotTrustTheCertificateFailsTheHandshake) {
  auto server = Start(HelloRouter(), ServerTls());
  ASSERT_NE(server, nullptr);
  TlsTestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  EXPECT_FALSE(client.Handshake(Pki("other-ca.pem")));
}

TEST_F(HttpTls, PlainHttpIsClosedAndHttpsGoesOn) {
  auto server = Start(HelloRouter(), ServerTls());
  ASSERT_NE(server, nullptr);
  TestClient plain;
  ASSERT_TRUE(plain.Connect(server->port()));
  ASSERT_TRUE(plain.SendRequest("GET", "/hello"));
  EXPECT_EQ(plain.ReadResponse().status, 0);  // no HTTP answer in clear text
  EXPECT_TRUE(plain.WaitForClose());
  TlsTestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.Handshake(Pki("ca.pem"))) << client.error();
  ASSERT_TRUE(client.SendRequest("GET", "/hello"));
  EXPECT_EQ(client.ReadResponse().body, "hello");
}

TEST_F(HttpTls, RequiredClientCertificateIsChecked) {
  auto server = Start(HelloRouter(), ServerTls(/*cert_reqs=*/2));
  ASSERT_NE(server, nullptr);
  TlsTestClient with_cert;
  ASSERT_TRUE(with_cert.Connect(server->port()));
  ASSERT_TRUE(with_cert.Handshake(Pki("ca.pem"), Pki("client.pem"), Pki("client.key"))) << with_cert.error();
  ASSERT_TRUE(with_cert.SendRequest("GET", "/hello"));
  EXPECT_EQ(with_cert.ReadResponse().body, "hello");
  // TLS 1.3 clients finish their side of the handshake before the server
  // checks them, so the refusal shows as no answer.
  TlsTestClient without;
  ASSERT_TRUE(without.Connect(server->port()));
  if (without.Handshake(Pki("ca.pem"))) {
    without.SendRequest("GET", "/hello");
    EXPECT_EQ(without.ReadResponse().status, 0);
  }
}

TEST_F(HttpTls, OptionalClientCertificateMayBeLeftOut) {
  auto server = Start(HelloRouter(), ServerTls(/*cert_reqs=*/1));
  ASSERT_NE(server, nullptr);
  TlsTestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.Handshake(Pki("ca.pem"))) << client.error();
  ASSERT_TRUE(client.SendRequest("GET", "/hello"));
  EXPECT_EQ(client.ReadResponse().body, "hello");
}

TEST_F(HttpTls, ClientDisconnectMidStreamRunsTheCallback) {
  std::promise<void> disconnected;
  std::promise<std::shared_ptr<ResponseWriter>> writer_promise;
  Router router;
  router.Add("POST", "/stream", [&](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->OnDisconnect([&disconnected] { disconnected.set_value(); });
    SseStream sse(w);
    sse.Begin();
    sse.Send("first");
    writer_promise.set_value(w);  // the stream stays open, as an engine request's would
  });
  auto server = Start(std::move(router), ServerTls());
  ASSERT_NE(server, nullptr);
  auto writer = writer_promise.get_future();
  {
    TlsTestClient client;
    ASSERT_TRUE(client.Connect(server->port()));
    ASSERT_TRUE(client.Handshake(Pki("ca.pem"))) << client.error();
    ASSERT_TRUE(client.SendRequest("POST", "/stream", "{}"));
    ClientResponse r = client.ReadStreamStart(1);
    ASSERT_EQ(r.chunks.size(), 1u);
    EXPECT_EQ(r.chunks[0], "data: first\n\n");
  }  // gone mid-stream, without a TLS close_notify
  ASSERT_EQ(disconnected.get_future().wait_for(3s), std::future_status::ready);
  EXPECT_TRUE(writer.get()->closed());
}

TEST_F(HttpTls, BadOptionsAreErrorsThatNameTheFlag) {
  auto error = [](TlsOptions o) {
    auto context = MakeTlsContext(o);
    return context.ok() ? std::string("ok") : context.status().message();
  };
  EXPECT_EQ(error(ServerTls()), "ok");
  EXPECT_NE(error({Pki("missing.pem"), Pki("server.key"), "", 0}).find("--ssl-certfile"), std::string::npos);
  EXPECT_NE(error({Pki("server.pem"), Pki("client.key"), "", 0}).find("--ssl-keyfile"), std::string::npos);
  EXPECT_NE(error({"", Pki("server.key"), "", 0}).find("needs --ssl-certfile"), std::string::npos);
  EXPECT_NE(error({Pki("server.pem"), Pki("server.key"), "", 2}).find("--ssl-ca-certs"), std::string::npos);
  EXPECT_NE(error({Pki("server.pem"), Pki("server.key"), Pki("ca.pem"), 3}).find("--ssl-cert-reqs"),
            std::string::npos);
  EXPECT_NE(error({Pki("server.pem"), Pki("server.key"), Pki("missing.pem"), 2}).find("--ssl-ca-certs"),
            std::string::npos);
  HttpServerConfig config;
  config.tls = {Pki("missing.pem"), "", "", 0};
  EXPECT_FALSE(HttpServer::Start(config, Router()).ok());
}

}  // namespace
}  // namespace llmserve::frontend::http
