// The pickle opcode table of the streaming path rewrite (PickleStream, unpack/pickle_paths.cpp). It follows the
// pickle protocol as Python's pickletools documents it: each opcode is one byte, then an argument of fixed size, of
// a size given by a 1-, 4- or 8-byte little-endian length, or (the text protocol) up to a newline. Internal to
// unpack/.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ccpack::unpack::pickle {

inline constexpr char kStop = '.';
inline constexpr char kFrame = '\x95';
inline constexpr char kShortBinUnicode = '\x8c';
inline constexpr char kBinUnicode = 'X';
inline constexpr char kBinUnicode8 = '\x8d';

// How an opcode's argument is laid out.
enum class Arg { none, fixed, len1, len4, len8, line, two_lines, unknown };

struct Layout {
  Arg arg = Arg::unknown;
  std::size_t size = 0;  // Arg::fixed: bytes
};

// The opcodes of each argument layout, one row per layout (a byte in no row is Arg::unknown). Escapes come last in
// a literal piece, so none runs into a letter that reads as a hex digit.
struct LayoutRow {
  std::string_view ops;
  Layout layout;
};
inline constexpr LayoutRow kLayoutRows[] = {
    {"(.012NQRabd}el]ost)u"
     "\x81\x85\x86\x87\x88\x89\x8f\x90\x91\x92\x93\x94\x97\x98",
     {Arg::none, 0}},
    {"Kqh\x82\x80", {Arg::fixed, 1}},
    {"M\x83", {Arg::fixed, 2}},
    {"Jrj\x84", {Arg::fixed, 4}},
    {"G\x95", {Arg::fixed, 8}},
    {"CU\x8c\x8a", {Arg::len1, 0}},
    {"TXB\x8b", {Arg::len4, 0}},
    {"\x8d\x8e\x96", {Arg::len8, 0}},
    {"ILFSVPgp", {Arg::line, 0}},
    {"ci", {Arg::two_lines, 0}},
};

// The rows as one 256-entry table, built at compile time.
inline constexpr auto kLayouts = [] {
  std::array<Layout, 256> table;
  table.fill(Layout{Arg::unknown, 0});  // stated: g++ 12 value-initialises this array ignoring Layout's initialisers
  for (const LayoutRow& row : kLayoutRows)
    for (char op : row.ops) table[static_cast<unsigned char>(op)] = row.layout;
  return table;
}();

inline Layout layout_of(char op) { return kLayouts[static_cast<unsigned char>(op)]; }

inline std::uint64_t little_endian(std::string_view d, std::size_t at, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{static_cast<unsigned char>(d[at + i])} << (8 * i);
  return v;
}

// One opcode of the stream: [begin, end) with its argument at [arg, end).
struct Op {
  char code = 0;
  std::size_t begin = 0, arg = 0, end = 0;
};

// The opcode at `at`, or nullopt when it is unknown or runs past the data.
inline std::optional<Op> op_at(std::string_view d, std::size_t at) {
  if (at >= d.size()) return std::nullopt;
  Op op{d[at], at, at + 1, 0};
  Layout l = layout_of(op.code);
  std::size_t left = d.size() - op.arg;
  auto sized = [&](std::size_t n) -> std::optional<Op> {
    if (left < n) return std::nullopt;
    std::uint64_t len = little_endian(d, op.arg, n);
    if (len > left - n) return std::nullopt;
    op.arg += n;
    op.end = op.arg + static_cast<std::size_t>(len);
    return op;
  };
  auto lines = [&](int count) -> std::optional<Op> {
    std::size_t p = op.arg;
    for (int i = 0; i < count; ++i) {
      std::size_t nl = d.find('\n', p);
      if (nl == std::string_view::npos) return std::nullopt;
      p = nl + 1;
    }
    op.end = p;
    return op;
  };
  switch (l.arg) {
    case Arg::none:
      op.end = op.arg;
      return op;
    case Arg::fixed:
      if (left < l.size) return std::nullopt;
      op.end = op.arg + l.size;
      return op;
    case Arg::len1:
      return sized(1);
    case Arg::len4:
      return sized(4);
    case Arg::len8:
      return sized(8);
    case Arg::line:
      return lines(1);
    case Arg::two_lines:
      return lines(2);
    case Arg::unknown:
      return std::nullopt;
  }
  return std::nullopt;
}

inline bool is_str(char code) { return code == kShortBinUnicode || code == kBinUnicode || code == kBinUnicode8; }

inline std::string little_endian_bytes(std::uint64_t v, std::size_t n) {
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

// The header of a str opcode for a value of `size` bytes: the shortest of the three that holds it.
inline std::string str_header(std::uint64_t size) {
  if (size < 256) return std::string(1, kShortBinUnicode) + little_endian_bytes(size, 1);
  if (size <= 0xffffffffu) return std::string(1, kBinUnicode) + little_endian_bytes(size, 4);
  return std::string(1, kBinUnicode8) + little_endian_bytes(size, 8);
}

inline std::string frame_header(std::uint64_t length) { return std::string(1, kFrame) + little_endian_bytes(length, 8); }

}  // namespace ccpack::unpack::pickle
