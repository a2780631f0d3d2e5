// unpack/archive.cpp: an archive opened in one stage or two (top-level first, load_full later), its manifest text
// kept or streamed and read again, the file changed in between refused by name, payload bytes read at an
// offset, the text dropped only after the full parse, and the one-line errors of a path that is no archive.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"

using namespace ccpack;
using test::error_of;
namespace fs = std::filesystem;
using unpack::Archive;
using unpack::ManifestDepth;
using unpack::ManifestText;

namespace {

fs::path make_archive(const test::ScratchDir& t, const std::string& name, const std::string& content) {
  test::write_file(t / ("src-" + name + "/ind/a.py"), content);
  fs::create_directories(t / ("src-" + name + "/tri"));
  (void)pack::create_archive(test::dirs_of(t / ("src-" + name + "/ind"), t / ("src-" + name + "/tri")), t / name, {});
  return t / name;
}

}  // namespace

TEST_CASE("Archive: one stage or two, the text kept or streamed, the same manifest in the end") {
  test::ScratchDir t;
  fs::path p = make_archive(t, "a.ccpack", "print('a')\n");
  Archive full = Archive::open(p);
  CHECK(full.depth() == ManifestDepth::full);
  REQUIRE(full.manifest.entries.size() == 3);  // inductor, inductor/a.py, triton
  for (ManifestText text : {ManifestText::keep, ManifestText::stream}) {
    Archive a = Archive::open(p, {}, ManifestDepth::top_level, text);
    CHECK(a.depth() == ManifestDepth::top_level);
    CHECK(a.manifest.entries.empty());
    CHECK(a.manifest.components.size() == 2);
    CHECK(a.text_streamed() == (text == ManifestText::stream));
    CHECK(a.header.manifest.empty() == (text == ManifestText::stream));
    CHECK(a.manifest_digest() == full.manifest_digest());
    a.load_full();
    CHECK(a.depth() == ManifestDepth::full);
    CHECK(a.manifest.entries.size() == full.manifest.entries.size());
    CHECK(a.header.manifest == full.header.manifest);
    a.drop_manifest_text();
    CHECK(a.header.manifest.empty());
  }
  Archive top = Archive::open(p, {}, ManifestDepth::top_level);
  CHECK(error_of([&] { top.drop_manifest_text(); }) == "internal: manifest text dropped before the full parse");
}

TEST_CASE("Archive: a file changed between the two stages is refused, payload bytes read at an offset") {
  test::ScratchDir t;
  fs::path p = make_archive(t, "a.ccpack", "print('a')\n");
  fs::path q = make_archive(t, "b.ccpack", "print('b')\n");
  Archive a = Archive::open(p, {}, ManifestDepth::top_level, ManifestText::stream);
  // Same path, other bytes (the open descriptor sees them: the file is rewritten in place).
  std::string other = test::slurp(q);
  {
    std::ofstream out(p, std::ios::binary | std::ios::in);
    out.write(other.data(), static_cast<std::streamsize>(other.size()));
  }
  CHECK(error_of([&] { a.load_full(); }) ==
        "'" + p.string() + "' changed while it was read: its manifest is not the one checked");
  Archive b = Archive::open(q);
  std::string bytes(16, '\0');
  const std::string file = test::slurp(q);
  CHECK(b.read_payload(bytes.data(), bytes.size(), b.header.header_size) == 16);
  CHECK(bytes == file.substr(b.header.header_size, 16));
  CHECK(b.read_payload(bytes.data(), bytes.size(), file.size() - 5) == 5);  // short only at the end
}

TEST_CASE("Archive: a path that is no archive, one line each") {
  test::ScratchDir t;
  CHECK(error_of([&] { (void)Archive::open(t / "missing.ccpack"); }) ==
        "cannot open archive '" + (t / "missing.ccpack").string() + "': No such file or directory");
  CHECK(error_of([&] { (void)Archive::open(t.path()); }) == "archive '" + t.path().string() + "' is not a regular file");
  int gate_calls = 0;
  fs::path p = make_archive(t, "a.ccpack", "x");
  CHECK(error_of([&] {
          (void)Archive::open(p, [&](const fs::path&, const manifest::ArchiveHeader&, const std::vector<manifest::Signature>&) {
            ++gate_calls;
            throw IntegrityError("refused");
          });
        }) == "refused");
  CHECK(gate_calls == 1);
}
