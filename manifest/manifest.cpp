#include "manifest/manifest.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <nlohmann/json.hpp>
#include <unordered_set>

#include "manifest/canonical_entries.hpp"
#include "manifest/json_guard.hpp"
#include "manifest/links.hpp"
#include "manifest/names.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string mode_string(std::uint32_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

// A JSON string as nlohmann's dump() writes it (ensure_ascii off): '"', '\\' and control characters escaped,
// the short forms where JSON has them, "\\u00xx" (lower-case hex) for the others; UTF-8 bytes as they are.
void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += kHex[u >> 4];
          out += kHex[u & 15];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// Upper bound of append_entry_json's bytes (an escape is at most 6 bytes for one). Reserved pages that are never
// written cost address space, not memory.
std::size_t entry_json_bound(const EntryList& list, std::size_t i) {
  return 6 * (list.path_size(i) + list.link_target(i).size()) + 192;
}

// {"path":..,"type":..,"mode":..[,"size":..,"sha256":..][,"target":..],"frame":..}, keys in this order. `path` is
// scratch space for the entry's path (EntryList builds it there).
void append_entry_json(std::string& out, const EntryList& list, std::size_t i, std::string& path) {
  path.clear();
  list.append_path(path, i);
  EntryType type = list.type(i);
  out += "{\"path\":";
  append_json_string(out, path);
  out += ",\"type\":\"";
  out += to_string(type);
  out += "\",\"mode\":\"";
  out += mode_string(list.mode(i));
  out += '"';
  if (type == EntryType::file) {
    out += ",\"size\":";
    out += std::to_string(list.file_size(i));
    out += ",\"sha256\":\"";
    out += to_hex(list.sha256(i));
    out += '"';
  }
  if (type == EntryType::symlink) {
    out += ",\"target\":";
    append_json_string(out, list.link_target(i));
  }
  out += ",\"frame\":";
  out += std::to_string(list.frame(i));
  out += '}';
}

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw IntegrityError("manifest field '" + field + "' " + why);
}

// An untrusted name inside a message: quoted and escaped (util/escape.hpp), so the message stays one line.
std::string q(std::string_view untrusted) { return "'" + escaped(untrusted) + "'"; }

// Where a field lies, for messages ("entries[3]"): spelled out only when a message is built, so parsing a million
// entries builds no names.
class Where {
 public:
  Where(const char* name) : name_(name) {}         // NOLINT(google-explicit-constructor): a plain name is a place
  Where(const std::string& name) : name_(name) {}  // NOLINT(google-explicit-constructor)
  Where(std::string_view array, std::size_t index) : name_(array), index_(index) {}
  [[nodiscard]] std::string str() const {
    std::string out(name_);
    if (index_ != kNoIndex) out += "[" + std::to_string(index_) + "]";
    return out;
  }
  [[nodiscard]] std::string field(const char* key) const { return str() + "." + key; }

 private:
  static constexpr std::size_t kNoIndex = static_cast<std::size_t>(-1);
  std::string_view name_;
  std::size_t index_ = kNoIndex;
};

const json& need(const json& obj, const char* key, const Where& where) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(where.field(key), "is missing");
  return *it;
}

std::uint64_t get_u64(const json& obj, const char* key, const Where& where) {
  const json& v = need(obj, key, where);
  if (!v.is_number_unsigned()) bad(where.field(key), "is not a non-negative integer");
  return v.get<std::uint64_t>();
}

// The string value of `key`, a view into the tree (valid while it lives).
const std::string& string_ref(const json& obj, const char* key, const Where& where) {
  const json& v = need(obj, key, where);
  if (!v.is_string()) bad(where.field(key), "is not a string");
  return v.get_ref<const std::string&>();
}

std::string get_string(const json& obj, const char* key, const Where& where) { return string_ref(obj, key, where); }

Digest get_digest(const json& obj, const char* key, const Where& where) {
  auto d = digest_from_hex(string_ref(obj, key, where));
  if (!d) bad(where.field(key), "is not a lower-case SHA-256 hex digest");
  return *d;
}

