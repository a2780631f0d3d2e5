// `ccpack run [restore flags] ARCHIVE -- CMD ARGS...`: a pod's entrypoint in one command. It reads the archive's
// settings (probe/pod_settings.hpp) and sets them in its own environment first, so the restore's fingerprint probe
// judges the process CMD will be; then restores exactly as `ccpack restore` does, sets the cache folders, and
// replaces itself with CMD (execvp): CMD's exit code and signals are the pod's, with no ccpack process between.
// A restore that does not happen (refused, untrusted, a registry down) exits with its own code and runs nothing,
// unless --cold-on-failure asks to start CMD cold anyway: one line says so, and CMD gets the folders (and the
// settings, when the archive could be read and trusted).
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "cli/restore_command.hpp"
#include "probe/pod_settings.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/interrupt.hpp"

namespace ccpack::cli {
namespace {

struct RunOptions {
  RestoreOptions restore;
  std::vector<std::string> command;  // after -- (main.cpp: Command::trailing)
  bool cold_on_failure = false;
};

// The folders alone: what CMD gets when the archive could not be read (a cold start still fills the pod's folders).
probe::PodEnvironment folders_only(const RestoreOptions& o) {
  probe::PodEnvironment env;
  if (!o.at_build_paths) env.variables = probe::folder_variables(resolve_cache_dirs(o.dirs));
  return env;
}

// Replaces this process with the command; returns only when it cannot (126 or 127, as a shell does).
int exec_command(const std::vector<std::string>& command) {
  std::vector<char*> argv;
  argv.reserve(command.size() + 1);
  for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The command starts as it would from a shell: the dispositions ccpack changed back to their defaults (an ignored
  // signal stays ignored across exec), no signal blocked.
  for (int sig : {SIGPIPE, SIGXFSZ, SIGINT, SIGTERM, SIGHUP}) (void)std::signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  (void)sigprocmask(SIG_SETMASK, &none, nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execvp(argv[0], argv.data());
  int err = errno;
  ExitCode code = err == ENOENT || err == ENOTDIR ? ExitCode::command_not_found : ExitCode::command_not_executable;
  std::fprintf(stderr, "ccpack: error: cannot run '%s': %s\n", escaped(command.front(), 200).c_str(), std::strerror(err));
  return static_cast<int>(code);
}

// The restore with the archive's settings in this process's environment; its exit code, or the failure's.
int restore_with_settings(RunOptions& ro, const Reporter& out, std::string& failure) {
  RestoreOptions& o = ro.restore;
  try {
    ArchiveForPod archive = archive_for_pod(o, out);
    probe::PodEnvironment env = probe::pod_environment(archive.manifest, archive.dirs, o.python);
    for (const std::string& n : env.notes) out.warn(n);
    probe::set_in_process(env);  // before the restore probes: it judges the process the command will be
    int rc = run_restore(o);
    if (rc != 0) failure = "refused (exit " + std::to_string(rc) + ")";
    return rc;
  } catch (const std::exception& e) {
    if (!ro.cold_on_failure) throw;
    std::fprintf(stderr, "ccpack: error: %s\n", e.what());
    const auto* err = dynamic_cast<const Error*>(&e);
    int rc = err ? static_cast<int>(err->code()) : static_cast<int>(ExitCode::error);
    failure = "failed (exit " + std::to_string(rc) + ")";
    return rc;
  }
}

int run(RunOptions& ro) {
  if (ro.command.empty()) throw UsageError("run needs the command after --, e.g. `ccpack run model.ccpack -- python serve.py`");
  Reporter out(ro.restore.common);
  std::string failure;
  int rc = restore_with_settings(ro, out, failure);
  if (int sig = interrupt::caught()) return 128 + sig;  // ccpack was asked to stop: nothing is started
  if (rc != 0) {
    if (!ro.cold_on_failure) return rc;
    probe::set_in_process(folders_only(ro.restore));
    std::fprintf(stderr, "ccpack: restore %s; starting '%s' cold, as --cold-on-failure asks\n", failure.c_str(),
                 escaped(ro.command.front(), 200).c_str());
  }
  return exec_command(ro.command);
}

}  // namespace

void add_run(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* r = app.add_subcommand(
      "run", "Restore an archive, then run a command with its cache folders and settings (a pod's entrypoint)");
  add_restore_flags(r, o->restore, true);
  r->add_flag("--cold-on-failure", o->cold_on_failure,
              "When the restore does not happen (refused: exit 3, untrusted or corrupt: 4, a registry down: 1), start the "
              "command anyway, cold, saying so in one line (default: exit with the restore's code and run nothing)");
  r->footer(
      "Every word after `--` is the command's. The archive's settings (TORCHINDUCTOR_*/TRITON_* of its cache key, a "
      "ptxas of the recorded version, TORCHINDUCTOR_COMPILE_THREADS=1 for a tuned archive unless set; `ccpack env` prints them) "
      "are set first, so the restore judges the process the command will be; then it restores as `ccpack restore` "
      "does and replaces itself with the command, with TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR set: the "
      "command's exit code and signals are the pod's. 126/127: the command could not be executed / was not found.\n"
      "  ccpack run oci://registry.example.com/ml/cache:v42 -- python serve.py --port 8000");
  commands.push_back({r, &o->restore.common, [o] { return run(*o); }, &o->command});
}

}  // namespace ccpack::cli
