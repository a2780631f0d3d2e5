// The pickle path rewrite (unpack/pickle_paths.hpp) on pickles written byte by byte: exactly the str values that
// begin with a build folder move, a FRAME around one gets its new length, every other byte stays, whatever the
// pieces the bytes arrive in; a stream this reader does not take is refused, and what was written before the
// refusal turns back into the packed bytes; build folders are learnt, in order, from paths of the component's files.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "unpack/pickle_paths.hpp"

using namespace ccpack;
using namespace std::string_literals;

namespace {

std::string le(std::uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}
std::string short_str(const std::string& s) { return "\x8c"s + static_cast<char>(s.size()) + s; }
std::string long_str(const std::string& s) { return "X"s + le(s.size(), 4) + s; }
std::string bin_bytes(const std::string& s) { return "B"s + le(s.size(), 4) + s; }
std::string frame(std::size_t n) { return "\x95"s + le(n, 8); }

// protocol 4: FRAME, a tuple of (path str, str holding a path, bytes holding a path, int), STOP
std::string sample_body(const std::string& path) {
  return "("s + short_str(path) + "\x94" + long_str("# kernel path: /build/ind/ab/c.py" + std::string(300, ' ')) +
         "C\x0c/build/ind/x" + "K\x07" + "t\x94.";
}
std::string pickle_sample(const std::string& path) {
  std::string body = sample_body(path);
  return "\x80\x04"s + frame(body.size()) + body;
}

struct Run {
  bool ok = false;
  std::string out;
  std::uint64_t moved = 0, writes = 0, lookups = 0;
};

// Feeds `packed` in pieces of `piece` bytes (0: whole).
Run pickle_run(const std::string& packed, std::vector<std::string> roots, const std::string& to, std::size_t piece = 0,
               const std::set<std::string>& files = {}) {
  Run r;
  unpack::PickleStream s(
      std::move(roots), to, [&](std::string_view rel) { return files.count(std::string(rel)) != 0; },
      [&](std::string_view b) {
        r.out.append(b);
        ++r.writes;
      });
  bool ok = true;
  std::size_t step = piece == 0 ? packed.size() : piece;
  for (std::size_t at = 0; ok && at < packed.size(); at += step) ok = s.feed(std::string_view(packed).substr(at, step));
  r.ok = ok && s.finish();
  r.moved = s.strings_rewritten();
  r.lookups = s.folder_lookups();
  return r;
}

// The same output whatever the pieces.
void check_pieces(const std::string& packed, const std::vector<std::string>& roots, const std::string& to,
                  const std::string& expected, const std::set<std::string>& files = {}) {
  for (std::size_t piece : {0, 1, 2, 3, 7, 64, 4096}) {
    INFO("pieces of " << piece);
    Run r = pickle_run(packed, roots, to, piece, files);
    REQUIRE(r.ok);
    CHECK(r.out == expected);
  }
}

}  // namespace

TEST_CASE("str values that begin with the build folder move, their FRAME gets its new length, nothing else changes") {
  std::string packed = pickle_sample("/build/ind/ab/c.py");
  std::string body = sample_body("/pod/cache/ab/c.py");
  Run r = pickle_run(packed, {"/build/ind"}, "/pod/cache");
  REQUIRE(r.ok);
  CHECK(r.moved == 1);
  CHECK(r.out == "\x80\x04"s + frame(body.size()) + body);
  check_pieces(packed, {"/build/ind"}, "/pod/cache", r.out);
}

TEST_CASE("frames without a moved str are kept as packed, and the output is written in batches") {
  std::string keep = "("s + short_str("/elsewhere/x") +
                     "C\x03"
                     "abc" +
                     "t\x94";
  std::string move = "("s + short_str("/build/ind/ab/c.py") + "K\x07" + "t\x94";
  std::string moved = "("s + short_str("/pod/ab/c.py") + "K\x07" + "t\x94";
  std::string packed = "\x80\x04"s, expected = "\x80\x04"s;
  for (int i = 0; i < 50; ++i) packed += frame(keep.size()) + keep, expected += frame(keep.size()) + keep;
  packed += frame(move.size()) + move;
  expected += frame(moved.size()) + moved;
  for (int i = 0; i < 50; ++i) packed += frame(keep.size()) + keep, expected += frame(keep.size()) + keep;
  packed += frame(1) + ".";
  expected += frame(1) + ".";
  Run r = pickle_run(packed, {"/build/ind"}, "/pod");
  REQUIRE(r.ok);
  CHECK(r.moved == 1);
  CHECK(r.out == expected);
  CHECK(r.writes == 1);  // a few KiB: one batch
  check_pieces(packed, {"/build/ind"}, "/pod", expected);
}

