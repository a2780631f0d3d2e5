// See cpu_budget.hpp. Every file is small and read whole; a file that is missing or does not parse is skipped,
// so a machine without cgroups (or with /proc hidden) falls back to the affinity mask, then to the core count.
#include "util/cpu_budget.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>
#include <vector>

namespace ccpack {
namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_small(const fs::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  return v;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (std::size_t at = 0;;) {
    std::size_t end = s.find(sep, at);
    out.push_back(s.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
    if (end == std::string_view::npos) return out;
    at = end + 1;
  }
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// The CPUs of a list such as "0-3,8,10-11" (4 + 1 + 2 = 7); nullopt unless it parses.
std::optional<unsigned> count_cpu_list(std::string_view list) {
  list = trimmed(list);
  if (list.empty()) return std::nullopt;
  std::uint64_t n = 0;
  for (std::string_view range : split(list, ',')) {
    std::vector<std::string_view> ends = split(range, '-');
    std::optional<std::uint64_t> lo = to_u64(ends[0]);
    std::optional<std::uint64_t> hi = ends.size() == 2 ? to_u64(ends[1]) : lo;
    if (!lo || !hi || ends.size() > 2 || *hi < *lo) return std::nullopt;
    n += *hi - *lo + 1;
  }
  return n == 0 || n > 1u << 20 ? std::nullopt : std::optional<unsigned>(static_cast<unsigned>(n));
}

// A mountinfo field with its octal escapes (\040 for a space) decoded.
std::string unescaped(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3') {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Mount {
  std::string root;   // the folder of the cgroup tree this mount shows
  std::string point;  // where it is mounted
};

// The mount of the cgroup v2 tree (`v1_controller` empty) or of the v1 hierarchy holding that controller.
std::optional<Mount> cgroup_mount(std::string_view mountinfo, std::string_view v1_controller) {
  for (std::string_view line : split(mountinfo, '\n')) {
    std::vector<std::string_view> f = split(line, ' ');
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) continue;
    std::string_view type = dash[1];
    bool match = v1_controller.empty() ? type == "cgroup2" : type == "cgroup" && [&] {
      std::vector<std::string_view> opts = split(dash[3], ',');
      return std::find(opts.begin(), opts.end(), v1_controller) != opts.end();
    }();
    if (match) return Mount{unescaped(f[3]), unescaped(f[4])};
  }
  return std::nullopt;
}

// This process's cgroup path in the v2 tree (`v1_controller` empty) or in that v1 controller's hierarchy.
std::optional<std::string> cgroup_path(std::string_view self_cgroup, std::string_view v1_controller) {
  for (std::string_view line : split(self_cgroup, '\n')) {
    std::size_t a = line.find(':');
    std::size_t b = a == std::string_view::npos ? a : line.find(':', a + 1);
    if (b == std::string_view::npos) continue;
    std::string_view controllers = line.substr(a + 1, b - a - 1);
    std::vector<std::string_view> list = split(controllers, ',');
    bool match = v1_controller.empty() ? line.substr(0, a) == "0" && controllers.empty()
                                       : std::find(list.begin(), list.end(), v1_controller) != list.end();
    if (match) return std::string(line.substr(b + 1));
  }
  return std::nullopt;
}

// The folders from the process's cgroup up to the top of the mount, below `root`. A cgroup outside the mount's
// root (a container that sees only its own part of the tree) is the mount point itself.
std::vector<fs::path> cgroup_chain(const fs::path& root, const Mount& m, std::string path) {
  std::string rel = path;
  if (m.root != "/") {
    bool inside = path.starts_with(m.root) && (path.size() == m.root.size() || path[m.root.size()] == '/');
    rel = inside ? path.substr(m.root.size()) : "";
  }
  auto folder = [](const fs::path& p) {  // normal, without a trailing separator
    fs::path n = p.lexically_normal();
    return n.has_filename() || n == n.root_path() ? n : n.parent_path();
  };
  fs::path top = folder(root / fs::path(m.point).relative_path());
  fs::path here = folder(top / fs::path(rel).relative_path());
  // A path that climbs out of the mount ("/../.." without a cgroup namespace) is the mount point too.
  if (here.lexically_relative(top).string().starts_with("..")) here = top;
  std::vector<fs::path> chain;
  for (fs::path p = here;; p = p.parent_path()) {
    chain.push_back(p);
    if (p == top || p == p.parent_path()) return chain;
  }
}

// ceil(quota / period), at least 1; nullopt for no limit or an unreadable one.
std::optional<unsigned> cpus_of(std::optional<std::uint64_t> quota, std::optional<std::uint64_t> period) {
  if (!quota || !period || *period == 0) return std::nullopt;
  std::uint64_t n = (*quota + *period - 1) / *period;
  return static_cast<unsigned>(std::clamp<std::uint64_t>(n, 1, 1u << 20));
}

std::optional<unsigned> v2_limit(const fs::path& dir) {
  std::optional<std::string> text = read_small(dir / "cpu.max");
  if (!text) return std::nullopt;
  std::vector<std::string_view> f = split(trimmed(*text), ' ');
  if (f.size() != 2 || f[0] == "max") return std::nullopt;
  return cpus_of(to_u64(f[0]), to_u64(f[1]));
}

std::optional<unsigned> v1_limit(const fs::path& dir) {
  std::optional<std::string> quota = read_small(dir / "cpu.cfs_quota_us");
  std::optional<std::string> period = read_small(dir / "cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;  // "-1" (no limit) does not parse as a count either
  return cpus_of(to_u64(trimmed(*quota)), to_u64(trimmed(*period)));
}

// The smallest CPU limit along the process's cgroup and its ancestors, in the v2 tree or the v1 cpu hierarchy.
std::optional<unsigned> quota_cpus(const fs::path& root, bool v2) {
  std::optional<std::string> mountinfo = read_small(root / "proc/self/mountinfo");
  std::optional<std::string> self = read_small(root / "proc/self/cgroup");
  std::string_view controller = v2 ? "" : "cpu";
  std::optional<Mount> m = mountinfo ? cgroup_mount(*mountinfo, controller) : std::nullopt;
  std::optional<std::string> path = self ? cgroup_path(*self, controller) : std::nullopt;
  if (!m || !path) return std::nullopt;
  std::optional<unsigned> least;
  for (const fs::path& dir : cgroup_chain(root, *m, *path)) {
    std::optional<unsigned> here = v2 ? v2_limit(dir) : v1_limit(dir);
    if (here && (!least || *here < *least)) least = here;
  }
  return least;
}

unsigned affinity_cpus(const fs::path& root) {
  if (std::optional<std::string> status = read_small(root / "proc/self/status")) {
    for (std::string_view line : split(*status, '\n')) {
      constexpr std::string_view kKey = "Cpus_allowed_list:";
      if (!line.starts_with(kKey)) continue;
      if (std::optional<unsigned> n = count_cpu_list(line.substr(kKey.size()))) return *n;
    }
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

unsigned online_cpus(const fs::path& root) {
  if (std::optional<std::string> online = read_small(root / "sys/devices/system/cpu/online")) {
    if (std::optional<unsigned> n = count_cpu_list(*online)) return *n;
  }
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<unsigned>(n) : 1;
}

}  // namespace

ThreadBudget cpu_budget(const fs::path& root) {
  unsigned affinity = affinity_cpus(root);
  unsigned cores = std::max(affinity, online_cpus(root));
  std::optional<unsigned> v2 = quota_cpus(root, true);
  std::optional<unsigned> v1 = quota_cpus(root, false);
  bool use_v2 = v2 && (!v1 || *v2 <= *v1);
  std::optional<unsigned> quota = use_v2 ? v2 : v1;
  if (quota && *quota <= affinity) return {*quota, use_v2 ? "cgroup cpu.max" : "cgroup cpu.cfs_quota_us"};
  if (affinity < cores) return {affinity, "affinity"};
  return {cores, "cores"};
}

ThreadBudget cpu_budget() {
  const char* root = std::getenv(kCpuRootVar);
  return cpu_budget(root != nullptr && *root != '\0' ? fs::path(root) : fs::path("/"));
}

}  // namespace ccpack
