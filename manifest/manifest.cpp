#include "manifest/manifest.hpp"

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "util/error.hpp"

namespace ccpack::manifest {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string mode_string(std::uint32_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

[[noreturn]] void bad(const std::string& field, const std::string& why) {
  throw IntegrityError("manifest field '" + field + "' " + why);
}

const json& need(const json& obj, const char* key, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) bad(where + "." + key, "is missing");
  return *it;
}

std::uint64_t get_u64(const json& obj, const char* key, const std::string& where) {
  const json& v = need(obj, key, where);
  if (!v.is_number_unsigned()) bad(where + "." + key, "is not a non-negative integer");
  return v.get<std::uint64_t>();
}

std::string get_string(const json& obj, const char* key, const std::string& where) {
  const json& v = need(obj, key, where);
  if (!v.is_string()) bad(where + "." + key, "is not a string");
  return v.get<std::string>();
}

Digest get_digest(const json& obj, const char* key, const std::string& where) {
  auto d = digest_from_hex(get_string(obj, key, where));
  if (!d) bad(where + "." + key, "is not a lower-case SHA-256 hex digest");
  return *d;
}

std::uint32_t parse_mode(const std::string& text, const std::string& where) {
  std::uint32_t mode = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), mode, 8);
  if (text.size() != 4 || ec != std::errc{} || ptr != text.data() + text.size()) bad(where, "is not a 4-digit octal mode");
  return mode;
}

EntryType parse_type(const std::string& text, const std::string& where) {
  if (text == "file") return EntryType::file;
  if (text == "dir") return EntryType::dir;
  if (text == "symlink") return EntryType::symlink;
  bad(where, "has unknown entry type '" + text + "'");
}

ComponentKind parse_kind(const std::string& text, const std::string& where) {
  if (text == "inductor") return ComponentKind::inductor;
  if (text == "triton") return ComponentKind::triton;
  if (text == "extra") return ComponentKind::extra;
  bad(where, "has unknown component kind '" + text + "'");
}

// Lexically resolves `target` relative to the folder holding `link` (both inside one component) and tells whether
// the result stays inside the component root.
bool link_stays_inside(std::string_view link_relative, std::string_view target) {
  if (target.empty() || target.front() == '/') return false;
  std::vector<std::string_view> stack;
  std::string_view dir = link_relative;
  auto slash = dir.rfind('/');
  dir = slash == std::string_view::npos ? std::string_view{} : dir.substr(0, slash);
  auto push_parts = [&stack](std::string_view s) {
    while (!s.empty()) {
      auto pos = s.find('/');
      std::string_view part = s.substr(0, pos);
      s = pos == std::string_view::npos ? std::string_view{} : s.substr(pos + 1);
      if (part.empty() || part == ".") continue;
      if (part == "..") {
        if (stack.empty()) return false;
        stack.pop_back();
      } else {
        stack.push_back(part);
      }
    }
    return true;
  };
  return push_parts(dir) && push_parts(target);
}

void check_path(const std::string& path, const Limits& limits, const std::string& where) {
  if (path.empty()) bad(where, "is empty");
  if (path.size() > limits.max_path_length) bad(where, "is longer than " + std::to_string(limits.max_path_length) + " bytes");
  if (path.front() == '/') bad(where, "is an absolute path: '" + path + "'");
  std::string_view rest = path;
  while (true) {
    auto pos = rest.find('/');
    std::string_view part = rest.substr(0, pos);
    if (part.empty() || part == "." || part == "..") bad(where, "has an unsafe component in '" + path + "'");
    if (part.size() > 255) bad(where, "has a name longer than 255 bytes in '" + path + "'");
    if (part.find('\0') != std::string_view::npos) bad(where, "contains a NUL byte");
    if (pos == std::string_view::npos) break;
    rest.remove_prefix(pos + 1);
  }
}

Entry parse_entry(const json& o, std::size_t i) {
  std::string where = "entries[" + std::to_string(i) + "]";
  if (!o.is_object()) bad(where, "is not an object");
  Entry e;
  e.path = get_string(o, "path", where);
  e.type = parse_type(get_string(o, "type", where), where + ".type");
  e.mode = parse_mode(get_string(o, "mode", where), where + ".mode");
  if (e.type == EntryType::file) {
    e.size = get_u64(o, "size", where);
    e.sha256 = get_digest(o, "sha256", where);
  }
  if (e.type == EntryType::symlink) e.link_target = get_string(o, "target", where);
  std::uint64_t frame = get_u64(o, "frame", where);
  if (frame > UINT32_MAX) bad(where + ".frame", "is out of range");
  e.frame = static_cast<std::uint32_t>(frame);
  return e;
}

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
  root["fingerprint"] = ojson::parse(fingerprint_json);
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
  // Entries are dumped one at a time and spliced in: a document tree of every entry would cost more memory than
  // the rest of create (1-2 KiB per entry).
  std::string out = root.dump();
  out.resize(out.size() - 3);  // drop "[]}" of the empty "entries" array
  out += '[';
  bool first = true;
  for (const Entry& e : entries) {
    ojson o{{"path", e.path}, {"type", to_string(e.type)}, {"mode", mode_string(e.mode)}};
    if (e.type == EntryType::file) {
      o["size"] = e.size;
      o["sha256"] = to_hex(e.sha256);
    }
    if (e.type == EntryType::symlink) o["target"] = e.link_target;
    o["frame"] = e.frame;
    if (!first) out += ',';
    first = false;
    out += o.dump();
  }
  out += "]}";
  return out;
}

