// libFuzzer target: ccpack's reading of a tar stream and libarchive's must agree on every stream ccpack accepts:
// the same entries, in order, with the same path, type, mode, size, content and link target. "ccpack accepts"
// is what restore accepts: the stream decodes with manifest/tar.hpp's primitives walked as unpack/frame_stream.cpp
// walks them, and the entries it lists pass Manifest::validate (restore extracts only entries its validated
// manifest lists). ccpack is stricter (three entry types, no GNU extensions), so a stream only libarchive accepts
// is fine; one that ccpack accepts and libarchive reads differently is a bug. Found so far: a pax path with a NUL
// byte (corpus/tar/pax-path-nul.tar), refused by apply_pax_records since.
#include <archive.h>
#include <archive_entry.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"
#include "manifest/tar.hpp"
#include "util/error.hpp"

namespace {

using ccpack::manifest::kTarBlock;

struct Item {
  char type;  // '0', '5', '2'
  std::string path, link, data;
  std::uint32_t mode;
};

// The stream as restore's reader walks it (unpack/frame_stream.cpp): pax 'x' headers apply to the next entry,
// only files, folders and symlinks, two zero blocks end it and nothing may follow.
std::optional<std::vector<Item>> ccpack_read(std::string_view s) {
  std::vector<Item> items;
  std::optional<std::string> pax;
  std::size_t at = 0;
  try {
    for (;;) {
      if (at + kTarBlock > s.size()) return std::nullopt;
      if (ccpack::manifest::is_zero_block(s.data() + at)) {
        if (pax || at + 2 * kTarBlock != s.size() || !ccpack::manifest::is_zero_block(s.data() + at + kTarBlock))
          return std::nullopt;
        return items;
      }
      ccpack::manifest::UstarBlock b = ccpack::manifest::decode_ustar_block(s.data() + at, "fuzz");
      at += kTarBlock;
      std::uint64_t padded = b.size + ccpack::manifest::tar_padding(b.size);
      if (b.size > (1 << 20) || padded > s.size() - at) return std::nullopt;
      if (b.typeflag == 'x') {
        if (pax) return std::nullopt;
        pax = std::string(s.substr(at, b.size));
        at += padded;
        continue;
      }
      if (pax) ccpack::manifest::apply_pax_records(*pax, b, "fuzz");
      pax.reset();
      char type = b.typeflag == '\0' ? '0' : b.typeflag;
      if (type != '0' && type != '5' && type != '2') return std::nullopt;
      if (type != '0' && b.size != 0) return std::nullopt;
      if (type == '5' && b.path.ends_with('/')) b.path.pop_back();
      items.push_back({type, b.path, type == '2' ? b.link_target : "", std::string(s.substr(at, b.size)), b.mode & 07777u});
      at += padded;
    }
  } catch (const ccpack::Error&) {
    return std::nullopt;
  }
}

// Whether restore could list these entries: the manifest they would make passes validation.
bool restore_accepts(const std::vector<Item>& items, std::uint64_t tar_size) {
  namespace m = ccpack::manifest;
  m::Manifest man;
  std::set<std::string, std::less<>> names;
  for (const Item& it : items) {
    m::Entry e;
    e.path = it.path;
    e.type = it.type == '5' ? m::EntryType::dir : it.type == '2' ? m::EntryType::symlink : m::EntryType::file;
    e.mode = it.mode;
    e.size = it.data.size();
    e.link_target = it.link;
    man.entries.push_back(std::move(e));
    names.emplace(m::component_of(it.path));
  }
  for (const std::string& n : names) {
    m::ComponentKind kind = n == "inductor" ? m::ComponentKind::inductor
                            : n == "triton" ? m::ComponentKind::triton
                                            : m::ComponentKind::extra;
    man.components.push_back({n, kind, "/", 0, 0});
  }
  man.frames.push_back({0, 1, tar_size, {}, 0, items.size()});
  man.tar_size = tar_size;
  try {
    man.validate();
    return true;
  } catch (const ccpack::Error&) {
    return false;
  }
}

std::optional<std::vector<Item>> libarchive_read(std::string_view s) {
  archive* a = archive_read_new();
  archive_read_support_format_tar(a);
  std::vector<Item> items;
  bool ok = archive_read_open_memory(a, s.data(), s.size()) == ARCHIVE_OK;
  archive_entry* e = nullptr;
  int rc = ARCHIVE_OK;
  // A warning (such as a pax path that is not UTF-8 in the C locale) still delivers the entry, as import takes it.
  while (ok && ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN)) {
    Item it{};
    int ft = archive_entry_filetype(e);
    it.type = ft == AE_IFREG ? '0' : ft == AE_IFDIR ? '5' : ft == AE_IFLNK ? '2' : '?';
    it.path = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
    if (it.type == '5' && it.path.ends_with('/')) it.path.pop_back();
    it.link = it.type == '2' && archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
    it.mode = static_cast<std::uint32_t>(archive_entry_perm(e)) & 07777u;
    char buf[4096];
    for (la_ssize_t n; (n = archive_read_data(a, buf, sizeof buf)) > 0;) it.data.append(buf, static_cast<std::size_t>(n));
    items.push_back(std::move(it));
  }
  ok = ok && rc == ARCHIVE_EOF;
  archive_read_free(a);
  if (!ok) return std::nullopt;
  return items;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  std::optional<std::vector<Item>> ours = ccpack_read(s);
  if (!ours || !restore_accepts(*ours, size)) return 0;
  std::optional<std::vector<Item>> theirs = libarchive_read(s);
  if (!theirs || theirs->size() != ours->size()) __builtin_trap();
  for (std::size_t i = 0; i < ours->size(); ++i) {
    const Item& x = (*ours)[i];
    const Item& y = (*theirs)[i];
    if (x.type != y.type || x.path != y.path || x.link != y.link || x.mode != y.mode || x.data != y.data) __builtin_trap();
  }
  return 0;
}
