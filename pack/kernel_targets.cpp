// Reads the Triton kernel .json files of the cache folders and reconciles the fingerprint with them (see
// kernel_targets.hpp). Only readdir/lstat and small reads: no link is followed, no file over manifest::kMaxKernelJsonBytes is
// read.
#include "pack/kernel_targets.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <tuple>

#include "manifest/kernel_json.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"
#include "util/thread_pool.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;
using manifest::Fingerprint;
using manifest::TritonTarget;
namespace field = manifest::field;

namespace {

// Names in `dir` with their d_type (DT_UNKNOWN resolved with lstat), without following links.
std::vector<std::pair<std::string, bool>> list(const fs::path& dir) {
  std::vector<std::pair<std::string, bool>> out;  // name, is a folder
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return out;
  while (dirent* e = ::readdir(d.get())) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    bool is_dir = e->d_type == DT_DIR;
    if (e->d_type == DT_UNKNOWN) {
      struct stat st {};
      is_dir = ::lstat((dir / name).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    }
    out.emplace_back(std::move(name), is_dir);
  }
  return out;
}

// The text of one kernel .json, or nothing when it is not a regular file of at most kMaxKernelJsonBytes.
std::optional<std::string> read_small_file(const fs::path& file) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<std::uint64_t>(st.st_size) > manifest::kMaxKernelJsonBytes) {
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  if (pread_full(fd.get(), text.data(), text.size(), 0, quoted_path(file)) != text.size()) return std::nullopt;
  return text;
}

// The kernel .json files of one Triton cache folder (<dir>/<hash>/<kernel>.json), appended to `files` until it
// holds kMaxKernels.
// Kept as strings: a std::filesystem::path also holds each of its components, which at 113,750 kernels made
// this list ~80 MB instead of ~20 MB.
void find_kernel_jsons(const fs::path& dir, std::vector<std::string>& files) {
  for (const auto& [hash, is_dir] : list(dir)) {
    if (!is_dir) continue;
    const std::string folder = (dir / hash).string() + "/";
    for (const auto& [name, sub_is_dir] : list(folder)) {
      if (sub_is_dir || !manifest::is_kernel_json_name(name)) continue;
      if (files.size() >= kMaxKernels) return;
      files.push_back(folder + name);
    }
  }
}

std::string value_or(const Fingerprint& fp, std::string_view name, const std::string& otherwise) {
  const manifest::FieldValue* v = fp.get(name);
  return v && v->value ? *v->value : otherwise;
}

// Sets `name` to the cache's `value` unless the probe already says the same.
void take_from_cache(Fingerprint& fp, std::string_view name, const std::string& value) {
  const manifest::FieldValue* v = fp.get(name);
  if (v && v->value == value) return;
  std::string was = v && v->value ? "; the probe said " + *v->value : "";
  fp.set(name, value, "derived:triton-json" + was);
}

std::string describe(const std::vector<TritonTarget>& targets) {
  std::string s;
  for (const TritonTarget& t : targets) {
    s += (s.empty() ? "" : ", ") + manifest::arch_name(t) + " (" + std::to_string(t.kernels) + " kernels, triton " +
         t.triton_version + ")";
  }
  return escaped(s, 400);
}

void reconcile_gpu(Fingerprint& fp, const std::vector<TritonTarget>& targets, std::vector<std::string>& warnings) {
  std::vector<std::string> archs;
  for (const TritonTarget& t : targets) {
    if (std::find(archs.begin(), archs.end(), manifest::arch_name(t)) == archs.end()) archs.push_back(manifest::arch_name(t));
  }
  if (archs.size() > 1) {
    warnings.push_back("the cache holds Triton kernels for " + std::to_string(archs.size()) +
                       " GPU targets: " + describe(targets) + "; gpu.arch is recorded as absent");
    fp.absent(field::gpu_arch, "the cache's kernels target several GPUs: " + describe(targets));
    return;
  }
  const TritonTarget& t = targets.front();
  std::string probed = value_or(fp, field::gpu_arch, "");
  if (!probed.empty() && probed != archs.front()) {
    std::string device = value_or(fp, field::gpu_name, "unnamed");
    warnings.push_back("the cache's Triton kernels target " + escaped(archs.front(), 32) + " but this machine's GPU is " +
                       probed + " (" + device + "): the archive records the cache's target, not this machine's GPU");
    const std::string why = "the probed GPU (" + probed + ", " + device + ") is not the one the cache was built for";
    for (std::string_view f : {field::gpu_name, field::gpu_sm_count, field::gpu_count, field::gpu_driver}) fp.absent(f, why);
  }
  take_from_cache(fp, field::gpu_arch, archs.front());
  take_from_cache(fp, field::gpu_vendor, manifest::gpu_vendor_of(t).value_or(t.backend));  // else the backend's own name
  take_from_cache(fp, field::gpu_warp_size, std::to_string(t.warp_size));
}

