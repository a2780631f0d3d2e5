// registries.conf: the TOML subset, the files' order, and the endpoints of a pull; see mirrors.hpp.
#include "registry/mirrors.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::registry {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kMaxConfBytes = 1u << 20;  // 1 MiB; checked before the text is kept

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

struct Line {
  std::string_view what;
  std::size_t number;
  [[noreturn]] void fail(const std::string& why) const {
    throw Error(std::string(what) + ":" + std::to_string(number) + ": " + why + " (containers-registries.conf(5))");
  }
};

// A value: "basic string", 'literal string', true or false; the rest of the line may hold a comment only.
std::string parse_value(std::string_view v, const Line& at) {
  if (v == "true" || v == "false") return std::string(v);
  if (v.empty() || (v.front() != '"' && v.front() != '\'')) at.fail("expected a quoted string, true or false");
  char quote = v.front();
  std::string out;
  std::size_t i = 1;
  for (; i < v.size() && v[i] != quote; ++i) {
    if (quote == '"' && v[i] == '\\' && i + 1 < v.size()) ++i;
    out.push_back(v[i]);
  }
  if (i >= v.size()) at.fail("unterminated string");
  std::string_view rest = trim(v.substr(i + 1));
  if (!rest.empty() && rest.front() != '#') at.fail("unexpected text after the value");
  return out;
}

std::string_view strip_comment(std::string_view line) {
  bool in_string = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string && c == quote)
      in_string = false;
    else if (!in_string && (c == '"' || c == '\''))
      in_string = true, quote = c;
    else if (!in_string && c == '#')
      return line.substr(0, i);
  }
  return line;
}

void set_field(RegistryEntry* reg, MirrorEntry* mirror, std::string_view key, const std::string& value, const Line& at) {
  auto flag = [&](bool& out) {
    if (value != "true" && value != "false") at.fail(std::string(key) + " must be true or false");
    out = value == "true";
  };
  if (mirror != nullptr) {
    if (key == "location") mirror->location = value;
    if (key == "insecure") flag(mirror->insecure);
    return;
  }
  if (reg == nullptr) return;  // top-level keys (unqualified-search-registries, ...) are not ours
  if (key == "prefix") reg->prefix = value;
  if (key == "location") reg->location = value;
  if (key == "insecure") flag(reg->insecure);
  if (key == "blocked") flag(reg->blocked);
  if (key == "mirror-by-digest-only") flag(reg->mirror_by_digest_only);
}

// Whether `prefix` matches `name` ("host[:port]/repo"): equal, or followed in `name` by '/' or ':'.
bool matches(std::string_view prefix, std::string_view name) {
  if (prefix.empty() || !name.starts_with(prefix)) return false;
  return name.size() == prefix.size() || name[prefix.size()] == '/' || name[prefix.size()] == ':' || prefix.back() == '/';
}

// "host[:port][/path]" + the rest of the repository -> an endpoint.
Endpoint endpoint_of(const std::string& location, std::string_view rest, bool insecure, bool mirror) {
  std::string full = location + std::string(rest);
  std::size_t slash = full.find('/');
  Endpoint e;
  e.host = full.substr(0, slash);
  e.repository = slash == std::string::npos ? "" : full.substr(slash + 1);
  e.insecure = insecure;
  e.mirror = mirror;
  return e;
}

// The file's text, at most kMaxConfBytes: a regular file's size is checked before reading, and anything else
// (a device such as /dev/zero, a pipe) is read only up to one byte past the limit. A folder is refused. A file
// that does not exist is nullopt when `missing_ok` (the default places), else an error.
std::optional<std::string> read_text(const fs::path& file, bool missing_ok) {
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT && missing_ok) return std::nullopt;
    throw Error(errno_message("cannot read registries configuration " + quoted_path(file), errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) throw_errno("cannot stat registries configuration " + quoted_path(file));
  // defence: conf-not-folder
  if (S_ISDIR(st.st_mode)) throw Error("registries configuration " + quoted_path(file) + " is a folder, not a file");
  auto too_large = [&] { return Error("registries configuration " + quoted_path(file) + " is larger than 1 MiB"); };
  if (S_ISREG(st.st_mode) && static_cast<std::uintmax_t>(st.st_size) > kMaxConfBytes) throw too_large();
  std::string text(kMaxConfBytes + 1, '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot read registries configuration " + quoted_path(file));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  // defence: conf-size-bound
  if (got > kMaxConfBytes) throw too_large();
  text.resize(got);
  return text;
}

// A prefix or location is host[:port][/path]: "http://h" would be read as a host named "http:" and retried, so a
// scheme is a configuration error (exit 2) naming the entry; plain HTTP is `insecure = true`.
void check_no_scheme(const RegistryEntry& e, std::string_view value, std::string_view field, std::string_view what) {
  // defence: conf-no-scheme
  if (value.starts_with("http://") || value.starts_with("https://")) {
    throw UsageError(std::string(what) + ": the [[registry]] '" + escaped(e.prefix.empty() ? e.location : e.prefix, 120) +
                     "' has " + std::string(field) + " '" + escaped(value, 120) +
                     "': write host[:port][/path] without http:// or https:// (insecure = true for plain HTTP)");
  }
}

void read_file(const fs::path& file, RegistriesConf& conf, bool missing_ok) {
  std::optional<std::string> text = read_text(file, missing_ok);
  if (!text) return;
  for (RegistryEntry& e : parse_registries_conf(*text, escaped(file.string()))) {
    std::string key = e.prefix.empty() ? e.location : e.prefix;
    auto same = std::find_if(conf.registries.begin(), conf.registries.end(),
                             [&](const RegistryEntry& r) { return (r.prefix.empty() ? r.location : r.prefix) == key; });
    if (same != conf.registries.end()) {
      *same = std::move(e);
    } else {
      conf.registries.push_back(std::move(e));
    }
  }
  conf.files.push_back(file.string());
}

}  // namespace

