#include <unistd.h>

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "common/ipc/zmq_socket.h"
#include "tests/common/wait_until.h"

namespace llmserve::common::ipc {
namespace {

using std::chrono::milliseconds;

std::string FrameText(const zmq::message_t& m) { return std::string(m.to_string_view()); }

TEST(ZmqSocket, PushPullOverFreeTcpPortCarriesMultipart) {
  zmq::context_t context;
  auto pull = MakeSocket(context, zmq::socket_type::pull, "tcp://127.0.0.1:*", SocketMode::kBind);
  ASSERT_TRUE(pull.ok()) << pull.status().ToString();
  auto endpoint = LastEndpoint(*pull);
  ASSERT_TRUE(endpoint.ok());
  EXPECT_EQ(endpoint->rfind("tcp://127.0.0.1:", 0), 0u) << *endpoint;
  EXPECT_NE(endpoint->back(), '*');
  auto push = MakeSocket(context, zmq::socket_type::push, *endpoint, SocketMode::kConnect);
  ASSERT_TRUE(push.ok()) << push.status().ToString();
  EXPECT_EQ(push->get(zmq::sockopt::sndhwm), 0);
  EXPECT_EQ(pull->get(zmq::sockopt::rcvhwm), 0);

  const std::string a = "header", b(100000, 'x');
  const zmq::const_buffer frames[] = {zmq::buffer(a), zmq::buffer(b), zmq::const_buffer()};
  ASSERT_TRUE(SendMultipart(*push, frames).ok());
  auto got = RecvMultipart(*pull, milliseconds(5000));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 3u);
  EXPECT_EQ(FrameText((*got)[0]), a);
  EXPECT_EQ(FrameText((*got)[1]), b);
  EXPECT_EQ((*got)[2].size(), 0u);
}

TEST(ZmqSocket, BindToFreePortGivesDistinctPorts) {
  zmq::context_t context;
  zmq::socket_t s1(context, zmq::socket_type::router), s2(context, zmq::socket_type::router);
  auto e1 = BindToFreePort(s1, "127.0.0.1");
  auto e2 = BindToFreePort(s2, "127.0.0.1");
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_NE(*e1, *e2);
}

TEST(ZmqSocket, RouterDealerUsesIdentity) {
  zmq::context_t context;
  auto router = MakeSocket(context, zmq::socket_type::router, "tcp://127.0.0.1:*", SocketMode::kBind);
  ASSERT_TRUE(router.ok());
  SocketOptions options;
  options.identity = std::string("\x00\x01", 2);  // vLLM: DP rank as 2 little-endian bytes
  auto dealer = MakeSocket(context, zmq::socket_type::dealer, *LastEndpoint(*router),
                           SocketMode::kConnect, options);
  ASSERT_TRUE(dealer.ok());
  ASSERT_TRUE(SendBytes(*dealer, "hello").ok());
  auto got = RecvMultipart(*router, milliseconds(5000));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 2u);
  EXPECT_EQ(FrameText((*got)[0]), options.identity);
  EXPECT_EQ(FrameText((*got)[1]), "hello");
}

TEST(ZmqSocket, IpcEndpointsAreUniqueAndUsable) {
  auto e1 = MakeIpcEndpoint("test", "/tmp");
  auto e2 = MakeIpcEndpoint("test", "/tmp");
  ASSERT_TRUE(e1.ok() && e2.ok());
  EXPECT_NE(*e1, *e2);
  EXPECT_EQ(e1->rfind("ipc:///tmp/llmserve-test-" + std::to_string(::getpid()) + "-", 0), 0u) << *e1;
  zmq::context_t context;
  auto pull = MakeSocket(context, zmq::socket_type::pull, *e1, SocketMode::kBind);
  ASSERT_TRUE(pull.ok()) << pull.status().ToString();
  auto push = MakeSocket(context, zmq::socket_type::push, *e1, SocketMode::kConnect);
  ASSERT_TRUE(push.ok());
  ASSERT_TRUE(SendBytes(*push, "over ipc").ok());
  auto got = RecvMultipart(*pull, milliseconds(5000));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(FrameText((*got)[0]), "over ipc");
  // The file can go once the peer is connected; the connection keeps working.
  const std::string path = e1->substr(6);
  EXPECT_EQ(::access(path.c_str(), F_OK), 0);
  RemoveIpcFile(*e1);
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  ASSERT_TRUE(SendBytes(*push, "still connected").ok());
  got = RecvMultipart(*pull, milliseconds(5000));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(FrameText((*got)[0]), "still connected");
}

TEST(ZmqSocket, TooLongIpcPathIsAnError) {
  auto e = MakeIpcEndpoint("test", "/tmp/" + std::string(120, 'd'));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
}

TEST(ZmqSocket, BadEndpointsReturnStatusNotException) {
  zmq::context_t context;
  auto s = MakeSocket(context, zmq::socket_type::pull, "tcp://127.0.0.1:notaport", SocketMode::kBind);
  EXPECT_FALSE(s.ok());
  auto t = MakeSocket(context, zmq::socket_type::pull, "bogus://x", SocketMode::kConnect);
  EXPECT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(t.status().message().find("bogus://x"), std::string::npos);
  // Binding the same port twice fails cleanly too.
  auto a = MakeSocket(context, zmq::socket_type::pull, "tcp://127.0.0.1:*", SocketMode::kBind);
  ASSERT_TRUE(a.ok());
  auto b = MakeSocket(context, zmq::socket_type::pull, *LastEndpoint(*a), SocketMode::kBind);
  EXPECT_FALSE(b.ok());
}

