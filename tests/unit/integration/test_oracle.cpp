// libarchive, an independent reader, agrees with the manifest on every archive made here (create with one and
// several frames, import, the golden archive, the real fixture), and disagrees, naming the field, when the tar
// stream is broken on purpose: a wrong mode byte, a flipped content byte.
#include <zstd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "manifest/cache_dir.hpp"
#include "manifest/tar.hpp"
#include "oracle/oracle.hpp"
#include "pack/import_source.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

std::vector<manifest::CacheDir> dirs_of(const fs::path& root) {
  return {{"inductor", manifest::ComponentKind::inductor, root / "inductor_cache", "test"},
          {"triton", manifest::ComponentKind::triton, root / "triton_cache", "test"}};
}

// The shapes the tar encoder treats differently: ustar prefix split, pax path, pax link target, folders, modes,
// an empty file, a file cut into pieces (> 16 MiB), a non-ASCII name.
void make_tree(const fs::path& root) {
  fs::path ind = root / "inductor_cache";
  test::write_file(ind / "23/c23x.py", "print('kernel')\n");
  test::write_file(ind / "run.sh", "#!/bin/sh\n", 0755);
  test::write_file(ind / "private", "secret", 0600);
  test::write_file(ind / "empty.bin", "");
  test::write_file(ind / (std::string(80, 'd') + "/" + std::string(80, 'f')), "split into prefix and name");
  test::write_file(ind / (std::string(200, 'n') + ".py"), "pax path");
  test::write_file(ind / "caf\xc3\xa9.txt", "utf-8 name");
  fs::create_directories(ind / "emptydir");
  fs::create_symlink("23/c23x.py", ind / "alias.py");
  fs::create_symlink(std::string(80, 'd') + "/" + std::string(80, 'f'), ind / "long-link");
  std::string big(20 << 20, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 2654435761u) >> 24);
  test::write_file(root / "triton_cache/HASH/big.cubin", big);
  test::write_file(root / "triton_cache/HASH/k.json",
                   R"({"target": {"backend": "cuda", "arch": 90, "warp_size": 32}, "triton_version": "3.6.0"})");
}

std::string decompress(const std::string& z) {
  std::string out;
  ZSTD_DCtx* d = ZSTD_createDCtx();
  std::vector<char> buf(1 << 20);
  ZSTD_inBuffer in{z.data(), z.size(), 0};
  while (in.pos < in.size) {
    ZSTD_outBuffer o{buf.data(), buf.size(), 0};
    std::size_t rc = ZSTD_decompressStream(d, &o, &in);
    REQUIRE(!ZSTD_isError(rc));
    out.append(buf.data(), o.pos);
  }
  ZSTD_freeDCtx(d);
  return out;
}

std::string payload_of(const unpack::Archive& a) {
  std::string z(a.header.payload_size, '\0');
  REQUIRE(pread_full(a.fd.get(), z.data(), z.size(), static_cast<off_t>(a.header.header_size), "archive") == z.size());
  return z;
}

// The tar stream of `a`, decompressed.
std::string tar_of(const fs::path& archive) { return decompress(payload_of(unpack::Archive::open(archive))); }

std::vector<std::string> oracle_on_tar(const manifest::Manifest& m, const std::string& tar) {
  std::string z(ZSTD_compressBound(tar.size()), '\0');
  z.resize(ZSTD_compress(z.data(), z.size(), tar.data(), tar.size(), 1));
  std::size_t at = 0;
  return oracle::compare(m, [&](char* buf, std::size_t size) {
    std::size_t n = std::min(size, z.size() - at);
    std::memcpy(buf, z.data() + at, n);
    at += n;
    return n;
  });
}

// Rewrites the ustar header of `path` in a tar stream: its mode field, then its checksum.
void set_mode(std::string& tar, const std::string& path, const char* octal7) {
  for (std::size_t at = 0; at + 512 <= tar.size(); at += 512) {
    if (std::strncmp(tar.data() + at, path.c_str(), 100) != 0 || tar[at + 257] != 'u') continue;
    std::memcpy(tar.data() + at + 100, octal7, 7);
    std::memset(tar.data() + at + 148, ' ', 8);
    unsigned sum = 0;
    for (std::size_t i = 0; i < 512; ++i) sum += static_cast<unsigned char>(tar[at + i]);
    std::snprintf(tar.data() + at + 148, 8, "%06o", sum);
    return;
  }
  FAIL("no ustar header for " << path);
}

}  // namespace

TEST_CASE("libarchive reads create's archives as the manifest says, one frame or many") {
  test::ScratchDir t;
  make_tree(t / "src");
  (void)pack::create_archive(dirs_of(t / "src"), t / "one.ccpack", {});
  CHECK(oracle::check_archive(t / "one.ccpack").empty());
  pack::PackOptions many;
  many.frame_limit = 1 << 20;
  pack::PackResult r = pack::create_archive(dirs_of(t / "src"), t / "many.ccpack", many);
  CHECK(r.manifest.frames.size() >= 2);
  CHECK(oracle::check_archive(t / "many.ccpack") == std::vector<std::string>{});
}