std::uint32_t parse_mode(const std::string& text, const Where& where) {
  std::uint32_t mode = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
  if (text.size() != 4 || ec != std::errc{} || ptr != text.data() + text.size())
    bad(where.field("mode"), "is not a 4-digit octal mode");
  return mode;
}

EntryType parse_type(const std::string& text, const Where& where) {
  if (text == "file") return EntryType::file;
  if (text == "dir") return EntryType::dir;
  if (text == "symlink") return EntryType::symlink;
  bad(where.field("type"), "has unknown entry type " + q(text));
}

ComponentKind parse_kind(const std::string& text, const std::string& where) {
  if (text == "inductor") return ComponentKind::inductor;
  if (text == "triton") return ComponentKind::triton;
  if (text == "extra") return ComponentKind::extra;
  bad(where, "has unknown component kind " + q(text));
}

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
    if (part.size() > 255) bad(where, "has a name longer than 255 bytes in " + q(path));
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

Frame parse_frame(const json& o, std::size_t i) {
  Where where("frames", i);
  Frame f;
  f.offset = get_u64(o, "offset", where);
  f.compressed_size = get_u64(o, "compressed_size", where);
  f.raw_size = get_u64(o, "raw_size", where);
  f.sha256 = get_digest(o, "sha256", where);
  f.first_entry = get_u64(o, "first_entry", where);
  f.entry_count = get_u64(o, "entry_count", where);
  return f;
}

Entry parse_entry(const json& o, std::size_t i) {
  Where where("entries", i);
  if (!o.is_object()) bad(where.str(), "is not an object");
  Entry e;
  e.path = get_string(o, "path", where);
  e.type = parse_type(string_ref(o, "type", where), where);
  e.mode = parse_mode(string_ref(o, "mode", where), where);
  if (e.type == EntryType::file) {
    e.size = get_u64(o, "size", where);
    e.sha256 = get_digest(o, "sha256", where);
  }
  if (e.type == EntryType::symlink) e.link_target = get_string(o, "target", where);
  std::uint64_t frame = get_u64(o, "frame", where);
  if (frame > UINT32_MAX) bad(where.field("frame"), "is out of range");
  e.frame = static_cast<std::uint32_t>(frame);
  return e;
}

using ComponentNames = std::unordered_set<std::string_view>;
ComponentNames validate_components(const std::vector<Component>& components);

}  // namespace

std::string_view to_string(ComponentKind kind) {
  switch (kind) {
    case ComponentKind::inductor:
      return "inductor";
    case ComponentKind::triton:
      return "triton";
    case ComponentKind::extra:
      return "extra";
  }
  return "?";
}

bool is_valid_component_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.' || name.front() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
  });
}

std::string_view component_of(std::string_view path) { return path.substr(0, path.find('/')); }

std::string_view relative_of(std::string_view path) {
  auto pos = path.find('/');
  return pos == std::string_view::npos ? std::string_view{} : path.substr(pos + 1);
}

std::uint64_t Manifest::payload_size() const { return frames.empty() ? 0 : frames.back().offset + frames.back().compressed_size; }

std::string Manifest::to_json() const {
  ojson root;
  root["format"] = version;
  root["created_by"] = created_by;
  root["compression"] = ojson{{"codec", compression.codec}, {"level", compression.level}, {"window_log", compression.window_log}};
  // Re-parsed through the guard: dump() recurses, so what is written out is bounded like what is read in.
  root["fingerprint"] = parse_untrusted<ojson>(fingerprint_json, "fingerprint");
  ojson comps = ojson::array();
  for (const Component& c : components) {
    comps.push_back(
        ojson{{"name", c.name}, {"kind", to_string(c.kind)}, {"source", c.source}, {"files", c.files}, {"bytes", c.bytes}});
  }
  root["components"] = std::move(comps);
  root["tar_size"] = tar_size;
  ojson fr = ojson::array();
  for (const Frame& f : frames) {
    fr.push_back(ojson{{"offset", f.offset},
                       {"compressed_size", f.compressed_size},
                       {"raw_size", f.raw_size},
                       {"sha256", to_hex(f.sha256)},
                       {"first_entry", f.first_entry},
                       {"entry_count", f.entry_count}});
  }
  root["frames"] = std::move(fr);
  root["entries"] = ojson::array();
  // Entries are written one at a time after the rest: a document tree of every entry would cost 1-2 KiB per
  // entry. They are written by hand, as nlohmann's dump() writes them (tests pin the bytes), because building a
  // JSON object per entry was most of create's time at a million files. The string is reserved to its final
  // size, so it does not reallocate (a doubling string holds up to twice the manifest).
  std::string out = root.dump();
  out.resize(out.size() - 3);  // drop "[]}" of the empty "entries" array
  std::size_t bytes = out.size() + 3;
  for (std::size_t i = 0; i < entries.size(); ++i) bytes += entry_json_bound(entries, i);
  out.reserve(bytes);
  out += '[';
  std::string path;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (i != 0) out += ',';
    append_entry_json(out, entries, i, path);
  }
  out += "]}";
  return out;
}

