// libFuzzer target: the reader of Triton's group-file form (unpack/group_file.hpp) against the full JSON parser.
//
// Input: byte 0 picks which members get a replacement value (bit i % 8 for member i) and which of a few values
// (with quotes, backslashes, control bytes, UTF-8); the rest is the text. Checks: when read_simple_group reads the
// text, the full parser (manifest/json_guard.hpp, as relocation uses it) reads it too, as {"child_paths": {...}}
// with the same members in the same order, and write_group gives what nlohmann's dump() gives for that document,
// with and without the replacements; and when the full parser reads a text of printable ASCII without a
// backslash as that form with at most 64 members, read_simple_group reads it as well. Anything else aborts.
// fuzz-smoke: -max_len=4096
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "manifest/json_guard.hpp"
#include "unpack/group_file.hpp"
#include "util/error.hpp"

namespace {

using ojson = nlohmann::ordered_json;
using ccpack::unpack::GroupMember;

constexpr std::string_view kReplacements[] = {"/pod/tri/H/k.cubin", "/p\"q\\r", "/a\nb\x01\x1f", "/caf\xc3\xa9/\xe2\x82\xac", ""};

// The document when the full parser reads it as Triton's form (one key "child_paths", an object of strings).
std::optional<ojson> full_parse(std::string_view text) {
  ojson doc;
  try {
    doc = ccpack::manifest::parse_untrusted<ojson>(text, "Triton group file", nullptr, 16);
  } catch (const ccpack::IntegrityError&) {
    return std::nullopt;
  }
  if (!doc.is_object() || doc.size() != 1 || !doc.contains("child_paths") || !doc["child_paths"].is_object()) return std::nullopt;
  for (const auto& [key, value] : doc["child_paths"].items()) {
    if (!value.is_string()) return std::nullopt;
  }
  return doc;
}

bool plain_ascii(std::string_view text) {
  for (char c : text) {
    bool space = c == ' ' || c == '\t' || c == '\n' || c == '\r';
    if (!space && (c < 0x20 || c > 0x7e || c == '\\')) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::uint8_t pick = data[0];
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::optional<std::vector<GroupMember>> members = ccpack::unpack::read_simple_group(text);
  std::optional<ojson> doc = full_parse(text);
  if (!members) {
    if (doc && plain_ascii(text) && (*doc)["child_paths"].size() <= 64) std::abort();  // the form, not read
    return 0;
  }
  if (!doc) std::abort();  // read here, refused there
  ojson& paths = (*doc)["child_paths"];
  if (paths.size() != members->size()) std::abort();
  std::size_t i = 0;
  for (const auto& [key, value] : paths.items()) {
    const GroupMember& m = (*members)[i++];
    if (m.key != key || m.value != value.get_ref<const std::string&>()) std::abort();
  }
  if (ccpack::unpack::write_group(*members) != doc->dump()) std::abort();
  i = 0;
  for (auto& [key, value] : paths.items()) {
    GroupMember& m = (*members)[i];
    if ((pick >> (i % 8)) & 1) {
      m.value = kReplacements[(pick + i) % std::size(kReplacements)];
      m.replaced = true;
      value = std::string(m.value);
    }
    ++i;
  }
  if (ccpack::unpack::write_group(*members) != doc->dump()) std::abort();
  return 0;
}
