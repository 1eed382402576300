#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/ipc/curve_auth.h"
#include "common/ipc/curve_keys.h"
#include "common/ipc/zmq_socket.h"
#include "tests/common/wait_until.h"

namespace llmserve::common::ipc {
namespace {

using std::chrono::milliseconds;

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/llmserve-curve-test-XXXXXX";
    path_ = ::mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

CurveKeyPair NewKey() {
  auto key = GenerateCurveKeyPair();
  EXPECT_TRUE(key.ok()) << key.status().ToString();
  return *key;
}

// The auth handler counts refusals on its own thread: poll the counters.
template <typename Pred>
bool WaitFor(Pred pred) {
  return test_util::WaitUntil(pred, milliseconds(3000));
}

TEST(ClusterKey, WriteThenReadRoundTripsWithPrivateModes) {
  TempDir tmp;
  const std::string dir = tmp.path() + "/keys";
  const CurveKeyPair key = NewKey();
  ASSERT_EQ(key.public_key.size(), 40u);
  ASSERT_TRUE(WriteClusterKey(dir, key, /*overwrite=*/false).ok());
  struct stat file_stat {};
  ASSERT_EQ(::stat((dir + "/cluster.key").c_str(), &file_stat), 0);
  EXPECT_EQ(file_stat.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat(dir.c_str(), &file_stat), 0);
  EXPECT_EQ(file_stat.st_mode & 0777, 0700u);

  auto read = ReadClusterKey(dir);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->public_key, key.public_key);
  EXPECT_EQ(read->secret_key, key.secret_key);

  Status again = WriteClusterKey(dir, NewKey(), /*overwrite=*/false);
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find("--force"), std::string::npos) << again.message();
  EXPECT_TRUE(WriteClusterKey(dir, NewKey(), /*overwrite=*/true).ok());
  EXPECT_NE(ReadClusterKey(dir)->public_key, key.public_key);
}

TEST(ClusterKey, BadFilesAreClearErrors) {
  TempDir tmp;
  auto missing = ReadClusterKey(tmp.path());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("llmserve keygen"), std::string::npos);

  const CurveKeyPair a = NewKey();
  const CurveKeyPair b = NewKey();
  const auto write = [&](const std::string& text) {
    std::ofstream(tmp.path() + "/cluster.key") << text;
    return ReadClusterKey(tmp.path());
  };
  auto mismatched = write("public-key = " + a.public_key + "\nsecret-key = " + b.secret_key + "\n");
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("does not belong"), std::string::npos);
  auto short_key = write("public-key = abc\nsecret-key = " + a.secret_key + "\n");
  ASSERT_FALSE(short_key.ok());
  EXPECT_NE(short_key.status().message().find("invalid public-key"), std::string::npos);
  auto unknown = write("colour = blue\n");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown field"), std::string::npos);
  EXPECT_TRUE(write("# comment\npublic-key = " + a.public_key + "\nsecret-key = " + a.secret_key + "\n").ok());
}

// A CURVE server node: a PULL on a free TCP port guarded by the cluster key,
// with its context's authenticator and a log of refused handshakes.
struct ServerNode {
  explicit ServerNode(const CurveKeyPair& key) {
    auto auth_or = ZapAuthenticator::Start(context, key);
    EXPECT_TRUE(auth_or.ok()) << auth_or.status().ToString();
    auth = std::move(*auth_or);
    SocketOptions options;
    options.curve = &key;
    auto pull_or = MakeSocket(context, zmq::socket_type::pull, "tcp://127.0.0.1:*", SocketMode::kBind, options);
    EXPECT_TRUE(pull_or.ok()) << pull_or.status().ToString();
    pull = std::move(*pull_or);
    endpoint = *LastEndpoint(pull);
    auto log_or = HandshakeFailureLog::Start(context, pull, "test PULL");
    EXPECT_TRUE(log_or.ok()) << log_or.status().ToString();
    failures = std::move(*log_or);
  }
  ~ServerNode() {
    failures.reset();
    pull.close();
    auth.reset();
  }

  zmq::context_t context;
  std::unique_ptr<ZapAuthenticator> auth;
  zmq::socket_t pull;
  std::unique_ptr<HandshakeFailureLog> failures;
  std::string endpoint;
};

