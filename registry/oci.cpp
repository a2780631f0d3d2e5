// OCI documents and references for ccpack archives; the contract is described in oci.hpp.
#include "registry/oci.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::registry::oci {
namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

[[noreturn]] void bad(std::string_view what, const std::string& field, const std::string& why) {
  throw IntegrityError(std::string(what) + ": field '" + field + "' " + why);
}

// Untrusted JSON: nesting past kMaxJsonDepth is refused while parsing, before any tree is built that deep.
json parse_bounded(std::string_view text, std::string_view what) {
  json::parser_callback_t limit = [what](int depth, json::parse_event_t, json&) {
    if (depth > kMaxJsonDepth) throw IntegrityError(std::string(what) + " nests deeper than " + std::to_string(kMaxJsonDepth));
    return true;
  };
  try {
    json doc = json::parse(text.begin(), text.end(), limit);
    if (!doc.is_object()) throw IntegrityError(std::string(what) + " is not a JSON object");
    return doc;
  } catch (const json::exception& e) {
    throw IntegrityError(std::string(what) + " is not valid JSON (" + e.what() + ")");
  }
}

std::string get_string(const json& obj, const char* key, std::string_view what, const std::string& where, bool required) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    if (required) bad(what, where + key, "is missing");
    return {};
  }
  if (!it->is_string()) bad(what, where + key, "is not a string");
  std::string s = it->get<std::string>();
  if (s.size() > 255) bad(what, where + key, "is longer than 255 bytes");
  return s;
}

Annotations parse_annotations(const json& obj, std::string_view what, const std::string& where) {
  Annotations out;
  auto it = obj.find("annotations");
  if (it == obj.end()) return out;
  if (!it->is_object()) bad(what, where + "annotations", "is not an object");
  if (it->size() > kMaxAnnotations)
    bad(what, where + "annotations", "has more than " + std::to_string(kMaxAnnotations) + " entries");
  for (const auto& [key, value] : it->items()) {
    if (!value.is_string()) bad(what, where + "annotations." + escaped(key, 120), "is not a string");
    if (key.size() > kMaxAnnotationBytes || value.get_ref<const std::string&>().size() > kMaxAnnotationBytes) {
      bad(what, where + "annotations." + escaped(key, 120), "is longer than " + std::to_string(kMaxAnnotationBytes) + " bytes");
    }
    out.emplace(key, value.get<std::string>());
  }
  return out;
}

Descriptor parse_descriptor(const json& obj, std::string_view what, const std::string& where) {
  if (!obj.is_object()) bad(what, where.substr(0, where.size() - 1), "is not an object");
  Descriptor d;
  d.media_type = get_string(obj, "mediaType", what, where, true);
  d.digest = get_string(obj, "digest", what, where, true);
  if (!parse_digest(d.digest)) bad(what, where + "digest", "is not a sha256 digest: '" + escaped(d.digest, 120) + "'");
  auto size = obj.find("size");
  if (size == obj.end()) bad(what, where + "size", "is missing");
  if (!size->is_number_unsigned()) bad(what, where + "size", "is not a non-negative integer");
  d.size = size->get<std::uint64_t>();
  d.artifact_type = get_string(obj, "artifactType", what, where, false);
  d.annotations = parse_annotations(obj, what, where);
  return d;
}

void check_schema(const json& doc, std::string_view what, std::string_view media_type) {
  auto v = doc.find("schemaVersion");
  if (v == doc.end() || !v->is_number_unsigned() || v->get<std::uint64_t>() != 2) bad(what, "schemaVersion", "is not 2");
  std::string mt = get_string(doc, "mediaType", what, "", false);
  if (!mt.empty() && mt != media_type)
    bad(what, "mediaType", "is '" + escaped(mt, 120) + "', expected " + std::string(media_type));
}

ojson descriptor_json(const Descriptor& d) {
  ojson j{{"mediaType", d.media_type}, {"digest", d.digest}, {"size", d.size}};
  if (!d.artifact_type.empty()) j["artifactType"] = d.artifact_type;
  if (!d.annotations.empty()) j["annotations"] = d.annotations;
  return j;
}

bool valid_repository(std::string_view repo) {
  if (repo.empty() || repo.size() > 255) return false;
  // path-component := [a-z0-9]+ ([._-]+ [a-z0-9]+)*, components joined by '/'
  bool need_alnum = true;
  for (char ch : repo) {
    bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (alnum) {
      need_alnum = false;
    } else if (ch == '.' || ch == '_' || ch == '-' || ch == '/') {
      if (need_alnum) return false;
      need_alnum = true;
    } else {
      return false;
    }
  }
  return !need_alnum;
}

bool valid_tag(std::string_view tag) {
  if (tag.empty() || tag.size() > 128 || tag[0] == '.' || tag[0] == '-') return false;
  return std::all_of(tag.begin(), tag.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' ||
           ch == '-';
  });
}

