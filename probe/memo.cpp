// The probe memo (see memo.hpp): keys built from stat(), a bounded JSON file, written atomically.
#include "probe/memo.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "manifest/json_guard.hpp"
#include "probe/probe.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

extern char** environ;

namespace ccpack::probe {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr int kMemoSchema = 1;

json id_json(const std::optional<FileId>& id) {
  if (!id) return nullptr;
  return json::array({id->dev, id->ino, id->size, id->mtime_ns});
}

std::optional<FileId> id_from(const json& j) {
  if (!j.is_array() || j.size() != 4 || !j[0].is_number_unsigned() || !j[1].is_number_unsigned() || !j[2].is_number_unsigned() ||
      !j[3].is_number_integer()) {
    return std::nullopt;
  }
  return FileId{j[0].get<std::uint64_t>(), j[1].get<std::uint64_t>(), j[2].get<std::uint64_t>(), j[3].get<std::int64_t>()};
}

// argv[0] as exec would find it: a name without '/' is searched on PATH.
std::optional<std::string> resolve_program(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    std::string_view dir = dirs.substr(0, dirs.find(':'));
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (dir.size() == dirs.size()) return std::nullopt;
    dirs.remove_prefix(dir.size() + 1);
  }
}

bool is_elf(const std::string& path) {
  return read_prefix(path, 4) == std::optional<std::string>(std::string("\x7f"
                                                                        "ELF"));
}

// An ELF program as exec finds it: the path found, its real path and its identity.
struct ElfIdentity {
  std::string found, real;
  FileId id;
};

// A program as exec finds it, ELF or not; nullopt when it is not found.
std::optional<ElfIdentity> program_identity(const std::string& program) {
  auto resolved = resolve_program(program);
  std::error_code ec;
  fs::path real = resolved ? fs::canonical(*resolved, ec) : fs::path();
  std::optional<FileId> id = resolved && !ec ? file_id(real.string()) : std::nullopt;
  if (!id) return std::nullopt;
  return ElfIdentity{*resolved, real.string(), *id};
}

// nullopt with `why` when the program is not found or not an ELF file.
std::optional<ElfIdentity> elf_identity(const std::string& program, std::string& why) {
  auto identity = program_identity(program);
  if (!identity) {
    why = "not found";
    return std::nullopt;
  }
  if (!is_elf(identity->real)) {
    why = "not an ELF executable";
    return std::nullopt;
  }
  return identity;
}

// A script that starts with "#!" and is small: a version manager's shim (pyenv, asdf) or a wrapper.
bool is_shim(const std::string& path) {
  std::optional<FileId> id = file_id(path);
  return id && id->size <= kMaxShimBytes && read_prefix(path, 2) == std::optional<std::string>("#!");
}

// What a version-manager shim chooses its interpreter by: the variables (PATH, PYENV_*, ASDF_*) and the version
// files (.python-version and .tool-versions in the current folder and every folder above it, pyenv's global
// version file), each file by its identity (absent ones are left out).
json chooser_key() {
  json vars = json::object();
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string_view name = kv.substr(0, kv.find('='));
    if (name == "PATH" || name.starts_with("PYENV") || name.starts_with("ASDF_"))
      vars[std::string(name)] = std::string(kv.substr(name.size() + 1));
  }
  json files = json::array();
  auto add = [&files](const fs::path& f) {
    if (std::optional<FileId> id = file_id(f.string())) files.push_back({f.string(), id_json(id)});
  };
  std::error_code ec;
  fs::path dir = fs::current_path(ec);
  for (; !ec && !dir.empty(); dir = dir.parent_path()) {
    add(dir / ".python-version");
    add(dir / ".tool-versions");
    if (dir == dir.parent_path()) break;
  }
  const char* root = std::getenv("PYENV_ROOT");
  const char* home = std::getenv("HOME");
  if (root && *root)
    add(fs::path(root) / "version");
  else if (home && *home)
    add(fs::path(home) / ".pyenv/version");
  return {{"vars", vars}, {"files", files}};
}

