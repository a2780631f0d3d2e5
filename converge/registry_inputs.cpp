// The registry's part of a merge (registry_inputs.hpp).
#include "converge/registry_inputs.hpp"

#include "registry/delta_tags.hpp"
#include "registry/pull.hpp"
#include "util/error.hpp"

namespace ccpack::converge {
namespace {

// One archive pulled into `output`; the signature is judged by the merge (the base's gate), never here.
void pull_one(registry::Session& s, const std::filesystem::path& output) {
  registry::PullRequest rq;
  rq.output = output;
  rq.check_fit = false;
  rq.check_signature = [](const manifest::ArchiveHeader&, const std::string&) { return std::string("checked by merge"); };
  registry::PullResult result;
  registry::pull(s, rq, result);
}

}  // namespace

RegistryInputs pull_inputs(const registry::oci::Reference& base,
                           const std::function<std::unique_ptr<registry::Session>(const registry::oci::Reference&)>& session_for,
                           const std::filesystem::path& into) {
  if (base.tag.empty())
    throw UsageError("--deltas-from-registry needs the base's tag (its deltas are named after it), not only a digest");
  RegistryInputs in;
  std::unique_ptr<registry::Session> s = session_for(base);
  in.base = into / "base.ccpack";
  pull_one(*s, in.base);
  for (const std::string& tag : registry::delta_tags_of(s->list_tags(), base.tag)) {
    registry::oci::Reference ref = base;
    ref.tag = tag;
    ref.digest.clear();
    in.deltas.push_back(into / (tag + ".ccpack"));
    in.delta_tags.push_back(tag);
    pull_one(*session_for(ref), in.deltas.back());
  }
  return in;
}

}  // namespace ccpack::converge
