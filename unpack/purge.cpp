// See purge.hpp. One walker per cache folder; the rules decide, this file lists, measures and removes.
#include "unpack/purge.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <memory>

#include "manifest/marker.hpp"
#include "manifest/reserved_names.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kUnjudgedExamples = 20;

struct Item {
  std::string name;
  bool is_dir = false;
  std::uint64_t size = 0;
};

// The entries of `dir`, without following links (a link is neither a folder nor judged: it is kept). A folder
// that does not exist has none; one that cannot be read is an error naming it, never a walk cut short in silence
// (what it holds would be neither judged nor counted).
std::vector<Item> list(const fs::path& dir) {
  std::vector<Item> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  // defence: purge-unreadable-folder
  if (!d && errno != ENOENT) throw_errno("cannot read folder " + quoted_path(dir));
  if (!d) return out;
  for (;;) {
    errno = 0;
    dirent* e = ::readdir(d.get());
    if (e == nullptr && errno != 0) throw_errno("cannot read folder " + quoted_path(dir));
    if (e == nullptr) break;
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::lstat((dir / name).c_str(), &st) != 0) continue;
    out.push_back({std::move(name), S_ISDIR(st.st_mode), S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0});
  }
  return out;
}

void measure(const fs::path& p, int depth, std::uint64_t& files, std::uint64_t& bytes) {
  for (const Item& i : list(p)) {
    if (i.is_dir && depth < kMaxPurgeDepth) {
      measure(p / i.name, depth + 1, files, bytes);
    } else if (!i.is_dir) {
      ++files;
      bytes += i.size;
    }
  }
}

bool alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

bool is_library(std::string_view name) { return name.ends_with(".so") || name.find(".so.") != std::string_view::npos; }

// Driver libraries come with the GPU driver (a container runtime mounts them only on GPU nodes): whether they are
// here says nothing of the cache, so they are not judged.
bool is_driver_library(std::string_view name) { return name.starts_with("libcuda.so") || name.starts_with("libnvidia-"); }

std::optional<std::string> read_small(const fs::path& file) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) > manifest::kMaxKernelJsonBytes) {
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  if (::pread(fd.get(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size())) return std::nullopt;
  return text;
}

using Level = manifest::TritonLevel;  // what the folders inside a folder are (manifest/kernel_json.hpp)

class Walker {
 public:
  Walker(const manifest::CacheDir& dir, const manifest::Fingerprint& local, const PurgeOptions& options, PurgeReport& report)
      : dir_(dir), local_(local), options_(options), report_(report) {
    search_.dirs = library_search_dirs(local);
    search_.cuda_major = cuda_major(local);
    search_.exists = [](const std::string& p) { return ::access(p.c_str(), F_OK) == 0; };
  }

  void run() {
    purge_staging_beside();
    if (!fs::is_directory(dir_.dir) || fs::is_symlink(dir_.dir)) return;
    if (purge_by_marker()) return;
    walk(dir_.dir, 0, manifest::folders_inside(dir_.kind, ""));
  }

 private:
  void remove(const fs::path& p, bool folder, PurgeRule rule, std::string reason) {
    PurgedEntry e{dir_.name, p, rule, std::move(reason), folder, folder ? 0u : 1u, 0};
    if (folder) {
      measure(p, 0, e.files, e.bytes);
    } else {
      struct stat st {};
      if (::lstat(p.c_str(), &st) == 0) e.bytes = static_cast<std::uint64_t>(st.st_size);
    }
    if (!options_.dry_run) {
      if (folder) {
        fs::path aside = p.parent_path() / manifest::staging_name(p.filename().string(), std::to_string(::getpid()));
        if (::rename(p.c_str(), aside.c_str()) != 0) throw_errno("cannot move " + quoted_path(p) + " aside to remove it");
        remove_tree(aside);
      } else if (::unlink(p.c_str()) != 0 && errno != ENOENT) {
        throw_errno("cannot remove " + quoted_path(p));
      }
    }
    report_.removed.push_back(std::move(e));
  }

  void unjudged(const fs::path& p, std::string reason) {
    ++report_.unjudged;
    if (report_.unjudged_examples.size() < kUnjudgedExamples) report_.unjudged_examples.push_back({p, std::move(reason)});
  }

  // Staging folders ccpack left beside the folder (P/.T.ccpack-staging.<pid>).
  void purge_staging_beside() {
    fs::path parent = dir_.dir.parent_path();
    std::string prefix = manifest::staging_prefix(dir_.dir.filename().string());
    for (const Item& i : list(parent)) {
      if (!i.name.starts_with(prefix)) continue;
      Judgement j = judge_debris(i.name, i.is_dir, alive);
      if (j.state == Judgement::stale) remove(parent / i.name, true, PurgeRule::debris, j.reason);
    }
  }

  // A folder ccpack restored, judged as a whole by the fingerprint its marker records. True when it was purged.
  bool purge_by_marker() {
    auto marker = manifest::Marker::read(dir_.dir);
    if (!marker) return false;
    if (!marker->fingerprint_error.empty()) {
      unjudged(dir_.dir / manifest::kMarkerName, "its fingerprint cannot be read: " + marker->fingerprint_error);
      return false;
    }
    Judgement j = judge_marker(marker->fingerprint, local_, {dir_.name, dir_.kind});
    if (j.state != Judgement::stale) return false;
    struct stat st {};
    mode_t mode = ::stat(dir_.dir.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0755;
    remove(dir_.dir, true, PurgeRule::marker, j.reason);
    if (!options_.dry_run && ::mkdir(dir_.dir.c_str(), mode) != 0 && errno != EEXIST) {
      throw_errno("cannot create the emptied folder " + quoted_path(dir_.dir));
    }
    return true;
  }

  // A Triton kernel folder (<hash>/): its kernel .json files name what it was built for.
  Judgement judge_kernel_folder(const fs::path& p) {
    Judgement seen{Judgement::unjudged, "no kernel .json with a target"};
    for (const Item& i : list(p)) {
      if (i.is_dir || !manifest::is_kernel_json_name(i.name)) continue;
      auto text = read_small(p / i.name);
      auto target = text ? manifest::parse_kernel_json(*text) : std::nullopt;
      if (!target) continue;
      Judgement j = judge_kernel(*target, local_);
      if (j.state == Judgement::stale) return j;
      seen = j;
    }
    return seen;
  }

  void library(const fs::path& p) {
    std::string why;
    auto dyn = read_elf_dynamic(p.string(), why);
    if (!dyn) {
      ++report_.kept_files;  // kept, though not judged (purge.hpp: kept_files counts both)
      return unjudged(p, why);
    }
    ElfDynamic judged = *dyn;
    std::erase_if(judged.needed, [](const std::string& n) { return is_driver_library(n); });
    Judgement j = judge_library(judged, p.string(), search_);
    if (j.state == Judgement::stale) return remove(p, false, PurgeRule::library, j.reason);
    ++report_.kept_files;
  }

  void walk(const fs::path& p, int depth, Level level) {
    if (depth > kMaxPurgeDepth) return unjudged(p, "nested deeper than " + std::to_string(kMaxPurgeDepth) + " levels");
    for (const Item& i : list(p)) {
      if (++seen_ > kMaxPurgeEntries) {
        report_.truncated = true;
        return;
      }
      fs::path child = p / i.name;
      Judgement debris = judge_debris(i.name, i.is_dir, alive);
      if (debris.state == Judgement::stale) {
        remove(child, i.is_dir, PurgeRule::debris, debris.reason);
        continue;
      }
      if (manifest::is_reserved_name(i.name)) continue;
      if (!i.is_dir) {
        if (is_library(i.name)) {
          library(child);
        } else {
          ++report_.kept_files;
        }
        continue;
      }
      if (level == Level::kernels) {
        Judgement k = judge_kernel_folder(child);
        if (k.state == Judgement::stale) {
          remove(child, true, PurgeRule::kernel, k.reason);
          continue;
        }
        if (k.state == Judgement::unjudged) unjudged(child, k.reason);
      }
      Level next = manifest::folders_inside(dir_.kind, child.lexically_relative(dir_.dir).generic_string());
      walk(child, depth + 1, next);
    }
  }

  const manifest::CacheDir& dir_;
  const manifest::Fingerprint& local_;
  const PurgeOptions& options_;
  PurgeReport& report_;
  LibrarySearch search_;
  std::uint64_t seen_ = 0;
};

std::vector<std::string> split_colons(const char* text) {
  return text ? split_search_path(text, "") : std::vector<std::string>{};
}

// The folders /etc/ld.so.conf.d/*.conf name (one level: "include" lines are not followed).
std::vector<std::string> ld_so_conf_dirs() {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob("/etc/ld.so.conf.d/*.conf", 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc && i < 256; ++i) {
      std::ifstream in(g.gl_pathv[i]);
      std::string line;
      for (int n = 0; n < 256 && std::getline(in, line); ++n) {
        if (line.starts_with('/')) out.push_back(line.substr(0, line.find_first_of(" \t#")));
      }
    }
  }
  ::globfree(&g);
  return out;
}

}  // namespace

