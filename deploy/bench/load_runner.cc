#include "deploy/bench/load_runner.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <memory>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "deploy/bench/sse_parser.h"

namespace llmserve::deploy::bench {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

StatusOr<Endpoint> ParseBaseUrl(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind("https://", 0) == 0) {
    return Status::InvalidArgument("--base-url: https is not supported; put a TLS-terminating proxy in front");
  }
  if (url.rfind(scheme, 0) != 0) return Status::InvalidArgument("--base-url must start with http://, got '" + url + "'");
  std::string rest = url.substr(scheme.size());
  Endpoint e;
  const size_t slash = rest.find('/');
  if (slash != std::string::npos) {
    e.base_path = rest.substr(slash);
    rest.resize(slash);
    while (!e.base_path.empty() && e.base_path.back() == '/') e.base_path.pop_back();
  }
  if (!rest.empty() && rest.front() == '[') {  // [v6]:port
    const size_t close = rest.find(']');
    if (close == std::string::npos) return Status::InvalidArgument("--base-url: unbalanced '[' in '" + url + "'");
    e.host = rest.substr(1, close - 1);
    if (close + 1 < rest.size() && rest[close + 1] == ':') e.port = rest.substr(close + 2);
  } else {
    const size_t colon = rest.rfind(':');
    e.host = rest.substr(0, colon);
    if (colon != std::string::npos) e.port = rest.substr(colon + 1);
  }
  if (e.host.empty() || e.port.empty() ||
      e.port.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument("--base-url: cannot read host and port from '" + url + "'");
  }
  return e;
}

namespace {

constexpr size_t kMaxErrorBody = 2048;

class Runner;

// One request on one connection: connect (unless reusing), write, read the
// response head, then read the body chunk by chunk into the SSE parser.
class Exchange : public std::enable_shared_from_this<Exchange> {
 public:
  Exchange(Runner* runner, size_t index, std::unique_ptr<beast::tcp_stream> stream, bool reused);
  void Start();
  // Closes the connection so that pending operations end (run deadline).
  void Abort();

 private:
  void Fail(beast::error_code ec, const char* what);
  void OnConnect(beast::error_code ec);
  void OnWrite(beast::error_code ec);
  void OnHeader(beast::error_code ec);
  void ReadBody();
  void OnBody(beast::error_code ec);
  void Done(bool reusable);

  Runner* runner_;
  size_t index_;
  std::unique_ptr<beast::tcp_stream> stream_;
  bool reused_;
  bool got_bytes_ = false;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response_parser<http::buffer_body> parser_;
  char chunk_[16384];
  SseParser sse_;
  std::unique_ptr<StreamAccumulator> acc_;
  std::string error_body_;
  bool finished_ = false;
};

class Runner {
 public:
  Runner(const Endpoint& endpoint, const std::vector<LoadRequest>& requests, const LoadOptions& options)
      : endpoint_(endpoint), requests_(requests), options_(options), outputs_(requests.size()),
        arrival_timer_(ioc_), run_timer_(ioc_) {}

