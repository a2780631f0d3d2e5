// libFuzzer target: symlink graphs. The input bytes describe a small tree (folders, files and symlinks whose
// targets are paths over a tiny alphabet: "..", ".", "a", "b", "l", "m", "" and a leading "/"), so that mutations
// explore link chains, loops and escapes instead of fighting hashes. Each tree is checked three ways:
//   1. restore: the tree is built into a complete archive (cli/helpers/archive_builder.hpp) and restored into a jail;
//      when the restore succeeds, every symlink in the jail must resolve (as the kernel would, dangling names
//      taken lexically) inside its component folder. A resolved escape is a finding, not only a crash.
//   2. agreement: the same tree is made on disk and scanned as create would; create must accept exactly the
//      trees Manifest::validate accepts (same rule, manifest/links.hpp), or one side refuses what the other packs.
//   3. nothing is written outside the jail (the scratch folder holds only what this target made).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

#include "cli/helpers/archive_builder.hpp"
#include "fuzz/jail_check.hpp"
#include "manifest/cache_dir.hpp"
#include "pack/scanner.hpp"
#include "unpack/archive.hpp"
#include "unpack/installer.hpp"
#include "util/error.hpp"

namespace fs = std::filesystem;
using namespace ccpack;
using manifest::Entry;
using manifest::EntryType;

namespace {

constexpr const char* kNames[] = {"a", "b", "l", "m"};
constexpr const char* kParts[] = {"..", ".", "a", "b", "l", "m", "", ".."};

// Entries of component "c" decoded from the input: 2 bytes each, plus target bytes for links.
std::vector<Entry> decode(const std::uint8_t* data, std::size_t size) {
  std::vector<Entry> entries = {{"c", EntryType::dir, 0755, 0, {}, {}, 0}};
  std::vector<std::size_t> folders = {0};
  std::size_t i = 0;
  while (i + 2 <= size && entries.size() < 12) {
    std::uint8_t kind = data[i] % 3;
    const Entry& parent = entries[folders[data[i] / 3 % folders.size()]];
    std::string path = parent.path + "/" + kNames[data[i + 1] % 4];
    std::size_t parts = data[i + 1] / 4 % 5 + 1;
    bool absolute = data[i + 1] >= 0xf8;
    i += 2;
    if (kind == 0) {
      folders.push_back(entries.size());
      entries.push_back({path, EntryType::dir, 0755, 0, {}, {}, 0});
    } else if (kind == 1) {
      entries.push_back({path, EntryType::file, 0644, 1, Sha256::of("x"), {}, 0});
    } else {
      std::string target = absolute ? "/" : "";
      for (std::size_t k = 0; k < parts && i < size; ++k, ++i) target += std::string(k ? "/" : "") + kParts[data[i] % 8];
      if (target.empty()) target = ".";
      entries.push_back({path, EntryType::symlink, 0777, 0, {}, target, 0});
    }
  }
  return entries;
}

// Makes the tree on disk under `dir` (the component root); false when the kernel refuses a step (a repeated name).
bool materialise(const std::vector<Entry>& entries, const fs::path& dir) {
  std::error_code ec;
  for (const Entry& e : entries) {
    fs::path p = dir / std::string(manifest::relative_of(e.path));
    if (e.path == "c") {
      fs::create_directories(p, ec);
    } else if (e.type == EntryType::dir) {
      if (!fs::create_directory(p, ec) || ec) return false;
    } else if (e.type == EntryType::file) {
      if (fs::exists(fs::symlink_status(p))) return false;
      std::ofstream(p) << "x";
    } else {
      fs::create_symlink(e.link_target, p, ec);
      if (ec) return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fs::path work = fs::temp_directory_path() / ("ccpack-fuzz-links-" + std::to_string(::getpid()));
  fs::remove_all(work);
  fs::create_directories(work / "jail");
  std::vector<Entry> entries = decode(data, size);
  // Stream order as create writes it: folders, files, links (parents come first within each group already).
  std::stable_partition(entries.begin(), entries.end(), [](const Entry& e) { return e.type == EntryType::dir; });
  std::stable_partition(entries.begin(), entries.end(), [](const Entry& e) { return e.type != EntryType::symlink; });
  test::BuiltArchive built = test::build_archive({{"c", manifest::ComponentKind::extra, "/fuzz", 0, 0}}, entries, {});

  bool valid = true;
  try {
    built.manifest.validate();
  } catch (const IntegrityError&) {
    valid = false;
  }

  // 1. Restore, and judge what landed.
  {
    std::ofstream(work / "a.ccpack", std::ios::binary)
        << test::archive_file(built.manifest.to_json(), built.payload, built.manifest.payload_size());
  }
  bool restored = false;
  try {
    auto a = unpack::Archive::open(work / "a.ccpack");
    (void)unpack::install(a, {{"c", manifest::ComponentKind::extra, work / "jail/c", "fuzz"}}, {1, false, false});
    restored = true;
  } catch (const Error&) {
  }
  if (restored != valid) __builtin_trap();  // restore must refuse exactly what validate refuses
  if (restored) fuzz::check_jail(work / "jail/c");

  // 2. Create agrees with restore.
  fs::path src = work / "src/c";
  if (materialise(entries, src)) {
    bool packs = true;
    try {
      (void)pack::scan({{"c", manifest::ComponentKind::extra, src, "fuzz"}});
    } catch (const Error&) {
      packs = false;
    }
    if (packs != valid) __builtin_trap();
  }

  // 3. Nothing outside the jail.
  for (const auto& e : fs::directory_iterator(work)) {
    auto name = e.path().filename().string();
    if (name != "jail" && name != "a.ccpack" && name != "src") __builtin_trap();
  }
  return 0;
}
