// Manifest::validate: the rules every manifest meets before any stage trusts it (manifest.hpp), each refusal
// naming its field. Paths are safe and unique, folders come first, symlinks resolve inside their component
// (links.hpp), sizes and counts are bounded, and the frames cover the entries exactly.
#include <optional>

#include "manifest/links.hpp"
#include "manifest/manifest.hpp"
#include "manifest/manifest_refusal.hpp"
#include "manifest/reserved_names.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest {

namespace detail {

void bad(const std::string& field, const std::string& why) { throw IntegrityError("manifest field '" + field + "' " + why); }

std::string q(std::string_view untrusted) { return "'" + escaped(untrusted) + "'"; }

const nlohmann::json& member(const nlohmann::json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(where + "." + key, "is missing");
  return *it;
}

}  // namespace detail

namespace {

using detail::bad;
using detail::ComponentNames;
using detail::q;

void check_path(const std::string& path, const Limits& limits, const std::string& where) {
  if (path.empty()) bad(where, "is empty");
  if (path.size() > limits.max_path_length) bad(where, "is longer than " + std::to_string(limits.max_path_length) + " bytes");
  // defence: path-absolute
  if (path.front() == '/') bad(where, "is an absolute path: " + q(path));
  std::string_view rest = path;
  while (true) {
    auto pos = rest.find('/');
    std::string_view part = rest.substr(0, pos);
    // defence: path-dot-components
    if (part.empty() || part == "." || part == "..") bad(where, "has an unsafe component in " + q(path));
    if (part.size() > kMaxNameBytes)
      bad(where, "has a name longer than " + std::to_string(kMaxNameBytes) + " bytes in " + q(path));
    if (part.find('\0') != std::string_view::npos) bad(where, "contains a NUL byte");
    // Restore writes these names itself (the marker, staging folders): an entry must not collide with them.
    // defence: reserved-names
    if (part.data() != path.data() && is_reserved_name(part)) bad(where, "uses a name ccpack reserves for itself: " + q(path));
    if (pos == std::string_view::npos) break;
    rest.remove_prefix(pos + 1);
  }
}

// What the symlink target must be before it is resolved through the tree (links.hpp): symlinkat() must create
// exactly this text, so no NUL (the kernel would stop there) and no more than PATH_MAX - 1 bytes (it would fail).
void check_link_target(std::string_view path, std::string_view t, const Limits& limits, const std::string& where) {
  if (t.empty()) bad(where, "of symlink " + q(path) + " is empty");
  // defence: link-target-nul
  if (t.find('\0') != std::string_view::npos) bad(where, "of symlink " + q(path) + " contains a NUL byte");
  if (t.size() >= limits.max_path_length) {
    bad(where, "of symlink " + q(path) + " is longer than " + std::to_string(limits.max_path_length - 1) + " bytes");
  }
  // defence: link-target-absolute
  if (t.front() == '/') bad(where, "of symlink " + q(path) + " is absolute: " + q(t));
}

// a + b, or a refusal naming the field whose value makes the sum wrap around.
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const std::string& field, const char* what) {
  // defence: frame-size-overflow
  if (b > UINT64_MAX - a) bad(field, std::string("makes the ") + what + " overflow 64 bits");
  return a + b;
}

}  // namespace

namespace detail {

// Components: valid, unique names whose kind matches (inductor and triton are built in, every other is extra).
// Returns the names, which every entry path must start with.
ComponentNames validate_components(const std::vector<Component>& components) {
  ComponentNames names;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const Component& c = components[i];
    std::string where = "components[" + std::to_string(i) + "].name";
    if (!is_valid_component_name(c.name)) bad(where, "is not a valid component name: " + q(c.name));
    if (!names.insert(c.name).second) bad(where, "repeats " + q(c.name));
    // As it always was: built-in names must not be extra and others must be (built-in names' kinds may swap).
    if ((c.kind == ComponentKind::extra) != (kind_of_component(c.name) == ComponentKind::extra)) {
      bad(where, q(c.name) + " does not match its kind");
    }
  }
  return names;
}

}  // namespace detail

