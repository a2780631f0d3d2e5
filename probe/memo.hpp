// The probe memo: what an interpreter and ptxas said last time, reused while the files they read are unchanged.
// Why: on a GPU host with torch installed, starting Python to read sys.path costs ~100 ms, most of a no-op restore,
// and the answer changes only when the interpreter, its environment or its start-up files change. How: the
// interpreter's report (python.cpp) and ptxas's version are kept under a key of every input that could change them,
// checked with stat() as ccache's direct mode does (the inputs and the file's rules: ProbeMemo below). The
// distributions and torch/version.py are read again on every probe, never memoised.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "manifest/cache_dir.hpp"
#include "manifest/fingerprint.hpp"

namespace ccpack::probe {

// The contract's types the probes fill in.
using manifest::CacheDir;
using manifest::Fingerprint;
namespace field = manifest::field;

inline constexpr std::size_t kMaxMemoEntries = 16;
inline constexpr std::size_t kMaxMemoBytes = 1 << 20;
inline constexpr std::uint64_t kMaxShimBytes = 64 << 10;  // a larger script is a program, not a shim

// What identifies a file's content without reading it.
struct FileId {
  std::uint64_t dev = 0, ino = 0, size = 0;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileId&) const = default;
};
// stat() (links followed); nullopt when it does not exist or cannot be read.
[[nodiscard]] std::optional<FileId> file_id(const std::string& path);
// At most `limit` bytes from the start of `path` (open + pread_full); nullopt when it cannot be opened or read.
[[nodiscard]] std::optional<std::string> read_prefix(const std::string& path, std::size_t limit);

struct StartupFile {
  std::string path;
  FileId id;
  bool operator==(const StartupFile&) const = default;
};

// What only the interpreter can say (the python probe's script prints it).
struct InterpreterReport {
  std::string version, abi, executable;
  std::vector<std::string> path;             // sys.path without the script's '' entry
  std::vector<std::string> site_candidates;  // the site folders `site` adds when they exist (with the user's)
  bool operator==(const InterpreterReport&) const = default;
};

// The memo's key, all checked with stat():
//   - the program, identified by its real path, device, inode, size and mtime. An ELF executable is the
//     interpreter itself. A small script (#!) is taken for a version manager's shim (pyenv, asdf), which chooses
//     the interpreter by variables and version files: its key adds PATH, every PYENV*/ASDF_* variable and the
//     .python-version/.tool-versions files from the current folder up (and pyenv's global version file), and its
//     entry holds only while the ELF interpreter it ran then (sys.executable) is the same file. A wrapper that
//     chooses by anything else needs --python at the real interpreter or CCPACK_PROBE_CACHE=off;
//   - the interpreter's environment: every PYTHON* variable, HOME, the pyvenv.cfg files beside and above it, and
//     the current folder when PYTHONPATH holds a relative entry;
//   - which of the site folders `site` would add exist (a new site-packages changes sys.path);
//   - the start-up files in the sys.path folders, in every form Python loads them (*.pth; sitecustomize and
//     usercustomize as .py, sourceless .pyc, extension modules such as .so or .cpython-312-x86_64-linux-gnu.so,
//     packages as folders, with the files of such a folder; their compiled forms in __pycache__): the same set
//     with the same stat.
// NVML's GPU fields are kept under gpu_memo_key (probe.hpp): the driver's version file, the GPUs it holds, the
// container's GPU device nodes and the device-choosing variables; without a driver, the answer "no GPU" (NVML's
// library missing, no nvidia-smi, no KFD node) under the key of what could change it.
// The file: $CCPACK_PROBE_CACHE ("off" disables it), else $XDG_CACHE_HOME/ccpack/probe-memo.json, else
// ~/.cache/ccpack/probe-memo.json; written atomically, mode 0600, at most kMaxMemoEntries of each kind. A missing,
// unreadable, oversized or malformed memo is an empty one, and so is one that is not a regular file (opened
// O_NONBLOCK|O_NOFOLLOW: a FIFO never blocks), not owned by this user or writable by group or others; a failure
// to write it is ignored (it is only a cache).
class ProbeMemo {
 public:
  // The memo file the environment names (see the class comment); nullopt when disabled or there is no home.
  [[nodiscard]] static std::optional<std::filesystem::path> default_file();

  // Loads `file` (nullopt: a memo that is never read nor written).
  explicit ProbeMemo(std::optional<std::filesystem::path> file);

  // The key of an interpreter, or nullopt with `why` set when its report cannot be memoised.
  [[nodiscard]] std::optional<nlohmann::json> interpreter_key(const std::string& python, std::string& why) const;
  // The memoised report for `key`, when the site folders that exist are still the same ones.
  [[nodiscard]] std::optional<InterpreterReport> python(const nlohmann::json& key) const;
  // True when the start-up files found now are those recorded with `key`.
  [[nodiscard]] bool startup_unchanged(const nlohmann::json& key, const std::vector<StartupFile>& now) const;
  // Records `report` for `key`; returns why it was not ("" when it was): an ELF program's report must come from
  // that program (sys.executable), a shim's from an ELF interpreter, and both must name their site folders.
  std::string put_python(const nlohmann::json& key, const InterpreterReport& report, const std::vector<StartupFile>& startup);

  // ptxas's version for the program at `path`, when it is the same ELF file as when it was recorded.
  [[nodiscard]] std::optional<std::string> ptxas(const std::string& path) const;
  void put_ptxas(const std::string& path, const std::string& version);

  // The GPU fields NVML gave under `key` (probe.hpp gpu_memo_key), when recorded. put_gpu records `fp`'s gpu.*
  // fields, only when they came from NVML and name at least one GPU (nvidia-smi and KFD answers are not kept).
  [[nodiscard]] std::optional<Fingerprint> gpu(const nlohmann::json& key) const;
  void put_gpu(const nlohmann::json& key, const Fingerprint& fp);

  // Writes the memo when something was put; errors are ignored.
  void save() const;

  [[nodiscard]] bool enabled() const { return file_.has_value(); }
  [[nodiscard]] const std::optional<std::filesystem::path>& file() const { return file_; }

  // How the last python probe went, for `ccpack fingerprint --json`: "hit", "miss", "off" or "not memoised: ...".
  std::string python_status = "off";

 private:
  std::optional<std::filesystem::path> file_;
  nlohmann::json python_ = nlohmann::json::array();  // [{key, report, exists, startup}], most recent first
  nlohmann::json ptxas_ = nlohmann::json::array();   // [{path, id, version}]
  nlohmann::json gpu_ = nlohmann::json::array();     // [{key, fields: {name: [value or null, source]}}]
  bool dirty_ = false;
};

}  // namespace ccpack::probe
