// libarchive as an independent reader of ccpack archives, for the tests.
//
// ccpack writes its tar stream with its own encoder (manifest/tar.cpp) and reads it back with its own strict
// decoder, so a mistake made the same way on both sides would pass every round trip. The oracle reads the
// payload with libarchive instead (its zstd filter and tar reader, nothing of ccpack's) and compares what it sees
// with the manifest, entry by entry, in order: path, type, mode, size, SHA-256 of the content, link target, and
// the normalised metadata tar.hpp promises (uid/gid 0, mtime 0). The manifest is taken from ccpack's header
// reader; it is what the tar stream must agree with.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "manifest/manifest.hpp"

namespace ccpack::oracle {

// Reads up to `size` bytes of compressed payload into `buf`; returns 0 at the end.
using PayloadReader = std::function<std::size_t(char* buf, std::size_t size)>;

// Every disagreement between libarchive's reading of the payload and `m`, one line each; empty when they agree.
[[nodiscard]] std::vector<std::string> compare(const manifest::Manifest& m, const PayloadReader& payload);

// The same for an archive file: its manifest (ccpack's header reader) against its payload (libarchive).
[[nodiscard]] std::vector<std::string> check_archive(const std::filesystem::path& archive);

}  // namespace ccpack::oracle
