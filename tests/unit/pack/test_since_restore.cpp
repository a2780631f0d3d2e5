// pack/since_restore.cpp's create_since_restore: from folders as a restore leaves them (files, marker, entry
// list), only what they gained since is packed (a base file changed in place is left out), the manifest's delta
// field names the base; a folder without a marker, one restored from another archive and one without its entry
// list are refused with exit 5, naming the folder, and nothing is written.
#include <fcntl.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "manifest/marker.hpp"
#include "manifest/reserved_names.hpp"
#include "manifest/restored_entries.hpp"
#include "pack/since_restore.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

const std::string kBaseDigest(64, 'b');

manifest::Entry base_entry(const std::string& path, manifest::EntryType type, const std::string& content = "") {
  manifest::Entry e;
  e.path = path;
  e.type = type;
  e.mode = type == manifest::EntryType::dir ? 0755 : 0644;
  e.size = content.size();
  if (type == manifest::EntryType::file) e.sha256 = Sha256::of(content);
  return e;
}

manifest::Manifest base_manifest() {
  using manifest::EntryType;
  manifest::Manifest m;
  m.entries = std::vector<manifest::Entry>{base_entry("inductor", EntryType::dir),
                                           base_entry("inductor/ab", EntryType::dir),
                                           base_entry("inductor/ab/c.py", EntryType::file, "code"),
                                           base_entry("triton", EntryType::dir),
                                           base_entry("triton/K1", EntryType::dir),
                                           base_entry("triton/K1/k.json", EntryType::file, "{}")};
  return m;
}

// `root` as a restore of base_manifest() from the archive `digest` leaves it; without the entry list when `list`
// is false.
void as_restored(const fs::path& root, const std::string& component, const std::string& digest, bool list = true) {
  manifest::Manifest m = base_manifest();
  for (const manifest::Entry& e : m.entries) {
    if (manifest::component_of(e.path) != component || e.type != manifest::EntryType::file) continue;
    test::write_file(root / std::string(manifest::relative_of(e.path)), e.path.ends_with(".py") ? "code" : "{}");
  }
  UniqueFd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (list) manifest::write_restored_entries(fd.get(), m, component, digest);
  manifest::Marker marker;
  marker.archive_manifest_sha256 = digest;
  marker.component = component;
  marker.restored_by = "ccpack test";
  test::write_file(root / std::string(manifest::kMarkerName), marker.to_json());
}

pack::CreateRequest since_request(const test::ScratchDir& t) {
  pack::CreateRequest rq;
  rq.dirs = test::dirs_of(t / "ind", t / "tri");
  rq.output = t / "delta.ccpack";
  rq.machine = [] { return manifest::Fingerprint{}; };
  return rq;
}

std::string not_restored_message(const std::string& component, const fs::path& dir, const std::string& why) {
  return component + " cache folder " + quoted_path(dir) + " " + why +
         "; create --since-restore packs what a folder gained since `ccpack restore` filled it";
}

// The message and exit code of the Error that create_since_restore throws.
std::pair<std::string, ExitCode> since_error(const pack::CreateRequest& rq) {
  try {
    (void)pack::create_since_restore(rq);
  } catch (const Error& e) {
    return {e.what(), e.code()};
  }
  return {"(no Error)", ExitCode::ok};
}

}  // namespace

TEST_CASE("create_since_restore packs only what the folders gained since their restore", "[pack][since_restore]") {
  test::ScratchDir t;
  as_restored(t / "ind", "inductor", kBaseDigest);
  as_restored(t / "tri", "triton", kBaseDigest);
  test::write_file(t / "ind/ab/new.py", "new");
  test::write_file(t / "ind/ab/c.py", "changed in place");  // the base keeps its own bytes
  test::write_file(t / "tri/K2/k.json", "{\"k\":2}");
  pack::SinceRestoreResult r = pack::create_since_restore(since_request(t));
  CHECK(r.base_manifest_sha256 == kBaseDigest);
  CHECK(r.base_entries == 2);
  unpack::Archive a = unpack::Archive::open(t / "delta.ccpack");
  REQUIRE(a.manifest.delta);
  CHECK(a.manifest.delta->base_manifest_sha256 == kBaseDigest);
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < a.manifest.entries.size(); ++i) paths.push_back(a.manifest.entries.path(i));
  // Folders first, then files (the packer's layout): the base's c.py and K1 are not packed.
  CHECK(paths ==
        std::vector<std::string>{"inductor", "inductor/ab", "triton", "triton/K2", "inductor/ab/new.py", "triton/K2/k.json"});
}

TEST_CASE("create_since_restore refuses a folder without a restore marker", "[pack][since_restore]") {
  test::ScratchDir t;
  as_restored(t / "ind", "inductor", kBaseDigest);
  test::write_file(t / "tri/K1/k.json", "{}");
  auto [message, code] = since_error(since_request(t));
  CHECK(message ==
        not_restored_message("triton", t / "tri", "holds no restore marker ccpack can read (it was not restored by ccpack)"));
  CHECK(code == ExitCode::not_restored);
  CHECK_FALSE(fs::exists(t / "delta.ccpack"));
}

TEST_CASE("create_since_restore refuses folders restored from different archives", "[pack][since_restore]") {
  test::ScratchDir t;
  as_restored(t / "ind", "inductor", kBaseDigest);
  as_restored(t / "tri", "triton", std::string(64, 'c'));
  auto [message, code] = since_error(since_request(t));
  CHECK(message ==
        not_restored_message("triton", t / "tri",
                             "was restored from archive cccccccccccc, another folder from bbbbbbbbbbbb (a delta has one base)"));
  CHECK(code == ExitCode::not_restored);
  CHECK_FALSE(fs::exists(t / "delta.ccpack"));
}

TEST_CASE("create_since_restore refuses a folder without its entry list", "[pack][since_restore]") {
  test::ScratchDir t;
  as_restored(t / "ind", "inductor", kBaseDigest, false);
  as_restored(t / "tri", "triton", kBaseDigest);
  auto [message, code] = since_error(since_request(t));
  CHECK(message ==
        not_restored_message("inductor", t / "ind",
                             "has no readable entry list of its restore (restored by an older ccpack? restore it again)"));
  CHECK(code == ExitCode::not_restored);
  CHECK_FALSE(fs::exists(t / "delta.ccpack"));
}
