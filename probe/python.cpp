// The Python probe (one interpreter call, or none when the probe memo vouches for it) and Triton's ptxas.
//
// The interpreter runs a short script that imports nothing beyond what Python's start-up has loaded already (not
// even json, whose `re` import costs more than the rest; it writes JSON itself, every string \u-escaped outside
// printable ASCII). It reports what only the interpreter knows: its version, the ABI tag (from the import system's
// extension suffixes, `_imp`, falling back to sysconfig's SOABI where that is not a '.cpython-*.so' suffix),
// sys.executable, sys.path as the pod's Python sees it (PYTHONPATH, .pth files and site-packages included, so no
// -I / -S / -E: those would hide exactly the packages the pod imports; only the script's own '' entry, the
// current folder, is dropped) and the site folders `site` would add if they existed. The rest is read in C++ on
// every probe (discover, probe.hpp).
#include <filesystem>
#include <nlohmann/json.hpp>

#include "manifest/field_set.hpp"
#include "manifest/json_guard.hpp"
#include "manifest/tuning_advice.hpp"
#include "probe/probe.hpp"
#include "util/escape.hpp"

namespace ccpack::probe {
using json = nlohmann::json;
namespace {

constexpr const char* kScript = R"PY(import sys, _imp
X = _imp.extension_suffixes()
a = X[0][1:-3] if X and X[0].startswith('.cpython-') and X[0].endswith('.so') else None
if a is None:
    import sysconfig
    a = sysconfig.get_config_var('SOABI')
try:
    import site
    s = list(site.getsitepackages()) + [site.getusersitepackages()]
except Exception:
    s = []
q = lambda x: 'null' if x is None else '"' + ''.join(c if ' ' <= c < '\x7f' and c not in '"\\' else '\\u%04x' % ord(c) if ord(c) < 0x10000 else '?' for c in str(x)) + '"'
sys.stdout.write('{"version": %s, "abi": %s, "executable": %s, "path": [%s], "site": [%s]}\n' % (
    q('%d.%d.%d' % sys.version_info[:3]), q(a), q(sys.executable), ', '.join(map(q, [x for x in sys.path[1:] if x])),
    ', '.join(map(q, s))))
)PY";

constexpr std::size_t kMaxText = 4096;
constexpr std::size_t kMaxSysPath = 256;

bool is_cuda_wheel(const std::string& name) {
  return name.starts_with("nvidia_") || name.starts_with("cuda_") || name.ends_with("_cu11") || name.ends_with("_cu12") ||
         name.ends_with("_cu13") || name.ends_with("_cu14");
}

void absent_python_fields(Fingerprint& fp, const std::string& why) {
  for (std::string_view f :
       {field::python_version, field::python_abi, field::python_site_packages, field::torch_version, field::torch_cuda,
        field::torch_hip, field::triton_version, field::ck4inductor_version, field::wheels_cuda}) {
    fp.absent(f, why);
  }
}

// A string of the report, bounded; nullopt when missing or not a string.
std::optional<std::string> text_of(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string()) return std::nullopt;
  std::string s = it->get<std::string>();
  if (s.empty() || s.size() > kMaxText) return std::nullopt;
  return s;
}

std::string dashed(std::string name) {
  for (char& c : name) c = c == '_' ? '-' : c;
  return name;
}

