// pack/packer.cpp: what create_archive writes, byte for byte. The manifest's fields and its exact opening bytes,
// the header around it, each frame where the manifest says with the hash of its bytes, the signature block a
// signer returns, and refusals that leave the output path as it was.
#include <fcntl.h>
#include <zstd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include "manifest/format.hpp"
#include "manifest/manifest.hpp"
#include "manifest/signature.hpp"
#include "pack/filesystem_source.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"
#include "util/version.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

// Two small files, ind/fx/a.py (9 bytes) and tri/K/k.json (2 bytes), packed into t/a.ccpack with `options`.
pack::PackResult pack_two(const test::ScratchDir& t, const pack::PackOptions& options) {
  test::write_file(t / "ind/fx/a.py", "print(1)\n");
  test::write_file(t / "tri/K/k.json", "{}");
  return pack::create_archive(test::dirs_of(t / "ind", t / "tri"), t / "a.ccpack", options);
}

manifest::ArchiveHeader header_of(const fs::path& file) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  REQUIRE(fd.valid());
  return manifest::read_header(fd.get(), file);
}

// The cache folders, with a writer that grows one file right after the scan (before any file is read).
class GrowsAfterScan final : public pack::EntrySource {
 public:
  GrowsAfterScan(std::vector<manifest::CacheDir> dirs, fs::path grows) : files_(std::move(dirs)), grows_(std::move(grows)) {}
  void open() override {
    files_.open();
    std::ofstream(grows_, std::ios::app) << "more!";
  }
  [[nodiscard]] manifest::EntryList& entries() override { return files_.entries(); }
  [[nodiscard]] fs::path source_of(std::size_t i) const override { return files_.source_of(i); }
  void reorder(const std::vector<std::size_t>& order) override { files_.reorder(order); }
  [[nodiscard]] std::vector<std::string> skipped() const override { return files_.skipped(); }
  [[nodiscard]] std::vector<manifest::Component> components() const override { return files_.components(); }
  [[nodiscard]] bool reads_listed() const override { return files_.reads_listed(); }
  void read_listed(std::span<pack::ListedFile> files) override { files_.read_listed(files); }
  [[nodiscard]] Digest read_file(std::size_t i, pack::FileSlot& slot) override { return files_.read_file(i, slot); }
  void read_piece(std::size_t i, std::uint64_t offset, std::uint64_t length, char* out) override {
    files_.read_piece(i, offset, length, out);
  }
  void check_pieces(std::size_t i, const Digest& digest) override { files_.check_pieces(i, digest); }

 private:
  pack::FilesystemSource files_;
  fs::path grows_;
};

// The archive's tar stream: every frame decoded, in order.
std::string tar_stream(const fs::path& archive, const manifest::Manifest& m) {
  manifest::ArchiveHeader h = header_of(archive);
  std::string file = test::slurp(archive), out;
  for (const manifest::Frame& f : m.frames) {
    std::string raw(f.raw_size, '\0');
    std::size_t n = ZSTD_decompress(raw.data(), raw.size(), file.data() + h.header_size + f.offset, f.compressed_size);
    REQUIRE(n == f.raw_size);
    out += raw;
  }
  return out;
}

}  // namespace

TEST_CASE("a file that grew after the scan is packed at its new size, and the files after it in its batch intact") {
  test::ScratchDir t;
  test::write_file(t / "ind/a.py", "a");
  test::write_file(t / "ind/b.py", "b");
  test::write_file(t / "ind/c.py", "c");
  // Nothing counts as racy: the stamps and sizes after the read decide, not a second read.
  pack::testing::set_racy_window(-1);
  struct Restore {
    ~Restore() { pack::testing::set_racy_window(2); }
  } restore;
  GrowsAfterScan source(test::dirs_of(t / "ind", t / "tri"), t / "ind/b.py");
  fs::create_directories(t / "tri");
  pack::PackResult r = pack::create_archive(source, t / "a.ccpack", pack::PackOptions{});
  const manifest::EntryList& e = r.manifest.entries;
  std::map<std::string, std::string> packed;
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (e.type(i) == manifest::EntryType::file) packed[e.path(i)] = to_hex(e.sha256(i)) + " " + std::to_string(e.file_size(i));
  }
  CHECK(packed == std::map<std::string, std::string>{{"inductor/a.py", to_hex(Sha256::of("a")) + " 1"},
                                                     {"inductor/b.py", to_hex(Sha256::of("bmore!")) + " 6"},
                                                     {"inductor/c.py", to_hex(Sha256::of("c")) + " 1"}});
  // In the tar stream each file's data follows its header, padded to 512 bytes; nothing of the first read of b.py.
  std::string tar = tar_stream(t / "a.ccpack", r.manifest);
  CHECK(tar.size() == r.manifest.tar_size);
  for (const char* data : {"a", "bmore!", "c"}) {
    CHECK(tar.find(std::string(data) + std::string(512 - std::strlen(data), '\0')) != std::string::npos);
  }
  CHECK(tar.find(std::string("b") + std::string(511, '\0')) == std::string::npos);
}

