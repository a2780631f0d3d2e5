// Test helpers: scratch folders, environment and file trees made for a test, a tree comparison that checks bytes
// and modes, the message of an expected exception, and the real fixture.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"
#include "manifest/manifest.hpp"
#include "manifest/policy.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

namespace ccpack::test {

// A fresh folder under $TMPDIR, removed at scope exit unless CCPACK_KEEP_TEST_DIRS is set.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& rel) const { return path_ / rel; }

 private:
  std::filesystem::path path_;
};

// Sets (or unsets, with nullopt) an environment variable for the scope, then puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The message of the E that `run` throws, or `none` when it throws nothing; an exception of another type passes
// through (the test fails on it). The shorthands below are the ones the tests compare with.
template <class E>
[[nodiscard]] std::string message_of(const std::function<void()>& run, const char* none) {
  try {
    run();
  } catch (const E& e) {
    return e.what();
  }
  return none;
}
[[nodiscard]] inline std::string integrity_error(const std::function<void()>& run) {
  return message_of<IntegrityError>(run, "(no IntegrityError)");
}
[[nodiscard]] inline std::string usage_error(const std::function<void()>& run) {
  return message_of<UsageError>(run, "(no UsageError)");
}
// A ccpack Error's message (IntegrityError and UsageError are Errors too), or "(no Error)".
[[nodiscard]] inline std::string ccpack_error(const std::function<void()>& run) { return message_of<Error>(run, "(no Error)"); }
// Any std::exception's message, or "(no error)".
[[nodiscard]] inline std::string error_of(const std::function<void()>& run) {
  return message_of<std::exception>(run, "(no error)");
}

// What a call writes to standard output and standard error: `f` runs with file descriptors 1 and 2 sent to files.
struct Streams {
  std::string out;
  std::string err;
};
[[nodiscard]] Streams captured(const std::function<void()>& f);

// Limits for the probes' programs with no deadline of their own: CTest's TIMEOUT catches a hang.
inline const RunLimits kNoDeadline{std::chrono::hours(1), 1 << 20};

// How much this process's peak RSS grows, in KiB, while `work` runs in a child (fork, then ru_maxrss before and
// after, in the child): memory bounds measured apart from what the test process already holds. -1 when `work`
// throws.
[[nodiscard]] long peak_rss_growth_kib(const std::function<void()>& work);

// Runs `work` in a child as a user without privileges (as root: uid and gid 65534, so that a folder's mode bits
// hold), and returns the message of the ccpack Error it throws, "(no Error)", or "(other: WHAT)".
[[nodiscard]] std::string error_as_other_user(const std::function<void()>& work);

// Runs `work` in a child and returns what it returns, "(threw: WHAT)", or "(hung: no answer in N s)" when it has not
// answered after `seconds` (the child is killed). For calls whose failure mode is a hang (an open() of a FIFO without
// O_NONBLOCK waits for a writer forever): the test fails at once instead of holding CTest until its timeout. The bound
// is a hang detector, far above the call's time, never a speed limit.
[[nodiscard]] std::string answer_within(unsigned seconds, const std::function<std::string()>& work);

// No registry credentials from the caller's files for one scope: HOME and DOCKER_CONFIG point into an empty
// scratch folder, REGISTRY_AUTH_FILE and XDG_RUNTIME_DIR are unset.
class NoCredentials {
 public:
  NoCredentials();

 private:
  ScratchDir dir_;
};

void write_file(const std::filesystem::path& path, const std::string& content, unsigned mode = 0644);
// `n` bytes of the first `letters` lowercase letters, from a linear congruential generator seeded with `seed`: the
// same text for the same arguments, compressible but not trivially.
[[nodiscard]] std::string seeded_text(std::size_t n, unsigned seed, unsigned letters);
[[nodiscard]] std::string slurp(const std::filesystem::path& path);

// Everything under `root`: relative path -> "type mode content-or-target" (folders: "dir mode").
[[nodiscard]] std::map<std::string, std::string> snapshot(const std::filesystem::path& root);

// The two standard components, Inductor and Triton, at the given folders (origin "test").
[[nodiscard]] inline std::vector<manifest::CacheDir> dirs_of(const std::filesystem::path& inductor,
                                                             const std::filesystem::path& triton) {
  return {{"inductor", manifest::ComponentKind::inductor, inductor, "test"},
          {"triton", manifest::ComponentKind::triton, triton, "test"}};
}

// A fingerprint field as the probe and import tests compare it: "VALUE [SOURCE]", "<absent: WHY>", or "<missing>".
[[nodiscard]] inline std::string field_text(const manifest::Fingerprint& fp, std::string_view name) {
  const manifest::FieldValue* v = fp.get(name);
  if (!v) return "<missing>";
  return v->value ? *v->value + " [" + v->source + "]" : "<absent: " + v->source + ">";
}

// Builders that more than one test file uses; a builder one file alone uses stays in that file, under a name of
// its own (the tests of a folder compile as one unit, tests/CMakeLists.txt).

// Entries as pack writes them: a folder 0755, a file 0644 (or `mode`) with its size and SHA-256, a symlink 0777.
[[nodiscard]] manifest::Entry dir_entry(const std::string& path);
[[nodiscard]] manifest::Entry file_entry(const std::string& path, const std::string& bytes, std::uint32_t mode = 0644);
[[nodiscard]] manifest::Entry link_entry(const std::string& path, const std::string& target);

// A valid manifest: Inductor (a folder tree with a 5-byte file and a symlink to it) and an empty Triton folder, one
// frame over all five entries.
[[nodiscard]] manifest::Manifest sample_manifest();
// A valid manifest of one Triton folder holding a 5-byte file, one frame over both entries.
[[nodiscard]] manifest::Manifest triton_manifest();

// `text` with the first `from` replaced by `to`; a test failure when `text` holds no `from`.
[[nodiscard]] std::string replaced(std::string text, const std::string& from, const std::string& to);

// The row of field `name` in a comparison; a test failure when there is none.
[[nodiscard]] const manifest::ComparisonRow& row_of(const manifest::Comparison& c, std::string_view name);

// Flips the bits of `mask` in the byte at `offset` of the file at `path`.
void flip_byte(const std::filesystem::path& path, std::uint64_t offset, unsigned char mask);

// The real fixture's archive: $CCPACK_FIXTURE when set, else ../shared/fixtures/real-cache-h200.tar.xz.
[[nodiscard]] std::filesystem::path fixture_archive();

// A test that cannot run here (a fixture or a property of this machine is missing) and is tagged [fixture] or
// [host] for it: with CCPACK_REQUIRE_FIXTURES=1 (CI, which has them all) that is a failure; under CTest (which sets
// CCPACK_FIXTURE_SKIP_CODE for those tags, tests/CMakeLists.txt) the process exits with that code, which CTest
// reports as skipped; run by hand, a failure that says how to leave them out (`~[fixture]~[host]`). Never a pass.
[[noreturn]] void cannot_run(const std::string& why);

// The real fixture unpacked (once, into a shared folder); cannot_run when the archive is absent. A failing unpack
// (xz or tar) is a test failure.
[[nodiscard]] std::filesystem::path real_fixture();

}  // namespace ccpack::test