// The quoted value (or None) assigned to `name` on a line of torch/version.py; nullopt when there is none.
std::optional<std::string> assigned(std::string_view text, std::string_view name) {
  while (!text.empty()) {
    std::string_view line = text.substr(0, text.find('\n'));
    text.remove_prefix(std::min(text.size(), line.size() + 1));
    if (!line.starts_with(name) || line.size() == name.size() ||
        (line[name.size()] != ' ' && line[name.size()] != ':' && line[name.size()] != '=')) {
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view v = line.substr(eq + 1);
    while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\r')) v.remove_suffix(1);
    if (v == "None") return std::string("none");
    if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
      std::string s(v.substr(1, v.size() - 2));
      if (s.size() <= 64) return s;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

void parse_torch_version_py(std::string_view text, Fingerprint& fp) {
  // torch.__version__ is this line: it carries the local tag (2.11.0+cu130) that a wheel's dist-info may lack
  // (seen on the H200 machine: dist-info 2.11.0, torch.__version__ 2.11.0+cu130), so it wins over dist-info.
  if (auto v = assigned(text, "__version__"); v && *v != "none") fp.set(field::torch_version, *v, "torch/version.py");
  for (auto [f, name] :
       {std::pair{field::torch_cuda, std::string_view("cuda")}, std::pair{field::torch_hip, std::string_view("hip")}}) {
    if (auto v = assigned(text, name)) {
      fp.set(f, *v, "torch/version.py");
    } else {
      fp.absent(f, "torch/version.py has no readable '" + std::string(name) + "' line");
    }
  }
}

std::optional<InterpreterReport> parse_interpreter_report(std::string_view text) {
  json r;
  try {
    r = manifest::parse_untrusted<json>(text, "python probe report");
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!r.is_object()) return std::nullopt;
  InterpreterReport out;
  out.version = text_of(r, "version").value_or("");
  out.abi = text_of(r, "abi").value_or("");
  out.executable = text_of(r, "executable").value_or("");
  auto strings = [&](const char* key, std::vector<std::string>& into) {
    auto it = r.find(key);
    if (it == r.end() || !it->is_array() || it->size() > kMaxSysPath) return;
    for (const json& s : *it) {
      if (s.is_string() && !s.get<std::string>().empty() && s.get<std::string>().size() <= kMaxText)
        into.push_back(s.get<std::string>());
    }
  };
  strings("path", out.path);
  strings("site", out.site_candidates);
  return out;
}

std::string fill_python_fields(const InterpreterReport& interp, const Discovery& found, Fingerprint& fp) {
  const std::string src = "python:dist-info";
  if (!interp.version.empty()) {
    fp.set(field::python_version, interp.version, "python sys.version_info");
  } else {
    fp.absent(field::python_version, "python: no version");
  }
  if (!interp.abi.empty()) {
    fp.set(field::python_abi, interp.abi, "python sysconfig SOABI");
  } else {
    fp.absent(field::python_abi, "python: sysconfig has no SOABI");
  }
  fp.set(field::python_site_packages, manifest::join_entries(manifest::ListSyntax::comma, found.site), "python sys.path");

  auto version_of = [&](std::string_view f, std::initializer_list<const char*> names) -> std::string {
    for (const char* n : names) {
      if (auto it = found.dists.find(n); it != found.dists.end()) {
        fp.set(f, it->second.first, src + " (" + dashed(n) + ")");
        return it->second.second;
      }
    }
    fp.absent(f, "python: no " + dashed(*names.begin()) + " distribution on sys.path");
    return {};
  };
  version_of(field::torch_version, {"torch"});
  std::string triton_site = version_of(field::triton_version, {"triton", "pytorch_triton", "pytorch_triton_rocm"});
  version_of(field::ck4inductor_version, {"ck4inductor"});
  std::vector<std::string> wheels;
  for (const auto& [name, v] : found.dists) {
    if (is_cuda_wheel(name)) wheels.push_back(dashed(name) + "==" + v.first);
  }
  fp.set(field::wheels_cuda, manifest::join_entries(manifest::ListSyntax::comma, wheels), src);

  if (found.torch_version_py) {
    parse_torch_version_py(*found.torch_version_py, fp);
  } else {
    std::string why =
        found.dists.count("torch") ? "python: torch/version.py not readable" : "python: no torch distribution on sys.path";
    fp.absent(field::torch_cuda, why);
    fp.absent(field::torch_hip, why);
  }
  return triton_site;
}

std::string probe_python(Fingerprint& fp, const std::string& python, const RunLimits& limits, ProbeMemo& memo,
                         Discovery* found_out) {
  std::string why;
  std::optional<json> key = memo.interpreter_key(python, why);
  if (key) {
    if (std::optional<InterpreterReport> known = memo.python(*key)) {
      Discovery found = discover(known->path);
      if (memo.startup_unchanged(*key, found.startup)) {
        memo.python_status = "hit";
        if (found_out) *found_out = found;
        return fill_python_fields(*known, found, fp);
      }
    }
  }
  memo.python_status = key ? "miss" : why == "off" ? why : "not memoised: " + why;
  RunLimits bounded = limits;
  bounded.max_output = 256 << 10;
  RunResult r = run_program({python, "-B", "-c", kScript}, bounded);
  if (!r.ok()) {
    absent_python_fields(fp, "python '" + escaped(python, 200) + "': " + r.why(bounded));
    return {};
  }
  std::optional<InterpreterReport> interp = parse_interpreter_report(r.out);
  if (!interp) {
    absent_python_fields(fp, "python: the probe printed no JSON");
    return {};
  }
  Discovery found = discover(interp->path);
  if (found_out) *found_out = found;
  if (key) {
    if (std::string not_kept = memo.put_python(*key, *interp, found.startup); !not_kept.empty())
      memo.python_status = "not memoised: " + not_kept;
  }
  return fill_python_fields(*interp, found, fp);
}

std::string parse_ptxas_version(std::string_view out) {
  auto pos = out.find(", V");
  if (pos == std::string_view::npos) return {};
  std::string_view v = out.substr(pos + 3);
  v = v.substr(0, v.find_first_of(" \r\n"));
  if (v.empty() || v.size() > 32 || v.find_first_not_of("0123456789.") != std::string_view::npos) return {};
  return std::string(v);
}

void probe_ptxas(Fingerprint& fp, const std::string& triton_site, const RunLimits& limits, ProbeMemo& memo) {
  std::string ptxas;
  std::string from;
  if (const char* env = std::getenv("TRITON_PTXAS_PATH"); env && *env) {
    ptxas = env;
    from = manifest::kPtxasFromEnv;
  } else if (!triton_site.empty()) {
    ptxas = triton_site + "/triton/backends/nvidia/bin/ptxas";
    from = "triton's bundled ptxas";
  } else {
    fp.absent(field::ptxas_version, "ptxas: no TRITON_PTXAS_PATH and no triton distribution");
    return;
  }
  if (std::optional<std::string> known = memo.ptxas(ptxas)) {
    fp.set(field::ptxas_version, *known, "ptxas --version (" + from + ")");
    return;
  }
  RunLimits bounded = limits;
  bounded.max_output = 64 << 10;
  RunResult r = run_program({ptxas, "--version"}, bounded);
  std::string v = r.ok() ? parse_ptxas_version(r.out) : "";
  if (!v.empty()) {
    fp.set(field::ptxas_version, v, "ptxas --version (" + from + ")");
    memo.put_ptxas(ptxas, v);
  } else {
    fp.absent(field::ptxas_version,
              "ptxas '" + escaped(ptxas, 200) + "': " + (r.ok() ? "no version in its output" : r.why(bounded)));
  }
}

}  // namespace ccpack::probe
