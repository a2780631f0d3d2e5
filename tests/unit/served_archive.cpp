#include "unit/served_archive.hpp"

#include <catch2/catch.hpp>

#include "pack/packer.hpp"
#include "registry/push.hpp"
#include "unit/loopback_http.hpp"
#include "unpack/archive.hpp"
#include "util/sha256.hpp"

namespace ccpack::test {

namespace oci = registry::oci;

manifest::Fingerprint served_machine() {
  manifest::Fingerprint fp;
  fp.set(manifest::field::gpu_arch, "sm_90", "nvml");
  fp.set(manifest::field::torch_version, "2.7.1+cu126", "test");
  return fp;
}

ServedArchive::ServedArchive(const manifest::Fingerprint& fingerprint) : path(dir / "a.ccpack") {
  write_file(dir / "ind/23/c23x.py", "print('kernel')\n");
  write_file(dir / "tri/K/k.json", "{\"triton_version\": \"3.6.0\"}");
  pack::PackOptions o;
  o.records.fingerprint = fingerprint;
  (void)pack::create_archive(dirs_of(dir / "ind", dir / "tri"), path, o);
  unpack::Archive a = unpack::Archive::open(path);
  registry::PushRequest q = registry::archive_request(a, path);
  bytes = slurp(path);
  header_size = a.header.header_size;
  layer_digest = digest_of(bytes);
  manifest_sha256 = to_hex(a.manifest_digest());
  manifest.artifact_type = oci::kArtifactType;
  manifest.config = {
      std::string(oci::kEmptyConfigType), std::string(oci::kEmptyConfigDigest), oci::kEmptyConfigData.size(), {}, {}};
  manifest.layers.push_back(
      {std::string(oci::kLayerMediaType), layer_digest, bytes.size(), {}, {{std::string(oci::kAnnotationTitle), "a.ccpack"}}});
  manifest.annotations = q.annotations;
}

std::string ServedArchive::manifest_answer() const { return manifest_answer(oci::to_json(manifest)); }

std::string ServedArchive::manifest_answer(const std::string& json) {
  return http_answer(200, {"Content-Type: " + std::string(oci::kImageManifestType)}, json);
}

std::string ServedArchive::header_answer() const {
  return http_answer(206, {"Content-Range: bytes 0-" + std::to_string(header_size - 1) + "/" + std::to_string(bytes.size())},
                     bytes.substr(0, header_size));
}

std::string ServedArchive::payload_answer() const { return payload_answer(bytes.substr(header_size)); }

std::string ServedArchive::payload_answer(const std::string& payload) const {
  return http_answer(206,
                     {"Content-Range: bytes " + std::to_string(header_size) + "-" + std::to_string(bytes.size() - 1) + "/" +
                      std::to_string(bytes.size())},
                     payload);
}

}  // namespace ccpack::test
