// The one exception family of ccpack and the exit codes it maps to.
//
// Low layers throw `Error` (or a subclass that fixes the exit code); the CLI catches once at the top, prints a
// single line "ccpack: error: ..." and exits with `exit_code_of()`. Exit codes are part of the interface
// (README "Exit codes"), so they live in one enum and one mapping function.
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ccpack {

enum class ExitCode : int {
  ok = 0,
  error = 1,                     // I/O failure, missing folder, bad local state
  usage = 2,                     // bad command line
  refused = 3,                   // environment fingerprint differs (policy refuses)
  integrity = 4,                 // signature, hash, structure or safety check of an archive failed
  not_restored = 5,              // `ccpack status`: a cache folder was not restored by ccpack (no marker, or named and missing)
  command_failed = 6,            // `create --settle`: the command failed or ran past --settle-timeout (nothing written)
  over_compiled = 7,             // `status --max-compiled N`: the pod compiled more than N Triton kernels since its restore
  command_not_executable = 126,  // `ccpack run`: the command is there but cannot be executed (the shell's code)
  command_not_found = 127,       // `ccpack run`: no such command (the shell's code)
  interrupted_hup = 129,         // SIGHUP (128 + 1) during `restore` or `merge` (nothing changed or written)
  interrupted_int = 130,         // SIGINT (128 + 2) during `restore` or `create --settle` (nothing changed or written)
  interrupted_term = 143,        // SIGTERM (128 + 15) during `restore` or `create --settle` (nothing changed or written)
};

// The exit-code table: `ccpack --help` prints it and a test checks the README's table against that output.
struct ExitCodeInfo {
  ExitCode code;
  std::string_view meaning;
};
inline constexpr std::array<ExitCodeInfo, 13> kExitCodes{{
    {ExitCode::ok, "done (also: already restored)"},
    {ExitCode::error, "error: a missing or unreadable folder or file, an output path in a missing folder, I/O failure"},
    {ExitCode::usage, "usage: bad command line"},
    {ExitCode::refused, "refused: the environment fingerprint differs (merge: a delta of another base or environment)"},
    {ExitCode::integrity,
     "integrity: unsigned or not signed by a trusted key, not a ccpack archive, corrupt, truncated, tampered or unsafe content, hash mismatch"},
    {ExitCode::not_restored,
     "not restored: `ccpack status` found a cache folder that ccpack did not restore (no marker, or named and missing)"},
    {ExitCode::command_failed,
     "command failed: the command `create --settle` runs exited non-zero, was killed or ran past --settle-timeout (nothing written)"},
    {ExitCode::over_compiled,
     "over the gate: `ccpack status --max-compiled N` found more than N Triton kernels compiled since the restore"},
    {ExitCode::command_not_executable,
     "`ccpack run`: the command after -- cannot be executed (otherwise run exits with the command's own code)"},
    {ExitCode::command_not_found, "`ccpack run`: the command after -- was not found"},
    {ExitCode::interrupted_hup,
     "interrupted: SIGHUP during `restore` (nothing changed) or `merge` (scratch folder removed, nothing written)"},
    {ExitCode::interrupted_int,
     "interrupted: SIGINT during `restore` (nothing changed), `merge` (scratch folder removed) or `create --settle` (passed on to the command, nothing written)"},
    {ExitCode::interrupted_term,
     "interrupted: SIGTERM during `restore` (nothing changed), `merge` (scratch folder removed) or `create --settle` (passed on to the command, nothing written)"},
}};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ExitCode code = ExitCode::error) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] ExitCode code() const noexcept { return code_; }

 private:
  ExitCode code_;
};

// The archive is corrupt, truncated, tampered with or hostile.
class IntegrityError : public Error {
 public:
  explicit IntegrityError(const std::string& message) : Error(message, ExitCode::integrity) {}
};

class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message, ExitCode::usage) {}
};

// Formats errno into "what: strerror".
[[nodiscard]] std::string errno_message(const std::string& what, int err);

// Throws Error(errno_message(what, errno)).
[[noreturn]] void throw_errno(const std::string& what);

}  // namespace ccpack