  Status Run(LoadResult* result) {
    beast::error_code ec;
    tcp::resolver resolver(ioc_);
    endpoints_ = resolver.resolve(endpoint_.host, endpoint_.port, ec);
    if (ec) return Status::Unavailable("cannot resolve " + endpoint_.host + ":" + endpoint_.port + ": " + ec.message());
    start_ = Clock::now();
    if (options_.max_duration_s > 0) {
      run_timer_.expires_after(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options_.max_duration_s)));
      run_timer_.async_wait([this](beast::error_code e) {
        if (!e) StopRun();
      });
    }
    ReleaseArrivals();
    ioc_.run();
    result->outputs = std::move(outputs_);
    result->duration_s = last_end_s_;
    return Status::Ok();
  }

  double Now() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  asio::io_context& ioc() { return ioc_; }
  const tcp::resolver::results_type& endpoints() const { return endpoints_; }
  const Endpoint& endpoint() const { return endpoint_; }
  const LoadRequest& request(size_t i) const { return requests_[i]; }
  const LoadOptions& options() const { return options_; }
  bool stopping() const { return stopping_; }
  RequestOutput* output(size_t i) { return &outputs_[i]; }
  Clock::time_point Deadline(size_t i) const {
    return start_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                        outputs_[i].start_time + options_.request_timeout_s));
  }

  // A request ended; `stream` is an idle keep-alive connection or null.
  void Finished(std::unique_ptr<beast::tcp_stream> stream, const std::shared_ptr<Exchange>& ex) {
    if (stream && !stopping_) idle_.push_back(std::move(stream));
    in_flight_.erase(std::remove(in_flight_.begin(), in_flight_.end(), ex), in_flight_.end());
    last_end_s_ = std::max(last_end_s_, Now());
    ++done_;
    if (options_.on_progress) options_.on_progress(done_, requests_.size());
    Launch();
    MaybeFinish();
  }

  // A reused connection failed before any response byte: try once more on a new one.
  void Retry(size_t i, const std::shared_ptr<Exchange>& ex) {
    in_flight_.erase(std::remove(in_flight_.begin(), in_flight_.end(), ex), in_flight_.end());
    Send(i, /*allow_reuse=*/false);
  }

 private:
  // Moves every request whose time has come into the ready FIFO and re-arms the timer.
  void ReleaseArrivals() {
    const double now = Now();
    while (next_ < requests_.size() && requests_[next_].arrival_s <= now) ready_.push_back(next_++);
    Launch();
    if (next_ < requests_.size() && !stopping_) {
      arrival_timer_.expires_at(start_ + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(requests_[next_].arrival_s)));
      arrival_timer_.async_wait([this](beast::error_code ec) {
        if (!ec) ReleaseArrivals();
      });
    }
    MaybeFinish();
  }

  void Launch() {
    while (!stopping_ && !ready_.empty() &&
           (options_.max_concurrency == 0 || in_flight_.size() < options_.max_concurrency)) {
      const size_t i = ready_.front();
      ready_.pop_front();
      RequestOutput& o = outputs_[i];
      o.prompt_len = requests_[i].prompt_len;
      o.start_time = Now();
      o.queue_time = std::max(0.0, o.start_time - requests_[i].arrival_s);
      Send(i, /*allow_reuse=*/true);
    }
  }

  void Send(size_t i, bool allow_reuse) {
    std::unique_ptr<beast::tcp_stream> stream;
    if (allow_reuse && !idle_.empty()) {
      stream = std::move(idle_.back());
      idle_.pop_back();
    }
    const bool reused = stream != nullptr;
    if (!stream) stream = std::make_unique<beast::tcp_stream>(ioc_);
    auto ex = std::make_shared<Exchange>(this, i, std::move(stream), reused);
    in_flight_.push_back(ex);
    ex->Start();
  }

  void StopRun() {
    stopping_ = true;
    arrival_timer_.cancel();
    while (next_ < requests_.size()) ready_.push_back(next_++);
    for (size_t i : ready_) {
      outputs_[i].prompt_len = requests_[i].prompt_len;
      outputs_[i].error = "not sent: the run's time limit (--max-duration) was reached";
      ++done_;
    }
    ready_.clear();
    for (auto& ex : std::vector<std::shared_ptr<Exchange>>(in_flight_)) ex->Abort();
    idle_.clear();
    MaybeFinish();
  }

  void MaybeFinish() {
    if (done_ == requests_.size()) {
      run_timer_.cancel();
      arrival_timer_.cancel();
      idle_.clear();
    }
  }

  const Endpoint& endpoint_;
  const std::vector<LoadRequest>& requests_;
  const LoadOptions& options_;
  std::vector<RequestOutput> outputs_;
  asio::io_context ioc_;
  tcp::resolver::results_type endpoints_;
  asio::steady_timer arrival_timer_, run_timer_;
  Clock::time_point start_;
  size_t next_ = 0;  // first request not yet released
  size_t done_ = 0;
  std::deque<size_t> ready_;
  std::vector<std::shared_ptr<Exchange>> in_flight_;
  std::vector<std::unique_ptr<beast::tcp_stream>> idle_;
  bool stopping_ = false;
  double last_end_s_ = 0;
};

Exchange::Exchange(Runner* runner, size_t index, std::unique_ptr<beast::tcp_stream> stream, bool reused)
    : runner_(runner), index_(index), stream_(std::move(stream)), reused_(reused) {
  const LoadRequest& r = runner_->request(index_);
  request_.method(http::verb::post);
  request_.target(runner_->endpoint().base_path + r.target);
  request_.version(11);
  request_.set(http::field::host, runner_->endpoint().host + ":" + runner_->endpoint().port);
  request_.set(http::field::content_type, "application/json");
  request_.set(http::field::accept, "text/event-stream");
  for (const auto& [k, v] : runner_->options().headers) request_.set(k, v);
  if (!r.request_id.empty()) request_.set("x-request-id", r.request_id);
  request_.keep_alive(true);
  request_.body() = r.body;
  request_.prepare_payload();
  parser_.body_limit(std::numeric_limits<std::uint64_t>::max());
}

void Exchange::Start() {
  RequestOutput* o = runner_->output(index_);
  RequestOutput fresh;  // a retry starts over, keeping when the request was first sent
  fresh.prompt_len = runner_->request(index_).prompt_len;
  fresh.start_time = o->start_time;
  fresh.queue_time = o->queue_time;
  *o = std::move(fresh);
  acc_ = std::make_unique<StreamAccumulator>(runner_->options().api, o->start_time, o);
  stream_->expires_at(runner_->Deadline(index_));
  if (reused_) {
    OnConnect({});
    return;
  }
  stream_->async_connect(runner_->endpoints(),
                         [self = shared_from_this()](beast::error_code ec, const tcp::endpoint&) {
                           self->OnConnect(ec);
                         });
}

void Exchange::Abort() {
  beast::error_code ignored;
  stream_->socket().close(ignored);
}