void reconcile_triton(Fingerprint& fp, const std::vector<TritonTarget>& targets, std::vector<std::string>& warnings) {
  std::vector<std::string> versions;
  for (const TritonTarget& t : targets) {
    if (std::find(versions.begin(), versions.end(), t.triton_version) == versions.end()) versions.push_back(t.triton_version);
  }
  if (versions.size() > 1) {
    warnings.push_back("the cache holds kernels of " + std::to_string(versions.size()) +
                       " Triton versions: " + describe(targets) + "; triton.version is recorded as absent");
    fp.absent(field::triton_version, "the cache's kernels come from several triton versions: " + describe(targets));
    return;
  }
  std::string probed = value_or(fp, field::triton_version, "");
  if (!probed.empty() && probed != versions.front()) {
    warnings.push_back("the cache's Triton kernels were built by triton " + escaped(versions.front(), 64) + " but triton " +
                       probed + " is installed: the archive records " + escaped(versions.front(), 64));
  }
  take_from_cache(fp, field::triton_version, versions.front());
}

}  // namespace

std::vector<TritonTarget> read_triton_targets(const std::vector<manifest::CacheDir>& dirs) {
  std::vector<std::string> files;
  // Where the kernel folders are is manifest/kernel_json.hpp's to say: a component's own folder, or the device
  // folders of its kInductorTritonFolder.
  using manifest::TritonLevel;
  const std::string devices_at(manifest::kInductorTritonFolder);
  for (const manifest::CacheDir& d : dirs) {
    if (manifest::folders_inside(d.kind, "") == TritonLevel::kernels) find_kernel_jsons(d.dir, files);
    if (manifest::folders_inside(d.kind, devices_at) != TritonLevel::devices) continue;
    for (const auto& [device, is_dir] : list(d.dir / devices_at)) {
      std::string device_folder = devices_at;
      device_folder.append("/").append(device);
      if (is_dir && manifest::folders_inside(d.kind, device_folder) == TritonLevel::kernels) {
        find_kernel_jsons(d.dir / devices_at / device, files);
      }
    }
  }
  // Read and parsed on every core: at a million files (113,750 kernels) this took 4 s on one thread, before any
  // packing.
  use_thread_pool();
  KernelTargetTally tally;
  oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<std::size_t>(0, files.size(), 64),
                            [&](const oneapi::tbb::blocked_range<std::size_t>& r) {
                              for (std::size_t i = r.begin(); i != r.end(); ++i) {
                                if (std::optional<std::string> text = read_small_file(files[i])) tally.add(*text);
                              }
                            });
  return tally.targets();
}

bool KernelTargetTally::wants(manifest::EntryType type, std::uint64_t size, std::string_view path) {
  return type == manifest::EntryType::file && size <= manifest::kMaxKernelJsonBytes && manifest::is_kernel_json_path(path);
}

bool KernelTargetTally::wants(const manifest::EntryList& entries, std::size_t i) {
  if (!entries.editable() && !manifest::is_kernel_json_name(entries.name(i))) return false;  // no path built for most
  return wants(entries.type(i), entries.file_size(i), entries.path(i));
}

void KernelTargetTally::add(std::string_view text) {
  std::optional<TritonTarget> t = manifest::parse_kernel_json(text);
  if (!t) return;
  Key key{std::move(t->backend), std::move(t->arch), t->warp_size, std::move(t->triton_version)};
  std::lock_guard lock(mutex_);
  ++kernels_[std::move(key)];
}

std::vector<TritonTarget> KernelTargetTally::targets() const {
  std::lock_guard lock(mutex_);
  std::vector<TritonTarget> out;
  for (const auto& [key, n] : kernels_) {
    const auto& [backend, arch, warp, version] = key;
    out.push_back(TritonTarget{backend, arch, warp, version, n});
  }
  return out;
}

std::vector<std::string> reconcile(Fingerprint& fp, const std::vector<TritonTarget>& targets) {
  fp.triton_targets = targets;
  std::vector<std::string> warnings;
  if (targets.empty()) return warnings;
  reconcile_gpu(fp, targets, warnings);
  reconcile_triton(fp, targets, warnings);
  return warnings;
}

}  // namespace ccpack::pack
