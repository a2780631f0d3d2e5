// A pickled Inductor entry restored while its path rewrite streams (unpack/pickle_paths.hpp), for the extractor's
// in-order stage (unpack/extractor.cpp): each checked piece is fed in order, and the rewrite writes the file as it
// goes. When the rewrite stops (the file is not a pickle it takes), what it wrote is read back and turned into
// the packed bytes, and every later piece is written as packed at its offset, so the file ends up either rewritten
// whole or as packed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "unpack/pickle_paths.hpp"

namespace ccpack::unpack {

class StreamedPickle {
 public:
  // `make` builds the rewrite with the writer it is given; `fd` is the file, open for writing at offset 0;
  // (`root`, `relative`) name it for reading back; `what` names it in errors.
  StreamedPickle(const std::function<std::unique_ptr<PickleStream>(PickleStream::Write)>& make, int fd, int root,
                 std::string relative, std::string what);
  // The piece at `offset` of the packed file.
  void piece(std::uint64_t offset, std::string_view data);
  // After the last piece of a file of `size` packed bytes: true when it holds the rewritten stream.
  bool finish(std::uint64_t size);
  [[nodiscard]] const PickleStream& stream() const { return *stream_; }

 private:
  void back_to_packed();

  std::unique_ptr<PickleStream> stream_;
  int fd_;
  int root_;
  std::string relative_, what_;
  bool as_packed_ = false;
};

}  // namespace ccpack::unpack
