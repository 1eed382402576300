// SO_REUSEPORT (HttpServerConfig::reuse_port): several API server processes
// listen on one port. Two servers in one process stand in for them here.
#include <gtest/gtest.h>

#include "frontend/http/http_server.h"

namespace llmserve::frontend::http {
namespace {

Router Hello() {
  Router router;
  router.Add("GET", "/hello", [](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->Respond(HttpResponse::Make(200, "text/plain", "hello"));
  });
  return router;
}

TEST(HttpServerReusePort, TwoServersShareAPortOnlyWhenBothAskForIt) {
  HttpServerConfig config;
  config.reuse_port = true;
  auto first = HttpServer::Start(config, Hello());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  config.port = (*first)->port();
  auto second = HttpServer::Start(config, Hello());
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ((*second)->port(), (*first)->port());

  HttpServerConfig plain;
  plain.port = (*first)->port();
  auto third = HttpServer::Start(plain, Hello());
  EXPECT_FALSE(third.ok()) << "a server without reuse_port must not join the port";
  (*second)->Stop();
  (*first)->Stop();
}

}  // namespace
}  // namespace llmserve::frontend::http
