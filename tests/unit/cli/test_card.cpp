// cli/card.cpp, `inspect --card`: the Markdown built from the manifest and its fingerprint alone. Values are
// escaped and made inert for Markdown (a hostile name cannot add a line, a link or a table cell), absent and
// unrecorded fields say so, set-valued fields list entry by entry, the statistics add up, the kernels' targets are
// checked against gpu.arch and triton.version, and the triggers come from the policy table. Same input, same bytes.
#include <catch2/catch.hpp>
#include <string>

#include "cli/card.hpp"
#include "manifest/manifest.hpp"

using namespace ccpack;
using manifest::EntryType;

namespace {

manifest::Manifest card_sample() {
  manifest::Manifest m;
  m.created_by = "ccpack 0.1.0";
  m.components = {{"inductor", manifest::ComponentKind::inductor, "/c/ind", 3, 2'500'000},
                  {"triton", manifest::ComponentKind::triton, "/c/tri", 2, 1'000'000}};
  m.entries.push_back({"inductor", EntryType::dir, 0755, 0, {}, "", 0});
  m.entries.push_back({"inductor/a.so", EntryType::file, 0644, 10, {}, "", 0});
  m.entries.push_back({"inductor/b.so.1", EntryType::file, 0644, 10, {}, "", 0});
  m.entries.push_back({"inductor/fx.py", EntryType::file, 0644, 10, {}, "", 0});
  m.entries.push_back({"triton", EntryType::dir, 0755, 0, {}, "", 0});
  m.entries.push_back({"triton/K/k.cubin", EntryType::file, 0644, 10, {}, "", 0});
  m.entries.push_back({"triton/K/k.json", EntryType::file, 0644, 10, {}, "", 0});
  manifest::Fingerprint& fp = m.fingerprint;
  fp.set(manifest::field::gpu_arch, "sm_90", "nvml");
  fp.set(manifest::field::gpu_name, "NVIDIA H200", "nvml");
  fp.absent(manifest::field::gpu_driver, "nvml: not loadable on the build machine");
  fp.set(manifest::field::triton_version, "3.6.0", "python:dist-info (triton)");
  fp.set(manifest::field::wheels_cuda, "nvidia-cublas==13.0.0.19, nvidia-nccl==2.27.7", "python:dist-info");
  fp.set(manifest::field::env_inductor, "", "env");
  fp.triton_targets = {{"cuda", "90", 32, "3.6.0", 437}};
  return m;
}

std::string card_of(const manifest::Manifest& m, const std::string& name = "model.ccpack") {
  return cli::model_card({name, std::string(64, 'e'), 3'600'000, &m});
}

}  // namespace

TEST_CASE("card: the head, each field's value, absent and unrecorded fields, set entries one a line", "[card]") {
  manifest::Manifest m = card_sample();
  std::string card = card_of(m);
  CHECK(
      card.starts_with("# Model card: model.ccpack\n\nBuilt by `ccpack inspect --card` from the archive's manifest and recorded "
                       "fingerprint only.\n\n- manifest: sha256:" +
                       std::string(64, 'e') +
                       "\n- created by: ccpack 0.1.0\n"
                       "- signed: no (unsigned; pods refuse it unless they allow unsigned archives)\n"
                       "- settled: not settled (not tried: made without `create --settle`)\n\n## Hardware\n\n"));
  CHECK_THAT(card, Catch::Contains("\n- gpu.arch: sm_90\n"));
  CHECK_THAT(card, Catch::Contains("\n- gpu.name: NVIDIA H200\n"));
  CHECK_THAT(card, Catch::Contains("\n- gpu.driver: absent\n"));  // never the source: it describes the build machine
  CHECK(card.find("not loadable") == std::string::npos);
  CHECK_THAT(card, Catch::Contains("\n- gpu.count: not recorded\n"));
  CHECK_THAT(card, Catch::Contains("\n- env.inductor: (empty)\n"));
  CHECK_THAT(card, Catch::Contains("\n- wheels.cuda: 2 entries\n  - nvidia-cublas==13.0.0.19\n  - nvidia-nccl==2.27.7\n"));
  CHECK(card.find("fingerprint: not recorded") == std::string::npos);
  // Sections in order, each field in the section its name says.
  std::size_t hw = card.find("## Hardware"), sw = card.find("## Software"), cs = card.find("## Compile settings");
  CHECK(hw < sw);
  CHECK(sw < cs);
  CHECK(card.find("- gpu.arch:") < sw);
  CHECK(card.find("- triton.version:") > sw);
  CHECK(card.find("- triton.version:") < cs);
  CHECK(card.find("- env.inductor:") > cs);
  CHECK(card_of(m) == card);  // deterministic
}

