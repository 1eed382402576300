// One HTTP/1.1 client connection and the ResponseWriter its handlers answer
// through. The only translation unit that includes Boost.Beast (each one that
// does is slow to build); the server (accepting, stopping) is http_server.cc.
//
// Threading: every connection owns a strand; all of its state is touched only
// on that strand. ResponseWriter calls from other threads post closures to the
// strand. A writer holds the connection weakly: a connection lives as long as
// it has an operation outstanding (while a request is being answered, that is
// at least the "watch" read that detects a client disconnect), so a gone client
// frees its connection even while the engine keeps the writer.
//
// Shutdown safety: posting needs the io_context alive. Writers post under
// SharedState::post_mu and only while `running`; the server clears `running`
// (under the same mutex) after joining its threads and before destroying the
// io_context, so no post can race with its destruction.
//
// Per-connection phases: kReading (header/body of the next request), kHandling
// (a handler owns the exchange; the socket is watched for EOF), kClosed. While
// handling, bytes of a pipelined next request read by the watch are kept in
// the parse buffer; when the answer is complete the watch is cancelled and the
// next request is parsed from the buffer.

#include "frontend/http/connection.h"

#include <deque>
#include <mutex>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <glog/logging.h>

namespace llmserve::frontend::http::internal {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// What a writer and its connection share about one request/response exchange.
struct Exchange {
  std::atomic<bool> closed{false};    // client gone or connection closed
  std::atomic<bool> finished{false};  // Respond() or End() called
  std::atomic<bool> streaming{false}; // BeginStream() called
  std::atomic<bool> completed{false}; // the whole answer reached the socket
  std::atomic<size_t> pending{0};     // bytes written by Write() not yet on the socket
};

namespace {
constexpr size_t kWatchReadBytes = 4096;
constexpr size_t kMaxPipelinedBytes = 64 * 1024;
// A rejected upload (413) is read to its end, up to this much, before the
// close: closing with unread bytes makes the kernel send a reset that can
// destroy the 413 before the client reads it.
constexpr size_t kMaxDrainBytes = 64u << 20;
}  // namespace

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, const Router* router, const HttpServerConfig* config,
             std::shared_ptr<SharedState> state)
      : stream_(std::move(socket)), router_(router), config_(config), state_(std::move(state)) {
    beast::error_code ec;
    auto endpoint = stream_.socket().remote_endpoint(ec);
    if (!ec) remote_ = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  }

  ~Connection() {
    if (exchange_) exchange_->closed = true;
    std::lock_guard<std::mutex> lock(state_->registry_mu);
    state_->connections.erase(this);
    state_->registry_cv.notify_all();
  }

  // Registers with the server and starts reading the first request.
  void Start() {
    {
      std::lock_guard<std::mutex> lock(state_->registry_mu);
      state_->connections[this] = weak_from_this();
    }
    net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->ReadHeader(); });
  }

  // The connection's strand.
  net::any_io_executor executor() { return stream_.get_executor(); }

  // Graceful stop: closes the connection unless a request is being answered.
  void CloseIfIdle() {
    if (phase_ == Phase::kReading) Close();
  }

  // Forced stop: closes the connection, aborting an exchange in progress.
  void ForceClose() {
    if (phase_ == Phase::kHandling) {
      ClientGone();
    } else {
      Close();
    }
  }

  // ---- called on the strand by the writer --------------------------------
  void DoRespond(const std::shared_ptr<Exchange>& ex, HttpResponse response) {
    if (ex != exchange_ || streaming_ || response_started_) return;
    response_started_ = true;
    answer_timer_.cancel();
    auto res = std::make_shared<bhttp::response<bhttp::string_body>>();
    res->version(version_);
    res->result(static_cast<unsigned>(response.status));
    FillHeaders(*res, response.content_type, response.headers);
    res->body() = std::move(response.body);
    res->keep_alive(KeepAlive());
    res->prepare_payload();
    stream_.expires_after(config_->write_timeout);
    bhttp::async_write(stream_, *res,
                       [self = shared_from_this(), res](beast::error_code ec, size_t) {
                         self->OnFullResponseWritten(ec);
                       });
  }

  void DoBeginStream(const std::shared_ptr<Exchange>& ex, int status, std::string content_type,
                     Headers headers) {
    if (ex != exchange_ || streaming_ || response_started_) return;
    response_started_ = streaming_ = true;
    answer_timer_.cancel();
    stream_header_ = std::make_unique<bhttp::response<bhttp::empty_body>>();
    stream_header_->version(version_);
    stream_header_->result(static_cast<unsigned>(status));
    FillHeaders(*stream_header_, content_type, headers);
    stream_header_->keep_alive(KeepAlive());
    stream_header_->chunked(true);
    serializer_ = std::make_unique<bhttp::response_serializer<bhttp::empty_body>>(*stream_header_);
    writing_ = true;
    stream_.expires_after(config_->write_timeout);
    bhttp::async_write_header(stream_, *serializer_,
                              [self = shared_from_this()](beast::error_code ec, size_t) {
                                self->header_sent_ = true;
                                self->OnStreamWritten(ec);
                              });
  }

  void DoWrite(const std::shared_ptr<Exchange>& ex, std::string data) {
    if (ex != exchange_ || !streaming_ || end_requested_) {
      ex->pending -= data.size();
      return;
    }
    pending_ += data;
    MaybeWriteChunk();
  }

  void DoEnd(const std::shared_ptr<Exchange>& ex) {
    if (ex != exchange_ || !streaming_) return;
    end_requested_ = true;
    MaybeWriteChunk();
  }

  void DoSetOnDisconnect(const std::shared_ptr<Exchange>& ex, std::function<void()> callback) {
    if (ex == exchange_ && phase_ == Phase::kHandling && !ex->closed) {
      on_disconnect_ = std::move(callback);
    } else if (ex->closed && !ex->completed && callback) {
      callback();  // the client left before the answer was complete
    }
  }

 private:
  enum class Phase { kReading, kHandling, kClosed };

  template <class Message>
  void FillHeaders(Message& m, const std::string& content_type, const Headers& headers) {
    m.set(bhttp::field::server, "llmserve");
    if (!content_type.empty()) m.set(bhttp::field::content_type, content_type);
    for (const auto& [name, value] : headers) m.insert(name, value);
  }

  bool KeepAlive() const { return keep_alive_ && !state_->stopping.load(); }

  // ---- reading a request -----------------------------------------------------
  void ReadHeader() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kReading;
    if (state_->stopping) {
      Close();
      return;
    }
    parser_.emplace();
    parser_->header_limit(static_cast<uint32_t>(config_->max_header_bytes));
    parser_->body_limit(config_->max_request_body_bytes);
    stream_.expires_after(config_->keep_alive_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, size_t) {
                               self->OnHeader(ec);
                             });
  }

  void OnHeader(beast::error_code ec) {
    if (phase_ == Phase::kClosed) return;
    if (ec) return OnReadError(ec);
    auto& req = parser_->get();
    if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
      auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, req.version());
      stream_.expires_after(config_->write_timeout);
      bhttp::async_write(stream_, *cont, [self = shared_from_this(), cont](beast::error_code ec2, size_t) {
        if (self->phase_ == Phase::kClosed) return;
        if (ec2) return self->Close();
        self->ReadBody();
      });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    stream_.expires_after(config_->body_read_timeout);
    bhttp::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      self->OnBody(ec);
    });
  }

  void OnReadError(beast::error_code ec) {
    if (ec == bhttp::error::body_limit) {
      return RespondAndClose(413, "Request body too large: the limit is " +
                                      std::to_string(config_->max_request_body_bytes) + " bytes");
    }
    if (ec == bhttp::error::header_limit) return RespondAndClose(431, "Request header fields too large");
    if (ec == bhttp::error::end_of_stream || ec == net::error::eof || ec == beast::error::timeout ||
        ec == net::error::operation_aborted || ec == net::error::connection_reset ||
        ec == bhttp::error::partial_message) {
      return Close();
    }
    // Anything else is a malformed request.
    RespondAndClose(400, "Malformed HTTP request: " + ec.message());
  }

  void OnBody(beast::error_code ec) {
    if (phase_ == Phase::kClosed) return;
    if (ec) return OnReadError(ec);
    bhttp::request<bhttp::string_body> msg = parser_->release();
    parser_.reset();
    version_ = msg.version();
    keep_alive_ = msg.keep_alive();

    HttpRequest request;
    request.method = std::string(msg.method_string());
    request.target = std::string(msg.target());
    SplitTarget(request.target, &request.path, &request.query);
    for (const auto& field : msg) {
      request.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
    }
    request.body = std::move(msg.body());
    request.remote = remote_;
    Dispatch(std::move(request));
  }

  // ---- answering -----------------------------------------------------------------
  class Writer;

  void Dispatch(HttpRequest request);

  // Answers an unreadable request and closes, draining what the client still sends
  // so that the answer is not lost to a TCP reset.
  void RespondAndClose(int status, const std::string& message) {
    keep_alive_ = false;
    linger_ = true;
    phase_ = Phase::kHandling;
    exchange_ = std::make_shared<Exchange>();
    exchange_->finished = true;
    DoRespond(exchange_, router_->Error(status, message));
  }

  void OnFullResponseWritten(beast::error_code ec) {
    if (phase_ == Phase::kClosed) return;
    if (ec) return ClientGone();
    FinishExchange();
  }

  void MaybeWriteChunk() {
    if (writing_ || !header_sent_ || phase_ != Phase::kHandling) return;
    if (!pending_.empty()) {
      inflight_.swap(pending_);
      pending_.clear();
      writing_ = true;
      stream_.expires_after(config_->write_timeout);
      net::async_write(stream_, bhttp::make_chunk(net::buffer(inflight_)),
                       [self = shared_from_this()](beast::error_code ec, size_t) { self->OnStreamWritten(ec); });
    } else if (end_requested_ && !last_chunk_sent_) {
      last_chunk_sent_ = true;
      writing_ = true;
      stream_.expires_after(config_->write_timeout);
      net::async_write(stream_, bhttp::make_chunk_last(),
                       [self = shared_from_this()](beast::error_code ec, size_t) { self->OnStreamWritten(ec); });
    }
  }

  void OnStreamWritten(beast::error_code ec) {
    writing_ = false;
    if (phase_ == Phase::kClosed) return;
    if (ec) return ClientGone();
    if (exchange_) exchange_->pending -= inflight_.size();
    inflight_.clear();
    if (last_chunk_sent_) return FinishExchange();
    MaybeWriteChunk();
  }

  // The answer is complete: go on to the next request or close.
  void FinishExchange() {
    if (exchange_) {
      exchange_->finished = true;
      exchange_->completed = true;
    }
    exchange_.reset();
    on_disconnect_ = nullptr;
    streaming_ = response_started_ = header_sent_ = end_requested_ = last_chunk_sent_ = false;
    serializer_.reset();
    stream_header_.reset();
    pending_.clear();
    phase_ = Phase::kReading;
    if (!KeepAlive()) {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      if (linger_) return Drain();
      return Close();
    }
    if (watching_) {
      resume_after_watch_ = true;
      beast::error_code ignored;
      stream_.socket().cancel(ignored);
      return;
    }
    ReadHeader();
  }

  // Reads and discards what the client still sends (bounded), then closes.
  void Drain() {
    if (phase_ == Phase::kClosed) return;
    stream_.expires_after(std::chrono::seconds(1));
    stream_.async_read_some(buffer_.prepare(kWatchReadBytes * 16),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->drained_ += n;
                              if (ec || self->drained_ > kMaxDrainBytes) return self->Close();
                              self->Drain();
                            });
  }

  // Answers 504 and runs the disconnect callback (so the work is aborted) if the
  // handler has not begun its answer within answer_timeout.
  void StartAnswerTimer() {
    if (config_->answer_timeout.count() <= 0) return;
    answer_timer_.expires_after(config_->answer_timeout);
    answer_timer_.async_wait([self = shared_from_this(), ex = exchange_](beast::error_code ec) {
      if (ec || ex != self->exchange_ || self->response_started_ || self->phase_ != Phase::kHandling) return;
      std::function<void()> callback = std::move(self->on_disconnect_);
      self->on_disconnect_ = nullptr;
      ex->finished = true;
      ex->closed = true;  // the handler's later calls are dropped
      self->DoRespond(ex, self->router_->Error(504, "The server did not begin an answer within " +
                                                        std::to_string(self->config_->answer_timeout.count()) + " ms"));
      if (callback) callback();
    });
  }

  // ---- disconnect detection -------------------------------------------------------
  void StartWatch() {
    if (watching_ || phase_ != Phase::kHandling) return;
    watching_ = true;
    stream_.socket().async_read_some(buffer_.prepare(kWatchReadBytes),
                                     [self = shared_from_this()](beast::error_code ec, size_t n) {
                                       self->OnWatch(ec, n);
                                     });
  }

  void OnWatch(beast::error_code ec, size_t n) {
    watching_ = false;
    if (phase_ == Phase::kClosed) return;
    if (!ec) buffer_.commit(n);
    if (phase_ == Phase::kHandling) {
      if (!ec) {
        // A pipelined request: keep its bytes; keep watching while they are few.
        if (buffer_.size() < kMaxPipelinedBytes) StartWatch();
        return;
      }
      if (ec != net::error::operation_aborted) ClientGone();
      return;
    }
    // The answer completed while the watch was pending.
    if (resume_after_watch_) {
      resume_after_watch_ = false;
      if (ec && ec != net::error::operation_aborted) return Close();
      ReadHeader();
    }
  }

  // The client went away (or a write failed) before the answer was complete.
  void ClientGone() {
    std::function<void()> callback = std::move(on_disconnect_);
    on_disconnect_ = nullptr;
    if (exchange_) exchange_->closed = true;
    Close();
    if (callback) callback();
  }

  void Close() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kClosed;
    answer_timer_.cancel();
    if (exchange_) exchange_->closed = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  const Router* router_;
  const HttpServerConfig* config_;
  std::shared_ptr<SharedState> state_;
  std::string remote_;

  Phase phase_ = Phase::kReading;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  unsigned version_ = 11;
  bool keep_alive_ = true;

  std::shared_ptr<Exchange> exchange_;  // the request being answered
  std::function<void()> on_disconnect_;
  bool response_started_ = false;
  bool streaming_ = false;
  bool header_sent_ = false;
  bool writing_ = false;
  bool end_requested_ = false;
  bool last_chunk_sent_ = false;
  std::unique_ptr<bhttp::response<bhttp::empty_body>> stream_header_;
  std::unique_ptr<bhttp::response_serializer<bhttp::empty_body>> serializer_;
  std::string pending_;   // stream bytes waiting for the current write to finish
  std::string inflight_;  // stream bytes being written

  bool watching_ = false;
  bool resume_after_watch_ = false;
  bool linger_ = false;    // drain the socket before closing
  net::steady_timer answer_timer_{stream_.get_executor()};  // HttpServerConfig::answer_timeout
  size_t drained_ = 0;     // bytes discarded while draining
};