// The interpreter a shim ran (its sys.executable): an ELF program, its identity and its pyvenv.cfg files.
std::optional<json> resolved_json(const std::string& executable) {
  std::string why;
  auto identity = elf_identity(executable, why);
  if (!identity || executable.empty() || executable.front() != '/') return std::nullopt;
  fs::path dir = fs::path(executable).parent_path();
  return json{{"real", identity->real},
              {"id", id_json(identity->id)},
              {"pyvenv", json::array({id_json(file_id((dir / "pyvenv.cfg").string())),
                                      id_json(file_id((dir.parent_path() / "pyvenv.cfg").string()))})}};
}

json environment_key() {
  json env = json::object();
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string_view name = kv.substr(0, kv.find('='));
    if (name.starts_with("PYTHON") || name == "HOME") env[std::string(name)] = std::string(kv.substr(name.size() + 1));
  }
  return env;
}

bool has_relative_pythonpath() {
  const char* pp = std::getenv("PYTHONPATH");
  std::string_view rest = pp ? pp : "";
  while (!rest.empty()) {
    std::string_view entry = rest.substr(0, rest.find(':'));
    if (!entry.empty() && entry.front() != '/') return true;
    rest.remove_prefix(std::min(rest.size(), entry.size() + 1));
  }
  return false;
}

