#pragma once
// A small blocking HTTP/1.1 client over a raw POSIX socket, for tests: sends
// raw request bytes and parses responses (Content-Length or chunked bodies,
// keeping the chunks as sent). No Beast, so test TUs stay cheap to build.
// tls_test_client.h speaks TLS over the same socket.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llmserve::frontend::testing {

// One response read back from the server.
struct ClientResponse {
  int status = 0;                                            // 0 = none (connection closed / timeout)
  std::vector<std::pair<std::string, std::string>> headers;  // as received, names lower-cased
  std::string body;                                          // de-chunked body
  std::vector<std::string> chunks;                           // chunk payloads, when chunked

  // The value of header `name` (lower case), or "" if absent.
  std::string header(const std::string& name) const {
    for (const auto& [k, v] : headers) {
      if (k == name) return v;
    }
    return "";
  }
};

class TestClient {
 public:
  TestClient() = default;
  virtual ~TestClient() { Close(); }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  // Connects to 127.0.0.1:port; false on failure.
  bool Connect(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) return false;
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      Close();
      return false;
    }
    return true;
  }

  // Sends raw bytes; false on failure.
  bool Send(const std::string& bytes) {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = WriteSome(bytes.data() + off, bytes.size() - off);
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  // Sends a request with the given method, target, body and extra header lines.
  bool SendRequest(const std::string& method, const std::string& target, const std::string& body = "",
                   const std::string& extra_headers = "") {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra_headers;
    if (!body.empty() || method == "POST") {
      req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    }
    req += "\r\n" + body;
    return Send(req);
  }

  // Reads one full response (status 0 if the connection closed or timed out first).
  ClientResponse ReadResponse(int timeout_ms = 5000) {
    ClientResponse r;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string head;
    if (!ReadUntil("\r\n\r\n", &head)) return r;
    size_t line_end = head.find("\r\n");
    std::string status_line = head.substr(0, line_end);
    if (status_line.size() < 12) return r;
    r.status = std::stoi(status_line.substr(9, 3));
    size_t pos = line_end + 2;
    while (pos < head.size()) {
      size_t end = head.find("\r\n", pos);
      std::string line = head.substr(pos, end - pos);
      pos = end + 2;
      if (line.empty()) break;
      size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      size_t vstart = line.find_first_not_of(' ', colon + 1);
      r.headers.emplace_back(name, vstart == std::string::npos ? "" : line.substr(vstart));
    }
    if (r.status == 100) return r;
    if (r.header("transfer-encoding") == "chunked") {
      while (true) {
        std::string size_line;
        if (!ReadUntil("\r\n", &size_line)) return ClientResponse{};
        size_t size = std::stoul(size_line, nullptr, 16);
        std::string data;
        if (!ReadExactly(size + 2, &data)) return ClientResponse{};
        if (size == 0) break;
        data.resize(size);
        r.chunks.push_back(data);
        r.body += data;
      }
    } else if (!r.header("content-length").empty()) {
      size_t len = std::stoul(r.header("content-length"));
      if (!ReadExactly(len, &r.body)) return ClientResponse{};
    }
    return r;
  }

  // Reads the response header and the first `n` chunks of a chunked response.
  ClientResponse ReadStreamStart(size_t n, int timeout_ms = 5000) {
    ClientResponse r;
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    std::string head;
    if (!ReadUntil("\r\n\r\n", &head)) return r;
    r.status = std::stoi(head.substr(9, 3));
    for (size_t i = 0; i < n; ++i) {
      std::string size_line, data;
      if (!ReadUntil("\r\n", &size_line)) return r;
      size_t size = std::stoul(size_line, nullptr, 16);
      if (!ReadExactly(size + 2, &data)) return r;
      data.resize(size);
      r.chunks.push_back(data);
    }
    return r;
  }

  // True if the server closes the connection (EOF or reset) within timeout_ms.
  bool WaitForClose(int timeout_ms = 5000) {
    deadline_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (true) {
      buffer_.clear();
      int got = Fill();
      if (got == 0) return true;
      if (got < 0) return false;
    }
  }

  // Closes the socket.
  void Close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 protected:
  // The transport under the HTTP bytes: the socket itself here.
  virtual ssize_t WriteSome(const char* data, size_t n) { return ::send(fd_, data, n, MSG_NOSIGNAL); }
  virtual ssize_t ReadSome(char* data, size_t n) { return ::recv(fd_, data, n, 0); }
  // True when ReadSome has bytes without waiting for the socket.
  virtual bool InputBuffered() const { return false; }

  int fd_ = -1;

 private:
  // Reads more bytes into buffer_: >0 bytes read, 0 EOF/reset, -1 timeout.
  int Fill() {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
    if (left.count() <= 0) return -1;
    pollfd p{fd_, POLLIN, 0};
    if (!InputBuffered() && ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return -1;
    char tmp[8192];
    ssize_t n = ReadSome(tmp, sizeof(tmp));
    if (n <= 0) return 0;
    buffer_.append(tmp, static_cast<size_t>(n));
    return static_cast<int>(n);
  }

  bool ReadUntil(const std::string& delim, std::string* out) {
    while (true) {
      size_t at = buffer_.find(delim);
      if (at != std::string::npos) {
        *out = buffer_.substr(0, at + delim.size());
        buffer_.erase(0, at + delim.size());
        return true;
      }
      if (Fill() <= 0) return false;
    }
  }

  bool ReadExactly(size_t n, std::string* out) {
    while (buffer_.size() < n) {
      if (Fill() <= 0) return false;
    }
    *out = buffer_.substr(0, n);
    buffer_.erase(0, n);
    return true;
  }

  std::string buffer_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace llmserve::frontend::testing