// The ResponseWriter handed to handlers.
class Connection::Writer final : public ResponseWriter {
 public:
  Writer(std::weak_ptr<Connection> connection, std::shared_ptr<Exchange> exchange,
         std::shared_ptr<SharedState> state)
      : connection_(std::move(connection)), exchange_(std::move(exchange)), state_(std::move(state)) {}

  ~Writer() override {
    if (exchange_->finished) return;
    if (exchange_->streaming) {
      End();
    } else if (!exchange_->closed) {
      LOG(WARNING) << "HTTP handler dropped its response writer without answering; sending 500";
      Respond(HttpResponse::Make(500, "text/plain; charset=utf-8", "The handler produced no response.\n"));
    }
  }

  void Respond(HttpResponse response) override {
    if (exchange_->streaming || exchange_->finished.exchange(true)) return;
    Post([response = std::move(response)](Connection& c, const std::shared_ptr<Exchange>& ex) mutable {
      c.DoRespond(ex, std::move(response));
    });
  }

  void BeginStream(int status, std::string content_type, Headers headers) override {
    if (exchange_->finished || exchange_->streaming.exchange(true)) return;
    Post([status, content_type = std::move(content_type), headers = std::move(headers)](
             Connection& c, const std::shared_ptr<Exchange>& ex) mutable {
      c.DoBeginStream(ex, status, std::move(content_type), std::move(headers));
    });
  }