TEST_CASE("libarchive reads import's archives as the manifest says, and import's tar stream is create's") {
  test::ScratchDir t;
  make_tree(t / "src");
  REQUIRE(
      std::system(("tar -C '" + (t / "src").string() + "' -cJf '" + (t / "f.tar.xz").string() + "' inductor_cache triton_cache")
                      .c_str()) == 0);
  pack::ImportSource source({t / "f.tar.xz", {}, t.path(), {}});
  (void)pack::create_archive(source, t / "imported.ccpack", {});
  CHECK(oracle::check_archive(t / "imported.ccpack").empty());
  (void)pack::create_archive(dirs_of(t / "src"), t / "created.ccpack", {});
  CHECK(tar_of(t / "imported.ccpack") == tar_of(t / "created.ccpack"));
}

TEST_CASE("the oracle fails when the tar writer is broken on purpose") {
  test::ScratchDir t;
  make_tree(t / "src");
  (void)pack::create_archive(dirs_of(t / "src"), t / "a.ccpack", {});
  unpack::Archive a = unpack::Archive::open(t / "a.ccpack");
  std::string tar = decompress(payload_of(a));
  REQUIRE(oracle_on_tar(a.manifest, tar).empty());  // the control: recompressed as is, they agree

  SECTION("a wrong mode") {
    set_mode(tar, "inductor/run.sh", "0000744");
    std::vector<std::string> problems = oracle_on_tar(a.manifest, tar);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Contains("'inductor/run.sh': libarchive reads mode 0744, the manifest says 0755"));
  }
  SECTION("a flipped content byte") {
    std::size_t at = tar.find("print('kernel')");
    REQUIRE(at != std::string::npos);
    tar[at] = 'P';
    std::vector<std::string> problems = oracle_on_tar(a.manifest, tar);
    REQUIRE(problems.size() == 1);
    CHECK_THAT(problems[0], Catch::Contains("'inductor/23/c23x.py': libarchive reads sha256"));
  }
  SECTION("a missing entry") {
    manifest::Manifest longer = a.manifest;
    longer.entries.push_back(longer.entries.back());
    CHECK_THAT(oracle_on_tar(longer, tar).at(0), Catch::Contains("the manifest lists"));
  }
}

TEST_CASE("a pax path or link target with a NUL byte is refused (libarchive would end the name there)") {
  // Found by fuzz_tar_oracle (tests/fuzz/corpus/tar/pax-path-nul.tar): ccpack kept the bytes after the NUL.
  manifest::UstarBlock b;
  std::string path_record = std::string("16 path=ab") + '\0' + "cdef\n";
  CHECK_THROWS_WITH(manifest::apply_pax_records(path_record, b, "t"), "t: pax path contains a NUL byte");
  std::string link_record = std::string("20 linkpath=ab") + '\0' + "cdef\n";
  CHECK_THROWS_WITH(manifest::apply_pax_records(link_record, b, "t"), "t: pax linkpath contains a NUL byte");
  manifest::apply_pax_records("16 path=abxcdef\n", b, "t");
  CHECK(b.path == "abxcdef");
}

TEST_CASE("malformed numbers ccpack does not use are refused as libarchive refuses them") {
  // Found by fuzz_tar_oracle (corpus/tar/uid-not-octal.tar, devminor-not-octal.tar).
  for (auto [offset, field] : {std::pair<std::size_t, const char*>{108 + 5, "uid"},
                               {116 + 5, "gid"},
                               {136 + 5, "mtime"},
                               {329 + 5, "devmajor"},
                               {337 + 5, "devminor"}}) {
    std::string block;
    manifest::append_tar_header(block, {"inductor/a", manifest::EntryType::file, 0644, 1, ""});
    block[offset] = 'x';
    unsigned sum = 0;
    std::memset(block.data() + 148, ' ', 8);
    for (char c : block) sum += static_cast<unsigned char>(c);
    std::snprintf(block.data() + 148, 8, "%06o", sum);
    CHECK_THROWS_WITH(manifest::decode_ustar_block(block.data(), "t"),
                      std::string("t: tar header field '") + field + "' is not octal");
  }
}

TEST_CASE("libarchive reads the golden archive as its manifest says") {
  CHECK(oracle::check_archive(fs::path(CCPACK_TEST_DATA) / "golden-v1.ccpack").empty());
}

TEST_CASE("real fixture: libarchive agrees with create's and import's archives, and their tar streams are equal", "[fixture]") {
  fs::path fixture = test::real_fixture();  // skipped (never passed) when the fixture is absent
  test::ScratchDir t;
  (void)pack::create_archive(dirs_of(fixture), t / "created.ccpack", {});
  CHECK(oracle::check_archive(t / "created.ccpack").empty());
  pack::ImportSource source({test::fixture_archive(), {}, t.path(), {}});
  (void)pack::create_archive(source, t / "imported.ccpack", {});
  CHECK(oracle::check_archive(t / "imported.ccpack").empty());
  CHECK(tar_of(t / "imported.ccpack") == tar_of(t / "created.ccpack"));
}
