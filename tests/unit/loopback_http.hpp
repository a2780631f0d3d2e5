// A scripted HTTP server on 127.0.0.1 for the unit tests of http/http*.cpp and registry/session.cpp: it answers
// the requests that come, one per connection, with the given answers in order (then closes), and keeps each
// request's text (request line, headers and body) for the test to check. Test code only.
#pragma once

#include <string>
#include <thread>
#include <vector>

#include "registry/session.hpp"

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

// The request line of a kept request ("GET /v2/... HTTP/1.1").
[[nodiscard]] inline std::string first_line(const std::string& request) { return request.substr(0, request.find("\r\n")); }

// "sha256:<hex>" of `bytes`, as OCI documents name a blob.
[[nodiscard]] std::string digest_of(const std::string& bytes);

// A registry session to `server` for repository team/model, tag v1: plain HTTP, one attempt per request (an answer
// the script does not hold is a failure, never a retry).
[[nodiscard]] registry::Session session_for(const LoopbackHttp& server);
// The request line of such a session's GET of its tag, and of a blob of its repository.
inline const std::string kTagRequestLine = "GET /v2/team/model/manifests/v1 HTTP/1.1";
[[nodiscard]] inline std::string blob_request_line(const std::string& digest) {
  return "GET /v2/team/model/blobs/" + digest + " HTTP/1.1";
}

}  // namespace ccpack::test
