// Fingerprint files (fingerprint_file.hpp).
#include "manifest/fingerprint_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

#include "manifest/json_guard.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/fs.hpp"

namespace ccpack::manifest {

std::string read_fingerprint_file(const std::string& path) {
  constexpr std::size_t kMaxFingerprintBytes = 1u << 20;
  const std::string what = "fingerprint file " + quoted_path(path);
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw_errno("cannot open " + what);
  std::string text(kMaxFingerprintBytes + 1, '\0');
  // read(), not pread(): the file may be a pipe (--fingerprint <(ssh host ccpack fingerprint --json)).
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno("cannot read " + what);
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  if (got > kMaxFingerprintBytes) throw Error(what + " is larger than 1 MiB");
  text.resize(got);
  return text;
}

Fingerprint fingerprint_from_file(const std::string& path) {
  const std::string text = read_fingerprint_file(path);
  const std::string what = "fingerprint file " + quoted_path(path);
  try {
    auto doc = parse_untrusted<nlohmann::json>(text, what);
    if (!doc.is_object()) throw Error(what + " is not a JSON object (write it with `ccpack fingerprint --json`)");
    doc.erase("ok");  // the report marker of `ccpack fingerprint --json`; the rest is the manifest's shape
    return Fingerprint::from_json(doc.dump());
  } catch (const IntegrityError& e) {  // a local input, not an archive: exit 1, like any unreadable file
    std::string why = e.what();
    throw Error(why.starts_with(what) ? why : what + ": " + why);
  }
}

}  // namespace ccpack::manifest
