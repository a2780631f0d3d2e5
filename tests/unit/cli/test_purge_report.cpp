// cli/purge_report.cpp: a purge's --json object (every field, totals summed from the entries), its terminal lines
// ("removed" or, in a dry run, "would remove"; the kept, unjudged and truncated lines), and the lock-wait line.
#include <catch2/catch.hpp>
#include <string>

#include "cli/purge_report.hpp"
#include "unit/support.hpp"

using namespace ccpack;

namespace {

unpack::PurgeReport purge_sample() {
  unpack::PurgeReport r;
  r.removed.push_back(
      {"triton", "/c/tri/K80", unpack::PurgeRule::kernel, "built for gpu.arch sm_80 here sm_90", true, 8, 1'500'000});
  r.removed.push_back({"inductor", "/c/ind/x.lock", unpack::PurgeRule::debris, "a lock file", false, 1, 0});
  r.kept_files = 9;
  r.unjudged = 1;
  r.unjudged_examples.push_back({"/c/ext/caf\xe9.so", "not an ELF file"});
  return r;
}

}  // namespace

TEST_CASE("purge report: the --json object, totals summed from the removed entries") {
  unpack::PurgeReport r = purge_sample();
  r.unjudged_examples[0].path = "/c/ext/junk.so";  // dump() takes UTF-8 only; the Reporter escapes other names
  CHECK(
      cli::purge_json(r).dump() ==
      R"({"removed":[{"component":"triton","path":"/c/tri/K80","rule":"triton-kernel","reason":"built for gpu.arch sm_80 here sm_90",)"
      R"("folder":true,"files":8,"bytes":1500000},{"component":"inductor","path":"/c/ind/x.lock","rule":"debris","reason":"a lock file",)"
      R"("folder":false,"files":1,"bytes":0}],"removed_files":9,"removed_bytes":1500000,"kept_files":9,"unjudged":1,)"
      R"("unjudged_examples":[{"path":"/c/ext/junk.so","reason":"not an ELF file"}],"truncated":false})");
  CHECK(
      cli::purge_json({}).dump() ==
      R"({"removed":[],"removed_files":0,"removed_bytes":0,"kept_files":0,"unjudged":0,"unjudged_examples":[],"truncated":false})");
}

TEST_CASE("purge report: the terminal lines, removed or would remove, names escaped") {
  cli::CommonOptions common;
  cli::Reporter out(common);
  test::Streams done = test::captured([&] { cli::say_purge(out, purge_sample(), false); });
  CHECK(done.out.empty());
  CHECK(done.err ==
        "ccpack: removed '/c/tri/K80' [triton-kernel]: built for gpu.arch sm_80 here sm_90\n"
        "ccpack: removed '/c/ind/x.lock' [debris]: a lock file\n"
        "ccpack: removed 2 entries (9 files, 1.5 MB); kept 9 files; 1 entries could not be judged and were kept\n"
        "ccpack:   kept, not judged: '/c/ext/caf\\xe9.so': not an ELF file\n");
  unpack::PurgeReport truncated;
  truncated.truncated = true;
  test::Streams dry = test::captured([&] { cli::say_purge(out, truncated, true); });
  CHECK(dry.err ==
        "ccpack: would remove 0 entries (0 files, 0.0 MB); kept 0 files; 0 entries could not be judged and were kept (dry run: "
        "nothing "
        "removed)\n"
        "ccpack: warning: stopped after 4000000 entries: the rest was not looked at\n");
}

TEST_CASE("purge report: the lock-wait line names the folder and how long") {
  CHECK(cli::lock_wait_message("/c/ind", "up to 10 s") ==
        "waiting for the lock of '/c/ind': another ccpack restore or purge of its cache folders holds it (up to 10 s)");
}
