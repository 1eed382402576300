// One HTTP/1.1 client connection over plain TCP or TLS. The only
// translation unit that includes Boost.Beast (each one that does is slow to
// build); the server (accepting, stopping) is http_server.cc, the writer
// handlers answer through is exchange_writer.cc.
//
// Threading: every connection owns a strand; all of its state is touched only
// on that strand. ResponseWriter calls from other threads post closures to the
// strand. A writer holds the connection weakly: a connection lives as long as
// it has an operation outstanding (while a request is being answered, that is
// at least the "watch" read that detects a client disconnect), so a gone client
// frees its connection even while the engine keeps the writer.
//
// TLS: the connection begins with the server handshake (bounded by the
// keep-alive timeout); everything after it reads and writes through the TLS
// stream, the disconnect watch included. Closing does not send close_notify:
// every answer is framed (Content-Length or chunked), so a client cannot
// mistake a truncated answer for a whole one.
//
// Per-connection phases: kReading (header/body of the next request), kHandling
// (a handler owns the exchange; the socket is watched for EOF), kClosed. While
// handling, bytes of a pipelined next request read by the watch are kept in
// the parse buffer; when the answer is complete the watch is cancelled and the
// next request is parsed from the buffer.

#include "frontend/http/connection.h"

#include <deque>
#include <mutex>
#include <type_traits>
#include <vector>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <glog/logging.h>

#include "frontend/http/beast_request.h"

namespace llmserve::frontend::http::internal {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {
constexpr size_t kWatchReadBytes = 4096;
constexpr size_t kMaxPipelinedBytes = 64 * 1024;
// A rejected upload (413) is read to its end, up to this much, before the
// close: closing with unread bytes makes the kernel send a reset that can
// destroy the 413 before the client reads it.
constexpr size_t kMaxDrainBytes = 64u << 20;
}  // namespace

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

template <class Stream>
class Connection final : public ConnectionBase, public std::enable_shared_from_this<Connection<Stream>> {
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

 public:
  // `stream_args` construct the stream: the accepted socket, then for TLS the context.
  template <class... StreamArgs>
  Connection(const Router* router, const HttpServerConfig* config, std::shared_ptr<SharedState> state,
             StreamArgs&&... stream_args)
      : stream_(std::forward<StreamArgs>(stream_args)...), router_(router), config_(config), state_(std::move(state)) {
    beast::error_code ec;
    auto endpoint = Tcp().socket().remote_endpoint(ec);
    if (!ec) remote_ = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  }

  ~Connection() override {
    if (exchange_) exchange_->closed = true;
    std::lock_guard<std::mutex> lock(state_->registry_mu);
    state_->connections.erase(this);
    state_->registry_cv.notify_all();
  }

  // Registers with the server and starts reading the first request (after
  // the handshake, for TLS).
  void Start() {
    {
      std::lock_guard<std::mutex> lock(state_->registry_mu);
      state_->connections[this] = this->weak_from_this();
    }
    net::dispatch(stream_.get_executor(), [self = this->shared_from_this()] {
      if constexpr (kTls) {
        self->Handshake();
      } else {
        self->ReadHeader();
      }
    });
  }

  net::any_io_executor executor() override { return stream_.get_executor(); }

  void CloseIfIdle() override {
    if (phase_ == Phase::kReading) Close();
  }

  void ForceClose() override {
    if (phase_ == Phase::kHandling) {
      ClientGone();
    } else {
      Close();
    }
  }

  // ---- called on the strand by the writer --------------------------------
  void DoRespond(const std::shared_ptr<Exchange>& ex, HttpResponse response) override {
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
    Tcp().expires_after(config_->write_timeout);
    bhttp::async_write(stream_, *res,
                       [self = this->shared_from_this(), res](beast::error_code ec, size_t) {
                         self->OnFullResponseWritten(ec);
                       });
  }

  void DoBeginStream(const std::shared_ptr<Exchange>& ex, int status, std::string content_type,
                     Headers headers) override {
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
    Tcp().expires_after(config_->write_timeout);
    bhttp::async_write_header(stream_, *serializer_,
                              [self = this->shared_from_this()](beast::error_code ec, size_t) {
                                self->header_sent_ = true;
                                self->OnStreamWritten(ec);
                              });
  }

  void DoWrite(const std::shared_ptr<Exchange>& ex, std::string data) override {
    if (ex != exchange_ || !streaming_ || end_requested_) {
      ex->pending -= data.size();
      return;
    }
    pending_ += data;
    MaybeWriteChunk();
  }

  void DoEnd(const std::shared_ptr<Exchange>& ex) override {
    if (ex != exchange_ || !streaming_) return;
    end_requested_ = true;
    MaybeWriteChunk();
  }

  void DoSetOnDisconnect(const std::shared_ptr<Exchange>& ex, std::function<void()> callback) override {
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

  // The TCP layer (timeouts, the socket) under the stream.
  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }

