// Writes hostile .ccpack archives for tests/cli/suites/hostile_test.sh: `ccpack_craft SCENARIO OUT`.
//
// Each scenario is a complete archive whose tar stream, frame and hashes are all consistent with its manifest
// (cli/helpers/archive_builder.hpp), so that the only thing wrong is the hostile part: a reader
// that misses it goes on to restore it. Some scenarios then edit the manifest text (duplicate keys, deep nesting)
// or the header (sizes that overflow) after it is serialised. The list of scenarios is `kScenarios` below.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <string>

#include "cli/helpers/archive_builder.hpp"

using namespace ccpack;
using namespace ccpack::manifest;

namespace {

struct Spec {
  std::vector<Entry> entries;                                 // component "inductor" only; the root folder is added first
  std::map<std::string, std::string> content;                 // file path -> bytes
  std::function<void(std::string&)> edit_manifest = nullptr;  // on the serialised manifest
  std::function<void(Manifest&, std::uint64_t)> edit_frames = nullptr;  // gets the real compressed size
  std::function<void(ArchiveHeader&)> edit_header = nullptr;
};

Entry dir(std::string path) { return {std::move(path), EntryType::dir, 0755, 0, {}, {}, 0}; }
Entry link(std::string path, std::string target) {
  return {std::move(path), EntryType::symlink, 0777, 0, {}, std::move(target), 0};
}
Entry file(Spec& s, std::string path, std::string bytes, std::uint32_t mode = 0644) {
  Entry e{path, EntryType::file, mode, bytes.size(), Sha256::of(bytes), {}, 0};
  s.content[path] = std::move(bytes);
  return e;
}

// `ccpack_craft SCENARIO OUT BASE_DIGEST FINGERPRINT_FILE`: the scenario as a delta of that base, made for that
// fingerprint (tests/cli/suites/converge_test.sh), so that merge's delta gate lets it through to the reader's checks.
std::optional<DeltaRecord> g_delta;
Fingerprint g_fingerprint;

std::string build(Spec s) {
  s.entries.insert(s.entries.begin(), dir("inductor"));
  test::BuiltArchive a = test::build_archive({{"inductor", ComponentKind::inductor, "/crafted", 0, 0}}, s.entries, s.content);
  a.manifest.delta = g_delta;
  if (g_delta) a.manifest.fingerprint = g_fingerprint;
  if (s.edit_frames) s.edit_frames(a.manifest, a.payload.size());
  ArchiveHeader h;
  h.manifest = a.manifest.to_json();
  if (s.edit_manifest) s.edit_manifest(h.manifest);
  h.payload_size = a.manifest.payload_size();
  if (s.edit_header) s.edit_header(h);
  return encode_header(h) + a.payload;
}

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("craft: '" + from + "' not in the manifest");
  text.replace(at, from.size(), to);
}