  void Write(std::string data) override {
    if (exchange_->finished || exchange_->closed || data.empty()) return;
    exchange_->pending += data.size();
    Post([data = std::move(data)](Connection& c, const std::shared_ptr<Exchange>& ex) mutable {
      c.DoWrite(ex, std::move(data));
    });
  }

  void End() override {
    if (!exchange_->streaming || exchange_->finished.exchange(true)) return;
    Post([](Connection& c, const std::shared_ptr<Exchange>& ex) { c.DoEnd(ex); });
  }

  bool closed() const override { return exchange_->closed; }
  bool finished() const override { return exchange_->finished; }
  size_t pending_bytes() const override { return exchange_->pending; }

  void OnDisconnect(std::function<void()> callback) override {
    bool posted = Post([callback](Connection& c, const std::shared_ptr<Exchange>& ex) mutable {
      c.DoSetOnDisconnect(ex, std::move(callback));
    });
    // The connection is already gone: the client left (or the server stopped).
    if (!posted && !exchange_->completed && callback) callback();
  }

 private:
  // Runs fn(connection, exchange) on the connection's strand; false if the
  // connection or the server is gone.
  template <class Fn>
  bool Post(Fn fn) {
    std::lock_guard<std::mutex> lock(state_->post_mu);
    if (!state_->running) return false;
    std::shared_ptr<Connection> c = connection_.lock();
    if (!c) return false;
    net::any_io_executor ex = c->executor();
    net::post(ex, [c = std::move(c), exchange = exchange_, fn = std::move(fn)]() mutable {
      fn(*c, exchange);
    });
    return true;
  }

