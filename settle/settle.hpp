// `create --settle`: pack the cache a pod converges to, not the one the warm-up left.
//
// A cache packed right after a warm-up is not what a pod ends with: a fresh process restored from it still
// compiles and autotunes kernels the warm-up never needed (a second shape's kernels, autotune results written
// after the first run). Settling runs the command again the way a pod would, until a run compiles nothing.
// The stages (detailed at settle() below):
//
//   warm-up  the command run in the user's folders, which it fills;
//   loop     pack the last folders, restore them relocated into scratch folders, run the command there and
//            measure what it compiled; stop at the fixed point (nothing compiled) or after max_runs;
//   result   the last run's scratch folders, which the caller packs (pack_settled).
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"
#include "manifest/settle_record.hpp"
#include "pack/packer.hpp"
#include "settle/child.hpp"
#include "util/error.hpp"
#include "util/scratch_folder.hpp"

namespace ccpack::settle {

inline constexpr unsigned kDefaultRuns = 3;

// Why settling stopped: the two ends that write an archive, then the three that do not.
enum class Stopped : std::uint8_t { fixed_point, run_limit, command_failed, timed_out, interrupted };
[[nodiscard]] std::string_view to_string(Stopped stopped);  // "fixed-point", "run-limit", "command-failed", ...

struct RunReport {
  unsigned index = 0;  // 0: the warm-up (in the user's folders, not measured); 1..: settle runs
  double seconds = 0;
  std::optional<int> exit_code;  // none when it was ended by a signal, the time limit or an interruption
  int signal = 0;                // the signal that ended it, when one did
  bool timed_out = false;
  bool interrupted = false;                          // ccpack got SIGINT or SIGTERM and passed it on (`signal`)
  std::optional<manifest::CompiledCounts> compiled;  // settle runs that exited 0
};

struct SettleRequest {
  std::vector<std::string> command;
  unsigned max_runs = kDefaultRuns;
  std::optional<std::chrono::seconds> timeout;  // per run, the warm-up included
  // The folders create packs (inductor and triton), resolved by the caller; `packable` gives those that exist
  // after the warm-up (create's rule), throwing when there is none.
  std::vector<manifest::CacheDir> dirs;
  std::function<std::vector<manifest::CacheDir>()> packable;
  std::filesystem::path scratch_parent;  // where the scratch folder is made (beside the output)
  manifest::Fingerprint fingerprint;     // recorded in the scratch archives and used as the machine's
  unsigned jobs = 0;
  // The tuned settings the caller set in this process's environment for every run (recorded in the manifest).
  std::optional<manifest::TuningRecord> tuning;
  std::function<void(const RunReport&)> on_run;  // each run as it ends (the report's lines)
};

struct SettleOutcome {
  std::unique_ptr<SignalCatcher> signals;  // SIGINT/SIGTERM noted until the outcome is packed and destroyed
  std::vector<RunReport> runs;             // the warm-up first
  Stopped stopped = Stopped::run_limit;
  std::vector<manifest::CacheDir> original;      // the user's folders (the request's), recorded as the build folders
  std::vector<manifest::CacheDir> settled;       // the last run's scratch folders that exist, same order
  manifest::Fingerprint fingerprint;             // the request's
  std::optional<manifest::TuningRecord> tuning;  // the request's
  std::unique_ptr<ScratchFolder> scratch;        // holds `settled` until the outcome is destroyed
  [[nodiscard]] manifest::SettleRecord record() const;
};

// A settle run's end that writes no archive: the reason, the report so far, and the exit code: the command failed
// or ran past its time limit (ExitCode::command_failed), or ccpack got SIGINT or SIGTERM (forwarded to the
// command's group; ExitCode::interrupted_int / interrupted_term).
class SettleFailure : public Error {
 public:
  SettleFailure(const std::string& message, ExitCode code, Stopped stopped) : Error(message, code), stopped_(stopped) {}
  [[nodiscard]] Stopped stopped() const { return stopped_; }

 private:
  Stopped stopped_;
};

// The flow above:
//
//   warm-up  run the command with TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR set to the folders create packs
//            (the user's folders: the warm-up fills them, as before);
//   loop     for run k = 1..max_runs:
//              pack    the previous run's folders (the warm-up's, then run k-1's scratch folders) into a scratch
//                      archive;
//              restore it into fresh scratch folders under other names (unpack::restore, relocating: a pod's way);
//              run     the command again, a fresh process, the variables pointing at the scratch folders;
//              measure what it compiled there since the restore (unpack::folder_status, `ccpack status`'s groups);
//              stop    when it compiled nothing in the kernel groups (Triton kernels, FX graphs, autotune
//                      results: manifest::CompiledCounts::settled) -- the fixed point -- or after max_runs;
//   result   the last run's scratch folders, which hold the archive's files plus what the last run added; the
//            caller packs them (pack_settled) with the original folders recorded as the build folders.
//
// Throws SettleFailure (command, time limit, signal), or what pack and restore throw. Failure leaves nothing
// behind: the scratch folder (archives and run folders) is removed, no output is written, and the user's folders
// are as the warm-up left them.
[[nodiscard]] SettleOutcome settle(const SettleRequest& request);

// Packs the settled folders into `output`, each component recording its original folder as its build folder
// (`source`), as a plain create would have; the settle record goes into the manifest. A SIGINT or SIGTERM caught
// by then throws SettleFailure, the output removed if it was written.
[[nodiscard]] pack::PackResult pack_settled(const SettleOutcome& outcome, const std::filesystem::path& output,
                                            pack::PackOptions options);

}  // namespace ccpack::settle
