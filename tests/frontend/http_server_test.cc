// HttpServer over real sockets on 127.0.0.1 (ephemeral port): keep-alive,
// pipelining, routing errors, the body limit, SSE streaming written from
// another thread, client-disconnect callbacks, concurrency, graceful stop.
#include "frontend/http/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "frontend/http/sse.h"
#include "tests/common/wait_until.h"
#include "tests/frontend/http_test_client.h"

namespace llmserve::frontend::http {
namespace {

using testing::ClientResponse;
using testing::TestClient;
using namespace std::chrono_literals;

// Handlers under test that answer later run on these threads, joined at the end.
class Threads {
 public:
  ~Threads() {
    for (auto& t : threads_) t.join();
  }
  template <class F>
  void Run(F f) {
    std::lock_guard<std::mutex> lock(mu_);  // handlers run on several I/O threads
    threads_.emplace_back(std::move(f));
  }

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

Router EchoRouter() {
  Router router;
  router.Add("POST", "/echo", [](HttpRequest req, std::shared_ptr<ResponseWriter> w) {
    HttpResponse r = HttpResponse::Make(200, "text/plain", req.method + " " + req.target + " " + req.body);
    if (const std::string* id = req.header("x-request-id")) r.headers.emplace_back("X-Request-Id", *id);
    w->Respond(std::move(r));
  });
  router.Add("GET", "/hello", [](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->Respond(HttpResponse::Make(200, "text/plain", "hello"));
  });
  return router;
}

std::unique_ptr<HttpServer> StartServer(Router router, HttpServerConfig config = {}) {
  auto server = HttpServer::Start(std::move(config), std::move(router));
  EXPECT_TRUE(server.ok()) << server.status().ToString();
  return std::move(server).value();
}

TEST(HttpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  auto server = StartServer(EchoRouter());
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  for (int i = 0; i < 5; ++i) {
    std::string body = "body-" + std::to_string(i);
    ASSERT_TRUE(client.SendRequest("POST", "/echo?i=" + std::to_string(i), body, "X-Request-Id: r" + std::to_string(i) + "\r\n"));
    ClientResponse r = client.ReadResponse();
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "POST /echo?i=" + std::to_string(i) + " " + body);
    EXPECT_EQ(r.header("x-request-id"), "r" + std::to_string(i));
    EXPECT_EQ(r.header("connection"), "");  // HTTP/1.1 default: keep-alive
  }
  EXPECT_EQ(server->num_connections(), 1u);
}

TEST(HttpServer, PipelinedRequestsAreAnsweredInOrder) {
  auto server = StartServer(EchoRouter());
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  std::string two =
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nA"
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nB";
  ASSERT_TRUE(client.Send(two));
  EXPECT_EQ(client.ReadResponse().body, "POST /echo A");
  EXPECT_EQ(client.ReadResponse().body, "POST /echo B");
}

TEST(HttpServer, ConnectionCloseIsHonoured) {
  auto server = StartServer(EchoRouter());
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("GET", "/hello", "", "Connection: close\r\n"));
  ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_TRUE(client.WaitForClose());
}

TEST(HttpServer, UnknownRouteIs404AndWrongMethodIs405) {
  Router router = EchoRouter();
  router.set_error_responder([](int status, const std::string& message) {
    return HttpResponse::Make(status, "application/json", "{\"status\":" + std::to_string(status) + ",\"m\":\"" + message + "\"}");
  });
  auto server = StartServer(std::move(router));
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("GET", "/nope"));
  ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"status":404,"m":"Not Found"})");
  ASSERT_TRUE(client.SendRequest("GET", "/echo"));
  r = client.ReadResponse();
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.header("allow"), "POST");
  // The connection survives both errors.
  ASSERT_TRUE(client.SendRequest("GET", "/hello"));
  EXPECT_EQ(client.ReadResponse().body, "hello");
}

