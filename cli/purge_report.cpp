// The report of a purge and the lock-wait line; see purge_report.hpp.
#include "cli/purge_report.hpp"

#include <string>

#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

ojson purge_json(const unpack::PurgeReport& r) {
  ojson removed = ojson::array();
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  for (const unpack::PurgedEntry& e : r.removed) {
    removed.push_back({{"component", e.component},
                       {"path", e.path.string()},
                       {"rule", unpack::to_string(e.rule)},
                       {"reason", e.reason},
                       {"folder", e.folder},
                       {"files", e.files},
                       {"bytes", e.bytes}});
    files += e.files;
    bytes += e.bytes;
  }
  ojson unjudged = ojson::array();
  for (const unpack::UnjudgedEntry& u : r.unjudged_examples)
    unjudged.push_back({{"path", u.path.string()}, {"reason", u.reason}});
  return {{"removed", removed},     {"removed_files", files},        {"removed_bytes", bytes},  {"kept_files", r.kept_files},
          {"unjudged", r.unjudged}, {"unjudged_examples", unjudged}, {"truncated", r.truncated}};
}

void say_purge(const Reporter& out, const unpack::PurgeReport& r, bool dry_run) {
  std::uint64_t files = 0;
  std::uint64_t bytes = 0;
  for (const unpack::PurgedEntry& e : r.removed) {
    out.say(std::string(dry_run ? "would remove " : "removed ") + quoted_path(e.path) + " [" + unpack::to_string(e.rule) +
            "]: " + e.reason);
    files += e.files;
    bytes += e.bytes;
  }
  out.say(std::string(dry_run ? "would remove " : "removed ") + std::to_string(r.removed.size()) + " entries (" +
          std::to_string(files) + " files, " + mb(bytes) + "); kept " + std::to_string(r.kept_files) + " files; " +
          std::to_string(r.unjudged) + " entries could not be judged and were kept" +
          (dry_run ? " (dry run: nothing removed)" : ""));
  for (const unpack::UnjudgedEntry& u : r.unjudged_examples)
    out.say("  kept, not judged: " + quoted_path(u.path) + ": " + u.reason);
  if (r.truncated) out.warn("stopped after " + std::to_string(unpack::kMaxPurgeEntries) + " entries: the rest was not looked at");
}

std::string lock_wait_message(const fs::path& folder, const std::string& how_long) {
  return "waiting for the lock of " + quoted_path(folder) + ": another ccpack restore or purge of its cache folders holds it (" +
         how_long + ")";
}

}  // namespace ccpack::cli
