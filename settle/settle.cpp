// The settle flow (settle.hpp): warm-up, then pack -> restore relocated -> run -> measure, until a run compiles
// nothing in the kernel groups or the runs run out. One function per stage; settle() reads as their list.
#include "settle/settle.hpp"

#include <cstdlib>
#include <system_error>

#include "manifest/reserved_names.hpp"
#include "pack/recorded_source.hpp"
#include "settle/child.hpp"
#include "unpack/restore.hpp"
#include "unpack/status.hpp"
#include "util/fs.hpp"

namespace ccpack::settle {
namespace fs = std::filesystem;

namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// The variables that point torch and Triton at `dirs` (manifest::folder_variable, the map the front end reads).
Env cache_env(const std::vector<manifest::CacheDir>& dirs) {
  Env env;
  for (const manifest::CacheDir& d : dirs) {
    if (const char* var = manifest::folder_variable(d.kind)) env.emplace_back(var, d.dir.string());
  }
  return env;
}

void check_signal() {
  if (int sig = SignalCatcher::caught()) {
    throw SettleFailure(std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + "; nothing written",
                        sig == SIGINT ? ExitCode::interrupted_int : ExitCode::interrupted_term, Stopped::interrupted);
  }
}

std::string run_name(unsigned index) { return index == 0 ? "the warm-up" : "settle run " + std::to_string(index); }

// Runs the command once on `dirs`; reports it, and throws SettleFailure when it did not exit 0.
RunReport run_command(const SettleRequest& rq, unsigned index, const std::vector<manifest::CacheDir>& dirs) {
  ChildLimits limits;
  if (rq.timeout) limits.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*rq.timeout);
  ChildResult r = run_child(rq.command, cache_env(dirs), limits);
  RunReport report{index,
                   r.seconds,
                   std::nullopt,
                   r.signal,
                   r.end == ChildResult::End::timed_out,
                   r.end == ChildResult::End::interrupted,
                   std::nullopt};
  if (r.end == ChildResult::End::exited) report.exit_code = r.exit_code;
  if (r.ok()) return report;
  if (rq.on_run) rq.on_run(report);
  check_signal();
  if (report.timed_out) {
    throw SettleFailure(run_name(index) + " ran past --settle-timeout " + std::to_string(rq.timeout->count()) +
                            " s and was killed; nothing written",
                        ExitCode::command_failed, Stopped::timed_out);
  }
  std::string how =
      report.exit_code ? "exited " + std::to_string(*report.exit_code) : "was killed by signal " + std::to_string(r.signal);
  throw SettleFailure(run_name(index) + " of '" + rq.command.front() + "' " + how + "; nothing written", ExitCode::command_failed,
                      Stopped::command_failed);
}

void pack_folders(const SettleRequest& rq, const std::vector<manifest::CacheDir>& dirs, const fs::path& archive) {
  pack::PackOptions po;
  po.jobs = rq.jobs;
  po.records.fingerprint = rq.fingerprint;
  (void)pack::create_archive(dirs, archive, po);
}

// Restores `archive` into `dirs` as a pod would: relocating, its own fingerprint taken as the machine's (the
// archive was packed here a moment ago), no signature (it never left this process's scratch folder).
void restore_into(const SettleRequest& rq, const fs::path& archive, const std::vector<manifest::CacheDir>& dirs) {
  unpack::RestoreRequest r;
  r.source = archive;
  r.dirs = dirs;
  r.machine = [&rq](const std::vector<manifest::CacheDir>&) { return rq.fingerprint; };
  r.policy = manifest::OnMismatch::force;
  r.install.jobs = rq.jobs;
  (void)unpack::restore(r);
}

manifest::CompiledCounts measure(const std::vector<manifest::CacheDir>& dirs) {
  manifest::CompiledCounts c;
  for (const manifest::CacheDir& d : dirs) {
    unpack::FolderStatus s = unpack::folder_status(d);
    c.triton_kernels += s.kernels.size();
    c.fx_graphs += s.fx_graphs.size();
    c.autotune += s.autotune.size();
    c.other += s.other.size();
  }
  return c;
}