namespace {

// The general reader: any JSON, every rule checked, every refusal named. `given`: entries already read from this
// manifest's array (parse_canonical), `text` then holding an empty array in its place.
Manifest parse_general_with(std::string_view text, const Limits& limits, EntryList* given) {
  // Entries and frames are converted as they are parsed and dropped from the document tree, so memory holds one
  // entry's tree at a time rather than a tree of every entry (1.6 KiB each: 160 MB at 100k files). Everything
  // else stays in the tree, so it is counted: past limits.max_json_values the manifest is refused before the tree
  // grows (a 512 MiB fingerprint or component list would otherwise cost gigabytes).
  EntryList entries;
  std::vector<Frame> frames;
  std::string top_key;
  bool in_entries = false;           // top_key is "entries"
  bool in_frames = false;            // top_key is "frames"
  std::size_t kept = 0;              // JSON values in the tree now
  std::size_t kept_before_item = 0;  // ... when the entry or frame being parsed began
  JsonFilter<json> stream = [&](int depth, json::parse_event_t event, json& parsed) {
    using Event = json::parse_event_t;
    if (event == Event::key && depth == 1) {
      top_key = parsed.get_ref<const std::string&>();
      in_entries = top_key == "entries";
      in_frames = top_key == "frames";
    }
    bool streamed = depth == 2 && (in_entries || in_frames);
    if (event == Event::value || event == Event::object_start || event == Event::array_start) {
      if (streamed && event == Event::object_start) kept_before_item = kept;
      // defence: json-values-bound
      if (++kept > limits.max_json_values) {
        bad(top_key.empty() ? "(root)" : escaped(top_key),
            "holds more than " + std::to_string(limits.max_json_values) + " JSON values besides the entries and frames");
      }
    }
    if (!streamed || event != Event::object_end) return true;
    if (in_entries) {
      // defence: entry-count-bound
      if (entries.size() >= limits.max_entries)
        bad("entries", "has more than " + std::to_string(limits.max_entries) + " entries");
      entries.push_back(parse_entry(parsed, entries.size()));
    } else {
      // defence: frame-count-bound
      if (frames.size() >= limits.max_frames) bad("frames", "has more than " + std::to_string(limits.max_frames) + " frames");
      frames.push_back(parse_frame(parsed, frames.size()));
    }
    kept = kept_before_item;
    return false;
  };
  json root;
  try {
    root = parse_untrusted<json>(text, "manifest", stream);
  } catch (const json::exception& e) {
    throw IntegrityError(std::string("manifest has a field of the wrong type: ") + escaped(e.what()));
  }
  if (!root.is_object()) bad("(root)", "is not an object");
  if (given != nullptr) entries = std::move(*given);
  entries.forget_folders();  // the folder index served the parse; validation walks the list's own folder links
  try {
    return Manifest::from_json_tree(root, std::move(frames), std::move(entries), limits);
  } catch (const json::exception& e) {
    throw IntegrityError(std::string("manifest has a field of the wrong type: ") + escaped(e.what()));
  }
}

// The manifest as create writes it, its entries array last: the array read by read_canonical_entries, the rest
// (with an empty array in its place) by the general reader. Nullopt when the array is not in create's form or
// anything is refused: the general reader then reads the whole text and gives the verdict.
std::optional<Manifest> parse_canonical(std::string_view text, const Limits& limits) {
  constexpr std::string_view kKey = ",\"entries\":";
  std::size_t key = text.find(kKey);
  if (key == std::string_view::npos || !text.ends_with("]}")) return std::nullopt;
  std::size_t array_at = key + kKey.size();
  std::string_view array = text.substr(array_at, text.size() - 1 - array_at);
  try {
    std::optional<EntryList> entries = read_canonical_entries(array, limits.max_entries);
    if (!entries) return std::nullopt;
    std::string rest(text.substr(0, array_at));
    rest += "[]}";
    return parse_general_with(rest, limits, &*entries);
  } catch (const IntegrityError&) {
    return std::nullopt;
  }
}

}  // namespace

