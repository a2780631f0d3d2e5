// Stage 1 of reading a manifest, in pieces: TopLevelScan is what Manifest::parse_top_level runs on a whole text,
// and what a no-op restore runs on a manifest it never holds whole (unpack/archive.hpp, ManifestText::stream).
//
// Why in pieces: at a million files the manifest is ~250 MB, and a no-op restore needs only its top-level fields
// and its SHA-256. Holding it whole costs that much fresh memory, and zeroing those pages was most of the
// no-op's time (docs/PERFORMANCE.md); read in pieces through one small buffer, the same bytes are hashed and
// scanned and then forgotten.
//
// How: feed() runs a state machine over the bytes (the root object's keys, colons and commas; inside a member's
// value only strings and brackets are tracked, as Manifest::parse_top_level always did) and copies each member's
// raw key and value, except the values of "entries" and "frames", which are stepped over. It interprets nothing:
// the copies are parsed by finish(), which the caller runs only after the trust gate, so the manifest parser
// still reads only signed bytes. The first structural fault stops the scan; finish() reads the members before
// it in order (their errors first, as a one-pass parse would find them), then refuses the document in the full
// parse's words, for which it needs the whole text once (`whole_text`; only on that error path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "manifest/manifest.hpp"

namespace ccpack::manifest {

class TopLevelScan {
 public:
  // The next bytes of the manifest, in order; pieces may split it anywhere.
  void feed(std::string_view piece);
  // After the last piece: the top-level fields, checked as Manifest::parse_top_level checks them (it is this).
  // Throws IntegrityError naming the field; calls `whole_text` only to word a structural fault.
  [[nodiscard]] Manifest finish(const std::function<std::string()>& whole_text, const Limits& limits = {});

 private:
  enum class At { start, first_key_or_end, key, in_key, colon, value_start, value, after_root, fault };
  struct Member {
    std::string raw_key;  // with its quotes and escapes, as in the document
    std::string value;    // raw bytes; empty when stepped over
    bool stepped_over = false;
  };

  std::size_t step(std::string_view s, std::size_t i);
  std::size_t scan_value(std::string_view s, std::size_t i);
  std::size_t scan_string(std::string_view s, std::size_t i, std::string* keep);
  void end_member();
  void fail(std::size_t at, const std::string& why);

  At at_ = At::start;
  std::uint64_t base_ = 0;  // document offset of the piece being fed
  std::vector<Member> members_;
  Member current_;
  bool in_string_ = false;
  std::size_t backslashes_ = 0;  // inside a string: the run of backslashes just before the next byte
  std::uint64_t is_array_ = 0;   // bit k: the (k+1)-th open bracket of the current value is '['
  int open_ = 0;                 // brackets open in the current value
  std::optional<std::string> fault_;
};

}  // namespace ccpack::manifest
