#include "manifest/tar.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include "util/error.hpp"

namespace ccpack::manifest {
namespace {

constexpr std::size_t kNameLen = 100;
constexpr std::size_t kPrefixLen = 155;
constexpr std::uint64_t kMaxUstarSize = 077777777777ULL;  // 11 octal digits

struct RawHeader {
  char name[100];
  char mode[8];
  char uid[8];
  char gid[8];
  char size[12];
  char mtime[12];
  char chksum[8];
  char typeflag;
  char linkname[100];
  char magic[6];
  char version[2];
  char uname[32];
  char gname[32];
  char devmajor[8];
  char devminor[8];
  char prefix[155];
  char pad[12];
};
static_assert(sizeof(RawHeader) == kTarBlock);

void put_octal(char* field, std::size_t width, std::uint64_t value) {
  // width-1 digits, zero padded, then NUL.
  std::memset(field, '0', width - 1);
  field[width - 1] = '\0';
  for (std::size_t i = width - 1; i > 0 && value != 0; --i) {
    field[i - 1] = static_cast<char>('0' + (value & 7));
    value >>= 3;
  }
}

// The sum of the block's bytes, its checksum field counted as eight spaces: every byte summed (a loop the
// compiler vectorises; it runs once per entry on restore), then the field's own bytes swapped for spaces.
std::uint32_t checksum(const char* block) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(block);
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < kTarBlock; ++i) sum += bytes[i];
  constexpr std::size_t field = offsetof(RawHeader, chksum);
  for (std::size_t i = field; i < field + 8; ++i) sum = sum - bytes[i] + ' ';
  return sum;
}

void finish_block(RawHeader& raw, std::string& out) {
  std::memcpy(raw.magic, "ustar", 6);
  std::memcpy(raw.version, "00", 2);
  put_octal(raw.uid, sizeof raw.uid, 0);
  put_octal(raw.gid, sizeof raw.gid, 0);
  put_octal(raw.mtime, sizeof raw.mtime, 0);
  put_octal(raw.devmajor, sizeof raw.devmajor, 0);
  put_octal(raw.devminor, sizeof raw.devminor, 0);
  const char* block = reinterpret_cast<const char*>(&raw);
  std::uint32_t sum = checksum(block);
  put_octal(raw.chksum, 7, sum);  // six digits, NUL, then a space: the historical layout
  raw.chksum[7] = ' ';
  out.append(block, kTarBlock);
}

// Splits `path` into ustar prefix and name; false when it cannot be split.
bool split_ustar_path(std::string_view path, std::string_view& prefix, std::string_view& name) {
  if (path.size() <= kNameLen) {
    prefix = {};
    name = path;
    return true;
  }
  // The split point is a '/' with at most 155 bytes before it and at most 100 after it.
  std::size_t limit = std::min(path.size() - 1, kPrefixLen);
  for (std::size_t i = limit + 1; i-- > 0;) {
    if (path[i] == '/' && path.size() - i - 1 <= kNameLen && i > 0) {
      prefix = path.substr(0, i);
      name = path.substr(i + 1);
      return !name.empty();
    }
  }
  return false;
}

void append_pax_record(std::string& records, std::string_view key, std::string_view value) {
  // "len key=value\n" where len counts its own digits.
  std::size_t body = 1 + key.size() + 1 + value.size() + 1;
  std::size_t len = body + 1;
  while (std::to_string(len).size() + body != len) ++len;
  records += std::to_string(len);
  records += ' ';
  records += key;
  records += '=';
  records += value;
  records += '\n';
}

std::uint64_t parse_octal(const char* field, std::size_t width, const char* what, const std::string& where) {
  std::size_t i = 0;
  while (i < width && field[i] == ' ') ++i;
  std::uint64_t value = 0;
  bool any = false;
  for (; i < width && field[i] >= '0' && field[i] <= '7'; ++i) {
    if (value >> 60) throw IntegrityError(where + ": tar header field '" + what + "' overflows");
    value = value << 3 | static_cast<std::uint64_t>(field[i] - '0');
    any = true;
  }
  for (; i < width; ++i) {
    if (field[i] != '\0' && field[i] != ' ') throw IntegrityError(where + ": tar header field '" + what + "' is not octal");
  }
  if (!any) throw IntegrityError(where + ": tar header field '" + what + "' is empty");
  return value;
}

std::string field_string(const char* field, std::size_t width) { return std::string(field, strnlen(field, width)); }

}  // namespace

std::string_view to_string(EntryType type) {
  switch (type) {
    case EntryType::file:
      return "file";
    case EntryType::dir:
      return "dir";
    case EntryType::symlink:
      return "symlink";
  }
  return "?";
}

namespace {

// The typeflag the writer stores for each entry type; entry_type_of below is its inverse.
char typeflag_of(EntryType type) {
  switch (type) {
    case EntryType::file:
      return '0';
    case EntryType::dir:
      return '5';
    case EntryType::symlink:
      return '2';
  }
  return '\0';  // unreachable for a valid EntryType
}

}  // namespace

std::optional<EntryType> entry_type_of(char typeflag) {
  switch (typeflag) {
    case '0':
    case '\0':  // the pre-POSIX (v7) regular file
      return EntryType::file;
    case '5':
      return EntryType::dir;
    case '2':
      return EntryType::symlink;
    default:
      return std::nullopt;
  }
}

