// The ResponseWriter handed to handlers, and the server's stop calls on its
// connections. Writer calls come from any thread and are posted to the
// connection's strand.
//
// Shutdown safety: posting needs the io_context alive. Writers post under
// SharedState::post_mu and only while `running`; the server clears `running`
// (under the same mutex) after joining its threads and before destroying the
// io_context, so no post can race with its destruction.

#include <vector>

#include <boost/asio/post.hpp>
#include <glog/logging.h>

#include "frontend/http/connection.h"

namespace llmserve::frontend::http::internal {
namespace {

class ExchangeWriter final : public ResponseWriter {
 public:
  ExchangeWriter(std::weak_ptr<ConnectionBase> connection, std::shared_ptr<Exchange> exchange,
                 std::shared_ptr<SharedState> state)
      : connection_(std::move(connection)), exchange_(std::move(exchange)), state_(std::move(state)) {}

  ~ExchangeWriter() override {
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
    Post([response = std::move(response)](ConnectionBase& c, const std::shared_ptr<Exchange>& ex) mutable {
      c.DoRespond(ex, std::move(response));
    });
  }

  void BeginStream(int status, std::string content_type, Headers headers) override {
    if (exchange_->finished || exchange_->streaming.exchange(true)) return;
    Post([status, content_type = std::move(content_type), headers = std::move(headers)](
             ConnectionBase& c, const std::shared_ptr<Exchange>& ex) mutable {
      c.DoBeginStream(ex, status, std::move(content_type), std::move(headers));
    });
  }

  void Write(std::string data) override {
    if (exchange_->finished || exchange_->closed || data.empty()) return;
    exchange_->pending += data.size();
    Post([data = std::move(data)](ConnectionBase& c, const std::shared_ptr<Exchange>& ex) mutable {
      c.DoWrite(ex, std::move(data));
    });
  }

  void End() override {
    if (!exchange_->streaming || exchange_->finished.exchange(true)) return;
    Post([](ConnectionBase& c, const std::shared_ptr<Exchange>& ex) { c.DoEnd(ex); });
  }

  bool closed() const override { return exchange_->closed; }
  bool finished() const override { return exchange_->finished; }
  size_t pending_bytes() const override { return exchange_->pending; }

  void OnDisconnect(std::function<void()> callback) override {
    bool posted = Post([callback](ConnectionBase& c, const std::shared_ptr<Exchange>& ex) mutable {
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
    std::shared_ptr<ConnectionBase> c = connection_.lock();
    if (!c) return false;
    boost::asio::any_io_executor ex = c->executor();
    boost::asio::post(ex, [c = std::move(c), exchange = exchange_, fn = std::move(fn)]() mutable {
      fn(*c, exchange);
    });
    return true;
  }

  std::weak_ptr<ConnectionBase> connection_;
  std::shared_ptr<Exchange> exchange_;
  std::shared_ptr<SharedState> state_;
};

}  // namespace

std::shared_ptr<ResponseWriter> MakeExchangeWriter(std::weak_ptr<ConnectionBase> connection,
                                                   std::shared_ptr<Exchange> exchange,
                                                   std::shared_ptr<SharedState> state) {
  return std::make_shared<ExchangeWriter>(std::move(connection), std::move(exchange), std::move(state));
}

void CloseConnections(SharedState& state, bool force) {
  std::vector<std::shared_ptr<ConnectionBase>> live;
  {
    std::lock_guard<std::mutex> lock(state.registry_mu);
    for (auto& [ptr, weak] : state.connections) {
      if (auto c = weak.lock()) live.push_back(std::move(c));
    }
  }
  for (auto& c : live) {
    if (force) {
      boost::asio::post(c->executor(), [c] { c->ForceClose(); });
    } else {
      boost::asio::post(c->executor(), [c] { c->CloseIfIdle(); });
    }
  }
}

}  // namespace llmserve::frontend::http::internal
