// The report of a purge and the lock-wait line, shared by `ccpack purge` and `restore --on-mismatch=purge`.
#pragma once

#include "cli/cli.hpp"
#include "unpack/purge.hpp"

namespace ccpack::cli {

// {"removed": [{component, path, rule, reason, folder, files, bytes}], "removed_files", "removed_bytes",
//  "kept_files", "unjudged", "unjudged_examples": [{path, reason}], "truncated"}
[[nodiscard]] ojson purge_json(const unpack::PurgeReport& r);
// One line per removed entry and a summary, through the Reporter ("would remove" with dry_run).
void say_purge(const Reporter& out, const unpack::PurgeReport& r, bool dry_run);
// The line said when a restore or purge waits for the lock of `folder` (unpack/folder_lock.hpp); `how_long` says
// for how long it waits.
[[nodiscard]] std::string lock_wait_message(const std::filesystem::path& folder, const std::string& how_long);

}  // namespace ccpack::cli
