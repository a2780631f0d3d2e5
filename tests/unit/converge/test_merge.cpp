// converge/merge.cpp, the whole flow on small archives packed here: a base and deltas that name it (the "delta"
// field create --since-restore writes) merged into one archive whose entries, merge record and report are checked
// exactly; a refusal (a delta as the base, a delta of another base, the base's gate) leaves no output and no
// scratch folder beside it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "converge/merge.hpp"
#include "manifest/delta_record.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/sha256.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

manifest::Fingerprint merge_fingerprint() {
  manifest::Fingerprint fp;
  fp.set(manifest::field::gpu_arch, "sm_90", "nvml");
  fp.set(manifest::field::torch_version, "2.11.0+cu130", "python:dist-info (torch)");
  return fp;
}

// An archive of the files `files` (Inductor-relative path -> bytes) in `root`/`name`/ind and an empty Triton folder,
// with a "delta" field naming `base` when given.
fs::path merge_input(const fs::path& root, const std::string& name, const std::map<std::string, std::string>& files,
                     const std::optional<std::string>& base = std::nullopt) {
  for (const auto& [path, bytes] : files) test::write_file(root / name / "ind" / path, bytes);
  fs::create_directories(root / name / "tri");
  pack::PackOptions o;
  o.records.fingerprint = merge_fingerprint();
  if (base) o.records.delta = manifest::DeltaRecord{*base};
  fs::path out = root / (name + ".ccpack");
  (void)pack::create_archive(test::dirs_of(root / name / "ind", root / name / "tri"), out, o);
  return out;
}

std::string digest_of_archive(const fs::path& p) { return to_hex(unpack::Archive::open(p).manifest_digest()); }

// "path type" of each entry of an archive, in order.
std::vector<std::string> entries_of(const fs::path& p) {
  unpack::Archive a = unpack::Archive::open(p);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < a.manifest.entries.size(); ++i) {
    const manifest::Entry e = a.manifest.entries[i];
    out.push_back(e.path + (e.type == manifest::EntryType::dir ? "/" : ""));
  }
  return out;
}

// The names in `dir`, sorted.
std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("merge: the deltas' new files join the base's in one archive, in digest order, with the merge record") {
  test::ScratchDir t;
  fs::path base = merge_input(t.path(), "base", {{"fx/a.py", "base a"}, {"fx/b.py", "base b"}});
  std::string base_sha = digest_of_archive(base);
  fs::path d1 = merge_input(t.path(), "d1", {{"fx/a.py", "pod one's a"}, {"k1/x.py", "one"}, {"shared/s.py", "same"}}, base_sha);
  fs::path d2 = merge_input(t.path(), "d2", {{"k2/y.py", "two"}, {"shared/s.py", "same"}}, base_sha);
  std::string s1 = digest_of_archive(d1);
  std::string s2 = digest_of_archive(d2);
  bool one_first = s1 < s2;

  converge::MergeRequest rq{base, {}, {d1, d2}, t / "next.ccpack", {}};
  rq.pack.jobs = 1;
  converge::MergeResult r = converge::merge(rq);

  CHECK(r.base_manifest_sha256 == base_sha);
  REQUIRE(r.deltas.size() == 2);
  const converge::DeltaReport& one = r.deltas[one_first ? 0 : 1];
  const converge::DeltaReport& two = r.deltas[one_first ? 1 : 0];
  CHECK(r.deltas[0].manifest_sha256 == std::min(s1, s2));
  CHECK(one.file == d1);
  CHECK_FALSE(one.duplicate);
  // The first delta in digest order adds the shared file; the second has the same bytes and skips it.
  std::string first12 = std::min(s1, s2).substr(0, 12);
  if (one_first) {
    CHECK(one.added == std::vector<std::string>{"inductor/k1/x.py", "inductor/shared/s.py"});
    CHECK(two.added == std::vector<std::string>{"inductor/k2/y.py"});
  } else {
    CHECK(one.added == std::vector<std::string>{"inductor/k1/x.py"});
    CHECK(two.added == std::vector<std::string>{"inductor/k2/y.py", "inductor/shared/s.py"});
  }
  const converge::DeltaReport& second = r.deltas[1];
  REQUIRE(one.skipped.size() >= 1);
  CHECK(one.skipped[0].path == "inductor/fx/a.py");
  CHECK(one.skipped[0].reason == "in the base (the base's entry is kept)");
  REQUIRE(second.skipped.size() == (one_first ? 1U : 2U));
  CHECK(second.skipped.back().path == "inductor/shared/s.py");
  CHECK(second.skipped.back().reason == "the same bytes as delta " + first12);
  CHECK(r.conflicts.empty());
  CHECK(one.kept == one.added.size());
  CHECK(two.kept == two.added.size());
  CHECK(one.relocated == 0);

  CHECK(entries_of(t / "next.ccpack") == std::vector<std::string>{"inductor/", "inductor/fx/", "inductor/k1/", "inductor/k2/",
                                                                  "inductor/shared/", "triton/", "inductor/fx/a.py",
                                                                  "inductor/fx/b.py", "inductor/k1/x.py", "inductor/k2/y.py",
                                                                  "inductor/shared/s.py"});  // create's order: folders first
  unpack::Archive merged = unpack::Archive::open(t / "next.ccpack");
  REQUIRE(merged.manifest.merge);
  CHECK(merged.manifest.merge->base_manifest_sha256 == base_sha);
  REQUIRE(merged.manifest.merge->deltas.size() == 2);
  CHECK(merged.manifest.merge->deltas[0].manifest_sha256 == r.deltas[0].manifest_sha256);
  CHECK(merged.manifest.merge->deltas[0].added == r.deltas[0].kept);
  CHECK(merged.manifest.merge->deltas[1].added == r.deltas[1].kept);
  CHECK_FALSE(merged.manifest.delta);
  CHECK(merged.manifest.fingerprint.to_json() == merge_fingerprint().to_json());
  CHECK(merged.manifest.components[0].source == (t / "base/ind").string());
  CHECK(names_in(t.path()) ==
        std::vector<std::string>{"base", "base.ccpack", "d1", "d1.ccpack", "d2", "d2.ccpack", "next.ccpack"});
}

