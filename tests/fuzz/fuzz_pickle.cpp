// libFuzzer target: the streamed pickle path rewrite (unpack/pickle_paths.hpp) fed in random pieces.
//
// Input: byte 0 seeds the piece sizes (1 to 64 bytes, or the rest at once); byte 1 picks the form of the rest:
//   low four bits not all set: the rest is the packed bytes themselves;
//   low four bits all set (1 input in 16, so most executions stay small): the rest is a template T, and the packed bytes are a
//   protocol-4 pickle of N strs "/r<i>" + T in ~64 KiB
//         FRAMEs (N = 1,000 + 256 x byte 2, up to 66,280; T from byte 3 on): with T = "/xx/c.py" each str teaches a
//         build folder, the case that was quadratic (40k strs 4.2 s). The seed corpus holds it at N = 40,936,
//         run first by every smoke run: its -timeout and -rss_limit_mb (below) catch a rewrite that is no
//         longer linear in time or bounded in memory.
// A path is a file of the component when it has two or more elements and ends in ".py".
// Checks: the same bytes fed whole give the same verdict and output as in pieces; when the rewrite stops, what it
// wrote turns back into the packed bytes exactly (packed_prefix, then pending(), then the bytes never fed); when
// it ends, its output is a pickle this reader takes again, with nothing left to move. Anything else aborts.
// fuzz-smoke: -timeout=10 -rss_limit_mb=2048 -max_len=4096
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "unpack/pickle_paths.hpp"

namespace {

using ccpack::unpack::PickleStream;

constexpr std::string_view kTarget = "/pod/cache";

bool is_file(std::string_view rel) { return rel.find('/') != std::string_view::npos && rel.ends_with(".py"); }

std::string le(std::uint64_t v, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return out;
}

std::string many_strs(std::size_t count, std::string_view tail) {
  std::string packed("\x80\x04", 2), body;
  auto close_frame = [&] {
    packed += "\x95" + le(body.size(), 8) + body;
    body.clear();
  };
  for (std::size_t i = 0; i < count; ++i) {
    std::string s = "/r" + std::to_string(i) + std::string(tail);
    body += s.size() < 256 ? "\x8c" + le(s.size(), 1) : "X" + le(s.size(), 4);
    body += s + "0";  // the str, then POP
    if (body.size() > (64 << 10)) close_frame();
  }
  body += "N.";
  close_frame();
  return packed;
}

struct Run {
  bool ok = false;
  std::string out, rebuilt;
  std::uint64_t moved = 0;
};

Run rewrite(std::string_view packed, std::uint32_t seed, bool whole) {
  Run r;
  PickleStream s({"/build/cache"}, std::string(kTarget), is_file, [&](std::string_view b) { r.out.append(b); });
  std::size_t at = 0;
  bool fed = true;
  while (fed && at < packed.size()) {
    seed = seed * 1103515245u + 12345u;
    std::size_t n = whole || (seed >> 16) % 17 == 0 ? packed.size() - at : 1 + (seed >> 16) % 64;
    n = std::min(n, packed.size() - at);
    fed = s.feed(packed.substr(at, n));
    at += n;
  }
  r.ok = fed && s.finish();
  r.moved = s.strings_rewritten();
  if (!r.ok) {
    if (r.out.size() != s.written()) __builtin_trap();
    r.rebuilt = s.packed_prefix(r.out) + std::string(s.pending()) + std::string(packed.substr(std::min(at, packed.size())));
    if (r.rebuilt != packed) __builtin_trap();  // not turned back into the packed bytes
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  std::string packed;
  if ((data[1] & 0x0f) != 0x0f) {
    packed = std::string(rest);
  } else {
    if (rest.empty()) return 0;
    std::size_t count = 1000 + 256 * static_cast<std::size_t>(static_cast<std::uint8_t>(rest[0]));
    packed = many_strs(count, rest.substr(1, 64));
  }
  Run pieces = rewrite(packed, data[0], false);
  Run whole = rewrite(packed, data[0], true);
  if (pieces.ok != whole.ok || pieces.out != whole.out || pieces.moved != whole.moved) __builtin_trap();
  if (pieces.ok) {  // the output reads again, and everything that named a build folder now names the target
    Run again = rewrite(pieces.out, data[0], true);
    if (!again.ok || again.out != pieces.out) __builtin_trap();
  }
  return 0;
}