TEST_CASE("create records the fingerprint it is given, the components and the entries, in create's exact bytes") {
  test::ScratchDir t;
  pack::PackOptions o;
  o.records.fingerprint.set(manifest::field::gpu_arch, "sm_90", "test");
  pack::PackResult r = pack_two(t, o);
  const manifest::Manifest& m = r.manifest;
  CHECK(m.created_by == std::string("ccpack ") + kVersion);
  CHECK(m.compression.codec == "zstd");
  CHECK(m.compression.level == 1);
  CHECK(m.compression.window_log == 27);
  CHECK(m.fingerprint == o.records.fingerprint);
  REQUIRE(m.components.size() == 2);
  CHECK(m.components[0].name == "inductor");
  CHECK(m.components[0].source == (t / "ind").string());
  CHECK(m.components[0].files == 1);
  CHECK(m.components[0].bytes == 9);
  CHECK(m.components[1].name == "triton");
  CHECK(m.components[1].files == 1);
  CHECK(m.components[1].bytes == 2);
  std::set<std::string> paths;
  for (std::size_t i = 0; i < m.entries.size(); ++i) paths.insert(m.entries.path(i));
  CHECK(paths == std::set<std::string>{"inductor", "inductor/fx", "inductor/fx/a.py", "triton", "triton/K", "triton/K/k.json"});
  CHECK(m.entries.path(0) == "inductor");

  manifest::ArchiveHeader h = header_of(t / "a.ccpack");
  CHECK(h.manifest == m.to_json());
  CHECK(h.manifest.starts_with(
      R"({"format":1,"created_by":"ccpack )" + std::string(kVersion) +
      R"(","compression":{"codec":"zstd","level":1,"window_log":27},)"
      R"("fingerprint":{"schema":1,"fields":{"gpu.arch":{"value":"sm_90","source":"test"}},"triton_targets":[]},)"
      R"("components":[{"name":"inductor","kind":"inductor","source":")" +
      (t / "ind").string() + R"(","files":1,"bytes":9},{"name":"triton","kind":"triton","source":")" + (t / "tri").string() +
      R"(","files":1,"bytes":2}],"tar_size":)" + std::to_string(m.tar_size) + ",\"frames\":["));
  CHECK(h.signatures == "[]");
  CHECK(h.payload_size == m.payload_size());
  CHECK(r.archive_size == h.header_size + h.payload_size);
  CHECK(fs::file_size(t / "a.ccpack") == r.archive_size);
  CHECK(r.skipped.empty());
}

TEST_CASE("without a fingerprint and none derived, the manifest records the empty one") {
  test::ScratchDir t;
  pack::PackResult r = pack_two(t, {});
  CHECK_FALSE(r.manifest.fingerprint.recorded());
  CHECK(header_of(t / "a.ccpack").manifest.find(R"(,"fingerprint":{},"components":)") != std::string::npos);
}

TEST_CASE("each frame lies where the manifest says, hashes as recorded and decodes to its raw size") {
  test::ScratchDir t;
  pack::PackOptions o;
  o.frame_limit = 1;                                                  // a new frame at the first entry boundary past one byte
  test::write_file(t / "ind/fx/big.bin", std::string(3 << 20, 'x'));  // read in pieces, batches of its own
  pack::PackResult r = pack_two(t, o);
  manifest::ArchiveHeader h = header_of(t / "a.ccpack");
  REQUIRE(r.manifest.frames.size() > 1);
  std::string file = test::slurp(t / "a.ccpack");
  std::uint64_t raw = 0;
  for (const manifest::Frame& f : r.manifest.frames) {
    std::string bytes = file.substr(h.header_size + f.offset, f.compressed_size);
    CHECK(Sha256::of(bytes) == f.sha256);
    std::string out(f.raw_size + 1, '\0');
    std::size_t n = ZSTD_decompress(out.data(), out.size(), bytes.data(), bytes.size());
    REQUIRE_FALSE(ZSTD_isError(n));
    CHECK(n == f.raw_size);
    raw += f.raw_size;
  }
  CHECK(raw == r.manifest.tar_size);
  CHECK(h.header_size + h.payload_size == file.size());
}