Manifest Manifest::parse(std::string_view text, const Limits& limits) {
  if (std::optional<Manifest> m = parse_canonical(text, limits)) return std::move(*m);
  return parse_general(text, limits);
}

Manifest Manifest::parse_general(std::string_view text, const Limits& limits) { return parse_general_with(text, limits, nullptr); }

Manifest Manifest::from_top_level_tree(const nlohmann::json& root) {
  Manifest m;
  const json& version = need(root, "format", "manifest");
  if (!version.is_number_integer()) bad("format", "is not an integer");
  m.version = version.get<int>();
  if (m.version != kManifestVersion) {
    throw IntegrityError("manifest format " + std::to_string(m.version) + " is not supported by this ccpack (it reads format " +
                         std::to_string(kManifestVersion) + ")");
  }
  m.created_by = get_string(root, "created_by", "manifest");
  const json& comp = need(root, "compression", "manifest");
  m.compression.codec = get_string(comp, "codec", "compression");
  m.compression.level = need(comp, "level", "compression").get<int>();
  m.compression.window_log = need(comp, "window_log", "compression").get<int>();
  const json& fp = need(root, "fingerprint", "manifest");
  if (!fp.is_object()) bad("fingerprint", "is not an object");
  m.fingerprint_json = fp.dump();
  m.tar_size = get_u64(root, "tar_size", "manifest");

  const json& comps = need(root, "components", "manifest");
  if (!comps.is_array()) bad("components", "is not an array");
  for (std::size_t i = 0; i < comps.size(); ++i) {
    std::string where = "components[" + std::to_string(i) + "]";
    Component c;
    c.name = get_string(comps[i], "name", where);
    c.kind = parse_kind(get_string(comps[i], "kind", where), where + ".kind");
    c.source = get_string(comps[i], "source", where);
    c.files = get_u64(comps[i], "files", where);
    c.bytes = get_u64(comps[i], "bytes", where);
    m.components.push_back(std::move(c));
  }
  (void)validate_components(m.components);
  return m;
}

Manifest Manifest::from_json_tree(const nlohmann::json& root, std::vector<Frame> frames, EntryList entries,
                                  const Limits& limits) {
  Manifest m = from_top_level_tree(root);
  // parse() has taken the frame and entry objects out of the tree as they were parsed; anything left is not one.
  const json& frame_list = need(root, "frames", "manifest");
  if (!frame_list.is_array() || !frame_list.empty()) bad("frames", "is not an array of objects");
  m.frames = std::move(frames);
  const json& list = need(root, "entries", "manifest");
  if (!list.is_array() || !list.empty()) bad("entries", "is not an array of objects");
  m.entries = std::move(entries);
  m.validate(limits);
  return m;
}

namespace {

// Components: valid, unique names whose kind matches (inductor and triton are built in, every other is extra).
// Returns the names, which every entry path must start with.
ComponentNames validate_components(const std::vector<Component>& components) {
  ComponentNames names;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const Component& c = components[i];
    std::string where = "components[" + std::to_string(i) + "].name";
    if (!is_valid_component_name(c.name)) bad(where, "is not a valid component name: " + q(c.name));
    if (!names.insert(c.name).second) bad(where, "repeats " + q(c.name));
    if ((c.kind == ComponentKind::extra) == (c.name == "inductor" || c.name == "triton")) {
      bad(where, q(c.name) + " does not match its kind");
    }
  }
  return names;
}

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
