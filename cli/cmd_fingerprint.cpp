// `ccpack fingerprint`: this machine's environment fingerprint, as a table or --json (the manifest's object).
#include <cstdio>

#include "cli/cache_dirs.hpp"
#include "cli/cli.hpp"
#include "cli/fingerprint_options.hpp"
#include "probe/probe.hpp"
#include "util/escape.hpp"

namespace ccpack::cli {
namespace {

struct FingerprintOptions {
  CommonOptions common;
  std::string python;
  CacheDirOptions dirs;
  std::vector<std::string> extras;
};

int run(FingerprintOptions& o) {
  Reporter out(o.common);
  resolve_extras(o.dirs, o.extras);
  std::string memo;
  manifest::Fingerprint fp = probe::probe_local(o.python, resolve_cache_dirs(o.dirs), &memo);
  if (out.json()) {
    out.report(ojson::parse(fp.to_json()));
    return 0;
  }
  std::fputs(fp.to_table().c_str(), stdout);
  auto file = probe::ProbeMemo::default_file();
  std::printf("python probe memo: %s%s\n", memo.c_str(), file ? (" (" + escaped(file->string(), 200) + ")").c_str() : "");
  return 0;
}

}  // namespace

void add_fingerprint(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<FingerprintOptions>();
  CLI::App* f = app.add_subcommand("fingerprint", "Show this machine's environment fingerprint (what create records)");
  add_python_option(f, o->python);
  add_cache_dirs(f, o->dirs, o->extras, "record");
  add_common(f, o->common);
  f->footer(
      "Each field is a value or 'absent' with the reason; nothing is guessed. The python probe's answer is "
      "memoised while the interpreter and its start-up files are unchanged ($CCPACK_PROBE_CACHE=off disables "
      "it). See docs/FINGERPRINT.md.");
  commands.push_back({f, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
