// The ptxas files of this machine, for the one TRITON_PTXAS_PATH a warm-up and its pods share (docs/TUNING.md):
// create --settle takes the first (the user's $TRITON_PTXAS_PATH, else torch's own, which its compile workers would pick), a pod
// the first whose version is the one its archive recorded. The folders come from the python probe's listing of sys.path (memo and
// all), so no interpreter runs when the memo vouches for it.
#include <unistd.h>

#include <cstdlib>

#include "probe/probe.hpp"

namespace ccpack::probe {

namespace {

std::string folder_of(const Discovery& found, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (auto it = found.dists.find(n); it != found.dists.end()) return it->second.second;
  }
  return {};
}

std::optional<std::string> version_of(const std::string& path, const RunLimits& limits, ProbeMemo& memo) {
  if (::access(path.c_str(), X_OK) != 0) return std::nullopt;
  if (std::optional<std::string> known = memo.ptxas(path)) return known;
  RunLimits bounded = limits;
  bounded.max_output = 64 << 10;
  RunResult r = run_program({path, "--version"}, bounded);
  std::string v = r.ok() ? parse_ptxas_version(r.out) : "";
  if (v.empty()) return std::nullopt;
  memo.put_ptxas(path, v);
  return v;
}

}  // namespace

std::vector<PtxasFile> ptxas_files(const ProbeOptions& options) {
  ProbeMemo memo(options.memo_file);
  Fingerprint scratch;
  Discovery found;
  (void)probe_python(scratch, python_of(options), options.limits, memo, &found);
  std::vector<std::pair<std::string, std::string>> candidates;
  if (const char* own = std::getenv("TRITON_PTXAS_PATH"); own && *own) candidates.emplace_back(own, "$TRITON_PTXAS_PATH");
  if (std::string torch = folder_of(found, {"torch"}); !torch.empty())
    candidates.emplace_back(torch + "/torch/bin/ptxas", "torch's bin/ptxas");
  if (std::string triton = folder_of(found, {"triton", "pytorch_triton"}); !triton.empty()) {
    candidates.emplace_back(triton + "/triton/backends/nvidia/bin/ptxas", "triton's bundled ptxas");
  }
  if (const char* cuda = std::getenv("CUDA_HOME"); cuda && *cuda)
    candidates.emplace_back(std::string(cuda) + "/bin/ptxas", "$CUDA_HOME/bin/ptxas");
  candidates.emplace_back("/usr/local/cuda/bin/ptxas", "/usr/local/cuda/bin/ptxas");
  std::vector<PtxasFile> out;
  for (auto& [path, from] : candidates) {
    if (std::optional<std::string> v = version_of(path, options.limits, memo)) out.push_back({path, *v, from});
  }
  memo.save();
  return out;
}

}  // namespace ccpack::probe