TEST_CASE("a path longer than 255 bytes after the move is written with a 4-byte length") {
  std::string tail(250, 'k');
  std::string packed = "\x80\x04"s + short_str("/b/" + tail) + ".";
  check_pieces(packed, {"/b"}, "/a/much/longer/target", "\x80\x04"s + long_str("/a/much/longer/target/" + tail) + ".");
}

TEST_CASE("the longest build folder wins, a folder is matched only at a path boundary, the target is kept") {
  std::string packed =
      "\x80\x04("s + short_str("/b/inner/x") + short_str("/b/y") + short_str("/bz/y") + short_str("/b/t/z") + "t.";
  Run r = pickle_run(packed, {"/b", "/b/inner"}, "/b/t");
  REQUIRE(r.ok);
  CHECK(r.moved == 2);
  CHECK(r.out == "\x80\x04("s + short_str("/b/t/x") + short_str("/b/t/y") + short_str("/bz/y") + short_str("/b/t/z") + "t.");
}

TEST_CASE("a large bytes value passes through as it arrives, a large str that begins with a build folder moves") {
  std::string blob(100 << 10, 'q');
  std::string big = "/build/ind/" + std::string(70 << 10, 'p');
  std::string packed = "\x80\x04("s + bin_bytes("/build/ind/" + blob) + long_str(big) + "t.";
  std::string expected = "\x80\x04("s + bin_bytes("/build/ind/" + blob) + long_str("/pod/" + big.substr(11)) + "t.";
  Run r = pickle_run(packed, {"/build/ind"}, "/pod", 4096);
  REQUIRE(r.ok);
  CHECK(r.moved == 1);
  CHECK(r.out == expected);
  CHECK(r.writes > 2);  // the large values were written piece by piece, not held
  check_pieces(packed, {"/build/ind"}, "/pod", expected);
}

TEST_CASE("build folders are learnt from paths that end in one of the component's files, from that str on") {
  std::set<std::string> files = {"ab/c.py", "triton/0/H/k.cubin", "lone"};
  std::string packed = "\x80\x04("s + short_str("/w/ind/ab/x.best_config") + short_str("/w/ind/ab/c.py") +
                       short_str("/w/ind/ab/x.best_config") + short_str("/usr/lib/lone") + short_str("/usr/lib/y") +
                       short_str("/other/ab/missing.py") + "t.";
  // The first str names no file: /w/ind is not known yet. "lone" is one path element: too short.
  std::string expected = "\x80\x04("s + short_str("/w/ind/ab/x.best_config") + short_str("/pod/ab/c.py") +
                         short_str("/pod/ab/x.best_config") + short_str("/usr/lib/lone") + short_str("/usr/lib/y") +
                         short_str("/other/ab/missing.py") + "t.";
  check_pieces(packed, {}, "/pod", expected, files);
}

TEST_CASE("a stream this reader does not take is refused") {
  auto refused = [](const std::string& packed) {
    for (std::size_t piece : {0, 1, 5}) {
      if (pickle_run(packed, {"/b"}, "/t", piece).ok) return false;
    }
    return true;
  };
  CHECK(refused("not a pickle"));
  CHECK(refused("\x80\x04"s + short_str("/b/x")));         // no STOP
  CHECK(refused("\x80\x04"s + short_str("/b/x") + ".x"));  // bytes after STOP
  CHECK(refused("\x80\x04\xff."s));                        // unknown opcode
  CHECK(refused("\x80\x04\x8c\x09/b/x."s));                // a length past the end
  CHECK(refused("\x80\x06N."s));                           // protocol 6
  std::string inner = "("s + short_str("/b/x");
  CHECK(refused("\x80\x04"s + frame(inner.size() + 1) + inner + "K\x07t."));  // an opcode across the frame's end
  CHECK(refused("\x80\x04"s + frame(inner.size() + 50) + inner + "t."));      // a frame past the end
  CHECK(refused("\x80\x04"s + frame(5u << 20) + "t."));                       // a frame over 4 MiB
}

