// See import_source.hpp. open() reads the foreign archive once, front to back: each entry is checked (Rules),
// mapped to its component (Mapper), and a file's bytes are appended to the spool. Then the missing folders are
// added, every entry is checked against its parent, and the list is put in create's order.
#include "pack/import_source.hpp"

#include <archive.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string_view>
#include <unordered_set>

#include "pack/foreign_reader.hpp"
#include "pack/layout.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::pack {
namespace fs = std::filesystem;
using manifest::EntryType;

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw IntegrityError("refusing foreign entry " + quoted_name(path) + ": " + why);
}

std::vector<std::string_view> split(std::string_view path) {
  std::vector<std::string_view> parts;
  std::size_t at = 0;
  for (;;) {
    std::size_t slash = path.find('/', at);
    parts.push_back(path.substr(at, slash == std::string_view::npos ? std::string_view::npos : slash - at));
    if (slash == std::string_view::npos) return parts;
    at = slash + 1;
  }
}

// The stored path without a leading "./" or trailing "/", checked: relative, no empty, "." or ".." part.
// Empty for the archive's own top folder ("./").
std::string checked_path(const std::string& raw, std::size_t max_length) {
  std::string_view p = raw;
  while (p.starts_with("./")) p.remove_prefix(2);
  while (p.ends_with('/') && p.size() > 1) p.remove_suffix(1);
  if (p == "." || p.empty()) return {};
  if (p.front() == '/') refuse(raw, "absolute path");
  if (p.size() > max_length) refuse(raw, "path longer than " + std::to_string(max_length) + " bytes");
  for (std::string_view part : split(p)) {
    if (part.empty() || part == "." || part == "..") refuse(raw, "unsafe path (empty, '.' or '..' part)");
    if (part.size() > manifest::kMaxNameBytes)
      refuse(raw, "a name longer than " + std::to_string(manifest::kMaxNameBytes) + " bytes");
  }
  return std::string(p);
}

constexpr const char* kKnownNames = "inductor_cache, torchinductor_*, triton_cache";

// The component a cache folder's name says, by the defaults torch and Triton use.
const char* component_by_name(std::string_view name) {
  if (name == "inductor_cache" || name.starts_with("torchinductor_")) return "inductor";
  if (name == "triton_cache") return "triton";
  return nullptr;
}

// Which foreign folder is which component; see the top of import_source.hpp.
class Mapper {
 public:
  Mapper(const std::vector<std::pair<std::string, std::string>>& maps, const fs::path& foreign) : foreign_(foreign) {
    // NOLINTNEXTLINE(performance-inefficient-string-concatenation): once per --map flag
    for (const auto& [path, component] : maps) add(checked_path(path, 4096), component, "--map " + path + "=" + component);
  }

  // The archive path for a checked foreign path, or nullopt when it is outside every root.
  std::optional<std::string> map(const std::string& path) {
    for (const Root& r : roots_) {
      if (path == r.prefix) return r.component;
      if (path.size() > r.prefix.size() && path.starts_with(r.prefix) && path[r.prefix.size()] == '/') {
        return r.component + path.substr(r.prefix.size());
      }
    }
    std::string prefix;
    for (std::string_view part : split(path)) {
      prefix += (prefix.empty() ? "" : "/") + std::string(part);
      if (const char* c = component_by_name(part)) {
        add(prefix, c, "folder " + quoted_name(prefix));
        return map(path);
      }
    }
    return std::nullopt;
  }

  // Whether `path` is a folder above some root (such as "workspace" above "workspace/inductor_cache").
  [[nodiscard]] bool above_a_root(const std::string& path) const {
    return std::any_of(roots_.begin(), roots_.end(), [&](const Root& r) {
      return r.prefix.size() > path.size() && r.prefix.starts_with(path) && r.prefix[path.size()] == '/';
    });
  }

