// The restored entry list (see restored_entries.hpp): written in 1 MiB pieces as the manifest's entries are
// walked, read back whole (bounded) and parsed line by line.
#include "manifest/restored_entries.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <charconv>

#include "manifest/reserved_names.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::manifest {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
// The most a list may hold on disk: far above a real one (~130 MB at a million files).
constexpr std::uint64_t kMaxListBytes = 1ULL << 30;
constexpr std::string_view kEntriesMagic = "ccpack-entries ";

void append_escaped(std::string& out, std::string_view path) {
  for (char c : path) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

std::optional<std::string> unescaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    if (++i == s.size()) return std::nullopt;
    if (s[i] == '\\') {
      out += '\\';
    } else if (s[i] == 'n') {
      out += '\n';
    } else {
      return std::nullopt;
    }
  }
  return out;
}

std::optional<std::uint64_t> number(std::string_view s) {
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Cuts the next space-separated word off `line`.
std::string_view word(std::string_view& line) {
  std::size_t at = line.find(' ');
  std::string_view w = line.substr(0, at);
  line.remove_prefix(at == std::string_view::npos ? line.size() : at + 1);
  return w;
}

// One entry line; false when malformed.
bool parse_entry(std::string_view line, const Limits& limits, RestoredEntries& list) {
  std::string_view type = word(line);
  RestoredEntry e;
  if (type == "f" || type == "g") {
    std::optional<std::uint64_t> size = number(word(line));
    std::optional<Digest> sha = digest_from_hex(word(line));
    if (!size || !sha) return false;
    e.size = *size;
    e.sha256 = *sha;
    e.rewritable = type == "g";
  } else if (type == "l") {
    e.type = EntryType::symlink;
  } else {
    return false;
  }
  std::optional<std::string> path = unescaped(line);
  if (!path || path->empty() || path->size() > limits.max_path_length) return false;
  return list.entries.emplace(std::move(*path), e).second;
}

std::optional<RestoredEntries> parse(std::string_view text, std::string_view manifest_sha256, const Limits& limits) {
  std::size_t eol = text.find('\n');
  std::string_view header = text.substr(0, eol);
  if (eol == std::string_view::npos || !header.starts_with(kEntriesMagic)) return std::nullopt;
  header.remove_prefix(kEntriesMagic.size());
  if (word(header) != std::to_string(kEntriesVersion) || word(header) != manifest_sha256) return std::nullopt;
  std::optional<std::uint64_t> count = number(header);
  if (!count || *count > limits.max_entries) return std::nullopt;
  RestoredEntries list;
  list.manifest_sha256 = std::string(manifest_sha256);
  list.entries.reserve(*count);
  text.remove_prefix(eol + 1);
  for (std::uint64_t i = 0; i < *count; ++i) {
    eol = text.find('\n');
    if (eol == std::string_view::npos || !parse_entry(text.substr(0, eol), limits, list)) return std::nullopt;
    text.remove_prefix(eol + 1);
  }
  if (text != "end\n") return std::nullopt;
  return list;
}

}  // namespace

std::optional<RestoredEntries> RestoredEntries::read(const std::filesystem::path& dir, std::string_view manifest_sha256,
                                                     const Limits& limits) {
  UniqueFd fd(::open((dir / kEntriesName).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  if (static_cast<std::uint64_t>(st.st_size) > kMaxListBytes) return std::nullopt;
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  try {
    text.resize(pread_full(fd.get(), text.data(), text.size(), 0, quoted_path(dir / kEntriesName)));
  } catch (const Error&) {
    return std::nullopt;
  }
  return parse(text, manifest_sha256, limits);
}

void write_restored_entries(int dir_fd, const Manifest& m, std::string_view component, std::string_view manifest_sha256,
                            const std::function<bool(std::size_t)>& rewritable) {
  const EntryList& entries = m.entries;
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) count += entries.type(i) != EntryType::dir && entries.component(i) == component;
  const std::string what = "the restored entry list " + std::string(kEntriesName);
  UniqueFd fd(::openat(dir_fd, std::string(kEntriesName).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) throw_errno("cannot write " + what);
  std::string out = std::string(kEntriesMagic) + std::to_string(kEntriesVersion) + " " + std::string(manifest_sha256) + " " +
                    std::to_string(count) + "\n";
  std::string path;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    EntryType type = entries.type(i);
    if (type == EntryType::dir || entries.component(i) != component) continue;
    if (type == EntryType::file) {
      out += (rewritable && rewritable(i) ? "g " : "f ") + std::to_string(entries.file_size(i)) + " " + to_hex(entries.sha256(i)) + " ";
    } else {
      out += "l ";
    }
    path.clear();
    entries.append_path(path, i);
    append_escaped(out, std::string_view(path).substr(component.size() + 1));
    out += '\n';
    if (out.size() >= kFlushBytes) {
      write_all(fd.get(), out.data(), out.size(), what);
      out.clear();
    }
  }
  out += "end\n";
  write_all(fd.get(), out.data(), out.size(), what);
}

}  // namespace ccpack::manifest
