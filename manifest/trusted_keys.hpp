// Where this machine's trusted keys come from: the keys a command names (--trust FILE|DIR, repeatable) and those
// $CCPACK_TRUSTED_KEYS names (FILE|DIR, colon-separated), each of which must exist; when neither names anything,
// the default folders /etc/ccpack/trusted.d (baked into an image or mounted) and
// ${XDG_CONFIG_HOME:-~/.config}/ccpack/trusted.d, those that exist. A command that names its keys gets exactly
// those, so no machine-wide folder silently widens what one pipeline trusts.
#pragma once

#include <filesystem>
#include <vector>

#include "manifest/keys.hpp"

namespace ccpack::manifest {

inline constexpr const char* kTrustedKeysVar = "CCPACK_TRUSTED_KEYS";

// The folders read when no key is named: /etc/ccpack/trusted.d, then $XDG_CONFIG_HOME/ccpack/trusted.d when that
// is absolute, else $HOME/.config/ccpack/trusted.d when that is.
[[nodiscard]] std::vector<std::filesystem::path> default_trust_dirs();
// The trust store of `named` and $CCPACK_TRUSTED_KEYS's keys, else of the default folders (see above). Throws Error
// naming a named file or folder that cannot be read.
[[nodiscard]] TrustStore load_trusted_keys(const std::vector<std::filesystem::path>& named);

}  // namespace ccpack::manifest
