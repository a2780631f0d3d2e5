// See canonical_entries.hpp. One entry, exactly as append_entry_json writes it:
//   {"path":S,"type":"file","mode":"0644","size":N,"sha256":"<64 hex>","frame":N}
//   {"path":S,"type":"dir","mode":"0755","frame":N}
//   {"path":S,"type":"symlink","mode":"0777","target":S,"frame":N}
#include "manifest/canonical_entries.hpp"

#include <cstring>

#include "util/sha256.hpp"

namespace ccpack::manifest {
namespace {

// A reader over the array's bytes; every method returns false at the first byte out of create's form.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  [[nodiscard]] bool at_end() const { return p_ == end_; }
  [[nodiscard]] bool next_is(char c) const { return p_ != end_ && *p_ == c; }

  bool literal(std::string_view s) {
    if (static_cast<std::size_t>(end_ - p_) < s.size() || std::memcmp(p_, s.data(), s.size()) != 0) return false;
    p_ += s.size();
    return true;
  }

  // A string of printable ASCII without escapes, the quotes included.
  bool string(std::string_view& out) {
    if (!literal("\"")) return false;
    const char* start = p_;
    for (; p_ != end_ && *p_ != '"'; ++p_) {
      auto c = static_cast<unsigned char>(*p_);
      if (c < 0x20 || c > 0x7E || c == '\\') return false;
    }
    if (p_ == end_) return false;
    out = std::string_view(start, static_cast<std::size_t>(p_ - start));
    ++p_;
    return true;
  }

  // A JSON number that is a non-negative integer of at most 64 bits, written without a leading zero.
  bool u64(std::uint64_t& out) {
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    if (*p_ == '0' && p_ + 1 != end_ && p_[1] >= '0' && p_[1] <= '9') return false;
    std::uint64_t v = 0;
    for (; p_ != end_ && *p_ >= '0' && *p_ <= '9'; ++p_) {
      auto d = static_cast<std::uint64_t>(*p_ - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
    if (p_ != end_ && (*p_ == '.' || *p_ == 'e' || *p_ == 'E')) return false;
    out = v;
    return true;
  }

 private:
  const char* p_;
  const char* end_;
};

bool read_type(Cursor& in, EntryType& type) {
  if (in.literal("\"file\"")) {
    type = EntryType::file;
  } else if (in.literal("\"dir\"")) {
    type = EntryType::dir;
  } else if (in.literal("\"symlink\"")) {
    type = EntryType::symlink;
  } else {
    return false;
  }
  return true;
}

bool read_mode(Cursor& in, std::uint32_t& mode) {
  std::string_view text;
  if (!in.string(text) || text.size() != 4) return false;
  mode = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return false;
    mode = mode * 8 + static_cast<std::uint32_t>(c - '0');
  }
  return true;
}

bool read_entry(Cursor& in, Entry& e) {
  std::string_view text;
  if (!in.literal("{\"path\":") || !in.string(text)) return false;
  e.path.assign(text);
  if (!in.literal(",\"type\":") || !read_type(in, e.type)) return false;
  if (!in.literal(",\"mode\":") || !read_mode(in, e.mode)) return false;
  e.size = 0;
  e.sha256 = Digest{};
  e.link_target.clear();
  if (e.type == EntryType::file) {
    if (!in.literal(",\"size\":") || !in.u64(e.size)) return false;
    if (!in.literal(",\"sha256\":") || !in.string(text)) return false;
    std::optional<Digest> d = digest_from_hex(text);
    if (!d) return false;
    e.sha256 = *d;
  } else if (e.type == EntryType::symlink) {
    if (!in.literal(",\"target\":") || !in.string(text)) return false;
    e.link_target.assign(text);
  }
  std::uint64_t frame = 0;
  if (!in.literal(",\"frame\":") || !in.u64(frame) || frame > UINT32_MAX || !in.literal("}")) return false;
  e.frame = static_cast<std::uint32_t>(frame);
  return true;
}

}  // namespace

std::optional<EntryList> read_canonical_entries(std::string_view array, std::uint64_t max_entries) {
  Cursor in(array);
  EntryList entries;
  if (!in.literal("[")) return std::nullopt;
  Entry e;
  if (!in.next_is(']')) {
    do {
      if (entries.size() >= max_entries || !read_entry(in, e)) return std::nullopt;
      entries.push_back(e);
    } while (in.literal(","));
  }
  if (!in.literal("]") || !in.at_end()) return std::nullopt;
  return entries;
}

}  // namespace ccpack::manifest