const std::map<std::string, std::function<std::string()>> kScenarios = {
    // A well-formed archive with a file and a link, to prove the crafter itself makes readable archives.
    {"valid",
     [] {
       Spec s;
       s.entries = {dir("inductor/fx"), file(s, "inductor/fx/a.py", "print(1)\n"), link("inductor/alias", "fx/a.py")};
       return build(s);
     }},
    // Defect 1: l1 -> l2/.. is inside lexically, but l2 -> . is the root, so l1 is the root's parent.
    {"link-chain",
     [] {
       Spec s;
       s.entries = {link("inductor/l2", "."), link("inductor/l1", "l2/..")};
       return build(s);
     }},
    // Defect 1, deeper: sub/up -> .. is the root; sub/up/../x is outside.
    {"link-chain-deep",
     [] {
       Spec s;
       s.entries = {dir("inductor/a"), dir("inductor/a/b"), link("inductor/a/b/up", "../.."),
                    link("inductor/a/esc", "b/up/../x")};
       return build(s);
     }},
    // Two links that point at each other.
    {"link-loop",
     [] {
       Spec s;
       s.entries = {link("inductor/a", "b"), link("inductor/b", "a")};
       return build(s);
     }},
    // Defect 2: symlinkat() stops at the NUL, so the link made would be "x", not the manifest's target. Over
    // 100 bytes, so the tar stream carries it in a pax record, NUL included, and the tar check agrees.
    {"link-nul",
     [] {
       Spec s;
       s.entries = {link("inductor/l", std::string("x\0", 2) + std::string(120, 'y'))};
       return build(s);
     }},
    // Defect 3: a fingerprint nested 60,000 levels deep.
    {"deep-json",
     [] {
       Spec s;
       s.edit_manifest = [](std::string& text) {
         std::string deep;
         for (int i = 0; i < 60000; ++i) deep += "{\"a\":";
         deep += "{}";
         deep.append(60000, '}');
         replace_once(text, "\"fingerprint\":{}", "\"fingerprint\":" + deep);
       };
       return build(s);
     }},
    // Defect 4: a second "entries" key; nlohmann keeps one of the two arrays.
    {"dup-entries",
     [] {
       Spec s;
       s.edit_manifest = [](std::string& text) { replace_once(text, "\"entries\":[", "\"entries\":[],\"entries\":["); };
       return build(s);
     }},
    // Defect 4, nested: a key repeated inside an entry.
    {"dup-key-entry",
     [] {
       Spec s;
       s.entries = {dir("inductor/fx")};
       s.edit_manifest = [](std::string& text) {
         replace_once(text, "{\"path\":\"inductor/fx\"", "{\"path\":\"inductor/fx\",\"path\":\"inductor/fx\"");
       };
       return build(s);
     }},
    // Defect 6: names restore writes itself.
    {"reserved-marker",
     [] {
       Spec s;
       s.entries = {file(s, "inductor/.ccpack-marker.json", "{}")};
       return build(s);
     }},
    {"reserved-staging",
     [] {
       Spec s;
       s.entries = {dir("inductor/.x.ccpack-staging.1")};
       return build(s);
     }},
    // Defect 8: a refused path (setuid) whose name holds a newline and a forged second error line.
    {"newline-path",
     [] {
       Spec s;
       s.entries = {file(s, "inductor/evil\nccpack: error: forged line\x1b[2J", "x", 04755)};
       return build(s);
     }},
    // Defect 9: a payload size of 2^64-1 in the header.
    {"payload-max",
     [] {
       Spec s;
       s.edit_header = [](ArchiveHeader& h) { h.payload_size = UINT64_MAX; };
       return build(s);
     }},
    // Defect 9: frame sizes that wrap around 2^64 and still add up: payload and tar sizes look right.
    {"frame-overflow",
     [] {
       Spec s;
       s.edit_frames = [](Manifest& m, std::uint64_t c) {
         Frame f1{c, UINT64_MAX, UINT64_MAX, Sha256::of("x"), m.entries.size(), 0};
         Frame f2{c - 1, 1, 1, Sha256::of("y"), m.entries.size(), 0};
         m.frames.push_back(f1);
         m.frames.push_back(f2);
       };
       return build(s);
     }},
    // The payload checks, each alone (frame and tar consistent otherwise): one file's bytes differ from its
    // manifest SHA-256 while the frame's hash is right (only the per-file hash can tell) ...
    {"file-sha",
     [] {
       Spec s;
       s.entries = {file(s, "inductor/a.py", "print(1)\n")};
       s.content["inductor/a.py"] = "print(2)\n";
       return build(s);
     }},
    // ... the frame's recorded SHA-256 is not its bytes' (every file in it intact) ...
    {"frame-sha",
     [] {
       Spec s;
       s.entries = {file(s, "inductor/a.py", "print(1)\n")};
       s.edit_frames = [](Manifest& m, std::uint64_t) { m.frames[0].sha256 = Sha256::of("another frame"); };
       return build(s);
     }},
    // ... and a tar header that disagrees with its manifest entry: its name, its size, its type.
    {"tar-name",
     [] {
       Spec s;
       s.entries = {file(s, "inductor/a.py", "print(1)\n")};
       s.edit_frames = [](Manifest& m, std::uint64_t) { m.entries[1].path = "inductor/b.py"; };
       return build(s);
     }},
    {"tar-size",
     [] {
       Spec s;
       s.entries = {file(s, "inductor/a.py", "print(1)\n")};
       s.edit_frames = [](Manifest& m, std::uint64_t) {
         m.entries[1].size = 8;
         m.entries[1].sha256 = Sha256::of("print(1)");
         m.components[0].bytes = 8;
       };
       return build(s);
     }},
    {"tar-type",
     [] {
       Spec s;
       s.entries = {dir("inductor/d")};
       s.edit_frames = [](Manifest& m, std::uint64_t) { m.entries[1] = link("inductor/d", "."); };
       return build(s);
     }},
};

}  // namespace

int main(int argc, char** argv) {
  if ((argc != 3 && argc != 5) || kScenarios.count(argv[1]) == 0) {
    std::fprintf(stderr, "usage: ccpack_craft SCENARIO OUT [BASE_DIGEST FINGERPRINT_FILE]; scenarios:");
    for (const auto& [name, make] : kScenarios) std::fprintf(stderr, " %s", name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  if (argc == 5) {
    g_delta = DeltaRecord{argv[3]};
    std::ifstream fp(argv[4], std::ios::binary);
    g_fingerprint = Fingerprint::from_json(std::string(std::istreambuf_iterator<char>(fp), {}));
  }
  std::string bytes = kScenarios.at(argv[1])();
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return out ? 0 : 1;
}