// Connects a PUSH from a separate context (another node) and sends one message.
void SendFromOtherNode(zmq::context_t& context, const std::string& endpoint, const CurveKeyPair* key,
                       zmq::socket_t* keep_alive) {
  SocketOptions options;
  options.curve = key;
  auto push = MakeSocket(context, zmq::socket_type::push, endpoint, SocketMode::kConnect, options);
  ASSERT_TRUE(push.ok()) << push.status().ToString();
  // PUSH waits for a finished handshake; a refused one never finishes.
  push->set(zmq::sockopt::sndtimeo, 1000);
  (void)SendBytes(*push, "work");
  *keep_alive = std::move(*push);
}

TEST(Curve, ClusterKeyHolderIsAdmittedAndItsMessageArrives) {
  const CurveKeyPair key = NewKey();
  ServerNode server(key);
  zmq::context_t client_context;
  zmq::socket_t push;
  SendFromOtherNode(client_context, server.endpoint, &key, &push);
  auto got = RecvMultipart(server.pull, milliseconds(5000));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ((*got)[0].to_string(), "work");
  EXPECT_EQ(server.auth->refused(), 0);
  EXPECT_EQ(server.failures->failures(), 0);
}

TEST(Curve, AnotherDeploymentsKeyIsRefusedAndLogged) {
  const CurveKeyPair key = NewKey();
  const CurveKeyPair stranger = NewKey();
  ServerNode server(key);
  zmq::context_t client_context;
  zmq::socket_t push;
  SendFromOtherNode(client_context, server.endpoint, &stranger, &push);
  EXPECT_TRUE(WaitFor([&] { return server.failures->failures() > 0; }));
  auto got = RecvMultipart(server.pull, milliseconds(200));
  EXPECT_FALSE(got.ok());
}

TEST(Curve, RightServerKeyButForeignClientKeyIsRefusedByTheAuthenticator) {
  const CurveKeyPair key = NewKey();
  ServerNode server(key);
  const CurveKeyPair own = NewKey();
  zmq::context_t client_context;
  zmq::socket_t push(client_context, zmq::socket_type::push);
  push.set(zmq::sockopt::linger, 0);
  push.set(zmq::sockopt::curve_serverkey, key.public_key);  // knows the public half only
  push.set(zmq::sockopt::curve_publickey, own.public_key);
  push.set(zmq::sockopt::curve_secretkey, own.secret_key);
  push.connect(server.endpoint);
  push.set(zmq::sockopt::sndtimeo, 1000);
  (void)SendBytes(push, "work");
  EXPECT_TRUE(WaitFor([&] { return server.auth->refused() > 0; }));
  auto got = RecvMultipart(server.pull, milliseconds(200));
  EXPECT_FALSE(got.ok());
}

TEST(Curve, PlainClientWithoutKeyIsRefused) {
  const CurveKeyPair key = NewKey();
  ServerNode server(key);
  zmq::context_t client_context;
  zmq::socket_t push;
  SendFromOtherNode(client_context, server.endpoint, nullptr, &push);
  EXPECT_TRUE(WaitFor([&] { return server.failures->failures() > 0; }));
  auto got = RecvMultipart(server.pull, milliseconds(200));
  EXPECT_FALSE(got.ok());
}

TEST(Curve, IpcSocketsIgnoreTheClusterKey) {
  const CurveKeyPair key = NewKey();
  zmq::context_t context;
  auto endpoint = MakeIpcEndpoint("curve-test");
  ASSERT_TRUE(endpoint.ok());
  SocketOptions options;
  options.curve = &key;
  auto pull = MakeSocket(context, zmq::socket_type::pull, *endpoint, SocketMode::kBind, options);
  ASSERT_TRUE(pull.ok());
  EXPECT_EQ(pull->get(zmq::sockopt::curve_server), 0);
  auto push = MakeSocket(context, zmq::socket_type::push, *endpoint, SocketMode::kConnect);
  ASSERT_TRUE(push.ok());
  ASSERT_TRUE(SendBytes(*push, "local").ok());
  auto got = RecvMultipart(*pull, milliseconds(5000));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)[0].to_string(), "local");
  RemoveIpcFile(*endpoint);
}

}  // namespace
}  // namespace llmserve::common::ipc
