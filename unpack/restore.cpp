// The stages of a restore, in the order unpack/restore.hpp gives, and the two decisions between them that are
// restore's own: which manifest reading a run needs (the marker hint), and what the fingerprint policy makes of
// each component (the fit). Everything else is a stage's own file: archive.hpp (header, gate, manifest stages),
// manifest/policy.hpp (the comparison), installer.hpp (lock, plan, stage, swap, purge).
#include "unpack/restore.hpp"

#include <unistd.h>

#include <algorithm>
#include <future>
#include <optional>

#include "manifest/marker.hpp"
#include "util/error.hpp"

namespace ccpack::unpack {
namespace fs = std::filesystem;

namespace {

// What the folders' markers say before the archive is opened (each marker read once here). Folders that all hold
// a restore's marker most likely hold this archive: the header stage then reads the manifest in pieces, for its
// top-level fields and its digest, and never holds it whole (archive.hpp). When every marker also records the
// same archive file and digest, the header stage reads no manifest at all if the file is still that file.
struct MarkerHint {
  ManifestText text = ManifestText::keep;
  std::optional<MarkedArchive> marked;
};

MarkerHint marker_hint(const std::vector<manifest::CacheDir>& dirs) {
  MarkerHint hint;
  std::vector<manifest::Marker> markers;
  for (const manifest::CacheDir& d : dirs) {
    std::optional<manifest::Marker> m = manifest::Marker::read(d.dir);
    if (!m) return hint;
    markers.push_back(std::move(*m));
  }
  if (markers.empty()) return hint;
  hint.text = ManifestText::stream;
  const manifest::Marker& first = markers.front();
  if (!first.archive_file) return hint;
  bool same = std::all_of(markers.begin(), markers.end(), [&first](const manifest::Marker& m) {
    return m.archive_file && m.archive_file->same_file(*first.archive_file) &&
           m.archive_manifest_sha256 == first.archive_manifest_sha256;
  });
  // Whether the archive is still that file is Archive::open's to judge, on the descriptor it reads.
  if (same) hint.marked = MarkedArchive{*first.archive_file, first.archive_manifest_sha256};
  return hint;
}

// With at_build_paths: each folder must be creatable and writable here, said before anything is written.
void require_writable(const std::vector<manifest::CacheDir>& dirs) {
  for (const manifest::CacheDir& d : dirs) {
    fs::path p = d.dir;
    while (!p.empty() && ::access(p.c_str(), F_OK) != 0 && p != p.parent_path()) p = p.parent_path();
    if (::access(p.c_str(), W_OK) != 0) {
      throw Error("cannot restore " + d.name + " at its build path " + quoted_path(d.dir) + ": " + quoted_path(p) +
                  " is not writable here (restore without --at-build-paths, or create the folder)");
    }
  }
}

// The comparison for the components this restore would write (those with a folder).
manifest::Comparison compare_for_restore(const Archive& a, const std::vector<manifest::CacheDir>& dirs,
                                         const manifest::Fingerprint& local, const std::vector<std::string>& ignored) {
  std::vector<manifest::ComponentRef> comps;
  for (const manifest::Component& c : a.manifest.components) {
    for (const manifest::CacheDir& d : dirs) {
      if (d.name == c.name) comps.push_back({c.name, c.kind});
    }
  }
  return manifest::compare(a.manifest.fingerprint, local, comps, ignored);
}

// --on-mismatch=purge: the verdict per manifest component (those without a folder fit: they are skipped).
std::vector<std::pair<Fit, std::string>> fits_for_purge(const Archive& a, const manifest::Comparison& c) {
  std::vector<std::pair<Fit, std::string>> fits(a.manifest.components.size(), {Fit::fits, ""});
  for (std::size_t i = 0; i < a.manifest.components.size(); ++i) {
    for (std::size_t k = 0; k < c.components.size(); ++k) {
      if (c.components[k].name != a.manifest.components[i].name || c.component_verdicts[k] < manifest::Verdict::stale) continue;
      std::string fields;
      for (const manifest::ComparisonRow& row : c.rows) {
        if (row.verdicts[k] >= manifest::Verdict::stale) fields += (fields.empty() ? "" : ", ") + row.field;
      }
      bool refuse = c.component_verdicts[k] == manifest::Verdict::refuse;
      fits[i] = {refuse ? Fit::stale_refuse : Fit::stale_purge,
                 std::string(refuse ? "refused here (" : "stale here (") + fields + "): not restored" +
                     (refuse ? "" : "; the local stale artifacts of its folder are purged")};
    }
  }
  return fits;
}

// Whether the policy refuses the whole archive: refuse on any stale or refused component; purge only on a
// refused one (the stale ones are purged instead).
bool policy_refuses(manifest::OnMismatch policy, const manifest::Comparison& fit) {
  if (!fit.blocks()) return false;
  return policy == manifest::OnMismatch::refuse ||
         (policy == manifest::OnMismatch::purge && fit.worst() == manifest::Verdict::refuse);
}

// The fit and the install, once the archive is open and the machine known; `held`: the install's locks, when the
// restore took them before it opened the archive.
RestoreResult judge_and_install(const RestoreRequest& rq, Archive& a, RestoreResult result, const manifest::Fingerprint& local,
                                const std::vector<UniqueFd>* held = nullptr) {
  InstallRun run{{}, std::nullopt, rq.trust, held, rq.origin};
  // defence: restore-delta
  if (a.manifest.delta) {
    throw UsageError("archive " + quoted_path(a.path) + " is a delta (only what a pod compiled since restoring archive " +
                     a.manifest.delta->base_manifest_sha256.substr(0, 12) +
                     "), not a whole cache: merge it into its base with `ccpack merge BASE DELTA -o NEXT` and restore NEXT");
  }
  if (rq.on_machine) rq.on_machine();
  result.fit = compare_for_restore(a, result.dirs, local, rq.ignored);
  // defence: fingerprint-refusal
  if (policy_refuses(rq.policy, result.fit)) {
    a.load_full();  // a manifest that fails validation is refused as such (exit 4) before any fingerprint verdict
    result.refused = true;
    result.depth = a.depth();
    return result;
  }
  result.purging = rq.policy == manifest::OnMismatch::purge;
  if (result.purging) {
    run.fits = fits_for_purge(a, result.fit);
    run.purge_for = local;  // purged by the install, inside its locks
  }
  result.report = install(a, result.dirs, rq.install, run);
  result.depth = a.depth();
  result.top_level_from_markers = a.top_level_from_markers() && a.depth() == ManifestDepth::top_level;
  return result;
}

// A stream: the machine first and the archive chosen for it (a refusal there touches no folder), then, under the
// install's folder locks (the one lock: restores of one machine into the same folders fetch in turn), its header,
// the gate and the install. The payload starts on the first read, so a restore that finds every folder restored
// downloads none of it.
RestoreResult restore_stream(const RestoreRequest& rq, const StreamedArchive& stream, RestoreResult result) {
  if (rq.at_build_paths) throw UsageError("restoring at the build paths takes a local archive");
  manifest::Fingerprint local = rq.machine(result.dirs);
  stream.choose(local);
  std::vector<UniqueFd> locks = lock_install_folders(result.dirs, rq.install.on_lock_wait);
  OpenedStream opened = stream.open();
  auto payload = std::make_shared<StreamedPayload>(opened.payload_start, std::move(opened.produce));
  Archive a = Archive::from_header(opened.name, std::move(opened.header), payload, rq.gate);
  return judge_and_install(rq, a, std::move(result), local, &locks);
}

}  // namespace

RestoreResult restore(const RestoreRequest& rq) {
  if (!rq.machine) throw Error("internal: a restore without a machine to judge for");
  RestoreResult result;
  result.dirs = rq.dirs;
  if (const auto* stream = std::get_if<StreamedArchive>(&rq.source)) return restore_stream(rq, *stream, std::move(result));
  const auto& file = std::get<fs::path>(rq.source);
  MarkerHint hint = rq.at_build_paths ? MarkerHint{} : marker_hint(result.dirs);
  // The probe (mostly waiting for Python) runs while the header and the manifest's top level are read and
  // checked; with at_build_paths the folders come from the manifest, so it waits for them. When the markers name
  // this file, nothing is read that would hide the probe: it runs first, on this thread (no thread started).
  std::future<manifest::Fingerprint> probing;
  if (!rq.at_build_paths && !hint.marked)
    probing = std::async(std::launch::async, [&rq, &result] { return rq.machine(result.dirs); });
  std::optional<manifest::Fingerprint> probed;
  if (hint.marked) probed = rq.machine(result.dirs);
  // The signature is checked before the manifest is parsed, and before any target folder is touched.
  Archive a = Archive::open(file, rq.gate, ManifestDepth::top_level, hint.text, hint.marked ? &*hint.marked : nullptr);
  if (rq.at_build_paths) {
    result.dirs = manifest::build_dirs(a.manifest);
    require_writable(result.dirs);
  }
  manifest::Fingerprint local = probed ? std::move(*probed) : rq.at_build_paths ? rq.machine(result.dirs) : probing.get();
  return judge_and_install(rq, a, std::move(result), local);
}

}  // namespace ccpack::unpack
