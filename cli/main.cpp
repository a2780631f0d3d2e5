// ccpack's entry point: register the commands, parse the command line once, set the process-wide settings once,
// run the chosen command, and map every failure to one line "ccpack: error: ..." and the exit code of its class
// (util/error.hpp owns the table; README "Exit codes" repeats it and a test checks that they agree).
// Bare `ccpack` prints the help, as git does, on standard error, then its one error line, with exit 2 (usage:
// nothing was done, so a script that runs `ccpack $EMPTY` fails); a first word that names no command gets the
// closest names (cli/command_name.hpp) before CLI11 would say only that a subcommand is required.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/cli.hpp"
#include "cli/command_name.hpp"
#include "util/cpu_budget.hpp"
#include "util/error.hpp"
#include "util/thread_pool.hpp"

namespace {

using ccpack::ExitCode;

int exit_code_of(const std::exception& e) {
  // Everything that is not ccpack's own error is a plain error.
  if (const auto* err = dynamic_cast<const ccpack::Error*>(&e)) return static_cast<int>(err->code());
  return static_cast<int>(ExitCode::error);
}

std::string exit_code_help() {
  std::string text = "Exit codes:\n";
  for (const ccpack::ExitCodeInfo& info : ccpack::kExitCodes) {
    text += "  " + std::to_string(static_cast<int>(info.code)) + "  " + std::string(info.meaning) + "\n";
  }
  return text;
}

// Settings that belong to the whole process, taken once here and held for the run.
class ProcessSettings {
 public:
  explicit ProcessSettings(const ccpack::cli::CommonOptions& common) {
    // A file-size limit (ulimit -f) must be an I/O error (EFBIG) that the run cleans up after, not a kill.
    (void)std::signal(SIGXFSZ, SIG_IGN);
    // A registry or credential helper that closes its end must be an I/O error (EPIPE), not a kill: libcurl
    // runs with CURLOPT_NOSIGNAL (threads), so it does not ignore SIGPIPE itself.
    (void)std::signal(SIGPIPE, SIG_IGN);
    // The thread pool fits the CPUs the process may use (a container's CFS quota, not the host's cores): more
    // threads than that only take turns on them, and oneTBB's idle workers spin (sched_yield) while they wait.
    // -j overrides it. It is applied when parallel work first starts (util/thread_pool.hpp): a run that starts
    // none, such as a no-op restore, never initialises oneTBB.
    ccpack::set_thread_limit(ccpack::cli::size_thread_budget(common).threads);
  }
  ProcessSettings(const ProcessSettings&) = delete;
  ProcessSettings& operator=(const ProcessSettings&) = delete;
  ~ProcessSettings() { ccpack::end_thread_pool(); }
};

// Bare `ccpack` and an unknown first word, answered before CLI11 parses; nullopt: parse as usual.
std::optional<int> before_parse(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) {
    std::fputs(app.help().c_str(), stderr);
    std::fputs("ccpack: error: no command given (the commands are listed above)\n", stderr);
    return static_cast<int>(ExitCode::usage);
  }
  std::string first = argv[1];
  if (first.starts_with("-")) return std::nullopt;
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(first)) return std::nullopt;
    names.push_back(sub->get_name());
  }
  std::fprintf(stderr, "ccpack: error: %s\n", ccpack::cli::unknown_command_message(first, names).c_str());
  return static_cast<int>(ExitCode::usage);
}

// For a command that runs a program (Command::trailing): the words after the first `--`, the program and its own
// arguments, which CLI11 must not read as ccpack's options (`create --settle -- python serve.py --warmup-only`);
// argc is cut before it. Other commands keep `--` as CLI11's end of options (a path that starts with '-').
std::optional<std::vector<std::string>> split_trailing(const ccpack::cli::Commands& commands, int& argc, char** argv) {
  bool takes = std::any_of(commands.begin(), commands.end(),
                           [&](const ccpack::cli::Command& c) { return c.trailing != nullptr && c.app->check_name(argv[1]); });
  if (!takes) return std::nullopt;
  for (int i = 2; i < argc; ++i) {
    if (std::string_view(argv[i]) != "--") continue;
    std::vector<std::string> tail(argv + i + 1, argv + argc);
    argc = i;
    return tail;
  }
  return std::nullopt;
}

// Every command, in the order --help lists them.
void register_commands(CLI::App& app, ccpack::cli::Commands& commands) {
  namespace cli = ccpack::cli;
  cli::add_create(app, commands);
  cli::add_restore(app, commands);
  cli::add_verify(app, commands);
  cli::add_inspect(app, commands);
  cli::add_keygen(app, commands);
  cli::add_sign(app, commands);
  cli::add_fingerprint(app, commands);
  cli::add_check(app, commands);
  cli::add_import(app, commands);
  cli::add_push(app, commands);
  cli::add_pull(app, commands);
  cli::add_ls(app, commands);
  cli::add_purge(app, commands);
  cli::add_status(app, commands);
  cli::add_merge(app, commands);
  cli::add_env(app, commands);
  cli::add_run(app, commands);
}

// The command the line chose, run with the process settings; its exit code (nullopt: none was chosen).
std::optional<int> run_parsed(const ccpack::cli::Commands& commands, std::optional<std::vector<std::string>>& trailing) {
  namespace cli = ccpack::cli;
  for (const cli::Command& command : commands) {
    if (!command.app->parsed()) continue;
    if (trailing) *command.trailing = std::move(*trailing);
    try {
      ProcessSettings settings(*command.common);
      return command.run();
    } catch (const std::exception& e) {
      int code = exit_code_of(e);
      std::fprintf(stderr, "ccpack: error: %s\n", e.what());
      // With --json, scripts get the failure on standard output too, in the same shape as a report.
      if (command.common->json) {
        std::printf("%s\n", nlohmann::json{{"ok", false}, {"exit_code", code}, {"error", e.what()}}.dump(2).c_str());
      }
      return code;
    }
  }
  return std::nullopt;
}

int run_ccpack(int argc, char** argv) {
  namespace cli = ccpack::cli;
  CLI::App app{
      "ccpack: pack PyTorch torch.compile caches (Inductor + Triton) into one verified archive, and restore them "
      "safely and atomically.",
      "ccpack"};
  app.footer(exit_code_help());
  app.set_version_flag("--version", std::function<std::string()>(cli::version_text));
  app.require_subcommand(1);

  cli::Commands commands;
  register_commands(app, commands);

  if (std::optional<int> code = before_parse(app, argc, argv)) return *code;
  std::optional<std::vector<std::string>> trailing = split_trailing(commands, argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "ccpack: error: %s (see ccpack --help)\n", e.what());
    return static_cast<int>(ExitCode::usage);
  }

  if (std::optional<int> code = run_parsed(commands, trailing)) return *code;
  return static_cast<int>(ExitCode::usage);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run_ccpack(argc, argv);
  } catch (const std::exception& e) {  // only set-up can throw here: commands report their own failures
    std::fprintf(stderr, "ccpack: error: %s\n", e.what());
    return static_cast<int>(ExitCode::error);
  }
}
