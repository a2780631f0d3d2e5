// `ccpack sign ARCHIVE`: add a signature to an existing archive without repacking its payload (a second signer,
// or a new key during a rotation).
//
// A signer vouches for what it signs, so the archive is first checked as `verify` checks it: a signature from a
// trusted key (or --allow-unsigned, loudly) and every payload byte against the manifest. Then the header is
// re-encoded with the new signature (replacing an older one by the same key) and written, followed by the
// payload bytes copied unchanged, into an AtomicFile beside the archive, which is renamed over it: a failure at
// any point leaves the archive as it was.
#include <sys/stat.h>

#include <vector>

#include "cli/cli.hpp"
#include "cli/trust_options.hpp"
#include "manifest/format.hpp"
#include "unpack/archive.hpp"
#include "unpack/extractor.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

namespace ccpack::cli {
namespace fs = std::filesystem;

namespace {

struct SignOptions {
  CommonOptions common;
  fs::path archive;
  TrustOptions trust;
  SigningOptions signing;
};

void copy_payload(const unpack::Archive& a, AtomicFile& out) {
  std::vector<char> buf(1 << 20);
  std::uint64_t done = 0;
  while (done < a.header.payload_size) {
    std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), a.header.payload_size - done));
    std::size_t got =
        pread_full(a.fd.get(), buf.data(), want, static_cast<off_t>(a.header.header_size + done), quoted_path(a.path));
    if (got != want) throw IntegrityError(quoted_path(a.path) + " became shorter while being signed");
    out.write(buf.data(), got);
    done += got;
  }
}

int run(const SignOptions& o) {
  Reporter out(o.common);
  std::optional<manifest::PrivateKey> key = load_signing_key(o.signing, true);
  unpack::TrustReport before;
  unpack::Archive a = open_trusted(o.archive, o.trust, out, before);
  (void)unpack::extract(a, {}, unpack::ExtractOptions{thread_budget().threads, out.progress()});

  std::vector<manifest::Signature> list;
  for (const manifest::Signature& s : a.signatures) {
    if (s.key_id != key->key_id()) list.push_back(s);
  }
  bool replaced = list.size() != a.signatures.size();
  if (list.size() >= manifest::kMaxSignatures)
    throw Error(quoted_path(o.archive) + " already holds " + std::to_string(list.size()) +
                " signatures, the most a block may hold");
  list.push_back(key->sign_manifest(a.header.manifest, o.signing.note));
  manifest::ArchiveHeader header = a.header;
  header.signatures = manifest::encode_signature_block(list);

  struct stat st {};
  if (::fstat(a.fd.get(), &st) != 0) throw_errno("cannot stat " + quoted_path(o.archive));
  AtomicFile file(o.archive, st.st_mode & 0777);
  std::string head = manifest::encode_header(header);
  file.write(head.data(), head.size());
  copy_payload(a, file);
  file.commit(true);

  if (out.json()) {
    out.report({{"archive", o.archive.string()}, {"key_id", key->key_id()}, {"replaced", replaced}, {"signatures", list.size()}});
    return 0;
  }
  out.say((replaced ? "re-signed " : "signed ") + quoted_path(o.archive) + " with key " + key->key_id() + " (" +
          std::to_string(list.size()) + " signature" + (list.size() == 1 ? "" : "s") + "; was " + before.describe() + ")");
  return 0;
}

}  // namespace

void add_sign(CLI::App& app, Commands& commands) {
  auto o = std::make_shared<SignOptions>();
  CLI::App* s = app.add_subcommand("sign", "Add a signature to an archive without repacking it (second signer, key rotation)");
  s->add_option("archive", o->archive, "The .ccpack archive; rewritten atomically")->required();
  add_signing_options(s, o->signing, true);
  add_trust_options(s, o->trust);
  add_common(s, o->common);
  s->footer(
      "The archive must verify first (a signature from a key trusted here, or --allow-unsigned, and every byte), "
      "since a signature vouches for it. A signature by the same key is replaced.");
  commands.push_back({s, &o->common, [o] { return run(*o); }});
}

}  // namespace ccpack::cli