void Exchange::Fail(beast::error_code ec, const char* what) {
  if (finished_) return;
  if (reused_ && !got_bytes_ && ec != beast::error::timeout && !runner_->stopping()) {
    finished_ = true;
    runner_->Retry(index_, shared_from_this());
    return;
  }
  RequestOutput* o = runner_->output(index_);
  acc_->Finish();
  o->success = false;
  o->error = runner_->stopping() ? std::string("cut off while ") + what + ": the run's time limit (--max-duration) was reached"
             : ec == beast::error::timeout ? std::string("timed out (--request-timeout) while ") + what
                                          : std::string(what) + ": " + ec.message();
  Done(false);
}

void Exchange::OnConnect(beast::error_code ec) {
  if (ec) return Fail(ec, "connecting");
  http::async_write(*stream_, request_, [self = shared_from_this()](beast::error_code e, size_t) {
    self->OnWrite(e);
  });
}

void Exchange::OnWrite(beast::error_code ec) {
  if (ec) return Fail(ec, "sending the request");
  http::async_read_header(*stream_, buffer_, parser_, [self = shared_from_this()](beast::error_code e, size_t) {
    self->OnHeader(e);
  });
}

void Exchange::OnHeader(beast::error_code ec) {
  if (ec) return Fail(ec, "reading the response head");
  got_bytes_ = true;
  ReadBody();
}

void Exchange::ReadBody() {
  if (parser_.is_done()) return OnBody({});
  parser_.get().body().data = chunk_;
  parser_.get().body().size = sizeof(chunk_);
  http::async_read_some(*stream_, buffer_, parser_, [self = shared_from_this()](beast::error_code e, size_t) {
    self->OnBody(e);
  });
}

void Exchange::OnBody(beast::error_code ec) {
  if (ec == http::error::need_buffer) ec = {};
  if (ec) return Fail(ec, "reading the response body");
  const size_t n = sizeof(chunk_) - parser_.get().body().size;
  const std::string_view bytes(chunk_, n);
  const double now = runner_->Now();
  if (parser_.get().result_int() == 200) {
    for (const std::string& event : sse_.Feed(bytes)) acc_->OnEvent(event, now);
  } else if (error_body_.size() < kMaxErrorBody) {
    error_body_.append(bytes.substr(0, kMaxErrorBody - error_body_.size()));
  }
  parser_.get().body().size = sizeof(chunk_);
  if (!parser_.is_done()) return ReadBody();
  if (parser_.get().result_int() != 200) {
    RequestOutput* o = runner_->output(index_);
    o->success = false;
    o->error = "HTTP " + std::to_string(parser_.get().result_int()) + ": " + error_body_;
    return Done(parser_.get().keep_alive());
  }
  if (std::string last = sse_.Finish(); !last.empty()) acc_->OnEvent(last, now);
  acc_->Finish();
  Done(parser_.get().keep_alive());
}

void Exchange::Done(bool reusable) {
  if (finished_) return;
  finished_ = true;
  std::unique_ptr<beast::tcp_stream> keep;
  if (reusable) {
    stream_->expires_never();
    keep = std::move(stream_);
  } else {
    beast::error_code ignored;
    stream_->socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
  runner_->Finished(std::move(keep), shared_from_this());
}

}  // namespace

StatusOr<LoadResult> RunLoad(const Endpoint& endpoint, const std::vector<LoadRequest>& requests,
                             const LoadOptions& options) {
  LoadResult result;
  Runner runner(endpoint, requests, options);
  LLMSERVE_RETURN_IF_ERROR(runner.Run(&result));
  return result;
}

StatusOr<std::string> HttpGet(const Endpoint& endpoint, const std::string& target, double timeout_s) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  beast::error_code ec;
  http::response<http::string_body> res;
  tcp::resolver resolver(ioc);
  auto results = resolver.resolve(endpoint.host, endpoint.port, ec);
  if (ec) return Status::Unavailable("cannot resolve " + endpoint.host + ": " + ec.message());
  stream.expires_after(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s)));
  http::request<http::empty_body> req{http::verb::get, endpoint.base_path + target, 11};
  req.set(http::field::host, endpoint.host + ":" + endpoint.port);
  beast::flat_buffer buffer;
  stream.async_connect(results, [&](beast::error_code e, const tcp::endpoint&) {
    if ((ec = e)) return;
    http::async_write(stream, req, [&](beast::error_code e2, size_t) {
      if ((ec = e2)) return;
      http::async_read(stream, buffer, res, [&](beast::error_code e3, size_t) { ec = e3; });
    });
  });
  ioc.run();
  const std::string url = "http://" + endpoint.host + ":" + endpoint.port + endpoint.base_path + target;
  if (ec) return Status::Unavailable("GET " + url + ": " + ec.message());
  if (res.result_int() != 200) {
    return Status::Unavailable("GET " + url + ": HTTP " + std::to_string(res.result_int()) + " " + res.body());
  }
  return res.body();
}

}  // namespace llmserve::deploy::bench