TEST(HttpServer, PathTemplatesHandTheirSegmentsToTheHandler) {
  Router router;
  std::mutex mu;
  std::vector<std::string> observed;  // the route each request was reported under
  router.set_observer([&](const std::string& handler, const std::string& method, int status, double) {
    std::lock_guard<std::mutex> lock(mu);
    observed.push_back(method + " " + handler + " " + std::to_string(status));
  });
  auto echo = [](const std::string& what) {
    return [what](HttpRequest req, std::shared_ptr<ResponseWriter> w) {
      w->Respond(HttpResponse::Make(200, "text/plain", what + " " + req.path_param("response_id")));
    };
  };
  router.Add("POST", "/v1/responses", echo("create"));
  router.Add("GET", "/v1/responses/{response_id}", echo("get"));
  router.Add("POST", "/v1/responses/{response_id}/cancel", echo("cancel"));
  router.Add("GET", "/v1/responses/latest", echo("exact"));  // an exact path wins over a template
  auto server = StartServer(std::move(router));
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  auto send = [&](const std::string& method, const std::string& target) {
    EXPECT_TRUE(client.SendRequest(method, target));
    return client.ReadResponse();
  };
  EXPECT_EQ(send("GET", "/v1/responses/resp_1?stream=false").body, "get resp_1");
  EXPECT_EQ(send("POST", "/v1/responses/resp_2/cancel").body, "cancel resp_2");
  EXPECT_EQ(send("POST", "/v1/responses").body, "create ");
  EXPECT_EQ(send("GET", "/v1/responses/latest").body, "exact ");
  ClientResponse wrong_method = send("GET", "/v1/responses/resp_2/cancel");
  EXPECT_EQ(wrong_method.status, 405);
  EXPECT_EQ(wrong_method.header("allow"), "POST");
  EXPECT_EQ(send("GET", "/v1/responses/").status, 404);  // no segment for {response_id}
  EXPECT_EQ(send("GET", "/v1/responses//cancel").status, 404);
  EXPECT_EQ(send("GET", "/v1/responses/a/b").status, 404);
  ASSERT_TRUE(test_util::WaitUntil([&] { std::lock_guard<std::mutex> lock(mu); return observed.size() == 8; },
                                   std::chrono::seconds(5), std::chrono::milliseconds(5)));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(observed[0], "GET /v1/responses/{response_id} 200");  // the template, as vLLM's instrumentator
  EXPECT_EQ(observed[1], "POST /v1/responses/{response_id}/cancel 200");
  EXPECT_EQ(observed[4], "GET /v1/responses/{response_id}/cancel 405");
  EXPECT_EQ(observed[5], "GET none 404");
}

TEST(HttpServer, FilterAnswersBeforeTheHandler) {
  Router router = EchoRouter();
  router.AddFilter("/ech", [](const HttpRequest& req) -> std::optional<HttpResponse> {
    if (req.header("authorization") == nullptr) return HttpResponse::Make(401, "text/plain", "no");
    return std::nullopt;
  });
  auto server = StartServer(std::move(router));
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("POST", "/echo", "x"));
  EXPECT_EQ(client.ReadResponse().status, 401);
  ASSERT_TRUE(client.SendRequest("POST", "/echo", "x", "Authorization: Bearer k\r\n"));
  EXPECT_EQ(client.ReadResponse().status, 200);
  ASSERT_TRUE(client.SendRequest("GET", "/hello"));
  EXPECT_EQ(client.ReadResponse().status, 200);
}

TEST(HttpServer, BodyOverTheLimitIs413) {
  HttpServerConfig config;
  config.max_request_body_bytes = 1000;
  auto server = StartServer(EchoRouter(), config);
  {
    TestClient client;
    ASSERT_TRUE(client.Connect(server->port()));
    ASSERT_TRUE(client.SendRequest("POST", "/echo", std::string(1000, 'a')));
    ClientResponse r = client.ReadResponse();
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.body.size(), std::string("POST /echo ").size() + 1000);
  }
  {
    TestClient client;
    ASSERT_TRUE(client.Connect(server->port()));
    ASSERT_TRUE(client.SendRequest("POST", "/echo", std::string(5000, 'a')));
    ClientResponse r = client.ReadResponse();
    EXPECT_EQ(r.status, 413);
    EXPECT_EQ(r.body, "Request body too large: the limit is 1000 bytes\n");
    EXPECT_EQ(r.header("connection"), "close");
    EXPECT_TRUE(client.WaitForClose());
  }
  {  // A chunked body over the limit is caught too.
    TestClient client;
    ASSERT_TRUE(client.Connect(server->port()));
    std::string chunk(800, 'b');
    ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                            "320\r\n" + chunk + "\r\n320\r\n" + chunk + "\r\n0\r\n\r\n"));
    EXPECT_EQ(client.ReadResponse().status, 413);
  }
}

