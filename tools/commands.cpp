#include "tools/commands.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "pack/packer.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "unpack/installer.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::tools {
namespace fs = std::filesystem;
using ojson = nlohmann::ordered_json;

namespace {

std::string mb(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

void say(const CommonOptions& c, const std::string& line) {
  if (!c.quiet && !c.json) std::fprintf(stderr, "ccpack: %s\n", line.c_str());
}

void print_json(const ojson& j) { std::printf("%s\n", j.dump(2).c_str()); }

struct Level {
  int level;
  int window_log;
};

Level parse_level(const std::string& text) {
  if (text == "default") return {1, 27};
  if (text == "max") return {19, 27};
  try {
    std::size_t used = 0;
    int n = std::stoi(text, &used);
    if (used == text.size() && n >= 1 && n <= 19) return {n, 27};
  } catch (const std::exception&) {
  }
  throw UsageError("--level must be 'default', 'max' or a zstd level 1-19, got '" + text + "'");
}

bool path_exists(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

int run_create(const CreateOptions& o) {
  Level level = parse_level(o.level);
  std::vector<manifest::CacheDir> dirs;
  std::vector<std::string> looked;
  for (manifest::CacheDir& d : manifest::resolve_cache_dirs(o.dirs)) {
    if (d.origin == "default" && !path_exists(d.dir)) {
      looked.push_back(d.name + " " + quoted_path(d.dir));
      continue;  // a default location that is absent is simply not packed
    }
    dirs.push_back(std::move(d));
  }
  if (dirs.empty()) {
    std::string where;
    for (const std::string& l : looked) where += (where.empty() ? "" : ", ") + l;
    throw Error("no cache folder found (looked at " + where +
                "); set TORCHINDUCTOR_CACHE_DIR / TRITON_CACHE_DIR or pass --inductor-dir / --triton-dir");
  }
  for (const manifest::CacheDir& d : dirs) {
    if (!path_exists(d.dir))
      throw Error(d.name + " cache folder " + quoted_path(d.dir) + " (from " + d.origin + ") does not exist");
  }
  pack::PackOptions po;
  po.level = level.level;
  po.window_log = level.window_log;
  po.jobs = o.common.jobs;
  po.progress = !o.common.quiet && !o.common.json;
  pack::PackResult r = pack::create_archive(dirs, o.output, po);

  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  for (const manifest::Component& c : r.manifest.components) {
    files += c.files;
    bytes += c.bytes;
  }
  if (o.common.json) {
    ojson comps = ojson::array();
    for (const manifest::Component& c : r.manifest.components) {
      comps.push_back({{"name", c.name}, {"source", c.source}, {"files", c.files}, {"bytes", c.bytes}});
    }
    print_json({{"ok", true},
                {"archive", o.output.string()},
                {"archive_bytes", r.archive_size},
                {"files", files},
                {"bytes", bytes},
                {"frames", r.manifest.frames.size()},
                {"components", comps},
                {"skipped", r.skipped}});
    return 0;
  }
  for (const std::string& l : looked) say(o.common, "note: no " + l + " folder, not packed");
  if (!r.skipped.empty()) {
    std::string list;
    for (std::size_t i = 0; i < r.skipped.size() && i < 5; ++i) list += (i ? ", " : "") + r.skipped[i];
    if (r.skipped.size() > 5) list += ", ...";
    say(o.common, "skipped " + std::to_string(r.skipped.size()) + " transient entries: " + list);
  }
  std::string from;
  for (const manifest::Component& c : r.manifest.components)
    from += (from.empty() ? "" : ", ") + c.name + " " + quoted_path(c.source);
  say(o.common, "packed " + std::to_string(files) + " files (" + mb(bytes) + ") from " + from + " into " + quoted_path(o.output) +
                    " (" + mb(r.archive_size) + ")");
  return 0;
}

int run_restore(const RestoreOptions& o) {
  unpack::Archive a = unpack::Archive::open(o.archive);
  std::vector<manifest::CacheDir> dirs = manifest::resolve_cache_dirs(o.dirs);
  unpack::RestoreReport r =
      unpack::restore(a, dirs, unpack::RestoreOptions{o.common.jobs, !o.common.quiet && !o.common.json, o.durable});
  auto status = [](const unpack::ComponentOutcome& c) -> std::string {
    switch (c.status) {
      case unpack::ComponentOutcome::Status::restored:
        return "restored";
      case unpack::ComponentOutcome::Status::already:
        return "already restored";
      case unpack::ComponentOutcome::Status::skipped:
        return "skipped";
    }
    return "?";
  };
  if (o.common.json) {
    ojson comps = ojson::array();
    for (const auto& c : r.components) {
      comps.push_back({{"name", c.name},
                       {"dir", c.dir.string()},
                       {"status", status(c)},
                       {"reason", c.reason},
                       {"files", c.files},
                       {"bytes", c.bytes}});
    }
    print_json({{"ok", true}, {"archive", o.archive.string()}, {"noop", r.noop()}, {"components", comps}});
    return 0;
  }
  for (const auto& c : r.components) {
    std::string line = c.name + ": " + status(c);
    if (!c.dir.empty()) line += " " + quoted_path(c.dir);
    if (c.status == unpack::ComponentOutcome::Status::restored)
      line += " (" + std::to_string(c.files) + " files, " + mb(c.bytes) + ")";
    if (!c.reason.empty()) line += ": " + c.reason;
    say(o.common, line);
  }
  return 0;
}

int run_verify(const VerifyOptions& o) {
  unpack::Archive a = unpack::Archive::open(o.archive);
  unpack::ExtractStats s = unpack::extract(a, {}, unpack::ExtractOptions{o.common.jobs, !o.common.quiet && !o.common.json});
  if (o.common.json) {
    print_json({{"archive", o.archive.string()},
                {"ok", true},
                {"files", s.files},
                {"bytes", s.bytes},
                {"frames", a.manifest.frames.size()},
                {"signatures", "none (unsigned)"}});
  } else {
    say(o.common, quoted_path(o.archive) + ": OK, " + std::to_string(a.manifest.frames.size()) + " frames and " +
                      std::to_string(s.files) + " files (" + mb(s.bytes) + ") match their SHA-256");
  }
  return 0;
}

int run_inspect(const InspectOptions& o) {
  unpack::Archive a = unpack::Archive::open(o.archive);
  const manifest::Manifest& m = a.manifest;
  std::uint64_t archive_bytes = a.header.header_size + a.header.payload_size;
  if (o.common.json) {
    ojson j = ojson::parse(a.header.manifest);
    if (!o.files) j.erase("entries");
    ojson out{{"archive", o.archive.string()},
              {"archive_bytes", archive_bytes},
              {"format_version", a.header.version},
              {"manifest_sha256", to_hex(a.manifest_digest)},
              {"signatures", ojson::parse(a.header.signatures)},
              {"manifest", j}};
    print_json(out);
    return 0;
  }
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  for (const auto& c : m.components) {
    files += c.files;
    bytes += c.bytes;
  }
  std::printf("archive      %s\n", o.archive.string().c_str());
  std::printf("format       ccpack v%u, created by %s\n", a.header.version, m.created_by.c_str());
  std::printf("manifest     sha256:%s\n", to_hex(a.manifest_digest).c_str());
  std::printf("compression  zstd level %d, window 2^%d, %zu frame(s)\n", m.compression.level, m.compression.window_log,
              m.frames.size());
  std::printf("size         %s packed, %s of files (%zu files), ratio %.1fx\n", mb(archive_bytes).c_str(), mb(bytes).c_str(),
              static_cast<std::size_t>(files),
              archive_bytes ? static_cast<double>(bytes) / static_cast<double>(archive_bytes) : 0.0);
  std::printf("signatures   %s\n", a.header.signatures == "[]" ? "none (unsigned)" : a.header.signatures.c_str());
  std::printf("fingerprint  %s\n", m.fingerprint_json == "{}" ? "not recorded" : m.fingerprint_json.c_str());
  std::printf("components\n");
  for (const auto& c : m.components) {
    std::printf("  %-12s %-8s %6llu files %10s  from %s\n", c.name.c_str(), std::string(manifest::to_string(c.kind)).c_str(),
                static_cast<unsigned long long>(c.files), mb(c.bytes).c_str(), c.source.c_str());
  }
  if (o.files) {
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
  return 0;
}

}  // namespace ccpack::tools
