// `ccpack verify`: check every frame and file of an archive against its manifest; writes nothing.
#include "tools/cli.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;

namespace {

struct VerifyOptions {
  CommonOptions common;
  fs::path archive;
};

int run(const VerifyOptions& o) {
  Reporter out(o.common);
  unpack::Archive a = unpack::Archive::open(o.archive);
  unpack::ExtractStats s = unpack::extract(a, {}, unpack::ExtractOptions{o.common.jobs, out.progress()});
  out.report({{"archive", o.archive.string()},
              {"files", s.files},
              {"bytes", s.bytes},
              {"frames", a.manifest.frames.size()},
              {"signatures", "none (unsigned)"}});
  out.say(quoted_path(o.archive) + ": OK, " + std::to_string(a.manifest.frames.size()) + " frames and " + std::to_string(s.files) +
          " files (" + mb(s.bytes) + ") match their SHA-256");
  return 0;
}

}  // namespace

void add_verify(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* v = app.add_subcommand("verify", "Check every byte of an archive against its manifest; writes nothing");
  v->add_option("archive", o->archive, "The .ccpack archive")->required();
  add_common(v, o->common);
  commands.push_back({v, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::tools
