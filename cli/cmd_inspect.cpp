// `ccpack inspect`: what an archive holds, from its header and manifest only (the payload is not read).
#include <cstdio>

#include "cli/card.hpp"
#include "cli/cli.hpp"
#include "cli/trust_options.hpp"
#include "manifest/trusted_keys.hpp"
#include "unpack/archive.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

struct InspectOptions {
  CommonOptions common;
  fs::path archive;
  bool files = false;
  bool card = false;
  TrustOptions trust;
};

void print_signers(const unpack::TrustReport& r) {
  if (r.signers.empty()) {
    std::printf("signatures   none (unsigned)\n");
    return;
  }
  std::printf("signatures   %zu, %s\n", r.signers.size(),
              r.trusted() ? ("trusted: verified with key " + r.verified_by).c_str() : "none from a key trusted here");
  for (const unpack::SignerStatus& s : r.signers) {
    std::printf("  %s  signed %s  %-14s%s%s\n", s.signature.key_id.c_str(), s.signature.signed_at.c_str(),
                std::string(unpack::to_string(s.state)).c_str(),
                s.signature.note.empty() ? "" : "  note: ", escaped(s.signature.note).c_str());
  }
}

void print_entries(const manifest::Manifest& m) {
  std::printf("entries\n");
  for (const auto& e : m.entries) {
    if (e.type == manifest::EntryType::file) {
      std::printf("  file    %04o %12llu %s %s\n", e.mode, static_cast<unsigned long long>(e.size), to_hex(e.sha256).c_str(),
                  e.path.c_str());
    } else if (e.type == manifest::EntryType::dir) {
      std::printf("  dir     %04o %12s %64s %s/\n", e.mode, "-", "", e.path.c_str());
    } else {
      std::printf("  symlink %04o %12s %64s %s -> %s\n", e.mode, "-", "", e.path.c_str(), e.link_target.c_str());
    }
  }
}

// "sm_90, torch 2.11.0+cu130, triton 3.6.0 (31 fields; `ccpack check` compares them)", or "not recorded".
std::string fingerprint_summary(const unpack::Archive& a) {
  const manifest::Fingerprint& fp = a.manifest.fingerprint;
  if (!fp.recorded()) return "not recorded (made before fingerprints)";
  std::string s;
  for (std::string_view f : {manifest::field::gpu_arch, manifest::field::torch_version, manifest::field::triton_version}) {
    const manifest::FieldValue* v = fp.get(f);
    s += (s.empty() ? "" : ", ") + std::string(f) + " " + (v && v->value ? escaped(*v->value, 40) : "absent");
  }
  return s + " (" + std::to_string(fp.fields.size()) + " fields; `ccpack check` compares them, --json shows them)";
}

// --card: the Markdown model card (cli/card.hpp), as text or inside the --json report.
void print_card(const InspectOptions& o, const Reporter& out, const unpack::Archive& a, std::uint64_t archive_bytes) {
  std::string card =
      model_card({o.archive.filename().string(), to_hex(a.manifest_digest()), archive_bytes, &a.manifest, &a.signatures});
  if (out.json()) {
    out.report({{"archive", o.archive.string()}, {"card", card}});
  } else {
    std::fputs(card.c_str(), stdout);
  }
}

// inspect's --json report: the manifest as recorded (its entries only with --files) and what the header says.
void report_json(const InspectOptions& o, const Reporter& out, const unpack::Archive& a, const unpack::TrustReport& trust,
                 std::uint64_t archive_bytes) {
  const manifest::Manifest& m = a.manifest;
  ojson j = ojson::parse(a.header.manifest);
  if (!o.files) j.erase("entries");
  out.report({{"archive", o.archive.string()},
              {"archive_bytes", archive_bytes},
              {"format_version", a.header.version},
              {"manifest_sha256", to_hex(a.manifest_digest())},
              {"trusted", trust.trusted()},
              {"signatures", signers_json(trust)},
              // settle null: made without `create --settle` (not tried); else the manifest's "settle" field. settled:
              // the archive as a whole, so false for a merged one (its "settle" is the base's; the deltas' additions
              // were not settle-tested)
              {"settled", m.settle && !m.merge ? ojson(m.settle->settled) : ojson(false)},
              {"settle", m.settle ? m.settle->to_tree() : ojson(nullptr)},
              // delta: `create --since-restore` (not a whole cache); merge: `ccpack merge`'s record; null otherwise
              {"delta", m.delta ? m.delta->to_tree() : ojson(nullptr)},
              {"merge", m.merge ? m.merge->to_tree() : ojson(nullptr)},
              {"manifest", j}});
}

// The terminal report: the header's and the manifest's top-level facts, then the components (and --files' entries).
void print_summary(const InspectOptions& o, const unpack::Archive& a, const unpack::TrustReport& trust,
                   std::uint64_t archive_bytes) {
  const manifest::Manifest& m = a.manifest;
  const manifest::ComponentTotals total = manifest::totals(m.components);
  std::printf("archive      %s\n", o.archive.string().c_str());
  std::printf("format       ccpack v%u, created by %s\n", a.header.version, m.created_by.c_str());
  std::printf("manifest     sha256:%s\n", to_hex(a.manifest_digest()).c_str());
  std::printf("compression  zstd level %d, window 2^%d, %zu frame(s)\n", m.compression.level, m.compression.window_log,
              m.frames.size());
  std::printf("size         %s packed, %s of files (%zu files), ratio %.1fx\n", mb(archive_bytes).c_str(),
              mb(total.bytes).c_str(), static_cast<std::size_t>(total.files),
              archive_bytes ? static_cast<double>(total.bytes) / static_cast<double>(archive_bytes) : 0.0);
  print_signers(trust);
  std::printf("fingerprint  %s\n", fingerprint_summary(a).c_str());
  std::printf("settle       %s\n", settle_text(m).c_str());
  if (m.merge || m.delta) std::printf("merged       %s\n", merge_text(m).c_str());
  std::printf("components\n");
  for (const auto& c : m.components) {
    std::printf("  %-12s %-8s %6llu files %10s  from %s\n", c.name.c_str(), std::string(manifest::to_string(c.kind)).c_str(),
                static_cast<unsigned long long>(c.files), mb(c.bytes).c_str(), c.source.c_str());
  }
  if (o.files) print_entries(m);
}

int run(const InspectOptions& o) {
  Reporter out(o.common);
  unpack::Archive a = unpack::Archive::open(o.archive);
  unpack::TrustReport trust = unpack::assess_signatures(a, manifest::load_trusted_keys(o.trust.trust));
  std::uint64_t archive_bytes = a.header.header_size + a.header.payload_size;
  if (o.card) {
    print_card(o, out, a, archive_bytes);
  } else if (out.json()) {
    report_json(o, out, a, trust, archive_bytes);
  } else {
    print_summary(o, a, trust, archive_bytes);
  }
  return 0;
}

}  // namespace

void add_inspect(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* i = app.add_subcommand("inspect", "Show an archive's manifest: components, sizes, frames");
  i->add_option("archive", o->archive, "The .ccpack archive")->required();
  i->add_flag("--files", o->files, "List every entry (mode, size, SHA-256, path)");
  i->add_flag("--card", o->card, "Print a Markdown model card built from the archive's fingerprint and manifest only");
  add_trust_options(i, o->trust, true);
  add_common(i, o->common);
  commands.push_back({i, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
