// `ccpack keygen --out NAME`: a new Ed25519 key pair, as ssh-keygen makes one. NAME gets the private key (PEM
// PKCS#8, mode 0600), NAME.pub the public key (PEM SPKI); neither may exist already. The key id goes to
// standard output (unless -q) so scripts can take it; nothing else about the key is ever printed.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "cli/cli.hpp"
#include "manifest/keys.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

struct KeygenOptions {
  CommonOptions common;
  fs::path out;
};

void write_new(const fs::path& file, const std::string& text) {
  UniqueFd fd(::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!fd.valid()) {
    if (errno == EEXIST) throw Error(quoted_path(file) + " already exists; ccpack keygen never overwrites a key");
    throw_errno("cannot create " + quoted_path(file));
  }
  write_all(fd.get(), text.data(), text.size(), quoted_path(file));
  if (::fsync(fd.get()) != 0) throw_errno("cannot flush " + quoted_path(file));
}

int run(const KeygenOptions& o) {
  Reporter out(o.common);
  fs::path pub = o.out;
  pub += ".pub";
  // Refuse before creating anything when either file is there.
  for (const fs::path& p : {o.out, pub}) {
    if (::access(p.c_str(), F_OK) == 0) throw Error(quoted_path(p) + " already exists; ccpack keygen never overwrites a key");
  }
  manifest::PrivateKey key = manifest::PrivateKey::generate();
  write_new(pub, key.public_key().pem());
  try {
    key.write_pem(o.out);
  } catch (...) {
    ::unlink(pub.c_str());
    throw;
  }
  if (out.json()) {
    out.report({{"key_id", key.key_id()}, {"private_key", o.out.string()}, {"public_key", pub.string()}});
    return 0;
  }
  out.say("wrote private key " + quoted_path(o.out) + " (mode 0600: keep it secret) and public key " + quoted_path(pub) +
          " (give it to the machines that restore)");
  if (!o.common.quiet) std::printf("%s\n", key.key_id().c_str());
  return 0;
}

}  // namespace

void add_keygen(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<KeygenOptions>();
  CLI::App* k = app.add_subcommand("keygen", "Make an Ed25519 key pair for signing archives; prints its key id");
  k->add_option("--out", o->out, "Private key file to create (mode 0600); the public key goes to NAME.pub")->required();
  add_common(k, o->common);
  commands.push_back({k, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