TEST(HttpServer, ExpectContinueGets100ThenTheAnswer) {
  auto server = StartServer(EchoRouter());
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n"));
  EXPECT_EQ(client.ReadResponse().status, 100);
  ASSERT_TRUE(client.Send("abc"));
  ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "POST /echo abc");
}

TEST(HttpServer, MalformedRequestIs400) {
  auto server = StartServer(EchoRouter());
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.Send("THIS IS NOT HTTP\r\n\r\n"));
  ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 400);
  EXPECT_TRUE(client.WaitForClose());
}

TEST(HttpServer, OversizedHeaderIs431) {
  HttpServerConfig config;
  config.max_header_bytes = 1024;
  auto server = StartServer(EchoRouter(), config);
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("GET", "/hello", "", "X-Big: " + std::string(4096, 'x') + "\r\n"));
  EXPECT_EQ(client.ReadResponse().status, 431);
  EXPECT_TRUE(client.WaitForClose());
}

TEST(HttpServer, Http10ClosesAfterTheAnswer) {
  auto server = StartServer(EchoRouter());
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.Send("GET /hello HTTP/1.0\r\n\r\n"));
  ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
  EXPECT_TRUE(client.WaitForClose());
}

TEST(HttpServer, StalledBodyIsDroppedAfterTheTimeout) {
  HttpServerConfig config;
  config.body_read_timeout = 200ms;
  auto server = StartServer(EchoRouter(), config);
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.Send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nhalf"));
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.WaitForClose(3000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(HttpServer, IdleKeepAliveConnectionIsClosedAfterTheTimeout) {
  HttpServerConfig config;
  config.keep_alive_timeout = 200ms;
  auto server = StartServer(EchoRouter(), config);
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("GET", "/hello"));
  EXPECT_EQ(client.ReadResponse().status, 200);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.WaitForClose(3000));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(HttpServer, SseStreamWrittenFromAnotherThread) {
  Threads threads;
  Router router;
  router.Add("POST", "/stream", [&threads](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    threads.Run([w] {
      SseStream sse(w);
      sse.Begin({{"X-Request-Id", "abc"}});
      for (int i = 0; i < 5; ++i) {
        sse.Send("{\"i\":" + std::to_string(i) + "}");
        std::this_thread::sleep_for(2ms);  // paces the events like decode steps; not synchronisation
      }
      sse.Done();
    });
  });
  router.Add("GET", "/hello", [](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->Respond(HttpResponse::Make(200, "text/plain", "hello"));
  });
  auto server = StartServer(std::move(router));
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("POST", "/stream", "{}"));
  ClientResponse r = client.ReadResponse();
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.header("content-type"), "text/event-stream; charset=utf-8");
  EXPECT_EQ(r.header("transfer-encoding"), "chunked");
  EXPECT_EQ(r.header("x-request-id"), "abc");
  EXPECT_EQ(r.body,
            "data: {\"i\":0}\n\ndata: {\"i\":1}\n\ndata: {\"i\":2}\n\ndata: {\"i\":3}\n\n"
            "data: {\"i\":4}\n\ndata: [DONE]\n\n");
  // The connection is kept for the next request after the stream.
  ASSERT_TRUE(client.SendRequest("GET", "/hello"));
  EXPECT_EQ(client.ReadResponse().body, "hello");
}

TEST(HttpServer, SseEventSplitsMultilinePayloads) {
  EXPECT_EQ(SseEvent("{}"), "data: {}\n\n");
  EXPECT_EQ(SseEvent("a\nb"), "data: a\ndata: b\n\n");
}

