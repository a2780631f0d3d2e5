// The fingerprint pieces `check`, `restore`, `create` and `fingerprint` share: the --python and --ignore options,
// probing this machine, and the comparison as a table or JSON. The meaning of
// a difference lives in manifest/policy.cpp; this file only presents it.
#pragma once

#include <string>
#include <vector>

#include "manifest/policy.hpp"
#include "probe/probe.hpp"
#include "cli/cli.hpp"
#include "unpack/archive.hpp"
#include "util/error.hpp"

namespace ccpack::cli {

// --python PATH (the interpreter the pod runs; default $CCPACK_PYTHON, else python3).
void add_python_option(CLI::App* cmd, std::string& python);
// --ignore FIELD (repeatable).
void add_ignore_option(CLI::App* cmd, std::vector<std::string>& ignored);
// Throws UsageError for a name that is not a fingerprint field.
void check_ignored(const std::vector<std::string>& ignored);

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

// A set-valued row's difference for --json: {"added": [...], "removed": [...], "changed": [{name, archive,
// local}]} (empty arrays when the sets are equal or a side is absent).
[[nodiscard]] ojson set_diff_json(const manifest::ComparisonRow& row);
// A differing row in words, for warnings: "archive 'a', here 'b'", or for a set-valued field its differences
// ("X==1 only in the archive; Y: 1 -> 2"), at most `max_phrases` and a count of the rest.
[[nodiscard]] std::string difference_text(const manifest::ComparisonRow& row, std::size_t max_phrases = 8);

// The comparison for --json: {"verdict", "components": [{name, kind, verdict}], "fields": [{...}]}; set-valued
// fields (and cache.targets) also carry set_diff_json's arrays.
[[nodiscard]] ojson comparison_json(const manifest::Comparison& c);

// Ends a command refused by the fingerprint: with --json the report `body` with ok:false, exit_code and error on
// standard output; always the one line "ccpack: error: <message>" on standard error. Returns exit code 3.
[[nodiscard]] int refused(const Reporter& out, ojson body, const std::string& message);
// The same for any exit code a command ends with while still reporting (status: not restored). Returns the code.
[[nodiscard]] int finish_with(const Reporter& out, ojson body, ExitCode exit_code, const std::string& message);

}  // namespace ccpack::cli