  // Components in create's order: inductor, triton, then the others as first mapped.
  [[nodiscard]] std::vector<manifest::Component> components() const {
    std::vector<manifest::Component> out;
    for (const Root& r : roots_) {
      out.push_back({r.component, manifest::kind_of_component(r.component), foreign_.string() + ":" + r.prefix, 0, 0});
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.kind < b.kind; });
    return out;
  }

 private:
  struct Root {
    std::string prefix;
    std::string component;
  };
  void add(const std::string& prefix, const std::string& component, const std::string& why) {
    if (prefix.empty()) throw UsageError(why + ": the path is empty");
    if (!manifest::is_valid_component_name(component))
      throw UsageError(why + ": '" + component + "' is not a valid component name");
    for (const Root& r : roots_) {
      if (r.component == component) {
        // NOLINTNEXTLINE(performance-inefficient-string-concatenation): an error message, built once
        throw UsageError(why + " and " + quoted_name(r.prefix) + " are both " + component +
                         "; choose one with --map PATH=COMPONENT");
      }
      if (prefix.starts_with(r.prefix + "/") || r.prefix.starts_with(prefix + "/") || r.prefix == prefix) {
        throw UsageError(why + " overlaps " + quoted_name(r.prefix));
      }
    }
    roots_.push_back({prefix, component});
  }
  fs::path foreign_;
  std::vector<Root> roots_;
};

UniqueFd open_spool(const fs::path& dir) { return open_scratch_file(dir, "a scratch file for the import"); }

// Whether a symlink at `rel` (inside its component) pointing at `target` stays inside the component.
bool link_stays_inside(std::string_view rel, const std::string& target) {
  if (target.empty() || target.front() == '/') return false;
  std::string norm = (fs::path(std::string(rel)).parent_path() / target).lexically_normal().string();
  return norm != ".." && !norm.starts_with("../");
}

// Walk order (each folder before what is inside it, names in byte order): compare paths part by part.
bool walk_less(const std::string& a, const std::string& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    auto key = [](char c) { return c == '/' ? 0 : static_cast<unsigned char>(c) + 1; };
    return key(x) < key(y);
  });
}

}  // namespace

std::pair<std::string, std::string> parse_map(const std::string& spec) {
  auto eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) {
    throw UsageError("--map expects PATH=COMPONENT (e.g. workspace/cache=inductor), got " + quoted_name(spec));
  }
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

// The state of one pass over the foreign archive.
struct ImportSource::Listing {
  Listing(ForeignReader& r, Mapper& m) : reader(r), mapper(m) {}
  ForeignReader& reader;
  Mapper& mapper;
  std::map<std::string, std::size_t> index;                 // archive path -> entry
  std::unordered_map<std::string, std::uint64_t> spool_at;  // archive path -> offset of its bytes in the spool
  std::unordered_set<std::string> skipped_prefixes;
  std::vector<char> buf = std::vector<char>(1 << 20);
  std::uint64_t spooled = 0;
};

void ImportSource::open() {
  const manifest::Limits& limits = options_.limits;
  ForeignReader reader(options_.foreign);
  Mapper mapper(options_.maps, options_.foreign);
  spool_ = open_spool(options_.spool_dir);
  Listing l(reader, mapper);
  std::vector<std::string> outside_dirs;
  std::uint64_t count = 0;
  ForeignEntry f;
  while (reader.next(f)) {
    if (++count > limits.max_entries) refuse(f.path, "more than " + std::to_string(limits.max_entries) + " entries");
    std::string path = checked_path(f.path, limits.max_path_length);
    if (path.empty()) continue;  // "./", the archive's own top folder
    if (f.kind == ForeignEntry::Kind::other)
      refuse(f.path, "a " + f.kind_name + "; only files, folders and symlinks can be imported");
    if ((f.mode & 07000u) != 0) refuse(f.path, "setuid, setgid or sticky bit");
    std::optional<std::string> mapped = mapper.map(path);
    if (mapped) {
      if (!skip_transient(*mapped, f.kind == ForeignEntry::Kind::dir, l)) add(f, std::move(*mapped), l);
    } else if (f.kind == ForeignEntry::Kind::dir) {
      outside_dirs.push_back(path);  // fine if it turns out to be above a cache folder
    } else {
      throw UsageError("foreign entry " + quoted_name(f.path) + " is outside the cache folders (" + kKnownNames +
                       "); map its folder with --map PATH=COMPONENT");
    }
  }
  format_ = reader.describe();
  for (const std::string& dir : outside_dirs) {
    if (!mapper.above_a_root(dir)) {
      throw UsageError("foreign folder " + quoted_name(dir) + " is outside the cache folders (" + kKnownNames +
                       "); map it with --map PATH=COMPONENT");
    }
  }
  components_ = mapper.components();
  complete_folders(l.index);
  put_in_order(l.spool_at);
}

