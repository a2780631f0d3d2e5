// converge/delta_folders.cpp: two pods' group files for the same kernel, each naming its pod's own folder, are
// other bytes as packed and the same bytes relocated to the base's build folder; files relocation does not handle
// keep the manifest's identity.
#include <fcntl.h>

#include <catch2/catch.hpp>

#include "converge/delta_folders.hpp"
#include "pack/packer.hpp"
#include "unit/support.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

// A pod's folders under `root` holding one kernel whose group file names the pod's own triton folder.
fs::path pod_archive(const fs::path& root) {
  fs::path tri = root / "tri";
  test::write_file(tri / "KERNEL/k.cubin", "cubin");
  test::write_file(tri / "KERNEL/k.json", "{}");
  test::write_file(tri / "KERNEL/__grp__k.json", R"({"child_paths":{"k.cubin":")" + (tri / "KERNEL/k.cubin").string() +
                                                     R"(","k.json":")" + (tri / "KERNEL/k.json").string() + "\"}}");
  test::write_file(root / "ind/note.txt", "same");
  fs::path out = root.string() + ".ccpack";
  (void)pack::create_archive(test::dirs_of(root / "ind", tri), out, pack::PackOptions{});
  return out;
}

struct Identities {
  Digest group, group_packed, note, note_packed;
};

// The delta extracted relocated to `build` under `into`, and the identities merge compares.
Identities identities(const fs::path& archive_path, const std::vector<manifest::CacheDir>& build, const fs::path& into) {
  unpack::Archive a = unpack::Archive::open(archive_path);
  converge::DeltaFolders folders(a.manifest, build);
  std::vector<UniqueFd> fds;
  std::vector<unpack::StagingTarget> targets;
  for (const manifest::Component& c : a.manifest.components) {
    fs::create_directories(into / c.name);
    fds.emplace_back(::open((into / c.name).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    targets.push_back({c.name, fds.back().get(), folders.relocator(c.name)});
  }
  (void)unpack::extract(a, targets, unpack::ExtractOptions{1, false});
  Identities out{};
  for (std::size_t i = 0; i < a.manifest.entries.size(); ++i) {
    std::string path = a.manifest.entries.path(i);
    if (path == "triton/KERNEL/__grp__k.json")
      out = {folders.identity(i, into), a.manifest.entries.sha256(i), out.note, out.note_packed};
    if (path == "inductor/note.txt") out = {out.group, out.group_packed, folders.identity(i, into), a.manifest.entries.sha256(i)};
  }
  CHECK(folders.stats().paths_rewritten == 2);
  return out;
}

}  // namespace

TEST_CASE("delta folders: the same kernel from pods with other folder names is the same bytes relocated", "[delta-folders]") {
  test::ScratchDir d;
  std::vector<manifest::CacheDir> build = test::dirs_of("/build/ind", "/build/tri");
  Identities a = identities(pod_archive(d / "pod-a"), build, d / "a");
  Identities b = identities(pod_archive(d / "second-pod"), build, d / "b");
  CHECK(a.group_packed != b.group_packed);  // as packed, each names its own pod's folder
  CHECK(a.group == b.group);
  CHECK(a.group == Sha256::of(R"({"child_paths":{"k.cubin":"/build/tri/KERNEL/k.cubin","k.json":"/build/tri/KERNEL/k.json"}})"));
  CHECK(test::slurp(d / "a/triton/KERNEL/__grp__k.json") == test::slurp(d / "b/triton/KERNEL/__grp__k.json"));
  CHECK((a.note == a.note_packed && a.note == b.note));  // not a file relocation handles: the manifest's identity
}
