// A real archive as a registry serves it, for the tests of the registry's download paths (pull, restore oci://,
// merge --deltas-from-registry): a small cache packed here with a given fingerprint, the one-layer artifact
// manifest push would write for it, and the scripted answers of a loopback registry (tests/unit/loopback_http.hpp)
// for the tag's manifest, the header frame and the payload, in the order a download asks for them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "manifest/fingerprint.hpp"
#include "registry/oci.hpp"
#include "unit/support.hpp"

namespace ccpack::test {

// gpu.arch sm_90 (nvml), torch.version 2.7.1+cu126: the fingerprint the served archive is packed with by default.
[[nodiscard]] manifest::Fingerprint served_machine();

struct ServedArchive {
  ScratchDir dir;
  std::filesystem::path path;  // the archive file
  std::string bytes;           // its bytes: the layer
  std::uint64_t header_size = 0;
  std::string layer_digest;               // "sha256:<hex>" of `bytes`
  std::string manifest_sha256;            // hex SHA-256 of the archive's manifest
  registry::oci::ImageManifest manifest;  // the artifact manifest, annotated as push annotates it

  // An Inductor file and a Triton kernel folder packed with `fingerprint`.
  explicit ServedArchive(const manifest::Fingerprint& fingerprint = served_machine());

  // The answer to GET of the tag: `manifest` (or `json` when given) as an OCI image manifest.
  [[nodiscard]] std::string manifest_answer() const;
  [[nodiscard]] static std::string manifest_answer(const std::string& json);
  // The answer to the header frame's range: bytes [0, header_size).
  [[nodiscard]] std::string header_answer() const;
  // The answer to the payload's range: bytes [header_size, size), with `payload` in place of the payload when given.
  [[nodiscard]] std::string payload_answer() const;
  [[nodiscard]] std::string payload_answer(const std::string& payload) const;
};

}  // namespace ccpack::test