// Run k's folders: <scratch>/run-k/<name>, under other names than the user's (a pod's way).
std::vector<manifest::CacheDir> run_folders(const fs::path& scratch, unsigned index,
                                            const std::vector<manifest::CacheDir>& like) {
  fs::path root = scratch / ("run-" + std::to_string(index));
  fs::create_directory(root);
  std::vector<manifest::CacheDir> out;
  out.reserve(like.size());
  for (const manifest::CacheDir& d : like) out.push_back({d.name, d.kind, root / d.name, "settle run " + std::to_string(index)});
  return out;
}

// Those of `dirs` that exist: a folder the command never created is not packed.
std::vector<manifest::CacheDir> existing(const std::vector<manifest::CacheDir>& dirs) {
  std::vector<manifest::CacheDir> out;
  std::error_code ec;
  for (const manifest::CacheDir& d : dirs) {
    if (fs::is_directory(d.dir, ec)) out.push_back(d);
  }
  return out;
}

// One settle run: pack `previous`, restore into new folders, run, measure. Returns the new folders. Every
// folder the request names gets one (restored or not), so a settle run never writes into the user's folders.
std::vector<manifest::CacheDir> settle_run(const SettleRequest& rq, const fs::path& scratch, unsigned index,
                                           const std::vector<manifest::CacheDir>& previous, RunReport& report) {
  fs::path archive = scratch / ("run-" + std::to_string(index) + ".ccpack");
  pack_folders(rq, previous, archive);
  check_signal();
  std::vector<manifest::CacheDir> dirs = run_folders(scratch, index, rq.dirs);
  restore_into(rq, archive, dirs);
  fs::remove(archive);
  if (index > 1) fs::remove_all(scratch / ("run-" + std::to_string(index - 1)));  // packed and restored: no longer needed
  check_signal();
  report = run_command(rq, index, dirs);
  report.compiled = measure(dirs);
  return existing(dirs);
}

}  // namespace

std::string_view to_string(Stopped stopped) {
  switch (stopped) {
    case Stopped::fixed_point:
      return manifest::kStoppedFixedPoint;
    case Stopped::run_limit:
      return manifest::kStoppedRunLimit;
    case Stopped::command_failed:
      return "command-failed";
    case Stopped::timed_out:
      return "time-limit";
    case Stopped::interrupted:
      return "interrupted";
  }
  return "interrupted";
}

manifest::SettleRecord SettleOutcome::record() const {
  manifest::SettleRecord r;
  r.runs = runs.size() - 1;
  r.settled = stopped == Stopped::fixed_point;
  r.stopped = std::string(to_string(stopped));
  if (!runs.empty() && runs.back().compiled) r.last_run_compiled = *runs.back().compiled;
  r.tuning = tuning;
  return r;
}

SettleOutcome settle(const SettleRequest& rq) {
  SettleOutcome out;
  out.signals = std::make_unique<SignalCatcher>();
  out.scratch = std::make_unique<ScratchFolder>(
      rq.scratch_parent, manifest::kSettleScratchPrefix);  // first: a bad output folder is said before the warm-up
  out.runs.push_back(run_command(rq, 0, rq.dirs));
  if (rq.on_run) rq.on_run(out.runs.back());
  check_signal();
  out.original = rq.dirs;
  out.fingerprint = rq.fingerprint;
  out.tuning = rq.tuning;
  std::vector<manifest::CacheDir> dirs = rq.packable();
  for (unsigned k = 1; k <= rq.max_runs; ++k) {
    RunReport report;
    dirs = settle_run(rq, out.scratch->path(), k, dirs, report);
    out.runs.push_back(report);
    if (rq.on_run) rq.on_run(report);
    check_signal();
    if (report.compiled->settled()) {
      out.stopped = Stopped::fixed_point;
      break;
    }
  }
  out.settled = dirs;
  return out;
}

pack::PackResult pack_settled(const SettleOutcome& outcome, const fs::path& output, pack::PackOptions options) {
  options.records.settle = outcome.record();
  check_signal();
  pack::RecordedSource source(outcome.settled, outcome.original);
  pack::PackResult result = pack::create_archive(source, output, options);
  if (SignalCatcher::caught() != 0) {
    std::error_code ec;
    fs::remove(output, ec);
    check_signal();
  }
  return result;
}

}  // namespace ccpack::settle
