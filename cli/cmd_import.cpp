// `ccpack import`: convert a foreign tar/tar.gz/tar.xz/tar.zst/zip of cache folders into a ccpack archive.
// The archive is the one `create` would make from the same folders extracted by hand (same tar stream, same
// entries); only the components' recorded sources and the fingerprint differ.
#include <fcntl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/cli.hpp"
#include "cli/trust_options.hpp"
#include "manifest/fingerprint.hpp"
#include "manifest/fingerprint_file.hpp"
#include "pack/import_source.hpp"
#include "pack/packer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

struct ImportCmdOptions {
  CommonOptions common;
  fs::path foreign;
  fs::path output;
  std::vector<std::string> maps;
  std::optional<fs::path> fingerprint;
  SigningOptions signing;
};

int run(ImportCmdOptions& o) {
  Reporter out(o.common);
  // The key is read first: a missing or exposed key is reported before any import work.
  std::optional<manifest::PrivateKey> key = load_signing_key(o.signing, false);
  pack::ImportOptions io;
  io.foreign = o.foreign;
  for (const std::string& spec : o.maps) io.maps.push_back(pack::parse_map(spec));
  io.spool_dir = o.output.parent_path();
  std::optional<manifest::Fingerprint> fingerprint;
  if (o.fingerprint) fingerprint = manifest::fingerprint_from_file(o.fingerprint->string());  // the build machine's
  pack::ImportSource source(io);
  pack::PackOptions po;
  po.jobs = thread_budget().threads;
  po.progress = out.progress();
  po.sign = manifest_signer(key, o.signing);
  if (fingerprint) po.records.fingerprint = *fingerprint;  // else the source's derived one
  pack::PackResult r = pack::create_archive(source, o.output, po);

  const manifest::ComponentTotals total = manifest::totals(r.manifest.components);
  ojson comps = ojson::array();
  std::string from;
  for (const manifest::Component& c : r.manifest.components) {
    comps.push_back({{"name", c.name}, {"source", c.source}, {"files", c.files}, {"bytes", c.bytes}});
    from += (from.empty() ? "" : ", ") + c.name + " <- " + c.source.substr(c.source.rfind(':') + 1);
  }
  if (out.json()) {
    out.report({{"archive", o.output.string()},
                {"archive_bytes", r.archive_size},
                {"foreign", o.foreign.string()},
                {"foreign_format", source.format()},
                {"files", total.files},
                {"bytes", total.bytes},
                {"components", comps},
                {"fingerprint", fingerprint ? "given" : "derived"},
                {"signed_by", key ? ojson(key->key_id()) : ojson(nullptr)},
                {"skipped", r.skipped}});
    return 0;
  }
  if (!r.skipped.empty()) out.say("skipped " + std::to_string(r.skipped.size()) + " transient entries");
  out.say("imported " + std::to_string(total.files) + " files (" + mb(total.bytes) + ") from " + quoted_path(o.foreign) + " (" +
          source.format() + "; " + from + ") into " + quoted_path(o.output) + " (" + mb(r.archive_size) + ")" +
          (key ? ", signed with key " + key->key_id() : ", unsigned"));
  if (!fingerprint)
    out.say(
        "fingerprint derived from the cache's Triton metadata; pass --fingerprint FILE.json from the build machine for a full one");
  return 0;
}

}  // namespace

void add_import(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<ImportCmdOptions>();
  CLI::App* c =
      app.add_subcommand("import", "Convert a tar, tar.gz, tar.xz, tar.zst or zip of cache folders into a .ccpack archive");
  c->add_option("foreign", o->foreign, "The foreign archive (tar, tar.gz, tar.xz, tar.zst, zip)")->required();
  c->add_option("-o,--output", o->output, "Archive to write; it appears atomically when complete")->required();
  c->add_option("--map", o->maps,
                "Folder of the foreign archive to import as a component, as PATH=COMPONENT (repeatable), e.g. "
                "workspace/cache=inductor; inductor_cache, torchinductor_* and triton_cache are found by name");
  c->add_option("--fingerprint", o->fingerprint,
                "Fingerprint of the machine that built the cache (ccpack fingerprint --json there); without it, "
                "the fingerprint holds the Triton targets found in the cache, marked derived");
  add_signing_options(c, o->signing, false);
  add_common(c, o->common);
  c->footer(
      "Entries are checked as a restore checks them: an absolute path, '..', a link out of its folder, a device or "
      "a setuid bit refuses the whole archive (exit 4). Folders outside the cache folders need --map (exit 2).");
  commands.push_back({c, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
