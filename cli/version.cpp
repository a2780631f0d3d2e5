// `ccpack --version`: ccpack's version, then each library it was built with and the one it runs with. In the
// portable package zstd, OpenSSL and libarchive are inside the binary (both columns agree) and oneTBB is the
// bundled lib/ccpack/libtbb.so.12; a distribution build shows the system's shared libraries here. libcurl is
// never linked: the row says which libcurl.so.4 would be loaded for push and pull, or that none is found.
#include "util/version.hpp"

#include <oneapi/tbb/version.h>
#include <openssl/crypto.h>
#include <openssl/opensslv.h>
#include <zstd.h>

#include "cli/cli.hpp"
#include "http/http.hpp"
#include "pack/import_source.hpp"

namespace ccpack::cli {

namespace {

std::string row(const std::string& name, const std::string& built, const std::string& runs) {
  std::string line = "  " + name + " " + built;
  if (runs != built) line += " (running " + runs + ")";
  return line + "\n";
}

}  // namespace

std::string version_text() {
  std::string text = std::string("ccpack ") + kVersion + "\nbuilt with:\n";
  text += row("zstd", ZSTD_VERSION_STRING, ZSTD_versionString());
  text += row("OpenSSL", OPENSSL_FULL_VERSION_STR, OpenSSL_version(OPENSSL_FULL_VERSION_STRING));
  text += row("oneTBB", TBB_VERSION_STRING, TBB_runtime_version());
  pack::LibraryVersion archive = pack::libarchive_version();
  text += row("libarchive", archive.built, archive.runs);
  http::LibcurlVersion curl = http::libcurl_version();  // loaded at run time, for push, pull and restore oci://
  text += curl.runs.empty()
              ? "  libcurl " + curl.built + " (none found at run time: push, pull and restore oci:// need libcurl.so.4)\n"
              : row("libcurl", curl.built, curl.runs);
  text.pop_back();  // CLI11 adds the final newline
  return text;
}

}  // namespace ccpack::cli
