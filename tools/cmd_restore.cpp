// `ccpack restore`: check an archive and put its components into this machine's cache folders.
#include "tools/cli.hpp"
#include "tools/trust_options.hpp"
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
  TrustOptions trust;
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
  // The signature is checked before the manifest is parsed, and before any target folder is touched.
  unpack::TrustReport trust;
  unpack::Archive a = open_trusted(o.archive, o.trust, out, trust);
  std::vector<manifest::CacheDir> dirs = manifest::resolve_cache_dirs(o.dirs);
  unpack::RestoreReport r = unpack::restore(a, dirs, unpack::RestoreOptions{o.common.jobs, out.progress(), o.durable});
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
    out.report({{"archive", o.archive.string()},
                {"noop", r.noop()},
                {"trusted", trust.trusted()},
                {"signed_by", trust.trusted() ? ojson(trust.verified_by) : ojson(nullptr)},
                {"components", comps}});
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
  r->add_option("archive", o->archive, "The .ccpack archive")->required();
  add_cache_dirs(r, o->dirs, o->extras, "restore into");
  r->add_flag("--durable", o->durable, "Flush the restored files to disk (one syncfs) before they are swapped into place");
  add_trust_options(r, o->trust);
  add_common(r, o->common);
  r->footer(
      "Each target folder is replaced as a whole: the archive is extracted into a hidden staging folder beside it, every "
      "byte is checked, and the staging folders are swapped in together; if one swap fails, those already swapped are "
      "swapped back. Running it again with the same archive does nothing. The archive must carry a signature that "
      "verifies with a trusted key (--trust, $CCPACK_TRUSTED_KEYS, else /etc/ccpack/trusted.d and "
      "~/.config/ccpack/trusted.d), checked before anything is written; --allow-unsigned turns that off, loudly.");
  commands.push_back({r, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