void append_tar_header(std::string& out, const TarHeader& header) {
  std::string stored = header.path;
  if (header.type == EntryType::dir) stored += '/';
  std::string_view prefix;
  std::string_view name;
  bool path_fits = split_ustar_path(stored, prefix, name);
  bool link_fits = header.link_target.size() <= kNameLen;
  bool size_fits = header.size <= kMaxUstarSize;

  if (!path_fits || !link_fits || !size_fits) {
    std::string records;
    if (!path_fits) append_pax_record(records, "path", stored);
    if (!link_fits) append_pax_record(records, "linkpath", header.link_target);
    if (!size_fits) append_pax_record(records, "size", std::to_string(header.size));
    RawHeader pax{};
    std::memcpy(pax.name, "PaxHeader", 9);
    put_octal(pax.mode, sizeof pax.mode, 0644);
    put_octal(pax.size, sizeof pax.size, records.size());
    pax.typeflag = 'x';
    finish_block(pax, out);
    out += records;
    out.append(tar_padding(records.size()), '\0');
    if (!path_fits) {
      // ustar readers that ignore pax still see the tail of the name.
      std::string_view tail = std::string_view(stored).substr(stored.size() - kNameLen);
      prefix = {};
      name = tail;
    }
  }

  RawHeader raw{};
  name.copy(raw.name, name.size());  // copy(), not memcpy: an empty prefix may have a null data()
  prefix.copy(raw.prefix, prefix.size());
  put_octal(raw.mode, sizeof raw.mode, header.mode & 07777);
  put_octal(raw.size, sizeof raw.size, size_fits ? header.size : 0);
  raw.typeflag = typeflag_of(header.type);
  if (link_fits) header.link_target.copy(raw.linkname, header.link_target.size());
  finish_block(raw, out);
}

bool is_zero_block(const char* block) {
  return std::all_of(block, block + kTarBlock, [](char c) { return c == '\0'; });
}

UstarBlock decode_ustar_block(const char* block, const std::string& where) {
  RawHeader raw{};
  std::memcpy(&raw, block, kTarBlock);
  if (std::memcmp(raw.magic, "ustar", 5) != 0) throw IntegrityError(where + ": not a ustar header");
  std::uint64_t stored_sum = parse_octal(raw.chksum, sizeof raw.chksum, "chksum", where);
  if (stored_sum != checksum(block)) throw IntegrityError(where + ": tar header checksum mismatch");
  UstarBlock out;
  out.typeflag = raw.typeflag;
  std::string name = field_string(raw.name, sizeof raw.name);
  std::string prefix = field_string(raw.prefix, sizeof raw.prefix);
  out.path = prefix.empty() ? std::move(name) : prefix + "/" + name;
  out.link_target = field_string(raw.linkname, sizeof raw.linkname);
  out.mode = static_cast<std::uint32_t>(parse_octal(raw.mode, sizeof raw.mode, "mode", where));
  out.size = parse_octal(raw.size, sizeof raw.size, "size", where);
  // Unused (ccpack writes 0), but checked: libarchive refuses a malformed number there, and a reader that takes
  // what the others refuse can see a different stream (found by tests/fuzz/fuzz_tar_oracle.cpp).
  (void)parse_octal(raw.uid, sizeof raw.uid, "uid", where);
  (void)parse_octal(raw.gid, sizeof raw.gid, "gid", where);
  (void)parse_octal(raw.mtime, sizeof raw.mtime, "mtime", where);
  (void)parse_octal(raw.devmajor, sizeof raw.devmajor, "devmajor", where);
  (void)parse_octal(raw.devminor, sizeof raw.devminor, "devminor", where);
  return out;
}

void apply_pax_records(std::string_view records, UstarBlock& block, const std::string& where) {
  while (!records.empty()) {
    std::size_t space = records.find(' ');
    std::size_t len = 0;
    if (space == std::string_view::npos || std::from_chars(records.data(), records.data() + space, len).ec != std::errc{} ||
        len <= space + 1 || len > records.size() || records[len - 1] != '\n') {
      throw IntegrityError(where + ": malformed pax record");
    }
    std::string_view record = records.substr(space + 1, len - space - 2);
    records.remove_prefix(len);
    std::size_t eq = record.find('=');
    if (eq == std::string_view::npos) throw IntegrityError(where + ": malformed pax record");
    std::string_view key = record.substr(0, eq);
    std::string_view value = record.substr(eq + 1);
    // A NUL would end the name for every C reader (libarchive among them) but not for ccpack: refuse it.
    if ((key == "path" || key == "linkpath") && value.find('\0') != std::string_view::npos) {
      throw IntegrityError(where + ": pax " + std::string(key) + " contains a NUL byte");
    }
    if (key == "path") {
      block.path = std::string(value);
    } else if (key == "linkpath") {
      block.link_target = std::string(value);
    } else if (key == "size") {
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), block.size);
      if (ec != std::errc{} || end != value.data() + value.size()) {
        throw IntegrityError(where + ": malformed pax size");
      }
    }
  }
}

}  // namespace ccpack::manifest
