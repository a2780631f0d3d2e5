// Manifest::parse and its general reader: JSON in, a checked Manifest out (manifest.hpp). Entries and frames are
// converted as they stream past and dropped from the document tree; create's exact form of the entries array is
// read by a faster reader (canonical_entries.hpp) and the general reader takes the rest. Every refusal names the
// field (manifest_refusal.hpp); the rules themselves are manifest_validate.cpp's.
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>

#include "manifest/canonical_entries.hpp"
#include "manifest/json_guard.hpp"
#include "manifest/manifest.hpp"
#include "manifest/manifest_refusal.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::manifest {
namespace {

using json = nlohmann::json;
using detail::bad;
using detail::q;
using detail::validate_components;

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
  if (std::optional<ComponentKind> kind = parse_component_kind(text)) return *kind;
  bad(where, "has unknown component kind " + q(text));
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

}  // namespace

namespace {

// The general reader's filter. Entries and frames are converted as they are parsed and dropped from the document
// tree, so memory holds one entry's tree at a time rather than a tree of every entry (1.6 KiB each: 160 MB at 100k
// files). Everything else stays in the tree, so it is counted: past limits.max_json_values the manifest is refused
// before the tree grows (a 512 MiB fingerprint or component list would otherwise cost gigabytes).
class ItemStream {
 public:
  explicit ItemStream(const Limits& limits) : limits_(limits) {}
  EntryList entries;
  std::vector<Frame> frames;

  // JsonFilter's call: false drops the value just parsed from the tree (an entry or a frame, once converted).
  bool on_event(int depth, json::parse_event_t event, json& parsed) {
    using Event = json::parse_event_t;
    if (event == Event::key && depth == 1) {
      top_key_ = parsed.get_ref<const std::string&>();
      in_entries_ = top_key_ == "entries";
      in_frames_ = top_key_ == "frames";
    }
    bool streamed = depth == 2 && (in_entries_ || in_frames_);
    if (event == Event::value || event == Event::object_start || event == Event::array_start) {
      if (streamed && event == Event::object_start) kept_before_item_ = kept_;
      // defence: json-values-bound
      if (++kept_ > limits_.max_json_values) {
        bad(top_key_.empty() ? "(root)" : escaped(top_key_),
            "holds more than " + std::to_string(limits_.max_json_values) + " JSON values besides the entries and frames");
      }
    }
    if (!streamed || event != Event::object_end) return true;
    if (in_entries_) {
      // defence: entry-count-bound
      if (entries.size() >= limits_.max_entries)
        bad("entries", "has more than " + std::to_string(limits_.max_entries) + " entries");
      entries.push_back(parse_entry(parsed, entries.size()));
    } else {
      // defence: frame-count-bound
      if (frames.size() >= limits_.max_frames) bad("frames", "has more than " + std::to_string(limits_.max_frames) + " frames");
      frames.push_back(parse_frame(parsed, frames.size()));
    }
    kept_ = kept_before_item_;
    return false;
  }

 private:
  const Limits& limits_;
  std::string top_key_;
  bool in_entries_ = false;           // top_key_ is "entries"
  bool in_frames_ = false;            // top_key_ is "frames"
  std::size_t kept_ = 0;              // JSON values in the tree now
  std::size_t kept_before_item_ = 0;  // ... when the entry or frame being parsed began
};

// The general reader: any JSON, every rule checked, every refusal named. `given`: entries already read from this
// manifest's array (parse_canonical), `text` then holding an empty array in its place.
Manifest parse_general_with(std::string_view text, const Limits& limits, EntryList* given) {
  ItemStream items(limits);
  JsonFilter<json> stream = [&items](int depth, json::parse_event_t event, json& parsed) {
    return items.on_event(depth, event, parsed);
  };
  json root;
  try {
    root = parse_untrusted<json>(text, "manifest", stream);
  } catch (const json::exception& e) {
    throw IntegrityError(std::string("manifest has a field of the wrong type: ") + escaped(e.what()));
  }
  if (!root.is_object()) bad("(root)", "is not an object");
  EntryList entries = given != nullptr ? std::move(*given) : std::move(items.entries);
  entries.forget_folders();  // the folder index served the parse; validation walks the list's own folder links
  try {
    return Manifest::from_json_tree(root, std::move(items.frames), std::move(entries), limits);
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

Manifest Manifest::parse_general(std::string_view text, const Limits& limits) {
  return parse_general_with(text, limits, nullptr);
}

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
  m.fingerprint = Fingerprint::from_json(fp.dump());  // through its own gate: bounds, known keys, types
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
  if (auto settle = root.find("settle"); settle != root.end()) m.settle = SettleRecord::from_tree(*settle);
  if (auto delta = root.find("delta"); delta != root.end()) m.delta = DeltaRecord::from_tree(*delta);
  if (auto merge = root.find("merge"); merge != root.end()) m.merge = MergeRecord::from_tree(*merge);
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

}  // namespace ccpack::manifest
