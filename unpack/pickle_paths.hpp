// Absolute paths inside Inductor's pickled cache entries, rewritten for the folder a cache is restored into.
//
// Why: an FX-graph entry (`<inductor>/fxgraph/...`) and an AOTAutograd entry (`<inductor>/aotautograd/...`) are
// Python pickles. With the static CUDA launcher (torch 2.8 and later), they hold each kernel's CachingAutotuner
// pickled whole, and with it two absolute paths of the build machine: the kernel's generated `.py` (`filename`,
// whose folder is where Inductor looks for the kernel's `.best_config` autotune result) and that `.best_config`
// itself (the save hook's target). Restored into another folder, the lookup misses, autotuning and coordinate
// descent run again, and the results are written under the build machine's folder, outside the pod's cache.
// Measured on an H200 (docs/RELOCATION.md): 222 coordinate-descent benchmarks relocated against 102 in place.
//
// The transformation, exactly. A pickle (protocol 2 to 5: byte 0x80, then the protocol) is read as its opcode
// stream to STOP, which must be its last byte. Each str value of a binary string opcode (SHORT_BINUNICODE,
// BINUNICODE, BINUNICODE8) that begins with a build folder B followed by '/' becomes the target folder T, '/',
// and the rest, and is written back with the shortest of those three opcodes that holds it. FRAME opcodes are
// dropped (framing is optional for every reader and would no longer match). Every other byte is copied. Nothing
// else changes: a path inside a longer string (a comment in generated code), a bytes value and text-protocol
// strings are kept. The build folders B are read from the pickle itself: a str value P + "/" + R, where R (two to
// six path elements) is a file of the same component in the archive, makes P a build folder; the folder the
// component was packed from is one too. The output is read back (the opcode stream must parse to its STOP with
// the same number of strings) before it is written; a pickle this reader does not take is written as packed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack::unpack {

// A file's new content as spans of its packed bytes and of new bytes, in order: a large pickle is written from
// the bytes already in memory, with no second copy of it.
struct Splice {
  struct Piece {
    bool added = false;  // from `added`, else from the packed bytes
    std::size_t at = 0, size = 0;
  };
  std::string added;
  std::vector<Piece> pieces;
  std::uint64_t strings_rewritten = 0;  // str values moved from a build folder to the target

  void keep(std::size_t at, std::size_t size);  // packed bytes [at, at + size), joined to a packed piece before
  void add(std::string_view bytes);
  [[nodiscard]] std::uint64_t size() const;
  [[nodiscard]] std::string assemble(std::string_view packed) const;  // the whole content, for reading back
  // Writes the content to `fd` (writev, in batches); throws Error naming `what` on failure.
  void write(int fd, std::string_view packed, const std::string& what) const;
};

// Whether `data` starts like a pickle this reader takes (0x80, protocol 2 to 5).
[[nodiscard]] bool looks_like_pickle(std::string_view data);

// The build folders named in pickle `data`: every P of a str value P + "/" + R where is_file(R) (R of two to six
// path elements). Sorted, unique. nullopt when `data` is not a pickle this reader takes.
[[nodiscard]] std::optional<std::vector<std::string>> pickle_build_folders(
    std::string_view data, const std::function<bool(std::string_view)>& is_file);

// `data` with each str value that begins with one of `from` + "/" moved to `to` (the longest match wins).
// nullopt when `data` is not a pickle this reader takes, or when its read-back fails.
[[nodiscard]] std::optional<Splice> rewrite_pickle_paths(std::string_view data,
                                                                const std::vector<std::string>& from,
                                                                std::string_view to);

}  // namespace ccpack::unpack
