// Shared fingerprint options and output for the commands (see comparison.hpp).
#include "cli/comparison.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "manifest/json_guard.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"
#include "util/escape.hpp"

namespace ccpack::cli {

void add_python_option(CLI::App* cmd, std::string& python) {
  cmd->add_option("--python", python,
                  "Python interpreter whose packages the fingerprint reads (default: $CCPACK_PYTHON, else python3)");
}

void add_ignore_option(CLI::App* cmd, std::vector<std::string>& ignored) {
  cmd->add_option("--ignore", ignored,
                  "Fingerprint field whose difference is accepted (repeatable; an informed override, e.g. gpu.driver)")
      ->allow_extra_args(false);  // one FIELD per --ignore, so a positional after it stays positional
}

void check_ignored(const std::vector<std::string>& ignored) {
  for (const std::string& name : ignored) {
    if (manifest::find_rule(name) != nullptr) continue;
    std::string known;
    for (const manifest::FieldRule& r : manifest::field_rules()) known += (known.empty() ? "" : ", ") + std::string(r.field);
    throw UsageError("--ignore: '" + escaped(name, 64) + "' is not a fingerprint field (fields: " + known + ")");
  }
}

std::string read_fingerprint_file(const std::string& path) {
  constexpr std::size_t kMaxFingerprintBytes = 1u << 20;
  const std::string what = "fingerprint file " + quoted_path(path);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw_errno("cannot open " + what);
  std::string text(kMaxFingerprintBytes + 1, '\0');
  // read(), not pread(): the file may be a pipe (--fingerprint <(ssh host ccpack fingerprint --json)).
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot read " + what);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > kMaxFingerprintBytes) throw Error(what + " is larger than 1 MiB");
  text.resize(got);
  return text;
}

manifest::Fingerprint fingerprint_from_file(const std::string& path) {
  const std::string text = read_fingerprint_file(path);
  const std::string what = "fingerprint file " + quoted_path(path);
  try {
    auto doc = manifest::parse_untrusted<nlohmann::json>(text, what);
    if (!doc.is_object()) throw Error(what + " is not a JSON object (write it with `ccpack fingerprint --json`)");
    doc.erase("ok");  // the report marker of `ccpack fingerprint --json`; the rest is the manifest's shape
    return manifest::Fingerprint::from_json(doc.dump());
  } catch (const IntegrityError& e) {  // a local input, not an archive: exit 1, like any unreadable file
    std::string why = e.what();
    throw Error(why.starts_with(what) ? why : what + ": " + why);
  }
}

manifest::Fingerprint probe_local(const std::string& python, const std::vector<manifest::CacheDir>& dirs,
                                  std::string* memo_status) {
  probe::ProbeOptions options;
  options.python = python;
  options.dirs = dirs;
  return probe::probe_machine(options, memo_status);
}

ojson set_diff_json(const manifest::ComparisonRow& row) {
  manifest::SetDiff none;
  const manifest::SetDiff& d = row.diff ? *row.diff : none;
  ojson changed = ojson::array();
  for (const manifest::ChangedEntry& e : d.changed) changed.push_back({{"name", e.name}, {"archive", e.archive}, {"local", e.local}});
  return {{"added", d.added}, {"removed", d.removed}, {"changed", std::move(changed)}};
}

std::string difference_text(const manifest::ComparisonRow& row, std::size_t max_phrases) {
  auto shown = [](const std::optional<std::string>& v, const std::string& note) {
    return v ? "'" + escaped(*v, 200) + "'" : escaped(note, 200);
  };
  if (!row.diff || row.diff->empty()) return "archive " + shown(row.archive, row.archive_note) + ", here " + shown(row.local, row.local_note);
  std::vector<std::string> phrases = row.diff->phrases();
  std::string out;
  for (std::size_t i = 0; i < phrases.size() && i < max_phrases; ++i) out += (out.empty() ? "" : "; ") + escaped(phrases[i]);
  if (phrases.size() > max_phrases) out += "; and " + std::to_string(phrases.size() - max_phrases) + " more";
  return out;
}

ojson comparison_json(const manifest::Comparison& c) {
  auto value = [](const std::optional<std::string>& v) { return v ? ojson(*v) : ojson(nullptr); };
  ojson comps = ojson::array();
  for (std::size_t i = 0; i < c.components.size(); ++i) {
    comps.push_back({{"name", c.components[i].name},
                     {"kind", manifest::to_string(c.components[i].kind)},
                     {"verdict", manifest::to_string(c.component_verdicts[i])}});
  }
  ojson fields = ojson::array();
  for (const manifest::ComparisonRow& row : c.rows) {
    ojson verdicts = ojson::object();
    for (std::size_t i = 0; i < c.components.size(); ++i) verdicts[c.components[i].name] = manifest::to_string(row.verdicts[i]);
    ojson f = {{"field", row.field}, {"archive", value(row.archive)}, {"local", value(row.local)}};
    if (!row.archive_note.empty()) f["archive_note"] = row.archive_note;
    if (!row.local_note.empty()) f["local_note"] = row.local_note;
    if (manifest::list_syntax(row.field) || row.field == manifest::kTargetsField) f.update(set_diff_json(row));
    f["verdicts"] = std::move(verdicts);
    f["ignored"] = row.ignored;
    f["why"] = row.why;
    fields.push_back(std::move(f));
  }
  return {{"verdict", manifest::to_string(c.worst())},
          {"archive_recorded", c.archive_recorded},
          {"summary", c.summary()},
          {"components", comps},
          {"fields", fields}};
}

int refused(const Reporter& out, ojson body, const std::string& message) { return finish_with(out, std::move(body), ExitCode::refused, message); }

int finish_with(const Reporter& out, ojson body, ExitCode exit_code, const std::string& message) {
  const int code = static_cast<int>(exit_code);
  if (out.json()) {
    ojson head{{"ok", false}, {"exit_code", code}, {"error", message}};
    for (auto& [key, value] : body.items()) head[key] = std::move(value);
    out.report(std::move(head));
  }
  std::fprintf(stderr, "ccpack: error: %s\n", message.c_str());
  return code;
}

}  // namespace ccpack::cli
