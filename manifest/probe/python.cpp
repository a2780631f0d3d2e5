// The Python probe (one interpreter call) and Triton's ptxas.
//
// The interpreter runs a short script that imports nothing beyond what Python's start-up has loaded already (not
// even json, whose `re` import costs more than the rest; it writes JSON itself, every string \u-escaped outside
// printable ASCII, and reads the ABI tag from the import system's extension suffixes (`_imp`, loaded at start-up),
// falling back to sysconfig's SOABI where that is not a '.cpython-*.so' suffix). It walks sys.path as the pod's
// Python sees it (PYTHONPATH and site-packages included, so no -I / -S / -E: those would hide exactly
// the packages the pod imports; only the script's own '' entry, the current folder, is dropped) and reads
// distribution names and versions from the .dist-info / .egg-info folder names, the first on sys.path winning as
// it does for an import. python.site_packages lists the sys.path folders named site-packages or dist-packages and
// those holding a recorded distribution. torch/version.py comes back as text (at most 64 KiB) and is parsed here:
// torch is never imported, which would take seconds and initialise CUDA.
#include <nlohmann/json.hpp>
#include <set>

#include "manifest/probe/probe.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest::probe {
namespace {

using json = nlohmann::json;

constexpr const char* kScript = R"PY(import sys, os, _imp
X = _imp.extension_suffixes()
p = [x for x in sys.path[1:] if x]
want = lambda n: n in ('torch', 'triton', 'pytorch_triton', 'pytorch_triton_rocm', 'ck4inductor') or \
    (n.startswith(('nvidia_', 'cuda_')) and n not in ('nvidia_ml_py', 'nvidia_ml_py3')) or n[-5:-1] == '_cu1'
d = {}
for e in p:
    try:
        names = os.listdir(e)
    except OSError:
        continue
    for f in names:
        if f.endswith(('.dist-info', '.egg-info')):
            n, _, v = f.rsplit('.', 1)[0].partition('-')
            n = n.lower().replace('-', '_').replace('.', '_')
            if want(n) and n not in d:
                d[n] = [v.split('-')[0], e]
t = None
if 'torch' in d:
    try:
        with open(os.path.join(d['torch'][1], 'torch', 'version.py'), 'rb') as f:
            t = f.read(65536).decode('utf-8', 'replace')
    except OSError:
        pass
a = X[0][1:-3] if X and X[0].startswith('.cpython-') and X[0].endswith('.so') else None
if a is None:
    import sysconfig
    a = sysconfig.get_config_var('SOABI')
s = sorted({x for x in p if x.rstrip('/').endswith(('site-packages', 'dist-packages'))} | {e for v, e in d.values()})
q = lambda x: 'null' if x is None else '"' + ''.join(c if ' ' <= c < '\x7f' and c not in '"\\' else '\\u%04x' % ord(c) if ord(c) < 0x10000 else '?' for c in str(x)) + '"'
sys.stdout.write('{"version": %s, "abi": %s, "site": [%s], "dists": {%s}, "torch_version_py": %s}\n' % (
    q('%d.%d.%d' % sys.version_info[:3]), q(a), ', '.join(map(q, s)),
    ', '.join('%s: [%s, %s]' % (q(k), q(v[0]), q(v[1])) for k, v in d.items()), q(t)))
)PY";

constexpr std::size_t kMaxText = 4096;

