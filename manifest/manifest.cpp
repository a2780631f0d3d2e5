// The manifest's small shared pieces (component kinds and names, entry paths) and its writer, Manifest::to_json:
// compact JSON with a fixed key order, the entries written by hand as nlohmann's dump() would write them. The
// reader is manifest_parse.cpp, the rules every manifest must meet manifest_validate.cpp (manifest.hpp says what).
#include "manifest/manifest.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

namespace ccpack::manifest {
namespace {

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
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
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

std::optional<ComponentKind> parse_component_kind(std::string_view text) {
  for (ComponentKind kind : {ComponentKind::inductor, ComponentKind::triton, ComponentKind::extra}) {
    if (text == to_string(kind)) return kind;
  }
  return std::nullopt;
}

ComponentKind kind_of_component(std::string_view name) {
  std::optional<ComponentKind> kind = parse_component_kind(name);
  return kind && *kind != ComponentKind::extra ? *kind : ComponentKind::extra;
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

ComponentTotals totals(const std::vector<Component>& components) {
  ComponentTotals sum;
  for (const Component& c : components) {
    sum.files += c.files;
    sum.bytes += c.bytes;
  }
  return sum;
}

std::uint64_t Manifest::payload_size() const { return frames.empty() ? 0 : frames.back().offset + frames.back().compressed_size; }

std::string Manifest::to_json() const {
  ojson root;
  root["format"] = version;
  root["created_by"] = created_by;
  root["compression"] = ojson{{"codec", compression.codec}, {"level", compression.level}, {"window_log", compression.window_log}};
  root["fingerprint"] = fingerprint.to_tree();
  ojson comps = ojson::array();
  for (const Component& c : components) {
    comps.push_back(
        ojson{{"name", c.name}, {"kind", to_string(c.kind)}, {"source", c.source}, {"files", c.files}, {"bytes", c.bytes}});
  }
  root["components"] = std::move(comps);
  if (settle) root["settle"] = settle->to_tree();  // absent from a plain create: its bytes are as before
  if (delta) root["delta"] = delta->to_tree();     // likewise (delta_record.hpp)
  if (merge) root["merge"] = merge->to_tree();
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

std::string Manifest::top_level_json() const {
  Manifest top;
  top.version = version;
  top.created_by = created_by;
  top.compression = compression;
  top.fingerprint = fingerprint;
  top.components = components;
  top.settle = settle;
  top.delta = delta;
  top.merge = merge;
  top.tar_size = tar_size;
  return top.to_json();
}

}  // namespace ccpack::manifest