TEST_CASE("what was written before a refusal turns back into the packed bytes") {
  std::string body = sample_body("/b/ab/c.py");
  // A moved str in a first frame, a large bytes value, then an unknown opcode.
  std::string packed =
      "\x80\x04"s + frame(body.size() - 1) + body.substr(0, body.size() - 1) + bin_bytes(std::string(80 << 10, 'z')) + "\xff.";
  for (std::size_t piece : {0, 1, 3, 4096}) {
    INFO("pieces of " << piece);
    std::string out;
    unpack::PickleStream s(
        {"/b"}, "/a/longer/target", [](std::string_view) { return false; }, [&](std::string_view b) { out.append(b); });
    std::size_t step = piece == 0 ? packed.size() : piece, at = 0;
    bool ok = true;
    for (; ok && at < packed.size(); at += step) ok = s.feed(std::string_view(packed).substr(at, step));
    REQUIRE_FALSE(ok);
    CHECK(s.strings_rewritten() == 1);
    CHECK(out.size() == s.written());
    std::string rebuilt = s.packed_prefix(out) + std::string(s.pending()) + packed.substr(std::min(at, packed.size()));
    CHECK(s.packed_prefix(out).size() == s.consumed());
    CHECK(rebuilt == packed);
    CHECK_FALSE(s.feed("N"));  // refused for good
  }
}

TEST_CASE("text-protocol opcodes are kept as packed, one or two lines long, up to 64 KiB") {
  // GLOBAL (two lines), PUT and a text-protocol STRING (one line each) among binary strs.
  std::string line(60 << 10, '7');
  std::string packed =
      "\x80\x02"s + "ctorch._inductor.codecache\nCompiledFxGraph\n" + "p" + line + "\n" + short_str("/b/x") + "S'/b/y'\n" + "t.";
  std::string expected =
      "\x80\x02"s + "ctorch._inductor.codecache\nCompiledFxGraph\n" + "p" + line + "\n" + short_str("/t/x") + "S'/b/y'\n" + "t.";
  check_pieces(packed, {"/b"}, "/t", expected);
  std::string too_long = "\x80\x02p"s + std::string(64 << 10, '7') + "\n.";
  CHECK_FALSE(pickle_run(too_long, {"/b"}, "/t", 1).ok);
  CHECK_FALSE(pickle_run(too_long, {"/b"}, "/t").ok);
}

namespace {

// A protocol-4 pickle of `count` strs "/r<N>/xx/c<N>.py" (each names a packed file below a folder of its own, so
// each teaches a build folder), in frames of about 64 KiB, and the files they name.
std::pair<std::string, std::set<std::string>> many_folders(std::size_t count) {
  std::string packed = "\x80\x04"s, body;
  std::set<std::string> files;
  auto close_frame = [&] {
    packed += frame(body.size()) + body;
    body.clear();
  };
  for (std::size_t i = 0; i < count; ++i) {
    std::string rel = "xx/c" + std::to_string(i) + ".py";
    files.insert(rel);
    body += short_str("/r" + std::to_string(i) + "/" + rel) + "0";  // the str, then POP
    if (body.size() > (64 << 10)) close_frame();
  }
  body += "N.";
  close_frame();
  return {packed, files};
}

}  // namespace

TEST_CASE("a pickle whose every str teaches a build folder is read in time linear in its strs") {
  // Compared with every folder learned, 40k strs took seconds and 150k past 20 s; each str walks its own elements
  // once now. The work is counted, not timed: the folder lookups, which a str "/rN/xx/cN.py" makes a fixed number
  // of (learning its folder: 2, then matching the str: 3), whatever the number of folders learned before it;
  // "/build" itself took 2.
  constexpr std::uint64_t kPerStr = 5, kBuild = 2, kStrs = 5000;
  auto [packed, files] = many_folders(kStrs);
  Run r = pickle_run(packed, {"/build"}, "/pod", 4096, files);
  REQUIRE(r.ok);
  CHECK(r.moved == kStrs);
  CHECK(r.out.find("\x8c\x0f/pod/xx/c999.py"s) != std::string::npos);
  REQUIRE(r.lookups <= kPerStr * kStrs + kBuild);  // quadratic: over 25 million
  // 4x the strs, 4x the lookups (16x when each str is compared with the folders learned before it).
  auto [packed4, files4] = many_folders(4 * kStrs);
  Run r4 = pickle_run(packed4, {"/build"}, "/pod", 4096, files4);
  REQUIRE(r4.ok);
  CHECK(r4.moved == 4 * kStrs);
  CHECK(r4.lookups <= kPerStr * 4 * kStrs + kBuild);
}