Manifest Manifest::parse(std::string_view text, const Limits& limits) {
  // Entries are converted as they are parsed and dropped from the document tree, so memory holds one entry's
  // tree at a time rather than a tree of every entry (1.6 KiB each: 160 MB at 100k files).
  std::vector<Entry> entries;
  std::string top_key;
  auto take_entries = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth == 1 && event == json::parse_event_t::key) {
      top_key = parsed.get<std::string>();
    } else if (depth == 2 && event == json::parse_event_t::object_end && top_key == "entries") {
      if (entries.size() >= limits.max_entries)
        bad("entries", "has more than " + std::to_string(limits.max_entries) + " entries");
      entries.push_back(parse_entry(parsed, entries.size()));
      return false;
    }
    return true;
  };
  json root;
  try {
    root = json::parse(text, take_entries);
  } catch (const json::parse_error& e) {
    throw IntegrityError(std::string("manifest is not valid JSON: ") + e.what());
  } catch (const json::exception& e) {
    throw IntegrityError(std::string("manifest has a field of the wrong type: ") + e.what());
  }
  if (!root.is_object()) bad("(root)", "is not an object");
  try {
    return from_json_tree(root, std::move(entries), limits);
  } catch (const json::exception& e) {
    throw IntegrityError(std::string("manifest has a field of the wrong type: ") + e.what());
  }
}

Manifest Manifest::from_json_tree(const nlohmann::json& root, std::vector<Entry> entries, const Limits& limits) {
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

  const json& frames = need(root, "frames", "manifest");
  if (!frames.is_array()) bad("frames", "is not an array");
  if (frames.size() > limits.max_frames) bad("frames", "has more than " + std::to_string(limits.max_frames) + " frames");
  for (std::size_t i = 0; i < frames.size(); ++i) {
    std::string where = "frames[" + std::to_string(i) + "]";
    Frame f;
    f.offset = get_u64(frames[i], "offset", where);
    f.compressed_size = get_u64(frames[i], "compressed_size", where);
    f.raw_size = get_u64(frames[i], "raw_size", where);
    f.sha256 = get_digest(frames[i], "sha256", where);
    f.first_entry = get_u64(frames[i], "first_entry", where);
    f.entry_count = get_u64(frames[i], "entry_count", where);
    m.frames.push_back(f);
  }

  // parse() has taken the entry objects out of the tree as they were parsed; anything left is not an entry.
  const json& list = need(root, "entries", "manifest");
  if (!list.is_array() || !list.empty()) bad("entries", "is not an array of objects");
  m.entries = std::move(entries);
  m.validate(limits);
  return m;
}

void Manifest::validate(const Limits& limits) const {
  std::unordered_set<std::string_view> names;
  for (std::size_t i = 0; i < components.size(); ++i) {
    const Component& c = components[i];
    std::string where = "components[" + std::to_string(i) + "].name";
    if (!is_valid_component_name(c.name)) bad(where, "is not a valid component name: '" + c.name + "'");
    if (!names.insert(c.name).second) bad(where, "repeats '" + c.name + "'");
    if ((c.kind == ComponentKind::extra) == (c.name == "inductor" || c.name == "triton")) {
      bad(where, "'" + c.name + "' does not match its kind");
    }
  }

  // Entries: safe, unique, parents first, totals bounded.
  std::unordered_map<std::string_view, EntryType> seen;
  seen.reserve(entries.size() * 2);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    std::string where = "entries[" + std::to_string(i) + "]";
    check_path(e.path, limits, where + ".path");
    std::string_view comp = component_of(e.path);
    if (names.count(comp) == 0) bad(where + ".path", "'" + e.path + "' is not under a listed component");
    if (e.mode & ~0777u) bad(where + ".mode", "has setuid, setgid or sticky bits on '" + e.path + "'");
    if (e.type == EntryType::file) {
      if (e.size > limits.max_file_size) bad(where + ".size", "of '" + e.path + "' exceeds the limit");
      total += e.size;
      if (total > limits.max_total_size) bad(where + ".size", "makes the archive exceed the total size limit");
    }
    std::string_view rel = relative_of(e.path);
    if (rel.empty()) {
      if (e.type != EntryType::dir) bad(where + ".type", "component root '" + e.path + "' is not a folder");
    } else {
      std::string_view parent = std::string_view(e.path).substr(0, e.path.rfind('/'));
      auto it = seen.find(parent);
      if (it == seen.end() || it->second != EntryType::dir) {
        bad(where + ".path", "'" + e.path + "' comes before its folder '" + std::string(parent) + "'");
      }
    }
    if (e.type == EntryType::symlink && !link_stays_inside(rel, e.link_target)) {
      bad(where + ".target", "of symlink '" + e.path + "' points outside its folder: '" + e.link_target + "'");
    }
    if (!seen.emplace(e.path, e.type).second) bad(where + ".path", "duplicates '" + e.path + "'");
  }

  // Frames: contiguous, covering all entries in order, raw sizes adding up to the tar size.
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
      if (entries[k].frame != i)
        bad("entries[" + std::to_string(k) + "].frame", "does not match frames[" + std::to_string(i) + "]");
    }
    offset += f.compressed_size;
    next_entry += f.entry_count;
    raw += f.raw_size;
  }
  if (next_entry != entries.size()) bad("frames", "do not cover all entries");
  if (raw != tar_size) bad("tar_size", "does not equal the frames' raw sizes");
}

}  // namespace ccpack::manifest
