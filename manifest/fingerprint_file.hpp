// A fingerprint file: what `ccpack fingerprint --json` wrote on another machine (--fingerprint FILE of check,
// restore, pull and import), read bounded and checked against the contract (fingerprint.hpp), so nothing records or
// compares a fingerprint its readers refuse. A local input, not an archive: every refusal is an Error (exit 1)
// naming the file.
#pragma once

#include <string>

#include "manifest/fingerprint.hpp"

namespace ccpack::manifest {

// The file (a pipe too) as text, at most 1 MiB; Error naming the file otherwise.
[[nodiscard]] std::string read_fingerprint_file(const std::string& path);
// The one reader of fingerprint files: the file's text without its "ok" report marker, parsed as the manifest's
// fingerprint is.
[[nodiscard]] Fingerprint fingerprint_from_file(const std::string& path);

}  // namespace ccpack::manifest