namespace {

using detail::validate_components;
using LinkNodes = std::vector<std::pair<std::size_t, std::uint32_t>>;  // entry index, tree node

// Links last, once every entry they may resolve through is known.
void validate_links(const EntryList& entries, EntryTree& tree, const LinkNodes& links) {
  for (auto [i, node] : links) {
    std::string where = "entries[" + std::to_string(i) + "].target";
    // defence: links-validate
    switch (tree.resolve_link(node)) {
      case EntryTree::LinkVerdict::inside:
        break;
      case EntryTree::LinkVerdict::escapes: {
        std::string path = entries.path(i);
        bad(where, "of symlink " + q(path) + " resolves outside " + q(component_of(path)) + ": " + q(entries.link_target(i)));
      }
      case EntryTree::LinkVerdict::loops:
        bad(where, "of symlink " + q(entries.path(i)) + " follows more than " + std::to_string(kMaxLinkHops) +
                       " symlinks (a loop): " + q(entries.link_target(i)));
    }
  }
}

// Entries: safe, unique, parents first, totals bounded; symlinks resolving inside their component. The tree is
// built from the list's own folder links (an entry's name below its folder entry), so no path is copied; an entry
// the list could not place below a folder is added by its whole path, which gives the same verdicts.
void validate_entries(const EntryList& entries, const ComponentNames& names, const Limits& limits) {
  // defence: entry-count-bound
  if (entries.size() > limits.max_entries) bad("entries", "has more than " + std::to_string(limits.max_entries) + " entries");
  EntryTree tree(entries.size());
  LinkNodes links;
  std::uint64_t total = 0;
  std::string path;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    path.clear();
    entries.append_path(path, i);
    EntryType type = entries.type(i);
    std::string where = "entries[" + std::to_string(i) + "]";
    check_path(path, limits, where + ".path");
    std::string_view comp = component_of(path);
    if (names.count(comp) == 0) bad(where + ".path", q(path) + " is not under a listed component");
    // defence: setuid-bits
    if (entries.mode(i) & ~0777u) bad(where + ".mode", "has setuid, setgid or sticky bits on " + q(path));
    if (type == EntryType::file) {
      // defence: file-size-bound
      if (entries.file_size(i) > limits.max_file_size) bad(where + ".size", "of " + q(path) + " exceeds the limit");
      total += entries.file_size(i);  // cannot wrap: each term is at most max_file_size and the sum is checked at each step
      // defence: total-size-bound
      if (total > limits.max_total_size) bad(where + ".size", "makes the archive exceed the total size limit");
    }
    if (relative_of(path).empty() && type != EntryType::dir) {
      bad(where + ".type", "component root " + q(path) + " is not a folder");
    }
    std::string_view target = entries.link_target(i);
    if (type == EntryType::symlink) check_link_target(path, target, limits, where + ".target");
    // Node numbers are entry indices: every add before this one succeeded (a failure throws).
    std::uint32_t parent = entries.parent(i);
    EntryTree::AddResult added = parent == EntryList::kNoParent ? tree.add(entries.name(i), type, target)
                                                                : tree.add_child(parent, entries.name(i), type, target);
    // defence: duplicate-entries
    if (added.status == EntryTree::Added::duplicate) bad(where + ".path", "duplicates " + q(path));
    // defence: folder-before-entry
    if (added.status == EntryTree::Added::no_folder) {
      bad(where + ".path", q(path) + " comes before its folder " + q(std::string_view(path).substr(0, path.rfind('/'))));
    }
    if (type == EntryType::symlink) links.emplace_back(i, added.node);
  }
  validate_links(entries, tree, links);
}

// Frames: contiguous, covering all entries in order, raw sizes adding up to the tar size, no sum wrapping.
void validate_frames(const std::vector<Frame>& frames, const EntryList& entries, std::uint64_t tar_size) {
  std::uint64_t offset = 0;
  std::uint64_t next_entry = 0;
  std::uint64_t raw = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const Frame& f = frames[i];
    std::string where = "frames[" + std::to_string(i) + "]";
    if (f.offset != offset) bad(where + ".offset", "is " + std::to_string(f.offset) + ", expected " + std::to_string(offset));
    if (f.first_entry != next_entry) bad(where + ".first_entry", "does not follow the previous frame");
    if (f.entry_count > entries.size() - next_entry) bad(where + ".entry_count", "runs past the entries");
    for (std::uint64_t k = f.first_entry; k < f.first_entry + f.entry_count; ++k) {
      if (entries.frame(k) != i)
        bad("entries[" + std::to_string(k) + "].frame", "does not match frames[" + std::to_string(i) + "]");
    }
    offset = checked_add(offset, f.compressed_size, where + ".compressed_size", "payload size");
    next_entry += f.entry_count;
    raw = checked_add(raw, f.raw_size, where + ".raw_size", "tar size");
  }
  if (next_entry != entries.size()) bad("frames", "do not cover all entries");
  if (raw != tar_size) bad("tar_size", "does not equal the frames' raw sizes");
}

}  // namespace

void Manifest::validate(const Limits& limits) const {
  ComponentNames names = validate_components(components);
  EntryList scratch;  // a compact copy of an edited list
  const EntryList& list = entries.compact(scratch);
  validate_entries(list, names, limits);
  validate_frames(frames, list, tar_size);
}

}  // namespace ccpack::manifest
