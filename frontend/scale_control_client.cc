#include "frontend/scale_control_client.h"

#include <glog/logging.h>

namespace llmserve::frontend {

ScaleControlClient::ScaleControlClient(zmq::context_t& context, std::string control_address)
    : context_(context), address_(std::move(control_address)) {}

ScaleControlClient::~ScaleControlClient() {
  stop_ = true;
  std::lock_guard<std::mutex> lock(mu_);
  if (worker_.joinable()) worker_.join();
}

bool ScaleControlClient::Scale(const proto::ScaleRequest& request, Callback done) {
  if (busy_.exchange(true)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (worker_.joinable()) worker_.join();  // the previous one has answered already
  worker_ = std::thread([this, request, done = std::move(done)] {
    proto::ScaleResponse response = Exchange(request);
    busy_ = false;
    if (!stop_) done(response);
  });
  return true;
}

proto::ScaleResponse ScaleControlClient::Exchange(const proto::ScaleRequest& request) {
  proto::ScaleResponse response;
  response.set_http_status(500);
  try {
    zmq::socket_t socket(context_, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.connect(address_);
    const std::string bytes = request.SerializeAsString();
    socket.send(zmq::buffer(bytes), zmq::send_flags::none);
    const auto limit = std::chrono::seconds(request.drain_timeout_s()) + answer_margin_;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    while (zmq::poll(&item, 1, std::chrono::milliseconds(100)) == 0) {
      if (stop_) {
        response.set_message("the frontend is shutting down");
        return response;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        response.set_message("the launcher did not answer the scale request within " +
                             std::to_string(limit.count()) + " s");
        return response;
      }
    }
    zmq::message_t reply;
    (void)socket.recv(reply);
    if (!response.ParseFromArray(reply.data(), static_cast<int>(reply.size()))) {
      response.Clear();
      response.set_http_status(500);
      response.set_message("malformed answer from the launcher");
    }
  } catch (const zmq::error_t& e) {
    response.set_message(std::string("cannot reach the launcher's control socket: ") + e.what());
  }
  return response;
}

}  // namespace llmserve::frontend