std::vector<std::string> library_search_dirs(const manifest::Fingerprint& local) {
  std::vector<std::string> dirs = split_colons(std::getenv("LD_LIBRARY_PATH"));
  if (const char* over = std::getenv("CCPACK_LIB_SEARCH_DIRS")) {
    auto more = split_colons(over);
    dirs.insert(dirs.end(), more.begin(), more.end());
  } else {
    for (const char* d : {"/lib", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
                          "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/usr/local/lib"}) {
      dirs.emplace_back(d);
    }
    auto conf = ld_so_conf_dirs();
    dirs.insert(dirs.end(), conf.begin(), conf.end());
  }
  const manifest::FieldValue* sp = local.get(manifest::field::python_site_packages);
  if (sp && sp->value) {
    std::string_view rest = *sp->value;  // "a, b": the probe's list (probe/python.cpp)
    for (int n = 0; n < 64 && !rest.empty(); ++n) {
      std::size_t comma = rest.find(", ");
      std::string site(rest.substr(0, comma));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
      if (site.empty()) continue;
      dirs.push_back(site + "/torch/lib");
      glob_t g{};
      if (::glob((site + "/nvidia/*/lib").c_str(), 0, nullptr, &g) == 0) {
        for (std::size_t i = 0; i < g.gl_pathc && i < 256; ++i) dirs.emplace_back(g.gl_pathv[i]);
      }
      ::globfree(&g);
    }
  }
  return dirs;
}

PurgeReport purge(const std::vector<manifest::CacheDir>& dirs, const manifest::Fingerprint& local, const PurgeOptions& options) {
  std::vector<fs::path> parents;
  for (const manifest::CacheDir& d : dirs) {
    fs::path parent = resolve_cache_folder(d.dir).parent_path();
    std::error_code ec;
    if (fs::is_directory(parent, ec)) parents.push_back(std::move(parent));  // no folder, nothing to purge or lock
  }
  std::vector<UniqueFd> locks = lock_folders(std::move(parents), options.lock);
  return purge_locked(dirs, local, options);
}

PurgeReport purge_locked(const std::vector<manifest::CacheDir>& dirs, const manifest::Fingerprint& local,
                         const PurgeOptions& options) {
  PurgeReport report;
  for (const manifest::CacheDir& d : dirs) Walker(d, local, options, report).run();
  return report;
}

}  // namespace ccpack::unpack
