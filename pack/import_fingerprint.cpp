// The fingerprint of an imported cache when the machine that built it did not give one (`import` without
// --fingerprint): what the cache itself says. Every Triton kernel folder holds `<name>.json` with the target it
// was compiled for ("target": {"backend": "cuda", "arch": 90, "warp_size": 32}) and "triton_version"; the distinct
// values are collected from the Triton component and from Inductor's own Triton subtree (inductor/triton/<n>/).
// Every field it sets has the source "derived:triton-json": it was read off the cache, not probed on the machine
// that built it; the fields a probe would fill stay unrecorded.
// The metadata files are untrusted: only small ones are read, and they are parsed by the one reader of kernel
// metadata (manifest/kernel_json.hpp, as create's pack/kernel_targets does); a file it does not accept is ignored.
#include <algorithm>
#include <optional>

#include "manifest/fingerprint.hpp"
#include "manifest/kernel_json.hpp"
#include "pack/import_source.hpp"
#include "pack/kernel_targets.hpp"
#include "util/error.hpp"

namespace ccpack::pack {

std::optional<manifest::Fingerprint> ImportSource::derived_fingerprint() const {
  KernelTargetTally tally;
  std::string text;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!KernelTargetTally::wants(entries_[i].type, entries_[i].size, entries_[i].path)) continue;
    text.resize(entries_[i].size);
    if (pread_full(spool_.get(), text.data(), text.size(), static_cast<off_t>(offsets_[i]), "the import scratch file") !=
        text.size()) {
      throw Error("the import scratch file is shorter than expected");
    }
    tally.add(text);
  }
  // The contract's shape (manifest/fingerprint.hpp): what the cache says, every probed field absent.
  manifest::Fingerprint fp;
  fp.triton_targets = tally.targets();
  constexpr const char* kSource = "derived:triton-json (ccpack import)";
  if (fp.triton_targets.size() == 1) {
    const manifest::TritonTarget& t = fp.triton_targets.front();
    fp.set(manifest::field::gpu_arch, manifest::arch_name(t), kSource);
    fp.set(manifest::field::triton_version, t.triton_version, kSource);
    if (t.warp_size != 0) fp.set(manifest::field::gpu_warp_size, std::to_string(t.warp_size), kSource);
    if (std::optional<std::string> vendor = manifest::gpu_vendor_of(t)) fp.set(manifest::field::gpu_vendor, *vendor, kSource);
  }
  return fp;
}

}  // namespace ccpack::pack
