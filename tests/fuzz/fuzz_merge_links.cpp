// libFuzzer target: links across deltas (converge/merged_links.hpp). The input bytes describe three small trees of
// one component over a tiny alphabet of names and link targets (as fuzz_links does): a base and two deltas, each
// record's first byte choosing which. A tree that fails the link rule alone is skipped (the merge refuses it at the
// gate). When first_merged_link_failure accepts the three, the merged tree is made on disk as merge makes it (the
// base, then each delta's entries decided by MergePlan) and every symlink in it must resolve inside its component
// the way the kernel resolves it (jail_check.hpp): an accepted merge whose tree escapes is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "converge/merge_plan.hpp"
#include "converge/merged_links.hpp"
#include "fuzz/jail_check.hpp"
#include "manifest/links.hpp"

namespace fs = std::filesystem;
using namespace ccpack;
using manifest::Entry;
using manifest::EntryType;

namespace {

constexpr const char* kNames[] = {"a", "b", "l", "m"};
constexpr const char* kParts[] = {"..", ".", "a", "b", "l", "m", "", ".."};

// Three entry lists (base, delta 0, delta 1), 2 bytes per record plus target bytes for links.
std::vector<std::vector<Entry>> decode(const std::uint8_t* data, std::size_t size) {
  std::vector<std::vector<Entry>> trees(3, std::vector<Entry>{{"c", EntryType::dir, 0755, 0, {}, {}, 0}});
  std::vector<std::vector<std::size_t>> folders(3, std::vector<std::size_t>{0});
  std::size_t i = 0;
  while (i + 2 <= size && trees[0].size() + trees[1].size() + trees[2].size() < 24) {
    std::size_t t = data[i] % 3;
    std::uint8_t kind = data[i] / 3 % 3;
    std::vector<Entry>& tree = trees[t];
    std::string path = tree[folders[t][data[i] / 9 % folders[t].size()]].path + "/" + kNames[data[i + 1] % 4];
    std::size_t parts = data[i + 1] / 4 % 5 + 1;
    i += 2;
    bool taken = false;
    for (const Entry& e : tree) taken = taken || e.path == path;
    if (taken) continue;
    if (kind == 0) {
      folders[t].push_back(tree.size());
      tree.push_back({path, EntryType::dir, 0755, 0, {}, {}, 0});
    } else if (kind == 1) {
      tree.push_back({path, EntryType::file, 0644, 1, Sha256::of(path), {}, 0});
    } else {
      std::string target;
      for (std::size_t k = 0; k < parts && i < size; ++k, ++i) target += std::string(k ? "/" : "") + kParts[data[i] % 8];
      tree.push_back({path, EntryType::symlink, 0777, 0, {}, target.empty() ? "." : target, 0});
    }
  }
  return trees;
}

// Whether every link of `entries` stays inside on its own (the gate's rule for one archive).
bool valid_alone(const std::vector<Entry>& entries) {
  manifest::EntryTree tree(entries.size());
  std::vector<std::uint32_t> links;
  for (const Entry& e : entries) {
    auto r = tree.add(e.path, e.type, e.link_target);
    if (r.status != manifest::EntryTree::Added::ok) return false;
    if (e.type == EntryType::symlink) links.push_back(r.node);
  }
  for (std::uint32_t l : links) {
    if (tree.resolve_link(l) != manifest::EntryTree::LinkVerdict::inside) return false;
  }
  return true;
}

void make(const Entry& e, const fs::path& root) {
  std::error_code ec;
  fs::path p = root / e.path;
  fs::remove(p, ec);
  if (e.type == EntryType::dir) fs::create_directories(p, ec);
  if (e.type == EntryType::file) std::ofstream(p) << "x";
  if (e.type == EntryType::symlink) fs::create_symlink(e.link_target, p, ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fs::path work = fs::temp_directory_path() / ("ccpack-fuzz-merge-links-" + std::to_string(::getpid()));
  std::vector<std::vector<Entry>> trees = decode(data, size);
  for (const auto& t : trees) {
    if (!valid_alone(t)) return 0;
  }
  const std::vector<manifest::Component> components{{"c", manifest::ComponentKind::extra, "/fuzz", 0, 0}};
  const manifest::EntryList base(trees[0]), d0(trees[1]), d1(trees[2]);
  if (converge::first_merged_link_failure(components, base, {&d0, &d1})) return 0;  // refused: nothing is written
  fs::remove_all(work);
  fs::create_directories(work);
  for (const Entry& e : trees[0]) make(e, work);
  converge::MergePlan plan(components, base);
  for (std::size_t d = 1; d < 3; ++d) {
    plan.begin_delta(d - 1, std::to_string(d));
    for (const Entry& e : trees[d]) {
      converge::Decision::Action a = plan.offer(e).action;
      if (a == converge::Decision::Action::make_folder || a == converge::Decision::Action::add ||
          a == converge::Decision::Action::replace)
        make(e, work);
    }
  }
  fuzz::check_jail(work / "c");
  return 0;
}
