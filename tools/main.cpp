// ccpack's entry point: parse the command line into option structs, run the command, map errors to exit codes.
// Every failure ends here as one line "ccpack: error: ..." and the exit code of its class (README, Exit codes).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/commands.hpp"
#include "util/error.hpp"
#include "util/version.hpp"

namespace {

using ccpack::ExitCode;

int exit_code_of(const std::exception& e) {
  // The one mapping from failures to exit codes: ccpack's own errors carry theirs, anything else is an error.
  if (const auto* err = dynamic_cast<const ccpack::Error*>(&e)) return static_cast<int>(err->code());
  return static_cast<int>(ExitCode::error);
}

void add_common(CLI::App* cmd, ccpack::tools::CommonOptions& c, bool with_json = true) {
  cmd->add_option("-j,--jobs", c.jobs, "Worker threads (default: all cores)")->check(CLI::Range(1u, 1024u));
  cmd->add_flag("-q,--quiet", c.quiet, "Print nothing but errors");
  if (with_json) cmd->add_flag("--json", c.json, "Print the report as JSON on standard output");
}

void add_dirs(CLI::App* cmd, ccpack::manifest::CacheDirOptions& d, std::vector<std::string>& extras, const char* verb) {
  cmd->add_option(
      "--inductor-dir", d.inductor_dir,
      std::string("Inductor cache folder to ") + verb + " (default: $TORCHINDUCTOR_CACHE_DIR, else <tmp>/torchinductor_<user>)");
  cmd->add_option(
      "--triton-dir", d.triton_dir,
      std::string("Triton cache folder to ") + verb + " (default: $TRITON_CACHE_DIR, else <$TRITON_HOME or ~>/.triton/cache)");
  cmd->add_option("--add", extras,
                  std::string("Extra folder to ") + verb + ", as NAME=DIR (repeatable), e.g. ext=~/.cache/torch_extensions");
}

}  // namespace

int main(int argc, char** argv) {
  namespace tools = ccpack::tools;
  CLI::App app{
      "ccpack: pack PyTorch torch.compile caches (Inductor + Triton) into one verified archive, and restore them "
      "safely and atomically.\n\nExit codes: 0 done, 1 error, 2 usage, 3 refused (fingerprint differs), "
      "4 signature or integrity failure.",
      "ccpack"};
  app.set_version_flag("--version", std::string("ccpack ") + ccpack::kVersion);
  app.require_subcommand(1);

  tools::CreateOptions create;
  std::vector<std::string> create_extras;
  CLI::App* c = app.add_subcommand("create", "Pack the cache folders into a .ccpack archive (after a warm-up run)");
  c->add_option("-o,--output", create.output, "Archive to write; it appears atomically when complete")->required();
  add_dirs(c, create.dirs, create_extras, "pack");
  c->add_option("--level", create.level,
                "Compression: 'default' (fast, zstd 1 + 128 MiB long-range window), 'max' (zstd 19, "
                "for publication) or a zstd level 1-19")
      ->default_str("default");
  add_common(c, create.common);

  tools::RestoreOptions restore;
  std::vector<std::string> restore_extras;
  CLI::App* r = app.add_subcommand("restore", "Check an archive and restore it into this machine's cache folders");
  r->add_option("archive", restore.archive, "The .ccpack archive")->required();
  add_dirs(r, restore.dirs, restore_extras, "restore into");
  r->add_flag("--durable", restore.durable, "Flush the restored files to disk (one syncfs) before they are swapped into place");
  add_common(r, restore.common);
  r->footer(
      "Each target folder is replaced as a whole: the archive is extracted into a hidden staging folder beside it, every "
      "byte is checked, and the staging folder is swapped in with one atomic rename. Running it again with the same "
      "archive does nothing.");

  tools::VerifyOptions verify;
  CLI::App* v = app.add_subcommand("verify", "Check every byte of an archive against its manifest; writes nothing");
  v->add_option("archive", verify.archive, "The .ccpack archive")->required();
  add_common(v, verify.common);

  tools::InspectOptions inspect;
  CLI::App* i = app.add_subcommand("inspect", "Show an archive's manifest: components, sizes, frames");
  i->add_option("archive", inspect.archive, "The .ccpack archive")->required();
  i->add_flag("--files", inspect.files, "List every entry (mode, size, SHA-256, path)");
  add_common(i, inspect.common);

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

  try {
    for (const std::string& spec : create_extras) create.dirs.extras.push_back(ccpack::manifest::parse_named_dir(spec));
    for (const std::string& spec : restore_extras) restore.dirs.extras.push_back(ccpack::manifest::parse_named_dir(spec));
    if (c->parsed()) return tools::run_create(create);
    if (r->parsed()) return tools::run_restore(restore);
    if (v->parsed()) return tools::run_verify(verify);
    if (i->parsed()) return tools::run_inspect(inspect);
  } catch (const std::exception& e) {
    int code = exit_code_of(e);
    std::fprintf(stderr, "ccpack: error: %s\n", e.what());
    // With --json, scripts get the failure on standard output too, in the same shape as a report.
    bool json = (c->parsed() && create.common.json) || (r->parsed() && restore.common.json) ||
                (v->parsed() && verify.common.json) || (i->parsed() && inspect.common.json);
    if (json) std::printf("%s\n", nlohmann::json{{"ok", false}, {"exit_code", code}, {"error", e.what()}}.dump(2).c_str());
    return code;
  }
  return static_cast<int>(ExitCode::usage);
}
