// The scripted loopback server of loopback_http.hpp: accept, read the request up to its headers' end and its
// Content-Length of body, send the next answer, close; after the last answer the listener closes.
#include "unit/loopback_http.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "registry/oci.hpp"
#include "util/sha256.hpp"

namespace ccpack::test {
namespace {

// Reads one request: up to the blank line, then as many body bytes as its Content-Length says.
std::string read_request(int c) {
  std::string text;
  char buf[4096];
  std::size_t body_from = std::string::npos;
  std::size_t length = 0;
  for (;;) {
    if (body_from != std::string::npos && text.size() >= body_from + length) break;
    ssize_t n = ::recv(c, buf, sizeof buf, 0);
    if (n <= 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (body_from == std::string::npos) {
      std::size_t end = text.find("\r\n\r\n");
      if (end == std::string::npos) continue;
      body_from = end + 4;
      std::string head = text.substr(0, end);
      for (auto& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      std::size_t at = head.find("\r\ncontent-length:");
      if (at != std::string::npos) length = std::strtoull(head.c_str() + at + 17, nullptr, 10);
    }
  }
  return text;
}

}  // namespace

LoopbackHttp::LoopbackHttp(std::vector<std::string> answers) : answers_(std::move(answers)) {
  listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(listener_ >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), len) == 0);
  REQUIRE(::listen(listener_, 8) == 0);
  REQUIRE(::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] {
    for (std::string answer : answers_) {
      int c = ::accept(listener_, nullptr, nullptr);
      if (c < 0) break;
      requests_.push_back(read_request(c));
      for (std::size_t at; (at = answer.find("{BASE}")) != std::string::npos;) answer.replace(at, 6, base());
      (void)::send(c, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::shutdown(c, SHUT_WR);
      char drain[256];
      while (::recv(c, drain, sizeof drain, 0) > 0) {
      }
      ::close(c);
    }
    // No answer left: a request more is refused at once (the listener stops), not left in the backlog until the
    // client's timeout.
    ::shutdown(listener_, SHUT_RDWR);
  });
}

LoopbackHttp::~LoopbackHttp() {
  if (thread_.joinable()) {
    ::shutdown(listener_, SHUT_RDWR);  // a server still waiting for a request that never comes
    thread_.join();
  }
  ::close(listener_);
}

const std::vector<std::string>& LoopbackHttp::requests() {
  if (thread_.joinable()) {
    ::shutdown(listener_, SHUT_RDWR);  // no more requests: a server waiting in accept stops
    thread_.join();
  }
  return requests_;
}

std::string http_answer(int status, const std::vector<std::string>& headers, const std::string& body) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " X\r\n";
  bool has_length = false;
  for (const std::string& h : headers) {
    out += h + "\r\n";
    if (h.rfind("Content-Length:", 0) == 0) has_length = true;
  }
  if (!has_length) out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return out + "Connection: close\r\n\r\n" + body;
}

std::string digest_of(const std::string& bytes) { return registry::oci::digest_string(Sha256::of(bytes)); }

registry::Session session_for(const LoopbackHttp& server) {
  registry::SessionOptions o;
  o.http.plain_http = true;
  o.http.max_attempts = 1;
  return {registry::oci::parse_reference("127.0.0.1:" + std::to_string(server.port()) + "/team/model:v1"), o};
}

}  // namespace ccpack::test
