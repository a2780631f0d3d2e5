// Parsing and writing the signature block; the grammar is at the top of signature.hpp and in docs/FORMAT.md.
//
// Parsing is strict on purpose: the block is not covered by any hash, so anything it may hold is a place to hide
// bytes. The JSON parser's callback stops nesting deeper than an array of objects, counts signatures and catches
// repeated keys as they are read (nlohmann::json would silently keep the last one); each field is then checked,
// and finally the block must be byte-for-byte the canonical encoding of what was read, so one list of
// signatures has exactly one encoding.
#include "manifest/signature.hpp"

#include <cstdlib>
#include <ctime>
#include <nlohmann/json.hpp>

#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/sha256.hpp"

namespace ccpack::manifest {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::size_t kKeyIdDigits = 16;
constexpr std::size_t kSignatureBase64 = 88;

[[noreturn]] void bad_block(const std::string& field, const std::string& why) {
  throw IntegrityError("signature block: " + (field.empty() ? std::string() : field + " ") + why);
}

bool is_lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// "YYYY-MM-DDTHH:MM:SSZ" with each number in its range (day 01-31 whatever the month; leap second allowed).
bool is_utc_time(std::string_view s) {
  static constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:ddZ";
  if (s.size() != kShape.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (kShape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != kShape[i]) return false;
  }
  auto num = [&](std::size_t at) { return (s[at] - '0') * 10 + (s[at + 1] - '0'); };
  return num(5) >= 1 && num(5) <= 12 && num(8) >= 1 && num(8) <= 31 && num(11) <= 23 && num(14) <= 59 && num(17) <= 60;
}

std::string base64(const SignatureBytes& bytes) {
  return base64_encode(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// Canonical base64 of exactly 64 bytes, or nullopt.
std::optional<SignatureBytes> from_base64(std::string_view text) {
  if (text.size() != kSignatureBase64) return std::nullopt;
  std::optional<std::string> raw = base64_decode(text);
  SignatureBytes sig{};
  if (!raw || raw->size() != sig.size()) return std::nullopt;
  std::copy(raw->begin(), raw->end(), sig.begin());
  // non-canonical: stray bits in the last digit, bad padding, the URL-safe alphabet
  if (base64(sig) != text) return std::nullopt;
  return sig;
}

const std::string& string_field(const ojson& obj, const char* key, const std::string& where) {
  const ojson& v = obj.at(key);
  if (!v.is_string()) bad_block(where + "." + key, "is not a string");
  return v.get_ref<const std::string&>();
}

Signature parse_one(const ojson& obj, const std::string& where) {
  if (!obj.is_object()) bad_block(where, "is not an object");
  static constexpr const char* kRequired[] = {"key_id", "algorithm", "signed_at", "signature"};
  for (const char* key : kRequired) {
    if (!obj.contains(key)) bad_block(where + "." + key, "is missing");
  }
  for (const auto& item : obj.items()) {
    const std::string& k = item.key();
    if (k != "key_id" && k != "algorithm" && k != "signed_at" && k != "note" && k != "signature")
      bad_block(where, "has a field '" + escaped(k) + "' that version 1 does not define");
  }
  Signature s;
  s.key_id = string_field(obj, "key_id", where);
  if (s.key_id.size() != kKeyIdDigits || !is_lower_hex(s.key_id)) bad_block(where + ".key_id", "is not 16 lowercase hex digits");
  s.algorithm = string_field(obj, "algorithm", where);
  if (s.algorithm != kAlgorithmEd25519) bad_block(where + ".algorithm", "is '" + escaped(s.algorithm) + "', not ed25519");
  s.signed_at = string_field(obj, "signed_at", where);
  if (!is_utc_time(s.signed_at)) bad_block(where + ".signed_at", "is not a UTC time YYYY-MM-DDTHH:MM:SSZ");
  if (obj.contains("note")) {
    s.note = string_field(obj, "note", where);
    if (s.note.empty()) bad_block(where + ".note", "is empty (leave it out instead)");
    if (auto why = note_problem(s.note)) bad_block(where + ".note", *why);
  }
  auto sig = from_base64(string_field(obj, "signature", where));
  if (!sig) bad_block(where + ".signature", "is not the base64 of 64 bytes");
  s.signature = *sig;
  return s;
}

// Parses with nesting, count and repeated keys checked as the parser goes.
ojson parse_tree(std::string_view block) {
  std::size_t count = 0;
  std::vector<std::string> keys_seen;  // of the signature object being read
  auto gate = [&](int depth, ojson::parse_event_t event, ojson& parsed) {
    if (event == ojson::parse_event_t::object_start || event == ojson::parse_event_t::array_start) {
      if (depth >= 2) bad_block("signatures[" + std::to_string(count - 1) + "]", "holds a nested array or object");
      if (depth == 1 && ++count > kMaxSignatures)
        bad_block("", "holds more than " + std::to_string(kMaxSignatures) + " signatures");
      keys_seen.clear();
    } else if (event == ojson::parse_event_t::key) {
      const std::string& key = parsed.get_ref<const std::string&>();
      for (const std::string& k : keys_seen) {
        if (k == key) bad_block("signatures[" + std::to_string(count - 1) + "]." + escaped(key), "appears twice");
      }
      keys_seen.push_back(key);
    }
    return true;
  };
  try {
    return ojson::parse(block, gate);
  } catch (const ojson::parse_error& e) {
    bad_block("", "is not valid JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const ojson::exception&) {  // a number out of range, for one
    bad_block("", "is not valid JSON");
  }
}

}  // namespace

std::vector<Signature> parse_signature_block(std::string_view block) {
  if (block.size() > kMaxSignatureBlockBytes) {
    bad_block("", "is " + std::to_string(block.size()) + " bytes, more than " + std::to_string(kMaxSignatureBlockBytes));
  }
  ojson root = parse_tree(block);
  if (!root.is_array()) bad_block("", "is not a JSON array");
  std::vector<Signature> out;
  for (std::size_t i = 0; i < root.size(); ++i) {
    std::string where = "signatures[" + std::to_string(i) + "]";
    out.push_back(parse_one(root[i], where));
    for (std::size_t j = 0; j < i; ++j) {
      if (out[j].key_id == out[i].key_id) bad_block(where + ".key_id", "repeats signatures[" + std::to_string(j) + "]");
    }
  }
  if (encode_signature_block(out) != block) bad_block("", "is not in canonical form (compact JSON, fields in order)");
  return out;
}

std::string encode_signature_block(const std::vector<Signature>& signatures) {
  ojson list = ojson::array();
  for (const Signature& s : signatures) {
    ojson o{{"key_id", s.key_id}, {"algorithm", s.algorithm}, {"signed_at", s.signed_at}};
    if (!s.note.empty()) o["note"] = s.note;
    o["signature"] = base64(s.signature);
    list.push_back(std::move(o));
  }
  return list.dump();
}

std::string signed_message(std::string_view manifest, const Signature& s) { return signed_message(Sha256::of(manifest), s); }

std::string signed_message(const Digest& d, const Signature& s) {
  std::string m(kSignatureDomain);
  m.push_back('\0');
  m.append(reinterpret_cast<const char*>(d.data()), d.size());
  for (const std::string* field : {&s.algorithm, &s.key_id, &s.signed_at, &s.note}) {
    m.push_back('\0');
    m += *field;
  }
  return m;
}

std::optional<std::string> note_problem(std::string_view note) {
  if (note.size() > kMaxNoteBytes) return "is longer than " + std::to_string(kMaxNoteBytes) + " bytes";
  for (std::size_t i = 0; i < note.size();) {
    auto c = static_cast<unsigned char>(note[i]);
    if (c < 0x20 || c == 0x7f) return std::string("holds a control character");
    std::size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || i + len > note.size() || (len == 2 && c < 0xc2)) return std::string("is not UTF-8");
    std::uint32_t cp = len == 1 ? c : c & (0x7fu >> len);
    for (std::size_t k = 1; k < len; ++k) {
      auto cc = static_cast<unsigned char>(note[i + k]);
      if ((cc & 0xc0) != 0x80) return std::string("is not UTF-8");
      cp = cp << 6 | (cc & 0x3fu);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
      return std::string("is not UTF-8");
    if (cp >= 0x80 && cp <= 0x9f) return std::string("holds a control character");
    i += len;
  }
  return std::nullopt;
}

std::string signing_time() {
  std::time_t t = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr && *epoch != '\0') {
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(epoch, &end, 10);
    if (*end != '\0' || errno != 0 || *epoch == '-' || v > 253402300799ULL)  // 9999-12-31T23:59:59Z
      throw UsageError("SOURCE_DATE_EPOCH must be a number of seconds since 1970 (up to year 9999)");
    t = static_cast<std::time_t>(v);
  }
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace ccpack::manifest