std::vector<RegistryEntry> parse_registries_conf(std::string_view text, std::string_view what) {
  std::vector<RegistryEntry> out;
  bool in_mirror = false;
  bool in_other_table = false;
  bool in_array = false;  // a multi-line array value (unqualified-search-registries = [ ... ]): skipped
  std::size_t number = 0;
  for (std::size_t start = 0; start <= text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    Line at{what, ++number};
    std::string_view line = trim(strip_comment(text.substr(start, end - start)));
    start = end + 1;
    if (in_array) {
      in_array = line.find(']') == std::string_view::npos;
      continue;
    }
    if (line.empty()) continue;
    if (line.front() == '[') {
      in_mirror = line == "[[registry.mirror]]";
      in_other_table = !in_mirror && line != "[[registry]]";
      if (line == "[[registry]]") out.emplace_back();
      if (in_mirror && out.empty()) at.fail("[[registry.mirror]] before any [[registry]]");
      if (in_mirror) out.back().mirrors.emplace_back();
      continue;
    }
    std::size_t eq = line.find('=');
    if (eq == std::string_view::npos) at.fail("expected key = value");
    if (in_other_table) continue;
    std::string_view key = trim(line.substr(0, eq));
    std::string_view raw = trim(line.substr(eq + 1));
    if (raw.starts_with('[')) {  // arrays are not ours: skip them, over several lines if need be
      in_array = raw.find(']') == std::string_view::npos;
      continue;
    }
    std::string value = parse_value(raw, at);
    set_field(out.empty() ? nullptr : &out.back(), in_mirror ? &out.back().mirrors.back() : nullptr, key, value, at);
  }
  for (const RegistryEntry& e : out) {
    check_no_scheme(e, e.prefix, "prefix", what);
    check_no_scheme(e, e.location, "location", what);
    for (const MirrorEntry& m : e.mirrors) check_no_scheme(e, m.location, "[[registry.mirror]] location", what);
    if (e.prefix.empty() && e.location.empty())
      throw Error(std::string(what) + ": a [[registry]] has neither prefix nor location");
    for (const MirrorEntry& m : e.mirrors) {
      if (m.location.empty())
        throw Error(std::string(what) + ": a [[registry.mirror]] of '" + escaped(e.prefix + e.location, 80) +
                    "' has no location");
    }
  }
  return out;
}

RegistriesConf load_registries_conf(const std::string& explicit_file) {
  RegistriesConf conf;
  std::string file = explicit_file;
  if (file.empty()) {
    if (const char* env = std::getenv("CONTAINERS_REGISTRIES_CONF"); env && *env) file = env;
  }
  if (!file.empty()) {
    if (!fs::exists(file)) throw Error("registries configuration " + quoted_path(file) + " does not exist");
    read_file(file, conf, false);
    return conf;
  }
  read_file("/etc/containers/registries.conf", conf, true);
  std::error_code ec;
  std::vector<fs::path> drop_ins;
  for (const auto& d : fs::directory_iterator("/etc/containers/registries.conf.d", ec)) {
    if (d.path().extension() == ".conf") drop_ins.push_back(d.path());
  }
  std::sort(drop_ins.begin(), drop_ins.end());
  for (const fs::path& p : drop_ins) read_file(p, conf, true);
  return conf;
}

std::vector<Endpoint> pull_endpoints(const RegistriesConf& conf, const registry::oci::Reference& ref, bool plain_http) {
  std::string name = ref.registry + "/" + ref.repository;
  const RegistryEntry* best = nullptr;
  std::size_t best_length = 0;
  for (const RegistryEntry& e : conf.registries) {
    const std::string& prefix = e.prefix.empty() ? e.location : e.prefix;
    if (matches(prefix, name) && prefix.size() >= best_length) {
      best = &e;
      best_length = prefix.size();
    }
  }
  if (best == nullptr) return {Endpoint{ref.registry, ref.repository, plain_http, false, false}};
  const std::string& prefix = best->prefix.empty() ? best->location : best->prefix;
  if (best->blocked) throw Error("registry " + escaped(prefix, 120) + " is blocked in the registries configuration");
  std::string_view rest = std::string_view(name).substr(std::min(prefix.size(), name.size()));
  std::vector<Endpoint> out;
  for (const MirrorEntry& m : best->mirrors) {
    Endpoint e = endpoint_of(m.location, rest, m.insecure, true);
    e.digest_only = best->mirror_by_digest_only;
    out.push_back(std::move(e));
  }
  out.push_back(endpoint_of(best->location.empty() ? prefix : best->location, rest, best->insecure || plain_http, false));
  return out;
}

}  // namespace ccpack::registry