TEST(HttpServer, ClientDisconnectMidStreamRunsTheCallback) {
  std::promise<void> disconnected;
  std::promise<std::shared_ptr<ResponseWriter>> writer_promise;
  Router router;
  router.Add("POST", "/stream", [&](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->OnDisconnect([&disconnected] { disconnected.set_value(); });
    SseStream sse(w);
    sse.Begin();
    sse.Send("first");
    writer_promise.set_value(w);  // keep the stream open, as an engine request would
  });
  auto server = StartServer(std::move(router));
  auto writer_future = writer_promise.get_future();
  {
    TestClient client;
    ASSERT_TRUE(client.Connect(server->port()));
    ASSERT_TRUE(client.SendRequest("POST", "/stream", "{}"));
    ClientResponse r = client.ReadStreamStart(1);
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.chunks.size(), 1u);
    EXPECT_EQ(r.chunks[0], "data: first\n\n");
  }  // the client goes away mid-stream
  auto future = disconnected.get_future();
  ASSERT_EQ(future.wait_for(3s), std::future_status::ready);
  std::shared_ptr<ResponseWriter> writer = writer_future.get();
  EXPECT_TRUE(writer->closed());
  writer->Write("ignored");  // writes after the disconnect are dropped, not crashes
  writer->End();
  // A callback registered after the disconnect runs at once.
  std::atomic<bool> late{false};
  writer->OnDisconnect([&late] { late = true; });
  EXPECT_TRUE(test_util::WaitUntil([&] { return late.load(); }, 1000ms));
}

TEST(HttpServer, ClientDisconnectBeforeAnAnswerRunsTheCallback) {
  std::promise<void> disconnected;
  std::shared_ptr<ResponseWriter> held;
  std::promise<void> handled;
  Router router;
  router.Add("POST", "/slow", [&](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->OnDisconnect([&disconnected] { disconnected.set_value(); });
    held = w;  // answered never: the client leaves first
    handled.set_value();
  });
  auto server = StartServer(std::move(router));
  {
    TestClient client;
    ASSERT_TRUE(client.Connect(server->port()));
    ASSERT_TRUE(client.SendRequest("POST", "/slow", "{}"));
    handled.get_future().wait();
  }
  ASSERT_EQ(disconnected.get_future().wait_for(3s), std::future_status::ready);
  EXPECT_TRUE(held->closed());
  EXPECT_FALSE(held->finished());
  held.reset();  // no answer can go anywhere; must not crash
}

TEST(HttpServer, AnswerTimeoutSends504AndRunsTheCallback) {
  std::promise<void> aborted;
  std::shared_ptr<ResponseWriter> held;
  Router router = EchoRouter();
  router.Add("POST", "/stuck", [&](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->OnDisconnect([&aborted] { aborted.set_value(); });
    held = w;  // never answered in time
  });
  HttpServerConfig config;
  config.answer_timeout = 100ms;
  auto server = StartServer(std::move(router), config);
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("POST", "/stuck", "{}"));
  ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 504);
  EXPECT_EQ(r.body, "The server did not begin an answer within 100 ms\n");
  EXPECT_EQ(aborted.get_future().wait_for(1s), std::future_status::ready);
  EXPECT_TRUE(held->closed());
  held->Respond(HttpResponse::Make(200, "text/plain", "too late"));  // dropped
  // The connection goes on; quick answers are not affected.
  ASSERT_TRUE(client.SendRequest("GET", "/hello"));
  r = client.ReadResponse();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "hello");
}

TEST(HttpServer, DroppedWriterAnswers500) {
  Router router;
  router.Add("GET", "/forgetful", [](HttpRequest, std::shared_ptr<ResponseWriter>) {});
  router.Add("GET", "/throws", [](HttpRequest, std::shared_ptr<ResponseWriter>) {
    throw std::runtime_error("boom");
  });
  auto server = StartServer(std::move(router));
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("GET", "/forgetful"));
  EXPECT_EQ(client.ReadResponse().status, 500);
  ASSERT_TRUE(client.SendRequest("GET", "/throws"));
  ClientResponse r = client.ReadResponse();
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, "Internal server error: boom\n");
}

