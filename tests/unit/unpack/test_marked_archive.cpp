// The no-op restore's shortcut: restore markers record the archive file they were restored from (manifest/marker.hpp,
// ArchiveFile) with a copy of its manifest's top-level fields, and Archive::open takes those fields from them, reading
// no manifest byte, only for that very file, unchanged, whose header records the same digest. Anything else reads
// the manifest as before; stage 2, if it comes, still reads and checks the text.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "manifest/marker.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
using unpack::Archive;
using unpack::ManifestDepth;
using unpack::ManifestText;

namespace {

fs::path packed_for_markers(const test::ScratchDir& t, const std::string& name) {
  test::write_file(t / ("m-" + name + "/ind/a.py"), "print('a')\n");
  test::write_file(t / ("m-" + name + "/tri/K/k.json"), "{}");
  (void)pack::create_archive(test::dirs_of(t / ("m-" + name + "/ind"), t / ("m-" + name + "/tri")), t / name, {});
  return t / name;
}

// What a restore of `p` would record in its markers.
unpack::MarkedArchive marked_of(const fs::path& p) {
  Archive full = Archive::open(p);
  REQUIRE(full.file);
  unpack::MarkedArchive m{*full.file, to_hex(full.manifest_digest())};
  m.file.manifest_top_level = full.manifest.top_level_json();
  return m;
}

}  // namespace

TEST_CASE("Manifest::top_level_json reads back as the manifest's own top-level fields") {
  test::ScratchDir t;
  Archive full = Archive::open(packed_for_markers(t, "a.ccpack"));
  std::string top = full.manifest.top_level_json();
  CHECK(top.find("\"entries\":[]") != std::string::npos);
  CHECK(top.find("\"frames\":[]") != std::string::npos);
  manifest::Manifest from_copy = manifest::Manifest::parse_top_level(top);
  manifest::Manifest from_text = manifest::Manifest::parse_top_level(full.header.manifest);
  CHECK(from_copy.top_level_json() == from_text.top_level_json());
  CHECK(from_copy.tar_size == full.manifest.tar_size);
  CHECK(from_copy.components.size() == 2);
  CHECK(from_copy.fingerprint == full.manifest.fingerprint);
}

TEST_CASE("restore marker: the archive file and its top-level copy are written and read back, a broken one dropped") {
  manifest::Marker m;
  m.archive_manifest_sha256 = std::string(64, 'a');
  m.component = "inductor";
  CHECK(m.to_json().find("archive_file") == std::string::npos);  // not recorded: no key
  m.archive_file = manifest::ArchiveFile{7, 42, 1000, 1700000000123456789, 1700000001987654321, "{\"format\":1}"};
  std::string text = m.to_json();
  CHECK(text.find(R"("archive_file":{"dev":7,"ino":42,"size":1000,"mtime_ns":1700000000123456789,)"
                  R"("ctime_ns":1700000001987654321,"manifest_top_level":"{\"format\":1}"})") != std::string::npos);
  auto back = manifest::Marker::parse(text);
  REQUIRE(back);
  REQUIRE(back->archive_file);
  CHECK(back->archive_file->same_file(*m.archive_file));
  CHECK(back->archive_file->manifest_top_level == "{\"format\":1}");
  // A record that does not read keeps the marker and drops the record (the next no-op reads the manifest).
  std::string broken = text;
  broken.replace(broken.find("\"dev\":7"), 7, "\"dev\":\"7\"");
  auto kept = manifest::Marker::parse(broken);
  REQUIRE(kept);
  CHECK_FALSE(kept->archive_file);
  CHECK(kept->component == "inductor");
}

TEST_CASE("Archive: the markers' record stands for the manifest only of the file they name, unchanged") {
  test::ScratchDir t;
  fs::path p = packed_for_markers(t, "a.ccpack");
  unpack::MarkedArchive marked = marked_of(p);
  Archive streamed = Archive::open(p, {}, ManifestDepth::top_level, ManifestText::stream);

  Archive a = Archive::open(p, {}, ManifestDepth::top_level, ManifestText::stream, &marked);
  CHECK(a.top_level_from_markers());
  CHECK(a.header.manifest.empty());
  CHECK(a.manifest_digest() == streamed.manifest_digest());
  CHECK(a.manifest.top_level_json() == streamed.manifest.top_level_json());
  a.load_full();  // stage 2 reads the text and checks it against the recorded digest
  CHECK(a.manifest.entries.size() == Archive::open(p).manifest.entries.size());

  // Another digest in the markers, or a file that is not the one recorded: the manifest is read.
  unpack::MarkedArchive other_digest = marked;
  other_digest.manifest_sha256_hex = std::string(64, '0');
  CHECK_FALSE(Archive::open(p, {}, ManifestDepth::top_level, ManifestText::stream, &other_digest).top_level_from_markers());
  for (auto change : {&manifest::ArchiveFile::ino, &manifest::ArchiveFile::size, &manifest::ArchiveFile::dev}) {
    unpack::MarkedArchive other_file = marked;
    other_file.file.*change += 1;
    CHECK_FALSE(Archive::open(p, {}, ManifestDepth::top_level, ManifestText::stream, &other_file).top_level_from_markers());
  }
  for (auto change : {&manifest::ArchiveFile::mtime_ns, &manifest::ArchiveFile::ctime_ns}) {
    unpack::MarkedArchive other_time = marked;
    other_time.file.*change -= 1;
    CHECK_FALSE(Archive::open(p, {}, ManifestDepth::top_level, ManifestText::stream, &other_time).top_level_from_markers());
  }
  // A copy of the file is another file.
  fs::copy_file(p, t / "copy.ccpack");
  CHECK_FALSE(
      Archive::open(t / "copy.ccpack", {}, ManifestDepth::top_level, ManifestText::stream, &marked).top_level_from_markers());
  // The full depth never takes the shortcut.
  CHECK_FALSE(Archive::open(p, {}, ManifestDepth::full, ManifestText::keep, &marked).top_level_from_markers());
}

TEST_CASE("Archive: the markers' top level is judged by the gate first, and stage 2 refuses a copy that differs") {
  test::ScratchDir t;
  fs::path p = packed_for_markers(t, "a.ccpack");
  unpack::MarkedArchive marked = marked_of(p);
  int gated = 0;
  auto gate = [&gated](const fs::path&, const manifest::ArchiveHeader&, const std::vector<manifest::Signature>&) { ++gated; };
  Archive a = Archive::open(p, gate, ManifestDepth::top_level, ManifestText::stream, &marked);
  CHECK(a.top_level_from_markers());
  CHECK(gated == 1);
  // A top-level copy that is not the manifest's (a marker edited by hand): the no-op would plan with it, and any
  // run that reads the manifest refuses the difference.
  unpack::MarkedArchive edited = marked;
  std::string& top = edited.file.manifest_top_level;
  top.replace(top.find("\"tar_size\":"), 11, "\"tar_size\":1");
  Archive b = Archive::open(p, {}, ManifestDepth::top_level, ManifestText::stream, &edited);
  REQUIRE(b.top_level_from_markers());
  CHECK(test::error_of([&] { b.load_full(); }) ==
        "'" + p.string() + "': manifest top-level fields read differently by the two stages");
}
