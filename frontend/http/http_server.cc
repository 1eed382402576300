// The HTTP server: listening and accepting (each connection is served by
// connection.cc), the I/O threads, and the bounded graceful stop.
//
// Shutdown safety: posting needs the io_context alive. Writers post under
// SharedState::post_mu and only while `running`; the server clears `running`
// (under the same mutex) after joining its threads and before destroying the
// io_context, so no post can race with its destruction.

#include "frontend/http/http_server.h"

#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <glog/logging.h>

#include "frontend/http/connection.h"

namespace llmserve::frontend::http {
namespace {
namespace net = boost::asio;
using tcp = net::ip::tcp;
using error_code = boost::system::error_code;
using internal::SharedState;
}  // namespace

struct HttpServer::Impl {
  HttpServerConfig config;
  Router router;
  std::shared_ptr<net::ssl::context> tls;  // null: plain HTTP
  std::shared_ptr<SharedState> state = std::make_shared<SharedState>();
  net::io_context ioc;
  tcp::acceptor acceptor{net::make_strand(ioc)};  // on a strand: Stop() closes it by posting
  std::vector<std::thread> threads;
  uint16_t port = 0;
  bool stopped = false;

  Impl(HttpServerConfig c, Router r) : config(std::move(c)), router(std::move(r)), ioc(config.num_io_threads) {}

  void Accept() {
    acceptor.async_accept(net::make_strand(ioc), [this](error_code ec, tcp::socket socket) {
      if (state->stopping || !acceptor.is_open()) return;
      if (!ec && AtConnectionLimit()) {
        Refuse(std::move(socket));
      } else if (!ec) {
        internal::ServeConnection(std::move(socket), tls.get(), &router, &config, state);
      } else if (ec != net::error::operation_aborted) {
        LOG(WARNING) << "accept failed: " << ec.message();
      }
      Accept();
    });
  }

  bool AtConnectionLimit() const {
    std::lock_guard<std::mutex> lock(state->registry_mu);
    return state->connections.size() >= config.max_connections;
  }

  // Answers a connection past the limit with 503 (a single non-blocking
  // write: the new socket's buffer is empty) and closes it.
  void Refuse(tcp::socket socket) {
    LOG_EVERY_N(WARNING, 100) << "HTTP server: " << config.max_connections
                              << " connections open (--max-http-connections); refusing new ones";
    error_code ignored;
    if (!tls) {
      static constexpr std::string_view k503 =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 21\r\n"
          "Connection: close\r\n\r\nToo many connections\n";
      socket.non_blocking(true, ignored);
      socket.write_some(net::buffer(k503.data(), k503.size()), ignored);
    }
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }

  // Waits until no connection is left or `deadline` passes; true if none is left.
  bool WaitForConnections(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(state->registry_mu);
    return state->registry_cv.wait_until(lock, deadline, [&] { return state->connections.empty(); });
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(HttpServerConfig config, Router router) {
  if (config.num_io_threads < 1) return Status::InvalidArgument("num_io_threads must be at least 1");
  auto impl = std::make_unique<Impl>(std::move(config), std::move(router));
  if (impl->config.tls.enabled()) {
    LLMSERVE_ASSIGN_OR_RETURN(impl->tls, MakeTlsContext(impl->config.tls));
  }
  error_code ec;
  auto address = net::ip::make_address(impl->config.host, ec);
  if (ec) return Status::InvalidArgument("invalid listen address '" + impl->config.host + "': " + ec.message());
  tcp::endpoint endpoint(address, impl->config.port);
  const std::string where = impl->config.host + ":" + std::to_string(impl->config.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec && impl->config.reuse_port) {
    // Several API server processes bind the same port; the kernel spreads new connections.
    using reuse_port = net::detail::socket_option::boolean<SOL_SOCKET, SO_REUSEPORT>;
    impl->acceptor.set_option(reuse_port(true), ec);
  }
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(impl->config.listen_backlog, ec);
  if (ec) return Status::Unavailable("cannot listen on " + where + ": " + ec.message());
  impl->port = impl->acceptor.local_endpoint().port();
  impl->Accept();
  for (int i = 0; i < impl->config.num_io_threads; ++i) {
    impl->threads.emplace_back([ioc = &impl->ioc] { ioc->run(); });
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

HttpServer::~HttpServer() {
  Stop();
  {
    std::lock_guard<std::mutex> lock(impl_->state->post_mu);
    impl_->state->running = false;
  }
  // impl_ (acceptor, then io_context with its queued handlers) is destroyed here.
}

uint16_t HttpServer::port() const { return impl_->port; }

size_t HttpServer::num_connections() const {
  std::lock_guard<std::mutex> lock(impl_->state->registry_mu);
  return impl_->state->connections.size();
}

void HttpServer::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->state->stopping = true;
  net::post(impl_->acceptor.get_executor(), [impl = impl_.get()] {
    error_code ignored;
    impl->acceptor.close(ignored);
  });
  internal::CloseConnections(*impl_->state, /*force=*/false);
  auto deadline = std::chrono::steady_clock::now() + impl_->config.shutdown_timeout;
  if (!impl_->WaitForConnections(deadline)) {
    LOG(WARNING) << "HTTP server: closing connections still answering after the shutdown timeout";
    internal::CloseConnections(*impl_->state, /*force=*/true);
    impl_->WaitForConnections(std::chrono::steady_clock::now() + std::chrono::seconds(1));
  }
  impl_->ioc.stop();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
  // The posted close may not have run before ioc.stop(); with no thread left
  // running, closing here is safe, and Stop() returns with the port released.
  error_code ignored;
  impl_->acceptor.close(ignored);
}

}  // namespace llmserve::frontend::http
