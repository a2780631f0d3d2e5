// See oracle.hpp.
#include "oracle/oracle.hpp"

#include <archive.h>
#include <archive_entry.h>

#include <vector>

#include "unpack/archive.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

namespace ccpack::oracle {
namespace fs = std::filesystem;

namespace {

struct Feed {
  const PayloadReader* payload;
  std::vector<char> buf = std::vector<char>(1 << 20);
};

la_ssize_t read_payload(archive*, void* self, const void** data) {
  auto* feed = static_cast<Feed*>(self);
  *data = feed->buf.data();
  return static_cast<la_ssize_t>((*feed->payload)(feed->buf.data(), feed->buf.size()));
}

std::string type_of(archive_entry* e) {
  switch (archive_entry_filetype(e)) {
    case AE_IFREG:
      return archive_entry_hardlink(e) ? "hardlink" : "file";
    case AE_IFDIR:
      return "dir";
    case AE_IFLNK:
      return "symlink";
    default:
      return "other";
  }
}

// What libarchive says about one entry, as the manifest would say it.
struct Seen {
  std::string path, type, link;
  std::uint32_t mode = 0;
  std::uint64_t size = 0;
  Digest sha256{};
  bool normalised = true;
};

Seen read_entry(archive* a, archive_entry* e) {
  Seen s;
  s.path = archive_entry_pathname(e) ? archive_entry_pathname(e) : "";
  if (s.path.ends_with('/')) s.path.pop_back();
  s.type = type_of(e);
  s.mode = static_cast<std::uint32_t>(archive_entry_perm(e)) & 07777u;
  s.size = static_cast<std::uint64_t>(archive_entry_size(e));
  s.link = archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
  s.normalised = archive_entry_uid(e) == 0 && archive_entry_gid(e) == 0 && archive_entry_mtime(e) == 0;
  Sha256 h;
  std::vector<char> buf(1 << 20);
  for (la_ssize_t n; (n = archive_read_data(a, buf.data(), buf.size())) != 0;) {
    if (n < 0) throw Error(std::string("libarchive: ") + archive_error_string(a));
    h.update(buf.data(), static_cast<std::size_t>(n));
  }
  s.sha256 = h.finish();
  return s;
}

void compare_entry(const manifest::Entry& want, const Seen& got, std::size_t i, std::vector<std::string>& out) {
  std::string at = "entries[" + std::to_string(i) + "] '" + want.path + "': libarchive reads ";
  auto differs = [&](const std::string& field, const std::string& seen, const std::string& wanted) {
    if (seen != wanted) out.push_back(at + field + " " + seen + ", the manifest says " + wanted);
  };
  differs("path", "'" + got.path + "'", "'" + want.path + "'");
  differs("type", got.type, std::string(manifest::to_string(want.type)));
  char mode[2][8];
  std::snprintf(mode[0], sizeof mode[0], "%04o", got.mode);
  std::snprintf(mode[1], sizeof mode[1], "%04o", want.mode);
  differs("mode", mode[0], mode[1]);
  if (want.type == manifest::EntryType::file) {
    differs("size", std::to_string(got.size), std::to_string(want.size));
    differs("sha256", to_hex(got.sha256), to_hex(want.sha256));
  } else {
    differs("size", std::to_string(got.size), "0");
  }
  differs("link target", "'" + got.link + "'", "'" + want.link_target + "'");
  if (!got.normalised) out.push_back(at + "uid, gid or mtime other than 0");
}

}  // namespace

std::vector<std::string> compare(const manifest::Manifest& m, const PayloadReader& payload) {
  std::vector<std::string> out;
  Feed feed{&payload};
  archive* a = archive_read_new();
  archive_read_support_filter_zstd(a);
  archive_read_support_format_tar(a);
  try {
    if (archive_read_open(a, &feed, nullptr, &read_payload, nullptr) != ARCHIVE_OK) {
      throw Error(std::string("libarchive cannot open the payload: ") + archive_error_string(a));
    }
    std::size_t i = 0;
    archive_entry* e = nullptr;
    for (int rc; (rc = archive_read_next_header(a, &e)) != ARCHIVE_EOF; ++i) {
      if (rc != ARCHIVE_OK) throw Error("libarchive: entry " + std::to_string(i) + ": " + archive_error_string(a));
      Seen seen = read_entry(a, e);
      if (i >= m.entries.size()) {
        out.push_back("libarchive reads an entry the manifest does not list: '" + seen.path + "'");
        continue;
      }
      compare_entry(m.entries[i], seen, i, out);
    }
    if (i < m.entries.size()) {
      out.push_back("libarchive reads " + std::to_string(i) + " entries, the manifest lists " + std::to_string(m.entries.size()));
    }
  } catch (const std::exception& ex) {
    out.push_back(ex.what());
  }
  archive_read_free(a);
  return out;
}

std::vector<std::string> check_archive(const fs::path& path) {
  unpack::Archive archive = unpack::Archive::open(path);
  std::uint64_t at = archive.header.header_size;
  std::uint64_t end = at + archive.header.payload_size;
  return compare(archive.manifest, [&](char* buf, std::size_t size) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size, end - at));
    std::size_t n = pread_full(archive.fd.get(), buf, want, static_cast<off_t>(at), quoted_path(path));
    at += n;
    return n;
  });
}

}  // namespace ccpack::oracle
