// `ccpack verify`: check every frame and file of an archive against its manifest; writes nothing.
#include "cli/cli.hpp"
#include "cli/trust_options.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

struct VerifyOptions {
  CommonOptions common;
  fs::path archive;
  TrustOptions trust;
};

int run(const VerifyOptions& o) {
  Reporter out(o.common);
  unpack::TrustReport trust;
  unpack::Archive a = open_trusted(o.archive, o.trust, out, trust);
  a.drop_manifest_text();
  unpack::ExtractStats s = unpack::extract(a, {}, unpack::ExtractOptions{thread_budget().threads, out.progress()});
  out.report({{"archive", o.archive.string()},
              {"files", s.files},
              {"bytes", s.bytes},
              {"frames", a.manifest.frames.size()},
              {"trusted", trust.trusted()},
              {"signatures", signers_json(trust)}});
  out.say(quoted_path(o.archive) + ": OK, " + std::to_string(a.manifest.frames.size()) + " frames and " +
          std::to_string(s.files) + " files (" + mb(s.bytes) + ") match their SHA-256; " +
          (trust.trusted() ? "signed by trusted key " + trust.verified_by
                           : "NOT signed by a trusted key (" + trust.describe() + ")"));
  return 0;
}

}  // namespace

void add_verify(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<VerifyOptions>();
  CLI::App* v = app.add_subcommand("verify", "Check an archive's signature and every byte against its manifest; writes nothing");
  v->add_option("archive", o->archive, "The .ccpack archive")->required();
  add_trust_options(v, o->trust);
  add_common(v, o->common);
  commands.push_back({v, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
