#include "manifest/marker.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "manifest/json_guard.hpp"
#include "manifest/reserved_names.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::manifest {
namespace {

using ojson = nlohmann::ordered_json;
bool is_hex_digest(const std::string& s) {
  return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

// The "settle" key, when it is there and reads: else the marker does not say (never a reason to drop it).
void read_settle(const ojson& j, Marker& m) {
  auto it = j.find("settle");
  if (it == j.end()) return;
  try {
    if (!it->is_null()) m.settle = SettleRecord::from_tree(nlohmann::json::parse(it->dump()));
    m.settle_recorded = true;
  } catch (const IntegrityError&) {
    m.settle.reset();
  }
}

// The "archive_file" key: a record that does not read is dropped (the next no-op restore reads the manifest).
void read_archive_file(const ojson& j, Marker& m) {
  auto it = j.find("archive_file");
  if (it == j.end() || !it->is_object()) return;
  try {
    ArchiveFile f;
    f.dev = it->at("dev").get<std::uint64_t>();
    f.ino = it->at("ino").get<std::uint64_t>();
    f.size = it->at("size").get<std::uint64_t>();
    f.mtime_ns = it->at("mtime_ns").get<std::int64_t>();
    f.ctime_ns = it->at("ctime_ns").get<std::int64_t>();
    f.manifest_top_level = it->at("manifest_top_level").get<std::string>();
    if (!f.manifest_top_level.empty()) m.archive_file = std::move(f);
  } catch (const nlohmann::json::exception&) {
    m.archive_file.reset();
  }
}

}  // namespace

ArchiveFile ArchiveFile::of(const struct ::stat& st) {
  ArchiveFile f;
  f.dev = static_cast<std::uint64_t>(st.st_dev);
  f.ino = static_cast<std::uint64_t>(st.st_ino);
  f.size = static_cast<std::uint64_t>(st.st_size);
  f.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  f.ctime_ns = static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
  return f;
}

std::string Marker::to_json() const {
  ojson j;
  j["marker"] = version;
  j["archive_manifest_sha256"] = archive_manifest_sha256;
  j["component"] = component;
  j["restored_by"] = restored_by;
  j["restored_at"] = restored_at;
  j["signed_by"] = signed_by.empty() ? ojson(nullptr) : ojson(signed_by);
  j["origin"] = origin.empty() ? ojson(nullptr) : ojson(origin.substr(0, kMaxMarkerOrigin));
  if (settle_recorded) j["settle"] = settle ? settle->to_tree() : ojson(nullptr);
  if (archive_file) {
    j["archive_file"] = ojson{{"dev", archive_file->dev},           {"ino", archive_file->ino},
                              {"size", archive_file->size},         {"mtime_ns", archive_file->mtime_ns},
                              {"ctime_ns", archive_file->ctime_ns}, {"manifest_top_level", archive_file->manifest_top_level}};
  }
  // Keys sorted, as every marker so far has them: the tree goes through nlohmann::json, whose objects sort.
  j["fingerprint"] = ojson::parse(nlohmann::json::parse(fingerprint.to_json()).dump());
  return j.dump() + "\n";
}

std::optional<Marker> Marker::parse(std::string_view text) {
  if (text.size() > kMaxMarkerBytes) return std::nullopt;
  try {
    // Bounded depth, no repeated keys: a marker is local state, but a hostile or broken one must not crash a
    // pod's entrypoint.
    ojson j = parse_untrusted<ojson>(text, "restore marker");
    if (!j.is_object()) return std::nullopt;
    Marker m;
    m.version = j.value("marker", 1);
    if (m.version != kMarkerVersion) return std::nullopt;
    m.archive_manifest_sha256 = j.at("archive_manifest_sha256").get<std::string>();
    m.component = j.at("component").get<std::string>();
    m.restored_by = j.value("restored_by", std::string());
    m.restored_at = j.value("restored_at", std::string());
    if (auto it = j.find("signed_by"); it != j.end() && !it->is_null()) m.signed_by = it->get<std::string>();
    if (auto it = j.find("origin"); it != j.end() && !it->is_null())
      m.origin = it->get<std::string>().substr(0, kMaxMarkerOrigin);
    read_settle(j, m);
    read_archive_file(j, m);
    const ojson& fp = j.at("fingerprint");
    if (!fp.is_object()) return std::nullopt;
    try {
      m.fingerprint = Fingerprint::from_json(fp.dump());
    } catch (const std::exception& e) {
      m.fingerprint_error = e.what();
    }
    if (!is_hex_digest(m.archive_manifest_sha256)) return std::nullopt;
    return m;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  } catch (const IntegrityError&) {
    return std::nullopt;
  }
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<Marker> Marker::read(const std::filesystem::path& dir) {
  // O_NONBLOCK: a FIFO in the marker's place must not make restore, purge or status wait for a writer.
  UniqueFd fd(::open((dir / kMarkerName).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // As many bytes as the file has, plus one to see it grow, never past the bound: a marker is a few KiB, and a
  // no-op restore reads every folder's marker twice (zeroing the bound's 1 MiB each time was most of its CPU).
  std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  std::string text(static_cast<std::size_t>(std::min<std::uint64_t>(size, kMaxMarkerBytes)) + 1, '\0');
  try {
    text.resize(pread_full(fd.get(), text.data(), text.size(), 0, quoted_path(dir / kMarkerName)));
  } catch (const Error&) {
    return std::nullopt;
  }
  return parse(text);
}

}  // namespace ccpack::manifest