  std::weak_ptr<Connection> connection_;
  std::shared_ptr<Exchange> exchange_;
  std::shared_ptr<SharedState> state_;
};

void Connection::Dispatch(HttpRequest request) {
  phase_ = Phase::kHandling;
  exchange_ = std::make_shared<Exchange>();
  auto writer = std::make_shared<Writer>(weak_from_this(), exchange_, state_);
  StartWatch();
  StartAnswerTimer();
  try {
    router_->Dispatch(std::move(request), std::move(writer));
  } catch (const std::exception& e) {
    LOG(ERROR) << "HTTP handler threw: " << e.what();
    if (!exchange_) return;
    // Answers first unless the handler's own answer already went out on the strand.
    exchange_->finished = true;
    DoRespond(exchange_, router_->Error(500, std::string("Internal server error: ") + e.what()));
  }
}

void ServeConnection(tcp::socket socket, const Router* router, const HttpServerConfig* config,
                     std::shared_ptr<SharedState> state) {
  std::make_shared<Connection>(std::move(socket), router, config, std::move(state))->Start();
}

void CloseConnections(SharedState& state, bool force) {
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard<std::mutex> lock(state.registry_mu);
    for (auto& [ptr, weak] : state.connections) {
      if (auto c = weak.lock()) live.push_back(std::move(c));
    }
  }
  for (auto& c : live) {
    if (force) {
      net::post(c->executor(), [c] { c->ForceClose(); });
    } else {
      net::post(c->executor(), [c] { c->CloseIfIdle(); });
    }
  }
}

}  // namespace llmserve::frontend::http::internal
