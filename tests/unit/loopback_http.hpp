// A scripted HTTP server on 127.0.0.1 for the unit tests of http/http*.cpp and registry/session.cpp: it answers
// the requests that come, one per connection, with the given answers in order (then closes), and keeps each
// request's text (request line, headers and body) for the test to check. Test code only.
#pragma once

#include <string>
#include <thread>
#include <vector>

namespace ccpack::test {

class LoopbackHttp {
 public:
  // Answers, in order, the first answers.size() requests; each answer is sent whole, then the connection closes.
  // "{BASE}" in an answer's headers stands for base() (a token realm, a Location); not in a body, whose length
  // is already counted.
  explicit LoopbackHttp(std::vector<std::string> answers);
  ~LoopbackHttp();
  LoopbackHttp(const LoopbackHttp&) = delete;
  LoopbackHttp& operator=(const LoopbackHttp&) = delete;

  [[nodiscard]] int port() const { return port_; }
  // "http://127.0.0.1:PORT"
  [[nodiscard]] std::string base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The requests received; the server takes no more after this (call it once the client is done).
  [[nodiscard]] const std::vector<std::string>& requests();

 private:
  int listener_ = -1;
  int port_ = 0;
  std::vector<std::string> answers_;
  std::vector<std::string> requests_;
  std::thread thread_;
};

// An HTTP/1.1 answer: "HTTP/1.1 <status>", the headers (each "Name: value"), Content-Length of `body` unless a
// header gives one, Connection: close, then the body.
[[nodiscard]] std::string http_answer(int status, const std::vector<std::string>& headers, const std::string& body);

}  // namespace ccpack::test