TEST_CASE("card: each signer with its signing time and note, as recorded, hostile notes inert", "[card]") {
  manifest::Manifest m = card_sample();
  std::vector<manifest::Signature> sigs(2);
  sigs[0].key_id = "0c3f51e2a9d84b17";
  sigs[0].signed_at = "2026-12-01T09:30:00Z";
  sigs[0].note = "pipeline 42, commit 1a2b3c";
  sigs[1].key_id = "7877f96ce95b4fe7";
  sigs[1].signed_at = "2026-12-02T10:00:00Z";
  sigs[1].note = "QA\n# approved *";
  std::string card = cli::model_card({"model.ccpack", std::string(64, 'e'), 3'600'000, &m, &sigs});
  CHECK_THAT(card, Catch::Contains(
                       "\n- created by: ccpack 0.1.0\n"
                       "- signed: by key 0c3f51e2a9d84b17 (ed25519) at 2026-12-01T09:30:00Z, note: pipeline 42, commit 1a2b3c\n"
                       "- signed: by key 7877f96ce95b4fe7 (ed25519) at 2026-12-02T10:00:00Z, note: QA\\n# approved \\*\n"
                       "- signatures: as recorded; `ccpack verify` checks them against the trusted keys\n- settled: "));
  sigs.resize(1);
  sigs[0].note.clear();
  CHECK_THAT(cli::model_card({"model.ccpack", std::string(64, 'e'), 3'600'000, &m, &sigs}),
             Catch::Contains("- signed: by key 0c3f51e2a9d84b17 (ed25519) at 2026-12-01T09:30:00Z, no note\n"));
}

TEST_CASE("card: statistics from the manifest: components, totals, binaries, libraries and kernel targets", "[card]") {
  std::string card = card_of(card_sample());
  CHECK_THAT(card, Catch::Contains("\n## Cache statistics\n\n| component | kind | files | size |\n|---|---|---|---|\n"
                                   "| inductor | inductor | 3 | 2.5 MB |\n| triton | triton | 2 | 1.0 MB |\n"
                                   "\n- total: 5 files, 3.5 MB; archive 3.6 MB\n"
                                   "- GPU binaries (.cubin, .hsaco): 1; compiled libraries (.so): 2\n"
                                   "\n| Triton target | backend | warp size | triton | kernels |\n|---|---|---|---|---|\n"
                                   "| sm_90 | cuda | 32 | 3.6.0 | 437 |\n"));
  CHECK_THAT(card, Catch::Contains("\n## Consistency\n\n- The cache's kernels and the fingerprint agree.\n"));
}

TEST_CASE("card: kernels that disagree with the fingerprint, several targets, no gpu.arch", "[card]") {
  manifest::Manifest m = card_sample();
  m.fingerprint.triton_targets = {{"cuda", "90", 32, "3.6.0", 400}, {"cuda", "80", 32, "3.5.0", 37}};
  std::string card = card_of(m);
  CHECK_THAT(card,
             Catch::Contains("\n## Consistency\n\n"
                             "- **The cache holds kernels for 2 targets: sm_90 (triton 3.6.0), sm_80 (triton 3.5.0). One machine "
                             "uses only those for its own GPU; the others are dead weight there.**\n"
                             "- **The fingerprint says gpu.arch sm_90 but 37 kernels name sm_80.**\n"
                             "- **The fingerprint says triton.version 3.6.0 but 37 kernels were built by triton 3.5.0.**\n\n"));
  manifest::Manifest no_arch = card_sample();
  no_arch.fingerprint.fields.erase(std::string(manifest::field::gpu_arch));
  CHECK_THAT(card_of(no_arch),
             Catch::Contains("- **The fingerprint records no gpu.arch, so it names no single GPU for these kernels.**\n"));
  manifest::Manifest no_kernels = card_sample();
  no_kernels.fingerprint.triton_targets.clear();
  std::string plain = card_of(no_kernels);
  CHECK_THAT(plain, Catch::Contains("- Triton kernels by target: none recorded\n"));
  CHECK_THAT(plain, Catch::Contains("\n## Consistency\n\n- No Triton kernels recorded to check against the fingerprint.\n"));
}

TEST_CASE("card: recompilation triggers from the policy table, per component, with the recorded value", "[card]") {
  std::string card = card_of(card_sample());
  CHECK_THAT(card,
             Catch::Contains("\n- [ ] triton.version = 3.6.0 -> inductor stale, triton stale. Triton's cache key starts with "
                             "its version and source hash; Inductor's includes it\n"));
  CHECK_THAT(card, Catch::Contains("\n- [ ] gpu.driver = absent -> inductor refused if older, triton refused if older. "));
  CHECK_THAT(card, Catch::Contains("\n- [ ] torch.version = not recorded -> inductor stale. "));  // none for triton
  CHECK_THAT(card, Catch::Contains("\n- [ ] cache.targets = the kernels' targets above -> inductor stale, triton stale. "));
  CHECK(card.find("- [ ] gpu.count") == std::string::npos);  // a warning only: no trigger
  CHECK(card.find("- [ ] python.version") == std::string::npos);
}