TEST(ZmqSocket, TcpEndpointBracketsIpv6) {
  EXPECT_EQ(TcpEndpoint("127.0.0.1", 5555), "tcp://127.0.0.1:5555");
  EXPECT_EQ(TcpEndpoint("::1", 5555), "tcp://[::1]:5555");
  EXPECT_EQ(TcpEndpoint("[::1]", 0), "tcp://[::1]:*");
  EXPECT_EQ(TcpEndpoint("host", 0), "tcp://host:*");
}

TEST(ZmqSocket, Ipv6LoopbackWhenAvailable) {
  zmq::context_t context;
  auto pull = MakeSocket(context, zmq::socket_type::pull, "tcp://[::1]:*", SocketMode::kBind);
  if (!pull.ok()) GTEST_SKIP() << "no IPv6 loopback here: " << pull.status().ToString();
  EXPECT_EQ(pull->get(zmq::sockopt::ipv6), 1);
  auto push = MakeSocket(context, zmq::socket_type::push, *LastEndpoint(*pull), SocketMode::kConnect);
  ASSERT_TRUE(push.ok());
  ASSERT_TRUE(SendBytes(*push, "v6").ok());
  auto got = RecvMultipart(*pull, milliseconds(5000));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(FrameText((*got)[0]), "v6");
}

TEST(ZmqSocket, RecvTimeoutIsDistinguishable) {
  zmq::context_t context;
  auto pull = MakeSocket(context, zmq::socket_type::pull, "tcp://127.0.0.1:*", SocketMode::kBind);
  ASSERT_TRUE(pull.ok());
  const auto start = std::chrono::steady_clock::now();
  auto got = RecvMultipart(*pull, milliseconds(30));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(25));
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(IsTimeout(got.status()));
  EXPECT_FALSE(IsTimeout(Status::Unavailable("peer gone")));
  EXPECT_FALSE(IsTimeout(Status::Ok()));
}

TEST(ZmqSocket, ConflatedSubKeepsOnlyTheNewest) {
  zmq::context_t context;
  auto endpoint = MakeIpcEndpoint("conflate");
  struct Cleanup {
    std::string endpoint;
    ~Cleanup() { RemoveIpcFile(endpoint); }
  } cleanup{endpoint.ok() ? *endpoint : ""};
  ASSERT_TRUE(endpoint.ok());
  SocketOptions pub_options;
  pub_options.xpub_verbose = true;
  auto pub = MakeSocket(context, zmq::socket_type::xpub, *endpoint, SocketMode::kBind, pub_options);
  ASSERT_TRUE(pub.ok());
  SocketOptions sub_options;
  sub_options.conflate = true;
  auto sub = MakeSocket(context, zmq::socket_type::sub, *endpoint, SocketMode::kConnect, sub_options);
  ASSERT_TRUE(sub.ok());
  auto subscription = RecvMultipart(*pub, milliseconds(5000));  // XPUB_VERBOSE: we see it
  ASSERT_TRUE(subscription.ok());
  EXPECT_EQ((*subscription)[0].data<char>()[0], 1);
  // Conflation shows when a burst of five is queued at the SUB before the
  // first read: the read gets the fifth alone. Nothing says when a burst has
  // arrived, so bursts are sent until one read finds one whole; without
  // conflation every burst's first read is its first message.
  int burst = 0;
  const bool newest_only = test_util::WaitUntil(
      [&] {
        const std::string prefix = std::to_string(++burst) + ":";
        for (int i = 0; i < 5; ++i) {
          if (!SendBytes(*pub, prefix + std::to_string(i)).ok()) return false;
        }
        for (int reads = 1;; ++reads) {
          auto got = RecvMultipart(*sub, milliseconds(5000));
          if (!got.ok()) return false;
          if (FrameText((*got)[0]) == prefix + "4") return reads == 1;
        }
      },
      milliseconds(5000));
  EXPECT_TRUE(newest_only) << "after " << burst << " bursts";
  EXPECT_TRUE(IsTimeout(RecvMultipart(*sub, milliseconds(20)).status()));
}

TEST(ZmqSocket, PollerWatchesSocketsAndFds) {
  zmq::context_t context;
  auto pull = MakeSocket(context, zmq::socket_type::pull, "tcp://127.0.0.1:*", SocketMode::kBind);
  ASSERT_TRUE(pull.ok());
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  Poller poller;
  const size_t socket_i = poller.AddSocket(*pull);
  const size_t fd_i = poller.AddFd(fds[0]);
  auto n = poller.Wait(milliseconds(20));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0);
  ASSERT_EQ(::write(fds[1], "x", 1), 1);
  n = poller.Wait(milliseconds(5000));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1);
  EXPECT_TRUE(poller.Readable(fd_i));
  EXPECT_FALSE(poller.Readable(socket_i));
  EXPECT_FALSE(poller.Readable(99));
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace llmserve::common::ipc