bool valid_host(std::string_view host) {
  std::size_t colon = host.find(':');
  std::string_view name = host.substr(0, colon);
  if (name.empty() || name.size() > 253) return false;
  bool name_ok = std::all_of(name.begin(), name.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-';
  });
  if (!name_ok) return false;
  if (colon == std::string_view::npos) return true;
  std::string_view port = host.substr(colon + 1);
  return !port.empty() && port.size() <= 5 &&
         std::all_of(port.begin(), port.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

}  // namespace

bool is_valid_tag(std::string_view tag) { return valid_tag(tag); }

std::string to_json(const ImageManifest& m) {
  ojson layers = ojson::array();
  for (const Descriptor& d : m.layers) layers.push_back(descriptor_json(d));
  ojson j{{"schemaVersion", 2}, {"mediaType", kImageManifestType}};
  if (!m.artifact_type.empty()) j["artifactType"] = m.artifact_type;
  j["config"] = descriptor_json(m.config);
  j["layers"] = layers;
  if (!m.annotations.empty()) j["annotations"] = m.annotations;
  return j.dump();
}

std::string to_json(const Index& index) {
  ojson manifests = ojson::array();
  for (const Descriptor& d : index.manifests) manifests.push_back(descriptor_json(d));
  ojson j{{"schemaVersion", 2}, {"mediaType", kImageIndexType}, {"manifests", manifests}};
  if (!index.annotations.empty()) j["annotations"] = index.annotations;
  return j.dump();
}

std::string image_config_json(std::string_view cpu_arch, std::string_view diff_id) {
  std::string arch = cpu_arch == "x86_64" || cpu_arch == kAbsent || cpu_arch.empty() ? "amd64"
                     : cpu_arch == "aarch64"                                         ? "arm64"
                                                                                     : std::string(cpu_arch);
  ojson j{{"architecture", arch},
          {"os", "linux"},
          {"config", ojson::object()},
          {"rootfs", {{"type", "layers"}, {"diff_ids", {std::string(diff_id)}}}}};
  return j.dump();
}

ImageManifest parse_image_manifest(std::string_view text, std::string_view what) {
  json doc = parse_bounded(text, what);
  check_schema(doc, what, kImageManifestType);
  ImageManifest m;
  m.artifact_type = get_string(doc, "artifactType", what, "", false);
  auto config = doc.find("config");
  if (config == doc.end()) bad(what, "config", "is missing");
  m.config = parse_descriptor(*config, what, "config.");
  auto layers = doc.find("layers");
  if (layers == doc.end() || !layers->is_array()) bad(what, "layers", "is missing or not an array");
  if (layers->size() > kMaxLayers) bad(what, "layers", "has more than " + std::to_string(kMaxLayers) + " entries");
  for (std::size_t i = 0; i < layers->size(); ++i) {
    m.layers.push_back(parse_descriptor((*layers)[i], what, "layers[" + std::to_string(i) + "]."));
  }
  m.annotations = parse_annotations(doc, what, "");
  return m;
}

Index parse_index(std::string_view text, std::string_view what) {
  json doc = parse_bounded(text, what);
  check_schema(doc, what, kImageIndexType);
  Index index;
  auto manifests = doc.find("manifests");
  if (manifests == doc.end() || !manifests->is_array()) bad(what, "manifests", "is missing or not an array");
  if (manifests->size() > kMaxIndexEntries)
    bad(what, "manifests", "has more than " + std::to_string(kMaxIndexEntries) + " entries");
  for (std::size_t i = 0; i < manifests->size(); ++i) {
    index.manifests.push_back(parse_descriptor((*manifests)[i], what, "manifests[" + std::to_string(i) + "]."));
  }
  index.annotations = parse_annotations(doc, what, "");
  return index;
}

std::string media_type_of(std::string_view text, std::string_view content_type) {
  try {
    json doc = parse_bounded(text, "document");
    auto it = doc.find("mediaType");
    if (it != doc.end() && it->is_string()) return it->get<std::string>();
  } catch (const IntegrityError&) {
  }
  std::string_view ct = content_type.substr(0, content_type.find(';'));
  while (!ct.empty() && ct.back() == ' ') ct.remove_suffix(1);
  return std::string(ct);
}

std::string digest_string(const Digest& d) { return "sha256:" + to_hex(d); }

std::string digest_of(std::string_view bytes) { return digest_string(Sha256::of(bytes)); }

std::optional<Digest> parse_digest(std::string_view text) {
  if (!text.starts_with("sha256:")) return std::nullopt;
  return digest_from_hex(text.substr(7));
}

Selection selection_of(const manifest::Fingerprint& fingerprint) {
  Selection s;
  for (std::string_view field : kSelectionFields) {
    const manifest::FieldValue* v = fingerprint.get(field);
    s[std::string(field)] = v && v->value ? *v->value : std::string(kAbsent);
  }
  return s;
}

