// HttpServer against hostile clients on 127.0.0.1: a header trickled a byte
// at a time (slowloris), a flood of idle connections past the connection
// limit, and a client that never reads its stream. Each case bounds what the
// attacker holds and checks that an ordinary client is still served.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "frontend/http/http_server.h"
#include "tests/common/wait_until.h"
#include "tests/frontend/http_test_client.h"

namespace llmserve::frontend::http {
namespace {

using testing::TestClient;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

Router HelloRouter() {
  Router router;
  router.Add("GET", "/hello", [](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->Respond(HttpResponse::Make(200, "text/plain", "hello"));
  });
  return router;
}

std::unique_ptr<HttpServer> Start(Router router, HttpServerConfig config) {
  auto server = HttpServer::Start(std::move(config), std::move(router));
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return std::move(server).value();
}

// An ordinary client's round trip time for GET /hello (status 200 asserted).
Clock::duration ServeOne(uint16_t port) {
  const auto start = Clock::now();
  TestClient c;
  EXPECT_TRUE(c.Connect(port));
  EXPECT_TRUE(c.SendRequest("GET", "/hello"));
  EXPECT_EQ(c.ReadResponse().status, 200);
  return Clock::now() - start;
}

TEST(HttpHostileClients, TrickledHeadersAreCutOffAtTheTimeoutWhileOthersAreServed) {
  HttpServerConfig config;
  config.keep_alive_timeout = 300ms;  // also bounds reading a request header
  auto server = Start(HelloRouter(), config);
  constexpr int kAttackers = 16;
  std::vector<std::unique_ptr<TestClient>> attackers;
  for (int i = 0; i < kAttackers; ++i) {
    attackers.push_back(std::make_unique<TestClient>());
    ASSERT_TRUE(attackers.back()->Connect(server->port()));
  }
  // Trickle one header byte per 20 ms on every connection; a server that
  // restarted its timer on each byte would keep them for the whole header.
  const std::string header = "GET /hello HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(200, 'a');
  std::atomic<int> cut_off{0};
  const auto start = Clock::now();
  std::thread trickler([&] {
    std::vector<bool> open(kAttackers, true);
    for (size_t b = 0; b < header.size() && cut_off < kAttackers; ++b) {
      for (int i = 0; i < kAttackers; ++i) {
        if (open[i] && !attackers[i]->Send(header.substr(b, 1))) {
          open[i] = false;
          ++cut_off;
        }
      }
      std::this_thread::sleep_for(20ms);  // the attacker's pace, not a synchronisation
    }
  });
  EXPECT_LT(ServeOne(server->port()), 200ms) << "an ordinary client waited behind the attackers";
  for (auto& a : attackers) EXPECT_TRUE(a->WaitForClose(3000));
  EXPECT_LT(Clock::now() - start, 2s) << "trickling extended the header timeout";
  trickler.join();
}

TEST(HttpHostileClients, IdleConnectionsPastTheLimitAreRefusedWith503) {
  HttpServerConfig config;
  config.max_connections = 8;
  config.keep_alive_timeout = 60s;  // the flood is not cut off by the timeout in this test
  auto server = Start(HelloRouter(), config);
  std::vector<std::unique_ptr<TestClient>> idle;
  for (size_t i = 0; i < config.max_connections; ++i) {
    idle.push_back(std::make_unique<TestClient>());
    ASSERT_TRUE(idle.back()->Connect(server->port()));
  }
  // The server counts a connection once it has accepted it.
  ASSERT_TRUE(test_util::WaitUntil([&] { return server->num_connections() == config.max_connections; }, 2000ms));
  TestClient extra;
  ASSERT_TRUE(extra.Connect(server->port()));
  testing::ClientResponse refused = extra.ReadResponse();
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(refused.body, "Too many connections\n");
  EXPECT_TRUE(extra.WaitForClose());
  EXPECT_EQ(server->num_connections(), config.max_connections);
  // One idle connection leaves: there is room again.
  idle.pop_back();
  ASSERT_TRUE(test_util::WaitUntil([&] { return server->num_connections() < config.max_connections; }, 2000ms));
  ServeOne(server->port());
}

TEST(HttpHostileClients, AClientThatNeverReadsItsStreamIsDroppedAfterTheWriteTimeout) {
  HttpServerConfig config;
  config.write_timeout = 300ms;
  std::promise<void> disconnected;
  std::atomic<size_t> most_pending{0};
  std::thread producer;
  Router router = HelloRouter();
  router.Add("GET", "/flood", [&](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->OnDisconnect([&disconnected] { disconnected.set_value(); });
    w->BeginStream(200, "text/plain", {});
    producer = std::thread([w, &most_pending] {
      // A producer that respects back-pressure: at most 4 MiB queued.
      const std::string chunk(256 << 10, 'x');
      while (!w->closed()) {
        if (w->pending_bytes() < (4u << 20)) {
          w->Write(chunk);
        } else {
          std::this_thread::sleep_for(1ms);  // a producer waiting for room; not synchronisation
        }
        most_pending = std::max(most_pending.load(), w->pending_bytes());
      }
    });
  });
  auto server = Start(std::move(router), config);
  TestClient reader_that_never_reads;
  ASSERT_TRUE(reader_that_never_reads.Connect(server->port()));
  ASSERT_TRUE(reader_that_never_reads.SendRequest("GET", "/flood"));
  ASSERT_EQ(disconnected.get_future().wait_for(5s), std::future_status::ready);
  producer.join();
  EXPECT_LE(most_pending.load(), (4u << 20) + (256u << 10));
  ServeOne(server->port());
}

}  // namespace
}  // namespace llmserve::frontend::http