TEST_CASE("merge: a delta given twice is read once and reported as a duplicate") {
  test::ScratchDir t;
  fs::path base = merge_input(t.path(), "base", {{"fx/a.py", "base a"}});
  fs::path d = merge_input(t.path(), "d", {{"k/x.py", "x"}}, digest_of_archive(base));
  converge::MergeRequest rq{base, {}, {d, d}, t / "next.ccpack", {}};
  rq.pack.jobs = 1;
  converge::MergeResult r = converge::merge(rq);
  REQUIRE(r.deltas.size() == 2);
  CHECK_FALSE(r.deltas[0].duplicate);
  CHECK(r.deltas[1].duplicate);
  CHECK(r.deltas[0].added == std::vector<std::string>{"inductor/k/x.py"});
  CHECK(r.deltas[1].added.empty());
  unpack::Archive merged = unpack::Archive::open(t / "next.ccpack");
  REQUIRE(merged.manifest.merge);
  CHECK(merged.manifest.merge->deltas.size() == 1);
}

TEST_CASE("merge: refusals leave no output and no scratch folder") {
  test::ScratchDir t;
  fs::path base = merge_input(t.path(), "base", {{"fx/a.py", "base a"}});
  std::string base_sha = digest_of_archive(base);
  fs::path d = merge_input(t.path(), "d", {{"k/x.py", "x"}}, base_sha);
  fs::path other = merge_input(t.path(), "other", {{"k/y.py", "y"}}, std::string(64, 'a'));
  std::vector<std::string> before = names_in(t.path());

  converge::MergeRequest as_base{d, {}, {d}, t / "next.ccpack", {}};
  CHECK(test::usage_error([&] { (void)converge::merge(as_base); }) ==
        "the base " + quoted_path(d) + " is a delta, not a whole cache: give the archive its pods restored");
  CHECK(names_in(t.path()) == before);

  converge::MergeRequest of_other{base, {}, {d, other}, t / "next.ccpack", {}};
  try {
    (void)converge::merge(of_other);
    FAIL("no refusal");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::refused);
    CHECK(std::string(e.what()).starts_with("refusing delta " + quoted_path(other) + ": "));
  }
  CHECK(names_in(t.path()) == before);

  converge::MergeRequest gated{base,
                               [](const fs::path& p, const manifest::ArchiveHeader&, const std::vector<manifest::Signature>&) {
                                 throw IntegrityError(quoted_path(p) + " is signed by no trusted key");
                               },
                               {d},
                               t / "next.ccpack",
                               {}};
  CHECK(test::integrity_error([&] { (void)converge::merge(gated); }) == quoted_path(base) + " is signed by no trusted key");
  CHECK(names_in(t.path()) == before);
}