std::optional<Selection> selection_of_annotations(const Annotations& annotations) {
  Selection s;
  bool any = false;
  for (std::string_view field : kSelectionFields) {
    auto it = annotations.find(std::string(kAnnotationFieldPrefix) + std::string(field));
    any = any || it != annotations.end();
    s[std::string(field)] = it == annotations.end() ? std::string(kAbsent) : it->second;
  }
  if (!any) return std::nullopt;
  return s;
}

Annotations archive_annotations(const manifest::Fingerprint& fingerprint, const Digest& manifest_sha256,
                                std::uint64_t header_size, std::string_view title, std::string_view what) {
  Annotations a;
  for (const auto& [field, value] : selection_of(fingerprint)) {
    if (value.size() > kMaxAnnotationBytes) bad(what, "fields." + field + ".value", "is too long");
    a[std::string(kAnnotationFieldPrefix) + field] = value;
  }
  a[std::string(kAnnotationManifestSha256)] = to_hex(manifest_sha256);
  a[std::string(kAnnotationHeaderSize)] = std::to_string(header_size);
  if (!title.empty()) a[std::string(kAnnotationTitle)] = std::string(title);
  return a;
}

std::optional<std::string> first_mismatch(const Selection& machine, const Selection& archive) {
  for (std::string_view f : kSelectionFields) {
    std::string field(f);
    auto m = machine.find(field);
    auto a = archive.find(field);
    std::string mv = m == machine.end() ? std::string(kAbsent) : m->second;
    std::string av = a == archive.end() ? std::string(kAbsent) : a->second;
    if (mv != av) return field + " is '" + escaped(av, 120) + "' in the archive, '" + escaped(mv, 120) + "' here";
  }
  return std::nullopt;
}

std::string describe(const Selection& selection) {
  std::string out;
  for (std::string_view f : kSelectionFields) {
    auto it = selection.find(std::string(f));
    if (it == selection.end() || it->second == kAbsent) continue;
    if (!out.empty()) out += ' ';
    out += std::string(f) + "=" + escaped(it->second, 120);
  }
  return out.empty() ? "(no fingerprint)" : out;
}

std::string Reference::api_host() const { return registry == "docker.io" ? "registry-1.docker.io" : registry; }

std::string Reference::str() const {
  std::string s = registry + "/" + repository;
  if (!tag.empty()) s += ":" + tag;
  if (!digest.empty()) s += "@" + digest;
  return s;
}

Reference parse_reference(std::string_view text) {
  std::string_view rest = text;
  if (is_reference(rest)) rest.remove_prefix(kReferenceScheme.size());
  auto fail = [&](const std::string& why) -> Reference {
    throw UsageError("registry reference '" + escaped(text, 120) + "' " + why +
                     " (expected [oci://]host[:port]/repository[:tag][@sha256:...])");
  };
  Reference r;
  std::size_t at = rest.find('@');
  if (at != std::string_view::npos) {
    r.digest = std::string(rest.substr(at + 1));
    if (!parse_digest(r.digest)) return fail("has a digest that is not sha256:<64 lower-case hex digits>");
    rest = rest.substr(0, at);
  }
  std::size_t slash = rest.find('/');
  std::string_view first = rest.substr(0, slash);
  if (slash != std::string_view::npos &&
      (first.find('.') != std::string_view::npos || first.find(':') != std::string_view::npos || first == "localhost")) {
    r.registry = std::string(first);
    rest = rest.substr(slash + 1);
  } else {
    r.registry = "docker.io";
  }
  std::size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && rest.find('/', colon) == std::string_view::npos) {
    r.tag = std::string(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
    if (!valid_tag(r.tag)) return fail("has an invalid tag");
  } else if (r.digest.empty()) {
    r.tag = "latest";
  }
  r.repository = std::string(rest);
  if (r.registry == "docker.io" && r.repository.find('/') == std::string::npos) r.repository = "library/" + r.repository;
  if (!valid_host(r.registry)) return fail("has an invalid registry host");
  if (!valid_repository(r.repository)) return fail("has an invalid repository name (lower-case letters, digits, . _ - /)");
  return r;
}

std::optional<std::string> scheme_less_reference(std::string_view text) {
  if (is_reference(text)) return std::nullopt;
  std::string_view host = text.substr(0, text.find('/'));
  if (host.size() == text.size() || (host.find_first_of(".:") == std::string_view::npos && host != "localhost"))
    return std::nullopt;
  std::string ref = std::string(kReferenceScheme) + std::string(text);
  try {
    (void)parse_reference(ref);
  } catch (const Error&) {
    return std::nullopt;
  }
  return ref;
}

}  // namespace ccpack::registry::oci