json exists_list(const std::vector<std::string>& dirs) {
  json out = json::array();
  for (const std::string& d : dirs) {
    struct stat st {};
    out.push_back(::stat(d.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
  }
  return out;
}

json startup_json(const std::vector<StartupFile>& files) {
  json out = json::array();
  for (const StartupFile& f : files) out.push_back({f.path, id_json(f.id)});
  return out;
}

json report_json(const InterpreterReport& r) {
  return {{"version", r.version}, {"abi", r.abi}, {"executable", r.executable}, {"path", r.path}, {"site", r.site_candidates}};
}

std::optional<InterpreterReport> report_from(const json& j) {
  try {
    InterpreterReport r;
    r.version = j.at("version").get<std::string>();
    r.abi = j.at("abi").get<std::string>();
    r.executable = j.at("executable").get<std::string>();
    r.path = j.at("path").get<std::vector<std::string>>();
    r.site_candidates = j.at("site").get<std::vector<std::string>>();
    return r;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

const json* find_by(const json& list, const char* field, const json& value) {
  for (const json& e : list) {
    if (e.is_object() && e.contains(field) && e[field] == value) return &e;
  }
  return nullptr;
}

// Puts `entry` first, dropping an older one with the same `field` and the oldest past the bound.
void put_first(json& list, const char* field, json entry) {
  json kept = json::array({std::move(entry)});
  for (json& e : list) {
    if (kept.size() >= kMaxMemoEntries) break;
    if (e.is_object() && e.contains(field) && e[field] != kept[0][field]) kept.push_back(std::move(e));
  }
  list = std::move(kept);
}

// The memo's text, or nullopt when it must not be trusted or read: it is opened without following a link and
// without blocking (a FIFO at its path must not hang fingerprint, check or restore), and read only when fstat says
// it is a regular file of at most kMaxMemoBytes, owned by this user and writable by no one else (as key files are
// checked): another user's memo could vouch for another torch, another CUDA.
std::optional<std::string> read_memo(const fs::path& file) {
  // defence: memo-nonblocking-open
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return std::nullopt;
  if (!S_ISREG(st.st_mode) || static_cast<std::uint64_t>(st.st_size) > kMaxMemoBytes) return std::nullopt;
  // defence: memo-owner
  if (st.st_uid != ::geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) return std::nullopt;
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  try {
    text.resize(pread_full(fd.get(), text.data(), text.size(), 0, file.string()));
  } catch (const Error&) {
    return std::nullopt;
  }
  return text;
}

// Under a no-driver key (gpu_key.cpp): no nvidia-smi on PATH and no KFD node, so nothing could have answered.
bool no_other_gpu_source(const json& key) {
  const json smi = key.value("smi", json::array());
  return smi.is_array() && std::all_of(smi.begin(), smi.end(), [](const json& s) { return s.is_null(); }) &&
         key.value("kfd_nodes", json::array()).empty();
}

}  // namespace

std::optional<FileId> file_id(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino),
                static_cast<std::uint64_t>(st.st_size),
                static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

std::optional<std::string> read_prefix(const std::string& path, std::size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return std::nullopt;
  // A regular file's size (plus one, to see it grow) when under the limit: no zeroing of a 1 MiB bound for a
  // memo of a few KiB on every no-op restore.
  if (S_ISREG(st.st_mode)) limit = std::min<std::size_t>(limit, static_cast<std::size_t>(st.st_size) + 1);
  std::string text(limit, '\0');
  try {
    text.resize(pread_full(fd.get(), text.data(), text.size(), 0, path));
  } catch (const Error&) {
    return std::nullopt;
  }
  return text;
}

std::optional<fs::path> ProbeMemo::default_file() {
  if (const char* v = std::getenv("CCPACK_PROBE_CACHE"); v != nullptr) {
    std::string_view s(v);
    if (s.empty() || s == "off" || s == "0") return std::nullopt;
    return fs::path(s);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg == '/') return fs::path(xdg) / "ccpack/probe-memo.json";
  if (const char* home = std::getenv("HOME"); home && *home == '/') return fs::path(home) / ".cache/ccpack/probe-memo.json";
  return std::nullopt;
}

ProbeMemo::ProbeMemo(std::optional<fs::path> file) : file_(std::move(file)) {
  if (!file_) return;
  std::optional<std::string> text = read_memo(*file_);
  if (!text) return;
  try {
    json j = manifest::parse_untrusted<json>(*text, "probe memo");
    if (j.value("schema", 0) != kMemoSchema) return;
    if (j.contains("python") && j["python"].is_array()) python_ = std::move(j["python"]);
    if (j.contains("ptxas") && j["ptxas"].is_array()) ptxas_ = std::move(j["ptxas"]);
    if (j.contains("gpu") && j["gpu"].is_array()) gpu_ = std::move(j["gpu"]);
  } catch (const std::exception&) {
    python_ = json::array();
    ptxas_ = json::array();
    gpu_ = json::array();
  }
}

std::optional<json> ProbeMemo::interpreter_key(const std::string& python, std::string& why) const {
  if (!file_) {
    why = "off";
    return std::nullopt;
  }
  auto identity = program_identity(python);
  if (!identity) {
    why = "not found";
    return std::nullopt;
  }
  json key = {{"schema", kMemoSchema}, {"program", python}, {"real", identity->real}, {"id", id_json(identity->id)}};
  if (is_elf(identity->real)) {
    fs::path dir = fs::absolute(identity->found).parent_path();
    key["pyvenv"] = json::array(
        {id_json(file_id((dir / "pyvenv.cfg").string())), id_json(file_id((dir.parent_path() / "pyvenv.cfg").string()))});
  } else if (is_shim(identity->real)) {
    key["shim"] = chooser_key();
  } else {
    why = "neither an ELF executable nor a script";
    return std::nullopt;
  }
  key["env"] = environment_key();
  if (has_relative_pythonpath()) {
    std::error_code ec;
    key["cwd"] = fs::current_path(ec).string();
  }
  return key;
}

std::optional<InterpreterReport> ProbeMemo::python(const json& key) const {
  const json* e = find_by(python_, "key", key);
  if (e == nullptr || !e->contains("report") || !e->contains("exists")) return std::nullopt;
  auto report = report_from((*e)["report"]);
  if (!report || exists_list(report->site_candidates) != (*e)["exists"]) return std::nullopt;
  // A shim's entry holds for the interpreter it chose then, while that file is the same.
  if (key.contains("shim") && (!e->contains("resolved") || resolved_json(report->executable) != (*e)["resolved"]))
    return std::nullopt;
  return report;
}

bool ProbeMemo::startup_unchanged(const json& key, const std::vector<StartupFile>& now) const {
  const json* e = find_by(python_, "key", key);
  return e != nullptr && e->contains("startup") && (*e)["startup"] == startup_json(now);
}

std::string ProbeMemo::put_python(const json& key, const InterpreterReport& report, const std::vector<StartupFile>& startup) {
  if (!file_) return "off";
  if (report.site_candidates.empty()) return "the interpreter named no site folders";
  json entry = {{"key", key},
                {"report", report_json(report)},
                {"exists", exists_list(report.site_candidates)},
                {"startup", startup_json(startup)}};
  std::error_code ec;
  if (key.contains("shim")) {
    std::optional<json> resolved = resolved_json(report.executable);
    if (!resolved) return "the script ran no ELF interpreter (sys.executable)";
    entry["resolved"] = std::move(*resolved);
  } else if (report.executable.empty() || fs::canonical(report.executable, ec).string() != key.at("real").get<std::string>()) {
    return "sys.executable is not the program run";
  }
  put_first(python_, "key", std::move(entry));
  dirty_ = true;
  return {};
}

std::optional<std::string> ProbeMemo::ptxas(const std::string& path) const {
  std::string why;
  auto identity = file_ ? elf_identity(path, why) : std::nullopt;
  if (!identity) return std::nullopt;
  const json* e = find_by(ptxas_, "path", path);
  if (e == nullptr || !e->contains("id") || id_from((*e)["id"]) != identity->id || !(*e).contains("version") ||
      !(*e)["version"].is_string()) {
    return std::nullopt;
  }
  return (*e)["version"].get<std::string>();
}

void ProbeMemo::put_ptxas(const std::string& path, const std::string& version) {
  std::string why;
  auto identity = file_ ? elf_identity(path, why) : std::nullopt;
  if (!identity) return;
  put_first(ptxas_, "path", {{"path", path}, {"id", id_json(identity->id)}, {"version", version}});
  dirty_ = true;
}

std::optional<Fingerprint> ProbeMemo::gpu(const json& key) const {
  const json* e = find_by(gpu_, "key", key);
  if (e == nullptr || !e->contains("fields") || !(*e)["fields"].is_object() || (*e)["fields"].empty()) return std::nullopt;
  Fingerprint fp;
  for (const auto& [name, v] : (*e)["fields"].items()) {
    // [value or null, source]; anything else is a memo that does not read: the probe runs.
    if (!name.starts_with("gpu.") || !v.is_array() || v.size() != 2 || !v[1].is_string() ||
        !(v[0].is_string() || v[0].is_null())) {
      return std::nullopt;
    }
    if (v[0].is_null()) {
      fp.absent(name, v[1].get<std::string>());
    } else {
      fp.set(name, v[0].get<std::string>(), v[1].get<std::string>());
    }
  }
  return fp;
}

void ProbeMemo::put_gpu(const json& key, const Fingerprint& fp) {
  const manifest::FieldValue* vendor = fp.get(field::gpu_vendor);
  const manifest::FieldValue* count = fp.get(field::gpu_count);
  if (!file_ || !count) return;
  if (key.contains("driver") && key["driver"].is_null()) {
    // No driver: only "no GPU" is kept, and only when NVML's library was missing (nothing else can answer
    // without one of the key's inputs changing), so a GPU-less no-op restore forks no nvidia-smi.
    // defence: memo-no-gpu
    if (count->value || count->source.find(std::string(kNvmlNotLoadable) + ";") == std::string::npos || !no_other_gpu_source(key))
      return;
  } else if (!vendor || vendor->source != "nvml" || !count->value || *count->value == "0") {
    return;
  }
  json fields = json::object();
  for (const auto& [name, v] : fp.fields) {
    if (name.starts_with("gpu.")) fields[name] = json::array({v.value ? json(*v.value) : json(nullptr), v.source});
  }
  put_first(gpu_, "key", {{"key", key}, {"fields", std::move(fields)}});
  dirty_ = true;
}

void ProbeMemo::save() const {
  if (!file_ || !dirty_) return;
  try {
    std::error_code ec;
    fs::create_directories(file_->parent_path(), ec);
    std::string text = json{{"schema", kMemoSchema}, {"python", python_}, {"ptxas", ptxas_}, {"gpu", gpu_}}.dump();
    if (text.size() > kMaxMemoBytes) return;
    AtomicFile out(*file_, 0600);
    out.write(text.data(), text.size());
    out.commit(false);
  } catch (const std::exception&) {
    // Only a cache: the next probe runs the programs again.
  }
}

}  // namespace ccpack::probe
