// Absolute paths inside Inductor's pickled cache entries, rewritten for the folder a cache is restored into.
//
// Why: FX-graph and AOTAutograd entries are Python pickles that, with the static CUDA launcher (torch 2.8 and
// later), hold each kernel's CachingAutotuner whole, and with it two absolute paths of the build machine: the
// kernel's generated `.py` (whose folder is where Inductor looks for its `.best_config`) and that `.best_config`.
// Restored into another folder, the lookup misses, autotuning runs again and its results land outside the pod's
// cache (docs/RELOCATION.md measures it).
//
// How: PickleStream reads the pickle's opcode stream as the bytes arrive and rewrites each binary str that begins
// with a build folder, so a restore never holds an entry whole (docs/PERFORMANCE.md). A stream it does not take
// stops the rewrite, and the file is restored as packed: a file is rewritten whole or not at all.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "unpack/folder_prefixes.hpp"

namespace ccpack::unpack {

// The transformation, exactly. A pickle (protocol 2 to 5: byte 0x80, then the protocol) is read as its opcode
// stream to STOP, which must be its last byte. Each str value of a binary string opcode (SHORT_BINUNICODE,
// BINUNICODE, BINUNICODE8) that begins with a build folder B followed by '/' becomes the target folder T, '/',
// and the rest, and is written back with the shortest of those three opcodes that holds it. A FRAME (protocols 4
// and 5) whose content holds a moved str gets its new length. Every other byte is copied, other FRAMEs included.
// Nothing else changes: a path inside a longer string (a comment in generated code), a bytes value and
// text-protocol strings are kept, and so is a str that already begins with T. The build folders B are the folder
// the component was packed from and those the pickle names: a str value P + "/" + R, where R (two to six path
// elements) is a file of the same component in the archive, makes P a build folder from that str on (one pass,
// in order: torch writes a kernel's `.py` path before its `.best_config` path, and both name files of the
// archive). The folders are a trie of path elements (unpack/folder_prefixes.hpp): each str costs one walk of its
// own elements, whatever the number of folders learned, so a pickle is read in time linear in its size.
//
// The stream is cut into units, each written once it is complete: a FRAME with its content (Python writes frames
// of about 64 KiB; one over 4 MiB is not taken), or one opcode outside a frame. An opcode outside a frame whose
// argument is over 64 KiB (a large bytes value) is passed through as it arrives; of a large str only the start is
// held, enough to see whether it begins with a build folder. Each changed unit is read back before it is written:
// its opcodes parse to its end and hold as many strs as the packed unit.
class PickleStream {
 public:
  using Write = std::function<void(std::string_view)>;   // appends bytes to the output
  using IsFile = std::function<bool(std::string_view)>;  // whether a path relative to the root is a file
  // `roots`: build folders known from the start (the folder the component was packed from); `to`: the folder
  // the component is restored into (no trailing '/').
  PickleStream(const std::vector<std::string>& roots, std::string to, IsFile is_file, Write write);

  // Takes the next packed bytes. False once the stream is found not to be a pickle this reader takes (an unknown
  // opcode, an opcode across a frame's end, truncated, bytes after STOP): then, and in every later call, nothing
  // more is written and the bytes are kept in pending().
  bool feed(std::string_view bytes);
  // At the end of the packed bytes: true when the stream ended at its STOP and all of it is written.
  bool finish();

  [[nodiscard]] std::uint64_t strings_rewritten() const { return moved_; }
  // The build-folder element lookups made so far (FolderPrefixes::lookups): what tests bound to show the cost is
  // linear in the strs.
  [[nodiscard]] std::uint64_t folder_lookups() const { return roots_.lookups(); }
  [[nodiscard]] std::uint64_t written() const { return written_; }    // output bytes handed to write
  [[nodiscard]] std::uint64_t consumed() const { return consumed_; }  // packed bytes those stand for
  // After a failure: the packed bytes from consumed() on that were fed and not written.
  [[nodiscard]] std::string_view pending() const { return buf_; }
  // The packed bytes [0, consumed()), rebuilt from `output`, the first written() bytes written. What was written
  // before a failure differs from the packed bytes only in the units it changed, so the caller can write the file
  // as packed.
  [[nodiscard]] std::string packed_prefix(std::string_view output) const;
  // The same, streamed: the output is read through `read` (`n` bytes at output offset `at` into `into`) and the
  // packed bytes handed to `write` in pieces of at most 1 MiB, so memory does not grow with the file.
  using ReadAt = std::function<void(std::uint64_t at, char* into, std::size_t n)>;
  void packed_prefix(const ReadAt& read, const Write& write) const;

 private:
  // A unit written changed: its place in the output and its packed bytes.
  struct Edit {
    std::uint64_t at = 0, size = 0;
    std::string packed;
  };

  [[nodiscard]] std::int64_t wanted() const;  // bytes the unit at the front of buf_ needs; -1: not taken
  bool take_unit();                           // processes the complete unit at the front of buf_
  bool take_frame(std::size_t size);
  bool take_large(std::size_t header, std::uint64_t length);
  bool take_op(std::size_t size);
  // The str's new value, or "" to keep it; a `whole` value may name a build folder (learn).
  [[nodiscard]] std::string moved(std::string_view value, bool whole = true);
  void learn(std::string_view value);  // a build folder this str's path names
  void drop(std::size_t size);         // the unit at the front of buf_ is written: consumed
  void emit(std::string_view bytes);
  void emit_changed(std::string_view packed, std::string_view out);
  void flush();
  bool fail();

  FolderPrefixes roots_;  // the build folders, known and learned (never `to_`)
  std::string to_;
  IsFile is_file_;
  Write write_;
  std::string buf_;  // packed bytes taken, not yet written
  std::string out_;  // output not yet handed to write_ (batched)
  std::vector<Edit> edits_;
  std::uint64_t pass_left_ = 0;      // bytes of a large argument still to pass through
  mutable std::size_t scanned_ = 1;  // a text-protocol unit: bytes of buf_ searched for its newlines so far
  mutable int newlines_ = 0;         // and the newlines found there
  std::uint64_t written_ = 0, consumed_ = 0, moved_ = 0;
  bool started_ = false, stopped_ = false, failed_ = false;
};

}  // namespace ccpack::unpack