// Whether a mapped path is, or is inside, a transient name that create skips; records it once.
bool ImportSource::skip_transient(const std::string& mapped, bool is_dir, Listing& l) {
  std::vector<std::string_view> parts = split(mapped);
  for (std::size_t k = 1; k < parts.size(); ++k) {
    if (const char* why = transient_reason(parts[k], k + 1 < parts.size() || is_dir, k == 1)) {
      std::string prefix(mapped, 0, static_cast<std::size_t>(parts[k].data() + parts[k].size() - mapped.data()));
      if (l.skipped_prefixes.insert(prefix).second) skipped_.push_back(prefix + " (" + why + ")");
      return true;
    }
  }
  return false;
}

// Checks one foreign entry under its archive path and adds it; a file's bytes go to the spool.
void ImportSource::add(const ForeignEntry& f, std::string path, Listing& l) {
  const manifest::Limits& limits = options_.limits;
  if (l.index.count(path) != 0) refuse(f.path, "a second entry for " + quoted_name(path));
  SourceEntry e;
  e.path = std::move(path);
  e.source = options_.foreign.string() + ":" + escaped(f.path);  // for messages only
  if (f.kind == ForeignEntry::Kind::dir) {
    e.type = EntryType::dir;
    e.mode = (f.mode & 0777u) | 0700u;  // as create packs folders
  } else if (f.kind == ForeignEntry::Kind::symlink) {
    e.type = EntryType::symlink;
    e.mode = 0777;
    e.link_target = f.link_target;
    if (!link_stays_inside(manifest::relative_of(e.path), e.link_target)) {
      refuse(f.path, "symlink to " + quoted_name(e.link_target) + " leads outside its folder");
    }
  } else if (f.kind == ForeignEntry::Kind::hardlink && f.size == 0) {  // a copy of the file it names
    std::string target;
    try {
      target = checked_path(f.link_target, limits.max_path_length);
    } catch (const IntegrityError&) {
      // An unsafe target names no earlier file: refused below, naming this entry rather than its target.
    }
    std::optional<std::string> to = target.empty() ? std::nullopt : l.mapper.map(target);
    auto it = to ? l.index.find(*to) : l.index.end();
    if (it == l.index.end() || entries_[it->second].type != EntryType::file) {
      refuse(f.path, "hard link to " + quoted_name(f.link_target) + ", which is not an earlier file of the archive");
    }
    e.type = EntryType::file;
    e.mode = entries_[it->second].mode;
    e.size = entries_[it->second].size;
    l.spool_at[e.path] = l.spool_at[*to];
  } else {
    e.type = EntryType::file;
    e.mode = f.mode & 0777u;
    l.spool_at[e.path] = l.spooled;
    for (std::size_t n; (n = l.reader.read(l.buf.data(), l.buf.size())) != 0;) {
      e.size += n;
      if (e.size > limits.max_file_size) refuse(f.path, "larger than " + std::to_string(limits.max_file_size) + " bytes");
      write_all(spool_.get(), l.buf.data(), n, "the import scratch file");
    }
    if (f.size != 0 && e.size != f.size) refuse(f.path, "truncated");
    l.spooled += e.size;
    if (l.spooled > limits.max_total_size) refuse(f.path, "the files add up to more than the total size limit");
  }
  l.index.emplace(e.path, entries_.size());
  entries_.push_back(std::move(e));
}

