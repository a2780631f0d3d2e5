// How many threads this process should run: the CPUs it may actually use, not the cores the machine has.
//
// A container given `resources.limits.cpu: 2` on a 64-core host sees 64 cores, but the kernel's CFS quota lets
// it run for only 2 CPUs' worth of time per period; a pool of 64 threads then spends the quota on spinning and
// switching, and is throttled for the rest of each period. So, as Go's runtime and newer JVMs do, the count is
//   min(ceil(quota / period), CPUs in the affinity mask), at least 1,
// where the quota is the smallest along the process's cgroup and its ancestors: cgroup v2 `cpu.max`
// ("QUOTA PERIOD" or "max PERIOD"), else cgroup v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us` (-1: none). The
// cgroup is found from /proc/self/cgroup and the mount points of /proc/self/mountinfo; the affinity mask from
// the Cpus_allowed_list of /proc/self/status (else sched_getaffinity), the cores from
// /sys/devices/system/cpu/online (else sysconf). Anything that cannot be read counts as "no limit".
//
// $CCPACK_CPU_ROOT (for tests) names a folder read in place of "/": its proc/self/cgroup, proc/self/mountinfo,
// proc/self/status, sys/devices/system/cpu/online, and the cgroup files below the mount points that mountinfo
// names (taken relative to that folder).
#pragma once

#include <filesystem>
#include <string>

namespace ccpack {

inline constexpr const char* kCpuRootVar = "CCPACK_CPU_ROOT";

struct ThreadBudget {
  unsigned threads = 1;
  // Why that many: "-j" (set by the caller), "cgroup cpu.max", "cgroup cpu.cfs_quota_us", "affinity" or "cores".
  std::string from;
};

// The budget read below `root` (the real system: "/").
[[nodiscard]] ThreadBudget cpu_budget(const std::filesystem::path& root);

// The budget of this process: below $CCPACK_CPU_ROOT when it is set and not empty, else below "/".
[[nodiscard]] ThreadBudget cpu_budget();

}  // namespace ccpack