  // TLS only: the server handshake, then the first request. A client that
  // fails it (plain HTTP, an unknown certificate authority, no client
  // certificate when one is required) is closed.
  void Handshake() {
    if constexpr (kTls) {
      Tcp().expires_after(config_->keep_alive_timeout);
      stream_.async_handshake(boost::asio::ssl::stream_base::server,
                              [self = this->shared_from_this()](beast::error_code ec) {
                                if (self->phase_ == Phase::kClosed) return;
                                if (ec) {
                                  VLOG(1) << "TLS handshake with " << self->remote_ << " failed: " << ec.message();
                                  return self->Close();
                                }
                                self->ReadHeader();
                              });
    }
  }

  // ---- reading a request -----------------------------------------------------
  void ReadHeader() {
    if (phase_ == Phase::kClosed) return;
    phase_ = Phase::kReading;
    if (state_->stopping) {
      Close();
      return;
    }
    parser_.emplace();
    LimitRequestParser(*config_, &*parser_);
    Tcp().expires_after(config_->keep_alive_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = this->shared_from_this()](beast::error_code ec, size_t) {
                               self->OnHeader(ec);
                             });
  }

  void OnHeader(beast::error_code ec) {
    if (phase_ == Phase::kClosed) return;
    if (ec) return OnReadError(ec);
    auto& req = parser_->get();
    if (beast::iequals(req[bhttp::field::expect], "100-continue")) {
      auto cont = std::make_shared<bhttp::response<bhttp::empty_body>>(bhttp::status::continue_, req.version());
      Tcp().expires_after(config_->write_timeout);
      bhttp::async_write(stream_, *cont, [self = this->shared_from_this(), cont](beast::error_code ec2, size_t) {
        if (self->phase_ == Phase::kClosed) return;
        if (ec2) return self->Close();
        self->ReadBody();
      });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    Tcp().expires_after(config_->body_read_timeout);
    bhttp::async_read(stream_, buffer_, *parser_, [self = this->shared_from_this()](beast::error_code ec, size_t) {
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
        ec == bhttp::error::partial_message || ec == net::ssl::error::stream_truncated) {
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
    Dispatch(ToHttpRequest(std::move(msg), remote_));
  }

  // ---- answering -----------------------------------------------------------------
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
      Tcp().expires_after(config_->write_timeout);
      net::async_write(stream_, bhttp::make_chunk(net::buffer(inflight_)),
                       [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnStreamWritten(ec); });
    } else if (end_requested_ && !last_chunk_sent_) {
      last_chunk_sent_ = true;
      writing_ = true;
      Tcp().expires_after(config_->write_timeout);
      net::async_write(stream_, bhttp::make_chunk_last(),
                       [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnStreamWritten(ec); });
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
      Tcp().socket().shutdown(tcp::socket::shutdown_send, ignored);
      if (linger_) return Drain();
      return Close();
    }
    if (watching_) {
      resume_after_watch_ = true;
      beast::error_code ignored;
      Tcp().socket().cancel(ignored);
      return;
    }
    ReadHeader();
  }

  // Reads and discards what the client still sends (bounded), then closes.
  void Drain() {
    if (phase_ == Phase::kClosed) return;
    Tcp().expires_after(std::chrono::seconds(1));
    stream_.async_read_some(buffer_.prepare(kWatchReadBytes * 16),
                            [self = this->shared_from_this()](beast::error_code ec, size_t n) {
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
    answer_timer_.async_wait([self = this->shared_from_this(), ex = exchange_](beast::error_code ec) {
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
    auto on_read = [self = this->shared_from_this()](beast::error_code ec, size_t n) { self->OnWatch(ec, n); };
    if constexpr (kTls) {
      Tcp().expires_never();  // the watch waits as long as the answer takes
      stream_.async_read_some(buffer_.prepare(kWatchReadBytes), std::move(on_read));
    } else {
      Tcp().socket().async_read_some(buffer_.prepare(kWatchReadBytes), std::move(on_read));
    }
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
    Tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
    Tcp().close();
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  const Router* router_;
  const HttpServerConfig* config_;
  std::shared_ptr<SharedState> state_;
  std::string remote_;

  Phase phase_ = Phase::kReading;
  std::optional<RequestParser> parser_;
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

template <class Stream>
void Connection<Stream>::Dispatch(HttpRequest request) {
  phase_ = Phase::kHandling;
  exchange_ = std::make_shared<Exchange>();
  auto writer = MakeExchangeWriter(this->weak_from_this(), exchange_, state_);
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

void ServeConnection(tcp::socket socket, net::ssl::context* tls, const Router* router,
                     const HttpServerConfig* config, std::shared_ptr<SharedState> state) {
  if (tls) {
    std::make_shared<Connection<TlsStream>>(router, config, std::move(state), std::move(socket), *tls)->Start();
  } else {
    std::make_shared<Connection<PlainStream>>(router, config, std::move(state), std::move(socket))->Start();
  }
}

}  // namespace llmserve::frontend::http::internal
