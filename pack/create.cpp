// The stages of a create, in the order pack/create.hpp gives.
//
// The fingerprint stage (the probe, mostly waiting for Python, and the kernels' .json files, 0.5-0.8 s at 100k
// files on the 2-core dev VM) depends on nothing the pack stage makes, and the pack stage needs its result only
// for the manifest, written last: so it runs on a thread of its own while the folders are scanned, laid out and
// compressed, and the packer takes its result when the payload is written (PackOptions::fingerprint_when_packed).
// A caller's own writer (settle) gets the fingerprint before it starts, as before.
#include "pack/create.hpp"

#include <future>

#include "pack/kernel_targets.hpp"
#include "util/error.hpp"

namespace ccpack::pack {

CreateResult create(const CreateRequest& rq) {
  if (!rq.machine) throw Error("internal: a create without a machine to record");
  CreateResult result;
  // The fingerprint: this machine as probed, made to agree with what the cache's own kernels say.
  auto fingerprint = [&rq, &result] {
    manifest::Fingerprint fp = rq.machine();
    result.fingerprint_warnings = reconcile(fp, read_triton_targets(rq.dirs));
    return fp;
  };
  PackOptions po = rq.pack;
  if (rq.write) {
    po.records.fingerprint = fingerprint();
    result.packed = rq.write(rq.dirs, rq.output, po);
    return result;
  }
  // Destroyed before `result` is returned: on a throw from the packer, the probe is waited for, never left running.
  std::future<manifest::Fingerprint> probing = std::async(std::launch::async, fingerprint);
  po.records.fingerprint_when_packed = [&probing] { return probing.get(); };
  result.packed = create_archive(rq.dirs, rq.output, po);
  return result;
}

}  // namespace ccpack::pack
