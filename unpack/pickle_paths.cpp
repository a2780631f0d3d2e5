// See pickle_paths.hpp. The opcode table follows the pickle protocol as Python's pickletools documents it: each
// opcode is one byte, then an argument of fixed size, of a size given by a 1-, 4- or 8-byte little-endian length,
// or (the text protocol) up to a newline. The walker never interprets a value beyond the strings it moves.
#include "unpack/pickle_paths.hpp"

#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "util/error.hpp"

namespace ccpack::unpack {
namespace {

constexpr char kStop = '.';
constexpr char kFrame = '\x95';
constexpr char kShortBinUnicode = '\x8c';
constexpr char kBinUnicode = 'X';
constexpr char kBinUnicode8 = '\x8d';

// How an opcode's argument is laid out.
enum class Arg { none, fixed, len1, len4, len8, line, two_lines, unknown };

struct Layout {
  Arg arg = Arg::unknown;
  std::size_t size = 0;  // Arg::fixed: bytes
};

Layout layout_of(char op) {
  switch (op) {
    case '(': case '.': case '0': case '1': case '2': case 'N': case 'Q': case 'R': case 'a': case 'b':
    case 'd': case '}': case 'e': case 'l': case ']': case 'o': case 's': case 't': case ')': case 'u':
    case '\x81': case '\x85': case '\x86': case '\x87': case '\x88': case '\x89': case '\x8f': case '\x90':
    case '\x91': case '\x92': case '\x93': case '\x94': case '\x97': case '\x98':
      return {Arg::none, 0};
    case 'K': case 'q': case 'h': case '\x82': case '\x80': return {Arg::fixed, 1};
    case 'M': case '\x83': return {Arg::fixed, 2};
    case 'J': case 'r': case 'j': case '\x84': return {Arg::fixed, 4};
    case 'G': case '\x95': return {Arg::fixed, 8};
    case 'U': case '\x8c': case 'C': case '\x8a': return {Arg::len1, 0};
    case 'T': case 'X': case 'B': case '\x8b': return {Arg::len4, 0};
    case '\x8d': case '\x8e': case '\x96': return {Arg::len8, 0};
    case 'I': case 'L': case 'F': case 'S': case 'V': case 'P': case 'g': case 'p': return {Arg::line, 0};
    case 'c': case 'i': return {Arg::two_lines, 0};
    default: return {Arg::unknown, 0};
  }
}

std::uint64_t little_endian(std::string_view d, std::size_t at, std::size_t n) {
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
std::optional<Op> op_at(std::string_view d, std::size_t at) {
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
    case Arg::none: op.end = op.arg; return op;
    case Arg::fixed: if (left < l.size) return std::nullopt; op.end = op.arg + l.size; return op;
    case Arg::len1: return sized(1);
    case Arg::len4: return sized(4);
    case Arg::len8: return sized(8);
    case Arg::line: return lines(1);
    case Arg::two_lines: return lines(2);
    case Arg::unknown: return std::nullopt;
  }
  return std::nullopt;
}

bool is_str(char code) { return code == kShortBinUnicode || code == kBinUnicode || code == kBinUnicode8; }

// Calls visit(op) for each opcode up to and including STOP; false when the stream is not one this reader takes
// (unknown opcode, truncated, or bytes after STOP).
template <typename Visit>
bool walk(std::string_view d, Visit&& visit) {
  if (!looks_like_pickle(d)) return false;
  std::size_t at = 0;
  while (true) {
    std::optional<Op> op = op_at(d, at);
    if (!op) return false;
    visit(*op);
    at = op->end;
    if (op->code == kStop) return at == d.size();
  }
}

void append_str(Splice& out, std::string_view value) {
  char len[8];
  std::size_t n = value.size();
  std::size_t width = n < 256 ? 1 : n <= 0xffffffffu ? 4 : 8;
  char code = width == 1 ? kShortBinUnicode : width == 4 ? kBinUnicode : kBinUnicode8;
  for (std::size_t i = 0; i < width; ++i) len[i] = static_cast<char>((static_cast<std::uint64_t>(n) >> (8 * i)) & 0xff);
  out.add(std::string_view(&code, 1));
  out.add(std::string_view(len, width));
  out.add(value);
}

// Reads back what a splice of `packed` will write: each piece must hold whole opcodes, the first must open like a
// pickle, STOP must be the last opcode of the last piece, and the strings must number `strings`.
bool reads_back(const Splice& s, std::string_view packed, std::uint64_t strings) {
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < s.pieces.size(); ++i) {
    const Splice::Piece& p = s.pieces[i];
    std::string_view span = p.added ? std::string_view(s.added).substr(p.at, p.size) : packed.substr(p.at, p.size);
    if (i == 0 && !(span.size() >= 2 && span[0] == '\x80' && span[1] >= 2 && span[1] <= 5)) return false;  // PROTO
    std::size_t at = 0;
    while (at < span.size()) {
      std::optional<Op> op = op_at(span, at);
      if (!op) return false;
      seen += is_str(op->code) ? 1 : 0;
      at = op->end;
      if (op->code == kStop && (i + 1 != s.pieces.size() || at != span.size())) return false;
      if (op->code != kStop && i + 1 == s.pieces.size() && at == span.size()) return false;
    }
  }
  return !s.pieces.empty() && seen == strings;
}

}  // namespace

