// `ccpack restore`: check an archive and put its components into this machine's cache folders.
#include "tools/cli.hpp"
#include "tools/fleet.hpp"
#include "unpack/archive.hpp"
#include "unpack/installer.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;

namespace {

struct RestoreOptions {
  CommonOptions common;
  fs::path archive;
  manifest::CacheDirOptions dirs;
  std::vector<std::string> extras;
  bool durable = false;
  RegistryOptions registry;
};

std::string status_name(const unpack::ComponentOutcome& c) {
  switch (c.status) {
    case unpack::ComponentOutcome::Status::restored:
      return "restored";
    case unpack::ComponentOutcome::Status::already:
      return "already restored";
    case unpack::ComponentOutcome::Status::skipped:
      return "skipped";
  }
  return "?";
}

int run(RestoreOptions& o) {
  Reporter out(o.common);
  resolve_extras(o.dirs, o.extras);
  std::vector<manifest::CacheDir> dirs = manifest::resolve_cache_dirs(o.dirs);
  unpack::RestoreOptions options{o.common.jobs, out.progress(), o.durable};
  unpack::RestoreReport r = is_registry_reference(o.archive.string())
                                ? restore_from_registry(o.archive.string(), dirs, options, o.registry)
                                : unpack::restore(unpack::Archive::open(o.archive), dirs, options);
  if (out.json()) {
    ojson comps = ojson::array();
    for (const auto& c : r.components) {
      comps.push_back({{"name", c.name},
                       {"dir", c.dir.string()},
                       {"status", status_name(c)},
                       {"reason", c.reason},
                       {"files", c.files},
                       {"bytes", c.bytes}});
    }
    out.report({{"archive", o.archive.string()}, {"noop", r.noop()}, {"components", comps}});
    return 0;
  }
  for (const auto& c : r.components) {
    std::string line = c.name + ": " + status_name(c);
    if (!c.dir.empty()) line += " " + quoted_path(c.dir);
    if (c.status == unpack::ComponentOutcome::Status::restored) line += " (" + std::to_string(c.files) + " files, " + mb(c.bytes) + ")";
    if (!c.reason.empty()) line += ": " + c.reason;
    out.say(line);
  }
  return 0;
}

}  // namespace

void add_restore(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<RestoreOptions>();
  CLI::App* r = app.add_subcommand("restore", "Check an archive and restore it into this machine's cache folders");
  r->add_option("archive", o->archive, "The .ccpack archive, or oci://host[:port]/repository[:tag|@digest] in a registry")
      ->required();
  add_cache_dirs(r, o->dirs, o->extras, "restore into");
  r->add_flag("--durable", o->durable, "Flush the restored files to disk (one syncfs) before they are swapped into place");
  add_registry_options(r, o->registry, false);
  add_common(r, o->common);
  r->footer(
      "Each target folder is replaced as a whole: the archive is extracted into a hidden staging folder beside it, every "
      "byte is checked, and the staging folders are swapped in together; if one swap fails, those already swapped are "
      "swapped back. Running it again with the same archive does nothing.");
  commands.push_back({r, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
