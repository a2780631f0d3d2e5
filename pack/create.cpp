// The stages of a create, in the order pack/create.hpp gives.
#include "pack/create.hpp"

#include "pack/kernel_targets.hpp"
#include "util/error.hpp"

namespace ccpack::pack {

CreateResult create(const CreateRequest& rq) {
  if (!rq.machine) throw Error("internal: a create without a machine to record");
  CreateResult result;
  // The fingerprint: this machine as probed, made to agree with what the cache's own kernels say.
  manifest::Fingerprint fp = rq.machine();
  result.fingerprint_warnings = reconcile(fp, read_triton_targets(rq.dirs));
  PackOptions po = rq.pack;
  po.fingerprint = std::move(fp);
  result.packed = rq.write ? rq.write(rq.dirs, rq.output, po) : create_archive(rq.dirs, rq.output, po);
  return result;
}

}  // namespace ccpack::pack
