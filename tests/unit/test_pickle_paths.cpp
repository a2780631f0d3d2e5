// The pickle path rewrite (unpack/pickle_paths.hpp) on pickles written byte by byte: exactly the str values that
// begin with a build folder move, FRAME opcodes go, every other byte stays; a stream this reader does not take
// gives nullopt; build folders are read from the paths of the component's own files.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "unpack/pickle_paths.hpp"

using namespace ccpack;
using namespace std::string_literals;

namespace {

std::string short_str(const std::string& s) { return "\x8c"s + static_cast<char>(s.size()) + s; }
std::string long_str(const std::string& s) {
  std::string len(4, '\0');
  for (int i = 0; i < 4; ++i) len[static_cast<std::size_t>(i)] = static_cast<char>((s.size() >> (8 * i)) & 0xff);
  return "X"s + len + s;
}
std::string frame(std::size_t n) {
  std::string out = "\x95"s;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  return out;
}

// protocol 4: FRAME, a tuple of (path str, str holding a path, bytes holding a path, int), STOP
std::string sample(const std::string& path) {
  std::string body = "("s + short_str(path) + "\x94" + long_str("# kernel path: /build/ind/ab/c.py" + std::string(300, ' ')) +
                     "C\x0c/build/ind/x" + "K\x07" + "t\x94.";
  return "\x80\x04"s + frame(body.size()) + body;
}

}  // namespace

TEST_CASE("str values that begin with the build folder move, and nothing else does") {
  std::string packed = sample("/build/ind/ab/c.py");
  auto r = unpack::rewrite_pickle_paths(packed, {"/build/ind"}, "/pod/cache");
  REQUIRE(r);
  CHECK(r->strings_rewritten == 1);
  std::string body = "("s + short_str("/pod/cache/ab/c.py") + "\x94" +
                     long_str("# kernel path: /build/ind/ab/c.py" + std::string(300, ' ')) + "C\x0c/build/ind/x" + "K\x07" +
                     "t\x94.";
  CHECK(r->assemble(packed) == "\x80\x04"s + body);  // the FRAME is gone, the rest byte for byte
}

TEST_CASE("a path longer than 255 bytes after the move is written with a 4-byte length") {
  std::string tail(250, 'k');
  std::string packed = "\x80\x04"s + short_str("/b/" + tail) + ".";
  auto r = unpack::rewrite_pickle_paths(packed, {"/b"}, "/a/much/longer/target");
  REQUIRE(r);
  CHECK(r->assemble(packed) == "\x80\x04"s + long_str("/a/much/longer/target/" + tail) + ".");
}

TEST_CASE("the longest build folder wins, and a folder is matched only at a path boundary") {
  std::string packed = "\x80\x04("s + short_str("/b/inner/x") + short_str("/b/y") + short_str("/bz/y") + "t.";
  auto r = unpack::rewrite_pickle_paths(packed, {"/b", "/b/inner"}, "/t");
  REQUIRE(r);
  CHECK(r->strings_rewritten == 2);
  CHECK(r->assemble(packed) == "\x80\x04("s + short_str("/t/x") + short_str("/t/y") + short_str("/bz/y") + "t.");
}

TEST_CASE("a stream this reader does not take gives nullopt") {
  CHECK_FALSE(unpack::rewrite_pickle_paths("not a pickle", {"/b"}, "/t"));
  CHECK_FALSE(unpack::rewrite_pickle_paths("\x80\x04"s + short_str("/b/x"), {"/b"}, "/t"));        // no STOP
  CHECK_FALSE(unpack::rewrite_pickle_paths("\x80\x04"s + short_str("/b/x") + ".x", {"/b"}, "/t"));  // after STOP
  CHECK_FALSE(unpack::rewrite_pickle_paths("\x80\x04\xff."s, {"/b"}, "/t"));                        // unknown opcode
  CHECK_FALSE(unpack::rewrite_pickle_paths("\x80\x04\x8c\x09/b/x."s, {"/b"}, "/t"));                 // length past end
  CHECK_FALSE(unpack::rewrite_pickle_paths("\x80\x06N."s, {"/b"}, "/t"));                            // protocol 6
}

TEST_CASE("build folders are read from paths that end in one of the component's files") {
  std::set<std::string> files = {"ab/c.py", "triton/0/H/k.cubin", "lone"};
  auto is_file = [&](std::string_view rel) { return files.count(std::string(rel)) != 0; };
  std::string packed = "\x80\x04("s + short_str("/build/ind/ab/c.py") + short_str("/w/ind/triton/0/H/k.cubin") +
                       short_str("/usr/lib/lone") + short_str("/other/ab/missing.py") + "t.";
  auto roots = unpack::pickle_build_folders(packed, is_file);
  REQUIRE(roots);
  // "lone" is one path element: too short to name a build folder.
  CHECK(*roots == std::vector<std::string>{"/build/ind", "/w/ind"});
  CHECK_FALSE(unpack::pickle_build_folders("\x80\x04("s, is_file));
}
