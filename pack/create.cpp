// The stages of a create, in the order pack/create.hpp gives.
//
// The fingerprint: the probe (mostly waiting for Python) depends on nothing the pack stage makes, and the pack
// stage needs its result only for the manifest, written last: so it runs on a thread of its own while the folders
// are scanned, laid out and compressed. The kernels' targets are counted from the .json bytes the packer reads
// (PackOptions::on_file): walking and reading those files a second time cost 0.6 s of CPU at 100k files on the
// 2-core dev VM. When the payload is written the packer takes the probe's result reconciled with those targets
// (PackOptions::fingerprint_when_packed). A caller's own writer (settle) gets the fingerprint before it starts,
// read with the walk (read_triton_targets).
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
  // The kernels' targets from the bytes the packer reads; the probe on a thread of its own meanwhile. Destroyed
  // before `result` is returned: on a throw from the packer, the probe is waited for, never left running.
  KernelTargetTally tally;
  po.on_file = [&tally](const manifest::EntryList& entries, std::size_t i, std::string_view bytes) {
    if (KernelTargetTally::wants(entries, i)) tally.add(bytes);
  };
  std::future<manifest::Fingerprint> probing = std::async(std::launch::async, rq.machine);
  po.records.fingerprint_when_packed = [&] {
    manifest::Fingerprint fp = probing.get();
    result.fingerprint_warnings = reconcile(fp, tally.targets());
    return fp;
  };
  result.packed = create_archive(rq.dirs, rq.output, po);
  return result;
}

}  // namespace ccpack::pack