TEST_CASE("the archive is the same bytes whether its frames are compressed one at a time or several at once") {
  test::ScratchDir t;
  test::write_file(t / "ind/fx/big.bin", std::string(3 << 20, 'x'));
  auto archive = [&](unsigned jobs, unsigned lanes) {
    pack::PackOptions o;
    o.frame_limit = 1;  // a frame per entry: many frames in flight
    o.jobs = jobs;
    o.lanes = lanes;
    (void)pack_two(t, o);
    return test::slurp(t / "a.ccpack");
  };
  std::string one = archive(1, 1);
  CHECK(header_of(t / "a.ccpack").payload_size > 0);
  CHECK(archive(4, 4) == one);
  CHECK(archive(3, 2) == one);
  CHECK(archive(64, 0) == one);  // past the pipeline's width: as many zstd workers and batches as with 16 threads
}

TEST_CASE("create's pipeline follows the threads up to its width, then stops growing") {
  CHECK(pack::pipeline_width(0) == 1);
  CHECK(pack::pipeline_width(1) == 1);
  CHECK(pack::pipeline_width(pack::kMaxPipelineWidth) == pack::kMaxPipelineWidth);
  CHECK(pack::pipeline_width(64) == pack::kMaxPipelineWidth);
  CHECK(pack::pipeline_width(1024) == pack::kMaxPipelineWidth);
  CHECK(pack::batches_in_flight(1) == 4);
  CHECK(pack::batches_in_flight(4) == 10);
  CHECK(pack::batches_in_flight(64) == 2 * pack::kMaxPipelineWidth + 2);
  pack::PackOptions o;
  CHECK(pack::lane_settings(o, 1).writer.jobs == 1);
  CHECK(pack::lane_settings(o, 4).writer.jobs == 4);
  CHECK(pack::lane_settings(o, 64).writer.jobs == pack::kMaxPipelineWidth);
  CHECK(pack::lane_settings(o, 1).lanes == 1);
  CHECK(pack::lane_settings(o, 4).lanes == 2);
  CHECK(pack::lane_settings(o, 64).lanes == pack::lane_settings(o, 1024).lanes);
  o.lanes = 3;
  CHECK(pack::lane_settings(o, 64).lanes == 3);
}

TEST_CASE("a signer's signatures over the exact manifest bytes are written as their block") {
  test::ScratchDir t;
  manifest::Signature s;
  s.key_id = "0123456789abcdef";
  s.signed_at = "2026-12-01T09:30:00Z";
  s.note = "unit";
  s.signature.fill(7);
  std::string signed_bytes;
  pack::PackOptions o;
  o.sign = [&](std::string_view manifest_bytes) {
    signed_bytes = manifest_bytes;
    return std::vector<manifest::Signature>{s};
  };
  (void)pack_two(t, o);
  manifest::ArchiveHeader h = header_of(t / "a.ccpack");
  CHECK(signed_bytes == h.manifest);
  CHECK(h.signatures == manifest::encode_signature_block({s}));
  REQUIRE(manifest::parse_signature_block(h.signatures).size() == 1);
  CHECK(manifest::parse_signature_block(h.signatures)[0].note == "unit");
}

TEST_CASE("a window past what stock zstd decodes is refused before the output is touched") {
  test::ScratchDir t;
  test::write_file(t / "a.ccpack", "old");
  pack::PackOptions o;
  o.window_log = 28;
  CHECK_THROWS_WITH(pack_two(t, o), "window log must be between 10 and 27");
  o.window_log = 9;
  CHECK_THROWS_WITH(pack_two(t, o), "window log must be between 10 and 27");
  CHECK(test::slurp(t / "a.ccpack") == "old");
}
