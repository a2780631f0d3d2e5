// Where a command's machine fingerprint comes from: this machine's probe (probe/), or a fingerprint file written by
// `ccpack fingerprint --json` elsewhere (--fingerprint FILE), read bounded and checked against the contract.
#pragma once

#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"

namespace ccpack::cli {

// A fingerprint file (`ccpack fingerprint --json` output; a pipe too) as text, at most 1 MiB; Error naming the file
// otherwise.
[[nodiscard]] std::string read_fingerprint_file(const std::string& path);
// The one reader of fingerprint files (--fingerprint of check, restore and pull, and of import): the file's text
// without its "ok" report marker, checked against the contract (manifest/fingerprint.hpp) so nothing records or
// compares a fingerprint its readers refuse. A local input, not an archive: every refusal is an Error (exit 1)
// naming the file.
[[nodiscard]] manifest::Fingerprint fingerprint_from_file(const std::string& path);

// This machine's fingerprint; `memo_status`, when given, says whether the python probe's memo was used.
[[nodiscard]] manifest::Fingerprint probe_local(const std::string& python, const std::vector<manifest::CacheDir>& dirs,
                                                std::string* memo_status = nullptr);

}  // namespace ccpack::cli