void absent_python_fields(Fingerprint& fp, const std::string& why) {
  for (std::string_view f : {field::python_version, field::python_abi, field::python_site_packages, field::torch_version,
                             field::torch_cuda, field::torch_hip, field::triton_version, field::ck4inductor_version,
                             field::wheels_cuda}) {
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
    if (!line.starts_with(name) || line.size() == name.size() || (line[name.size()] != ' ' && line[name.size()] != ':' &&
                                                                  line[name.size()] != '=')) {
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
  for (auto [f, name] : {std::pair{field::torch_cuda, std::string_view("cuda")}, std::pair{field::torch_hip, std::string_view("hip")}}) {
    if (auto v = assigned(text, name)) {
      fp.set(f, *v, "torch/version.py");
    } else {
      fp.absent(f, "torch/version.py has no readable '" + std::string(name) + "' line");
    }
  }
}

std::string parse_python_report(std::string_view text, Fingerprint& fp) {
  json r = json::parse(text.begin(), text.end(), nullptr, false);
  if (r.is_discarded() || !r.is_object()) {
    absent_python_fields(fp, "python: the probe printed no JSON");
    return {};
  }
  const std::string src = "python:dist-info";
  auto version = text_of(r, "version");
  version ? fp.set(field::python_version, *version, "python sys.version_info") : fp.absent(field::python_version, "python: no version");
  auto abi = text_of(r, "abi");
  abi ? fp.set(field::python_abi, *abi, "python sysconfig SOABI") : fp.absent(field::python_abi, "python: sysconfig has no SOABI");
  std::string sites;
  if (auto it = r.find("site"); it != r.end() && it->is_array() && it->size() <= 64) {
    for (const json& s : *it) {
      if (s.is_string() && s.get<std::string>().size() <= kMaxText) sites += (sites.empty() ? "" : ", ") + s.get<std::string>();
    }
  }
  fp.set(field::python_site_packages, sites, "python sys.path");

  std::map<std::string, std::pair<std::string, std::string>> dists;  // name -> version, folder
  if (auto it = r.find("dists"); it != r.end() && it->is_object() && it->size() <= 1024) {
    for (const auto& [name, v] : it->items()) {
      if (name.size() <= 128 && v.is_array() && v.size() == 2 && v[0].is_string() && v[1].is_string() &&
          v[0].get<std::string>().size() <= 128 && v[1].get<std::string>().size() <= kMaxText) {
        dists[name] = {v[0].get<std::string>(), v[1].get<std::string>()};
      }
    }
  }
  auto version_of = [&](std::string_view f, std::initializer_list<const char*> names) -> std::string {
    for (const char* n : names) {
      if (auto it = dists.find(n); it != dists.end()) {
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
  std::string wheels;
  for (const auto& [name, v] : dists) {
    if (name.starts_with("nvidia_") || name.starts_with("cuda_") || name.ends_with("_cu11") || name.ends_with("_cu12") ||
        name.ends_with("_cu13") || name.ends_with("_cu14")) {
      wheels += (wheels.empty() ? "" : ", ") + dashed(name) + "==" + v.first;
    }
  }
  fp.set(field::wheels_cuda, wheels, src);

  auto tv = r.find("torch_version_py");
  if (tv != r.end() && tv->is_string()) {
    parse_torch_version_py(tv->get<std::string>(), fp);
  } else {
    std::string why = dists.count("torch") ? "python: torch/version.py not readable" : "python: no torch distribution on sys.path";
    fp.absent(field::torch_cuda, why);
    fp.absent(field::torch_hip, why);
  }
  return triton_site;
}

std::string probe_python(Fingerprint& fp, const std::string& python, const RunLimits& limits) {
  RunLimits bounded = limits;
  bounded.max_output = 256 << 10;
  RunResult r = run_program({python, "-B", "-c", kScript}, bounded);
  if (!r.ok()) {
    absent_python_fields(fp, "python '" + escaped(python, 200) + "': " + r.why(bounded));
    return {};
  }
  return parse_python_report(r.out, fp);
}

std::string parse_ptxas_version(std::string_view out) {
  auto pos = out.find(", V");
  if (pos == std::string_view::npos) return {};
  std::string_view v = out.substr(pos + 3);
  v = v.substr(0, v.find_first_of(" \r\n"));
  if (v.empty() || v.size() > 32 || v.find_first_not_of("0123456789.") != std::string_view::npos) return {};
  return std::string(v);
}

void probe_ptxas(Fingerprint& fp, const std::string& triton_site, const RunLimits& limits) {
  std::string ptxas;
  std::string from;
  if (const char* env = std::getenv("TRITON_PTXAS_PATH"); env && *env) {
    ptxas = env;
    from = "TRITON_PTXAS_PATH";
  } else if (!triton_site.empty()) {
    ptxas = triton_site + "/triton/backends/nvidia/bin/ptxas";
    from = "triton's bundled ptxas";
  } else {
    fp.absent(field::ptxas_version, "ptxas: no TRITON_PTXAS_PATH and no triton distribution");
    return;
  }
  RunLimits bounded = limits;
  bounded.max_output = 64 << 10;
  RunResult r = run_program({ptxas, "--version"}, bounded);
  std::string v = r.ok() ? parse_ptxas_version(r.out) : "";
  if (!v.empty()) {
    fp.set(field::ptxas_version, v, "ptxas --version (" + from + ")");
  } else {
    fp.absent(field::ptxas_version, "ptxas '" + escaped(ptxas, 200) + "': " + (r.ok() ? "no version in its output" : r.why(bounded)));
  }
}

}  // namespace ccpack::manifest::probe