TEST(HttpServer, ConcurrentConnections) {
  HttpServerConfig config;
  config.num_io_threads = 4;
  Threads threads;
  Router router = EchoRouter();
  router.Add("POST", "/later", [&threads](HttpRequest req, std::shared_ptr<ResponseWriter> w) {
    threads.Run([w, body = req.body] {
      std::this_thread::sleep_for(1ms);  // a slow handler on purpose; not synchronisation
      w->Respond(HttpResponse::Make(200, "text/plain", body));
    });
  });
  auto server = StartServer(std::move(router), config);
  constexpr int kClients = 16, kRequests = 8;
  std::atomic<int> ok{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      TestClient client;
      if (!client.Connect(server->port())) return;
      for (int i = 0; i < kRequests; ++i) {
        std::string body = std::to_string(c) + "/" + std::to_string(i);
        if (!client.SendRequest("POST", i % 2 ? "/later" : "/echo", body)) return;
        ClientResponse r = client.ReadResponse();
        std::string want = i % 2 ? body : "POST /echo " + body;
        if (r.status == 200 && r.body == want) ++ok;
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), kClients * kRequests);
}

TEST(HttpServer, GracefulStopFinishesInFlightAnswers) {
  Threads threads;
  std::promise<void> handled;
  TestClient idle;
  std::atomic<bool> idle_closed{false};
  Router router;
  router.Add("POST", "/slow", [&](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    handled.set_value();
    // Answers once Stop has begun: Stop closes the idle connection first.
    threads.Run([w, &idle, &idle_closed] {
      idle_closed = idle.WaitForClose(5000);
      w->Respond(HttpResponse::Make(200, "text/plain", "done"));
    });
  });
  router.Add("GET", "/hello", [](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->Respond(HttpResponse::Make(200, "text/plain", "hello"));
  });
  auto server = StartServer(std::move(router));
  uint16_t port = server->port();
  ASSERT_TRUE(idle.Connect(port));
  TestClient busy;
  ASSERT_TRUE(busy.Connect(port));
  ASSERT_TRUE(busy.SendRequest("POST", "/slow", "{}"));
  handled.get_future().wait();
  auto response = std::async(std::launch::async, [&] { return busy.ReadResponse(); });
  server->Stop();
  ClientResponse r = response.get();
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "done");
  EXPECT_EQ(r.header("connection"), "close");
  EXPECT_TRUE(idle_closed) << "the idle connection outlived the in-flight answer";
  TestClient late;
  EXPECT_FALSE(late.Connect(port));
}

TEST(HttpServer, StopClosesStreamsThatOutliveTheTimeout) {
  std::promise<void> disconnected;
  std::promise<void> started;
  std::shared_ptr<ResponseWriter> held;
  Router router;
  router.Add("POST", "/stream", [&](HttpRequest, std::shared_ptr<ResponseWriter> w) {
    w->OnDisconnect([&disconnected] { disconnected.set_value(); });
    w->BeginStream(200, "text/event-stream", {});
    held = w;
    started.set_value();
  });
  HttpServerConfig config;
  config.shutdown_timeout = 100ms;
  auto server = StartServer(std::move(router), config);
  TestClient client;
  ASSERT_TRUE(client.Connect(server->port()));
  ASSERT_TRUE(client.SendRequest("POST", "/stream", "{}"));
  started.get_future().wait();
  auto start = std::chrono::steady_clock::now();
  server->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(disconnected.get_future().wait_for(1s), std::future_status::ready);
  EXPECT_TRUE(held->closed());
  server.reset();
  held->Write("after the server is gone");  // dropped safely
  held.reset();
}

TEST(HttpServer, BindFailureIsAnError) {
  auto first = StartServer(EchoRouter());
  HttpServerConfig config;
  config.port = first->port();
  auto second = HttpServer::Start(config, EchoRouter());
  EXPECT_FALSE(second.ok());
  HttpServerConfig bad;
  bad.host = "not an address";
  EXPECT_FALSE(HttpServer::Start(bad, EchoRouter()).ok());
}

}  // namespace
}  // namespace llmserve::frontend::http
