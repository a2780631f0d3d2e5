// `ccpack ls oci://REF`: the archives a tag holds (an index's environments, or its one manifest), each with the
// selection annotations it is chosen by, its size and digests; `--json` for scripts. Nothing but the manifests is
// fetched, and nothing is judged: `pull` and `restore oci://` choose among these for a machine. Mirrors from
// registries.conf are asked first, as for a pull. The flow is registry/listing.hpp's. The listing goes to standard
// output, every name from the registry escaped (util/escape.hpp).
#include <cstdio>

#include "cli/cli.hpp"
#include "cli/registry_options.hpp"
#include "registry/listing.hpp"
#include "registry/oci.hpp"
#include "registry/session.hpp"
#include "util/escape.hpp"

namespace ccpack::cli {
namespace oci = registry::oci;

namespace {

struct LsOptions {
  CommonOptions common;
  RegistryOptions registry;
  std::string reference;
};

ojson archive_json(const registry::ListedArchive& a) {
  ojson selection = nullptr;
  if (a.selection) {
    selection = ojson::object();
    for (std::string_view field : oci::kSelectionFields) selection[std::string(field)] = a.selection->at(std::string(field));
  }
  return {{"ccpack", a.ccpack},
          {"selection", selection},
          {"digest", a.layer_digest.empty() ? ojson(nullptr) : ojson(a.layer_digest)},
          {"bytes", a.ccpack ? ojson(a.layer_size) : ojson(nullptr)},
          {"manifest_digest", a.manifest_digest},
          {"media_type", a.media_type},
          {"title", a.title}};
}

// One line per archive: "  sha256:... 12.3 MB  gpu.arch=sm_90 torch.version=... (title)".
std::string archive_line(const registry::ListedArchive& a) {
  std::string sel = a.selection ? oci::describe(*a.selection) : "(no selection annotations)";
  if (!a.ccpack) return "  " + a.manifest_digest + "  not a ccpack archive (" + escaped(a.media_type, 120) + ")  " + sel;
  return "  " + a.layer_digest + "  " + mb(a.layer_size) + "  " + sel +
         (a.title.empty() ? "" : "  (" + escaped(a.title, 120) + ")");
}

int run(const LsOptions& o) {
  Reporter out(o.common);
  oci::Reference ref = oci::parse_reference(o.reference);
  registry::Session s(ref, session_options(o.registry, false, ref));
  s.on_fallback = [&out](const std::string& line) { out.warn(line); };
  registry::Listing l = registry::list_archives(s);
  ojson archives = ojson::array();
  for (const registry::ListedArchive& a : l.archives) archives.push_back(archive_json(a));
  out.report(
      {{"reference", ref.str()}, {"digest", l.digest}, {"index", l.index}, {"archives", archives}, {"served_by", s.served_by()}});
  // The listing is what ls is for: standard output (as status's report), so `ccpack ls REF | grep` works.
  std::string text = escaped(ref.str(), 300) + ": " + (l.index ? "index " : "manifest ") + l.digest + ", " +
                     std::to_string(l.archives.size()) + (l.archives.size() == 1 ? " archive\n" : " archives\n");
  for (const registry::ListedArchive& a : l.archives) text += archive_line(a) + "\n";
  if (!out.json()) std::fputs(text.c_str(), stdout);
  return 0;
}

}  // namespace

void add_ls(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<LsOptions>();
  CLI::App* p = app.add_subcommand("ls", "List the archives a registry tag holds, with their selection, size and digest");
  p->add_option("reference", o->reference, "What to list: [oci://]host[:port]/repository[:tag|@sha256:...]")->required();
  add_registry_options(p, o->registry);
  add_common(p, o->common);
  commands.push_back({p, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
