// util/cpu_budget: the thread count follows the CPU quota of a fake root (cgroup v2 cpu.max, cgroup v1
// cpu.cfs_quota_us / cpu.cfs_period_us, the smallest along the cgroup's ancestors), then the affinity mask, then
// the online cores; the fake root is laid out like the real one (proc/self/{cgroup,mountinfo,status},
// sys/devices/system/cpu/online and the cgroup mounts that mountinfo names).
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "unit/support.hpp"
#include "util/cpu_budget.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

constexpr const char* kV2Mount = "30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n";
constexpr const char* kV1Mounts =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n";

// A fake root with `cpus` online and allowed, and the given /proc/self/cgroup and mountinfo.
void make_root(const fs::path& root, const std::string& cgroup, const std::string& mountinfo, const std::string& cpus) {
  fs::create_directories(root / "proc/self");
  fs::create_directories(root / "sys/devices/system/cpu");
  test::write_file(root / "proc/self/cgroup", cgroup);
  test::write_file(root / "proc/self/mountinfo", mountinfo);
  test::write_file(root / "proc/self/status", "Name:\tccpack\nCpus_allowed:\tff\nCpus_allowed_list:\t" + cpus + "\n");
  test::write_file(root / "sys/devices/system/cpu/online", cpus + "\n");
}

void put(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  test::write_file(file, text);
}

}  // namespace

TEST_CASE("cpu budget: cgroup v2 cpu.max rounds the quota up, and 'max' is no limit") {
  test::ScratchDir d;
  make_root(d.path(), "0::/kubepods/pod1/ctr\n", kV2Mount, "0-7");
  fs::path cg = d / "sys/fs/cgroup/kubepods/pod1/ctr";
  put(cg / "cpu.max", "150000 100000\n");
  ThreadBudget b = cpu_budget(d.path());
  CHECK(b.threads == 2);
  CHECK(b.from == "cgroup cpu.max");

  put(cg / "cpu.max", "100000 100000\n");
  CHECK(cpu_budget(d.path()).threads == 1);
  put(cg / "cpu.max", "5000 100000\n");  // a twentieth of a CPU is still one thread
  CHECK(cpu_budget(d.path()).threads == 1);

  put(cg / "cpu.max", "max 100000\n");
  b = cpu_budget(d.path());
  CHECK(b.threads == 8);
  CHECK(b.from == "cores");
}

TEST_CASE("cpu budget: the smallest quota along the cgroup's ancestors wins") {
  test::ScratchDir d;
  make_root(d.path(), "0::/kubepods/pod1/ctr\n", kV2Mount, "0-15");
  put(d / "sys/fs/cgroup/kubepods/pod1/ctr/cpu.max", "max 100000\n");
  put(d / "sys/fs/cgroup/kubepods/pod1/cpu.max", "300000 100000\n");
  put(d / "sys/fs/cgroup/kubepods/cpu.max", "1200000 100000\n");
  ThreadBudget b = cpu_budget(d.path());
  CHECK(b.threads == 3);
  CHECK(b.from == "cgroup cpu.max");
}

TEST_CASE("cpu budget: cgroup v1 cpu.cfs_quota_us / cpu.cfs_period_us, with -1 as no limit") {
  test::ScratchDir d;
  make_root(d.path(), "12:cpuset:/\n4:cpu,cpuacct:/batch/job7\n0::/\n", kV1Mounts, "0-3");
  fs::path cg = d / "sys/fs/cgroup/cpu,cpuacct/batch/job7";
  put(cg / "cpu.cfs_quota_us", "200000\n");
  put(cg / "cpu.cfs_period_us", "100000\n");
  ThreadBudget b = cpu_budget(d.path());
  CHECK(b.threads == 2);
  CHECK(b.from == "cgroup cpu.cfs_quota_us");

  put(cg / "cpu.cfs_quota_us", "-1\n");
  b = cpu_budget(d.path());
  CHECK(b.threads == 4);
  CHECK(b.from == "cores");
}

TEST_CASE("cpu budget: a container's namespaced cgroup view is the mount point itself") {
  test::ScratchDir d;
  // The mount shows only the container's own part of the tree, and /proc/self/cgroup names it "/".
  make_root(d.path(), "0::/\n", "40 30 0:26 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n", "0-63");
  put(d / "sys/fs/cgroup/cpu.max", "250000 100000\n");
  CHECK(cpu_budget(d.path()).threads == 3);
  // Without a cgroup namespace the path is the host's, below the mount's root: the same folder.
  test::write_file(d / "proc/self/cgroup", "0::/kubepods/pod1/ctr\n");
  CHECK(cpu_budget(d.path()).threads == 3);
}

TEST_CASE("cpu budget: the affinity mask caps the quota, and caps the cores") {
  test::ScratchDir d;
  make_root(d.path(), "0::/ctr\n", kV2Mount, "0-7");
  test::write_file(d / "proc/self/status", "Cpus_allowed_list:\t2,5\n");
  ThreadBudget b = cpu_budget(d.path());
  CHECK(b.threads == 2);
  CHECK(b.from == "affinity");
  put(d / "sys/fs/cgroup/ctr/cpu.max", "400000 100000\n");
  b = cpu_budget(d.path());
  CHECK(b.threads == 2);
  CHECK(b.from == "affinity");
  put(d / "sys/fs/cgroup/ctr/cpu.max", "100000 100000\n");
  b = cpu_budget(d.path());
  CHECK(b.threads == 1);
  CHECK(b.from == "cgroup cpu.max");
}

TEST_CASE("cpu budget: files that do not parse count as no limit") {
  test::ScratchDir d;
  make_root(d.path(), "0::/ctr\n", kV2Mount, "0-1,4-5");
  put(d / "sys/fs/cgroup/ctr/cpu.max", "lots 100000\n");
  ThreadBudget b = cpu_budget(d.path());
  CHECK(b.threads == 4);
  CHECK(b.from == "cores");
  put(d / "sys/fs/cgroup/ctr/cpu.max", "100000 0\n");  // a period of 0 divides nothing
  CHECK(cpu_budget(d.path()).threads == 4);
}