TEST_CASE("card: hostile names and values stay on their line and inert for Markdown", "[card]") {
  manifest::Manifest m = card_sample();
  m.created_by = "x\n# Injected";
  m.components[0].name = "ind|ex";
  m.fingerprint.set(manifest::field::gpu_name, "H200 <script>*[link](http://x)`", "nvml");
  std::string card = card_of(m, "evil\r\n| a | b |");
  CHECK(card.starts_with("# Model card: evil\\r\\n\\| a \\| b \\|\n"));
  CHECK_THAT(card, Catch::Contains("\n- created by: x\\n# Injected\n"));
  CHECK(card.find("\n# Injected") == std::string::npos);
  CHECK_THAT(card, Catch::Contains("\n- gpu.name: H200 \\<script\\>\\*\\[link\\](http://x)\\`\n"));
  CHECK_THAT(card, Catch::Contains("\n| ind\\|ex | inductor | 3 | 2.5 MB |\n"));
  CHECK_THAT(card, Catch::Contains("-> ind\\|ex stale, triton stale."));
}

TEST_CASE("card: an archive made before fingerprints says nothing describes a machine", "[card]") {
  manifest::Manifest m = card_sample();
  m.fingerprint = manifest::Fingerprint{};
  std::string card = card_of(m);
  CHECK_THAT(card, Catch::Contains(
                       "\n- created by: ccpack 0.1.0\n- fingerprint: not recorded (made before fingerprints): nothing "
                       "below describes a machine\n- signed: no (unsigned; pods refuse it unless they allow unsigned archives)\n"
                       "- settled: not settled (not tried: made without `create --settle`)\n\n"
                       "## Hardware\n"));
  CHECK_THAT(card, Catch::Contains("\n- gpu.arch: not recorded\n"));
}

TEST_CASE("card: whether the archive was settled, and what its last settle run compiled", "[card]") {
  manifest::Manifest m = card_sample();
  m.settle = manifest::SettleRecord{2, true, "fixed-point", {0, 0, 0, 3}};
  CHECK_THAT(card_of(m),
             Catch::Contains("\n- settled: settled after 2 settle runs (fixed point: the last compiled 0 Triton kernels, 0 FX "
                             "graphs, 0 autotune results)\n"));
  m.settle = manifest::SettleRecord{1, false, "run-limit", {7, 1, 2, 0}};
  CHECK_THAT(card_of(m),
             Catch::Contains("\n- settled: NOT settled: stopped at the run limit after 1 settle run (the last compiled 7 "
                             "Triton kernels, 1 FX graphs, 2 autotune results)\n"));
}

TEST_CASE("card: a merged archive names its base and deltas, a delta says it is one, others have no merged line", "[card]") {
  manifest::Manifest m = card_sample();
  CHECK(card_of(m).find("- merged:") == std::string::npos);
  m.merge = manifest::MergeRecord{std::string(64, 'a'), {{std::string(64, 'b'), 5}, {std::string(64, 'c'), 2}}};
  CHECK_THAT(card_of(m),
             Catch::Contains("\n- settled: base not settled (not tried: made without `create --settle`); merged 2 deltas "
                             "(their additions not settle-tested)\n"
                             "- merged: 2 deltas into base aaaaaaaaaaaa (7 files and symlinks added)\n"));
  m.merge.reset();
  m.delta = manifest::DeltaRecord{std::string(64, 'd')};
  CHECK_THAT(card_of(m),
             Catch::Contains("\n- merged: a delta of archive dddddddddddd (create --since-restore): not a whole cache\n"));
}

TEST_CASE("card: a merged archive of a settled base says the base was settled, not the merged archive", "[card]") {
  manifest::Manifest m = card_sample();
  m.settle = manifest::SettleRecord{2, true, "fixed-point", {0, 0, 0, 0}};
  m.merge = manifest::MergeRecord{std::string(64, 'a'), {{std::string(64, 'b'), 1}}};
  std::string want =
      "base settled after 2 settle runs (fixed point: the last compiled 0 Triton kernels, 0 FX graphs, 0 autotune "
      "results); merged 1 delta (their additions not settle-tested)";
  CHECK(cli::settle_text(m) == want);  // the one text of inspect, check and the card
  CHECK_THAT(card_of(m), Catch::Contains("\n- settled: " + want +
                                         "\n- merged: 1 delta into base aaaaaaaaaaaa (1 files and symlinks added)\n"));
  CHECK_THAT(card_of(m), !Catch::Contains("- settled: settled"));
}