void Splice::keep(std::size_t at, std::size_t size) {
  if (size == 0) return;
  if (!pieces.empty() && !pieces.back().added && pieces.back().at + pieces.back().size == at) {
    pieces.back().size += size;
  } else {
    pieces.push_back({false, at, size});
  }
}

void Splice::add(std::string_view bytes) {
  if (!pieces.empty() && pieces.back().added && pieces.back().at + pieces.back().size == added.size()) {
    pieces.back().size += bytes.size();
  } else {
    pieces.push_back({true, added.size(), bytes.size()});
  }
  added.append(bytes);
}

std::uint64_t Splice::size() const {
  std::uint64_t n = 0;
  for (const Piece& p : pieces) n += p.size;
  return n;
}

std::string Splice::assemble(std::string_view packed) const {
  std::string out;
  out.reserve(size());
  for (const Piece& p : pieces) out.append(p.added ? std::string_view(added).substr(p.at, p.size) : packed.substr(p.at, p.size));
  return out;
}

void Splice::write(int fd, std::string_view packed, const std::string& what) const {
  std::vector<iovec> iov;
  iov.reserve(std::min<std::size_t>(pieces.size(), IOV_MAX));
  std::size_t next = 0;
  while (next < pieces.size()) {
    iov.clear();
    for (; next < pieces.size() && iov.size() < IOV_MAX; ++next) {
      const Piece& p = pieces[next];
      const char* base = p.added ? added.data() : packed.data();
      iov.push_back({const_cast<char*>(base + p.at), p.size});
    }
    std::size_t first = 0;
    while (first < iov.size()) {
      ssize_t n = ::writev(fd, iov.data() + first, static_cast<int>(iov.size() - first));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw_errno("cannot write " + what);
      auto done = static_cast<std::size_t>(n);
      while (first < iov.size() && done >= iov[first].iov_len) done -= iov[first++].iov_len;
      if (first < iov.size()) {
        iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + done;
        iov[first].iov_len -= done;
      }
    }
  }
}

bool looks_like_pickle(std::string_view data) {
  return data.size() >= 3 && data[0] == '\x80' && data[1] >= 2 && data[1] <= 5;
}

std::optional<std::vector<std::string>> pickle_build_folders(std::string_view data,
                                                             const std::function<bool(std::string_view)>& is_file) {
  constexpr int kMinElements = 2, kMaxElements = 6;
  std::vector<std::string> found;
  bool ok = walk(data, [&](const Op& op) {
    if (!is_str(op.code) || op.end - op.arg < 2 || data[op.arg] != '/') return;
    std::string_view value = data.substr(op.arg, op.end - op.arg);
    std::size_t slash = value.size();
    for (int elements = 1; elements <= kMaxElements; ++elements) {
      slash = value.rfind('/', slash - 1);
      if (slash == 0 || slash == std::string_view::npos) return;
      if (elements >= kMinElements && is_file(value.substr(slash + 1))) {
        found.emplace_back(value.substr(0, slash));
        return;
      }
    }
  });
  if (!ok) return std::nullopt;
  std::sort(found.begin(), found.end());
  found.erase(std::unique(found.begin(), found.end()), found.end());
  return found;
}

std::optional<Splice> rewrite_pickle_paths(std::string_view data, const std::vector<std::string>& from,
                                           std::string_view to) {
  std::vector<std::string> roots = from;  // longest first, so a nested folder wins over its parent
  std::sort(roots.begin(), roots.end(), [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  Splice r;
  std::uint64_t strings = 0;
  bool ok = walk(data, [&](const Op& op) {
    if (op.code == kFrame) return;
    if (is_str(op.code)) {
      ++strings;
      std::string_view value = data.substr(op.arg, op.end - op.arg);
      for (const std::string& root : roots) {
        if (value.size() > root.size() && value.starts_with(root) && value[root.size()] == '/') {
          std::string moved(to);
          moved.append(value.substr(root.size()));
          append_str(r, moved);
          ++r.strings_rewritten;
          return;
        }
      }
    }
    r.keep(op.begin, op.end - op.begin);
  });
  if (!ok) return std::nullopt;
  // Read back: the stream to be written parses to its STOP and holds as many strings as the packed one. It is
  // walked piece by piece where it is, never assembled.
  if (r.strings_rewritten != 0 && !reads_back(r, data, strings)) return std::nullopt;
  return r;
}

}  // namespace ccpack::unpack
