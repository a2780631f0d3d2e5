// The restored entry list (see restored_entries.hpp): written in 1 MiB pieces as the manifest's entries are
// walked, read back in 1 MiB pieces (its size bounded before the first byte is read) and parsed line by line.
#include "manifest/restored_entries.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include "manifest/reserved_names.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::manifest {
namespace {

constexpr std::size_t kFlushBytes = 1 << 20;
constexpr std::size_t kReadBytes = 1 << 20;
constexpr std::string_view kEntriesMagic = "ccpack-entries ";

// Appends `path` with '\\' and newline escaped, the runs between them whole (a list holds a line per file; a
// plain loop: find_first_of over two characters calls memchr once per byte of the path).
void append_escaped(std::string& out, std::string_view path) {
  std::size_t run = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    char c = path[i];
    if (c != '\\' && c != '\n') continue;
    out.append(path.substr(run, i - run));
    out += c == '\\' ? "\\\\" : "\\n";
    run = i + 1;
  }
  out.append(path.substr(run));
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

// The list's lines, read from a file in pieces of kReadBytes: memory holds one piece and one line.
class Lines {
 public:
  explicit Lines(int fd) : fd_(fd) {}
  // The next line without its LF; nullopt at the end of the file, on a read error, or for a line over `max` bytes.
  std::optional<std::string_view> next(std::size_t max) {
    for (;;) {
      std::size_t eol = buf_.find('\n', at_);
      if (eol != std::string::npos) {
        std::string_view line(buf_.data() + at_, eol - at_);
        at_ = eol + 1;
        return line.size() > max ? std::nullopt : std::optional<std::string_view>(line);
      }
      if (buf_.size() - at_ > max || !more()) return std::nullopt;
    }
  }
  // Whether the file ends here.
  bool at_end() { return at_ == buf_.size() && !more(); }

 private:
  bool more() {
    buf_.erase(0, at_);
    at_ = 0;
    std::size_t had = buf_.size();
    buf_.resize(had + kReadBytes);
    ssize_t n = -1;
    do {
      n = ::read(fd_, buf_.data() + had, kReadBytes);
    } while (n < 0 && errno == EINTR);
    buf_.resize(had + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    return n > 0;
  }

  int fd_;
  std::string buf_;
  std::size_t at_ = 0;
};

std::optional<RestoredEntries> parse(Lines& lines, std::string_view manifest_sha256, const Limits& limits) {
  const std::size_t max_line = 2 * limits.max_path_length + 128;  // "f SIZE SHA256 " and the path, escaped
  std::optional<std::string_view> header = lines.next(max_line);
  if (!header || !header->starts_with(kEntriesMagic)) return std::nullopt;
  header->remove_prefix(kEntriesMagic.size());
  if (word(*header) != std::to_string(kEntriesVersion) || word(*header) != manifest_sha256) return std::nullopt;
  std::optional<std::uint64_t> count = number(*header);
  if (!count || *count > limits.max_entries) return std::nullopt;
  RestoredEntries list;
  list.manifest_sha256 = std::string(manifest_sha256);
  list.entries.reserve(*count);
  for (std::uint64_t i = 0; i < *count; ++i) {
    std::optional<std::string_view> line = lines.next(max_line);
    if (!line || !parse_entry(*line, limits, list)) return std::nullopt;
  }
  std::optional<std::string_view> end = lines.next(max_line);
  if (!end || *end != "end" || !lines.at_end()) return std::nullopt;
  return list;
}

}  // namespace

std::optional<RestoredEntries> RestoredEntries::read(const std::filesystem::path& dir, std::string_view manifest_sha256,
                                                     const Limits& limits, std::uint64_t max_bytes) {
  // Non-blocking and not through a link: a FIFO or a device in the list's place reads as no list, never a hang.
  // defence: entries-nonblocking-open
  UniqueFd fd(::open((dir / kEntriesName).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  // defence: entries-size-first
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) return std::nullopt;
  Lines lines(fd.get());
  return parse(lines, manifest_sha256, limits);
}

void write_restored_entries(int dir_fd, const Manifest& m, std::string_view component, std::string_view manifest_sha256,
                            const std::function<bool(std::size_t)>& rewritable) {
  const EntryList& entries = m.entries;
  std::uint64_t count = 0;
  for (std::size_t i = 0; i < entries.size(); ++i)
    count += entries.type(i) != EntryType::dir && entries.component(i) == component;
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
      out += rewritable && rewritable(i) ? "g " : "f ";
      char digits[24];
      auto [end, ec] = std::to_chars(digits, digits + sizeof digits, entries.file_size(i));
      out.append(digits, end);
      out += ' ';
      append_hex(out, entries.sha256(i));
      out += ' ';
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