// Adds the folders the foreign archive left out (mode 0755), and refuses an entry inside a non-folder.
void ImportSource::complete_folders(std::map<std::string, std::size_t>& index) {
  std::size_t listed = entries_.size();
  for (std::size_t i = 0; i < listed; ++i) {
    std::string path = entries_[i].path;
    for (std::size_t slash; (slash = path.rfind('/')) != std::string::npos;) {
      path.resize(slash);
      auto it = index.find(path);
      if (it != index.end()) {
        if (entries_[it->second].type != EntryType::dir) {
          refuse(entries_[i].path, "it is inside " + quoted_name(path) + ", which is not a folder");
        }
        break;
      }
      SourceEntry dir;
      dir.path = path;
      dir.type = EntryType::dir;
      dir.mode = 0755;
      dir.source = options_.foreign.string() + ":" + path;
      index.emplace(path, entries_.size());
      entries_.push_back(std::move(dir));
    }
  }
  for (const manifest::Component& c : components_) {
    if (index.count(c.name) == 0) {  // only possible for a --map whose folder holds nothing
      throw UsageError("--map: no entry of the foreign archive is in " + quoted_name(c.source));
    }
  }
  if (entries_.size() > options_.limits.max_entries) {
    throw IntegrityError("foreign archive " + quoted_path(options_.foreign) + " has too many entries");
  }
}

// Create's order: components as create walks them, each in walk order, then the scanner's grouping.
void ImportSource::put_in_order(const std::unordered_map<std::string, std::uint64_t>& spool_at) {
  std::map<std::string, std::size_t, std::less<>> rank;
  for (std::size_t i = 0; i < components_.size(); ++i) rank.emplace(components_[i].name, i);
  std::sort(entries_.begin(), entries_.end(), [&](const SourceEntry& a, const SourceEntry& b) {
    std::size_t ra = rank.find(manifest::component_of(a.path))->second;
    std::size_t rb = rank.find(manifest::component_of(b.path))->second;
    return ra != rb ? ra < rb : walk_less(a.path, b.path);
  });
  sort_in_archive_order(entries_);
  offsets_.assign(entries_.size(), 0);
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].type == EntryType::file) offsets_[i] = spool_at.at(entries_[i].path);
  }
  list_ = manifest::EntryList();
  for (const SourceEntry& e : entries_) list_.push_back({e.path, e.type, e.mode, e.size, {}, e.link_target, 0});
}

void ImportSource::reorder(const std::vector<std::size_t>& order) {
  permute(offsets_, order);
  permute(entries_, order);
  list_ = reordered(list_, order);
}

Digest ImportSource::read_file(std::size_t i, FileSlot& slot) {
  const SourceEntry& e = entries_[i];
  char* data = slot.data(e.size);
  read_piece(i, 0, e.size, data);
  return Sha256::of(data, e.size);
}

void ImportSource::read_piece(std::size_t i, std::uint64_t offset, std::uint64_t length, char* out) {
  std::size_t got = pread_full(spool_.get(), out, length, static_cast<off_t>(offsets_[i] + offset), "the import scratch file");
  if (got != length) throw Error("the import scratch file is shorter than expected");
}

LibraryVersion libarchive_version() {
  std::string_view runs = archive_version_string();  // "libarchive 3.6.2"
  if (runs.starts_with("libarchive ")) runs.remove_prefix(11);
  return {ARCHIVE_VERSION_ONLY_STRING, std::string(runs)};
}

}  // namespace ccpack::pack
