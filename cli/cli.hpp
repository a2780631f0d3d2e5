// The command-line front end's shared pieces. Each command lives in its own file (cli/cmd_<name>.cpp) with its
// options struct; it registers its CLI11 subcommand and a function that runs it. main.cpp parses once, sets the
// process-wide settings once (ProcessSettings), runs the chosen command and maps any failure to one line and
// one exit code.
//
// The choice between a terminal report, --json and -q is made once, in Reporter: commands say what happened,
// the Reporter decides whether and where it is printed.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "util/cpu_budget.hpp"
#include "util/error.hpp"

namespace ccpack::cli {

using ojson = nlohmann::ordered_json;

// The options every command takes: settings as the user gave them, never changed once parsed. What the process
// makes of them (the thread budget) is run state: thread_budget() below.
struct CommonOptions {
  unsigned jobs = 0;  // -j as given; 0: not given (the budget is sized from the CPUs this process may use)
  bool quiet = false;
  bool json = false;
};

// The process's worker threads and why that many (the --json "threads" and "threads_from"): -j when given, else
// util/cpu_budget's answer. main.cpp sizes it once, before the command runs (size_thread_budget); commands read it.
[[nodiscard]] const ThreadBudget& thread_budget();
const ThreadBudget& size_thread_budget(const CommonOptions& common);

class Reporter {
 public:
  explicit Reporter(const CommonOptions& common) : quiet_(common.quiet), json_(common.json) {}
  [[nodiscard]] bool json() const { return json_; }
  // Progress meters only in a terminal report (Progress itself also checks that stderr is a terminal).
  [[nodiscard]] bool progress() const { return !quiet_ && !json_; }
  // A line of the terminal report, on standard error: "ccpack: <line>".
  void say(const std::string& line) const;
  // A warning, on standard error unless -q, in every mode: "ccpack: warning: <line>".
  void warn(const std::string& line) const;
  // A warning that -q does not silence (a security check turned off): "ccpack: warning: <line>".
  void alarm(const std::string& line) const;
  // The --json report on standard output; adds "ok": true first. A string or key that is not UTF-8 (a name on
  // disk) is written escaped as in messages (\xNN), so the report is valid UTF-8.
  void report(ojson body) const;

 private:
  bool quiet_;
  bool json_;
};

// A subcommand as main.cpp sees it.
struct Command {
  CLI::App* app = nullptr;
  CommonOptions* common = nullptr;  // main.cpp fills in the thread count
  std::function<int()> run;
  // A command that runs another program (`create --settle`, `run`) takes every word after the first `--` here,
  // untouched by the parser (main.cpp splits it off before CLI11 sees it); nullptr: `--` is CLI11's end of options.
  std::vector<std::string>* trailing = nullptr;
};
using Commands = std::vector<Command>;

// -j, -q and (unless with_json is false) --json.
void add_common(CLI::App* cmd, CommonOptions& common, bool with_json = true);

// A count given on the command line (`status --max-compiled N`): exactly the decimal integers 0..2^63-1, digits
// only. Anything else (a sign, an empty value, a fraction, hex, past 2^63-1) is a UsageError naming the option and
// the value, escaped: a gate that wrapped or clamped a bad value would pass everything.
[[nodiscard]] std::uint64_t count_option(std::string_view option, const std::string& value);

// "12.3 MB"
[[nodiscard]] std::string mb(std::uint64_t bytes);

// `ccpack --version`: ccpack's version and the libraries it was built with (cli/version.cpp).
[[nodiscard]] std::string version_text();

// One registration function per command file.
void add_create(CLI::App& app, Commands& commands);
void add_restore(CLI::App& app, Commands& commands);
void add_verify(CLI::App& app, Commands& commands);
void add_inspect(CLI::App& app, Commands& commands);
void add_keygen(CLI::App& app, Commands& commands);
void add_sign(CLI::App& app, Commands& commands);
void add_fingerprint(CLI::App& app, Commands& commands);
void add_check(CLI::App& app, Commands& commands);
void add_import(CLI::App& app, Commands& commands);
void add_push(CLI::App& app, Commands& commands);
void add_pull(CLI::App& app, Commands& commands);
void add_ls(CLI::App& app, Commands& commands);
void add_purge(CLI::App& app, Commands& commands);
void add_status(CLI::App& app, Commands& commands);
void add_merge(CLI::App& app, Commands& commands);
void add_env(CLI::App& app, Commands& commands);
void add_run(CLI::App& app, Commands& commands);

// Ends a command refused by the fingerprint: with --json the report `body` with ok:false, exit_code and error on
// standard output; always the one line "ccpack: error: <message>" on standard error. Returns exit code 3.
[[nodiscard]] int refused(const Reporter& out, ojson body, const std::string& message);
// The same for any exit code a command ends with while still reporting (status: not restored). Returns the code.
[[nodiscard]] int finish_with(const Reporter& out, ojson body, ExitCode exit_code, const std::string& message);

}  // namespace ccpack::cli
