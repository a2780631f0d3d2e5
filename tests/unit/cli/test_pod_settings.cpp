// cli/pod_settings: the export lines `ccpack env` prints and the clause a refusal ends with.
#include <catch2/catch.hpp>

#include "cli/pod_settings.hpp"

using namespace ccpack;

TEST_CASE("pod settings: export lines quote every value for sh, notes first as comments") {
  probe::PodEnvironment env{{{"TRITON_CACHE_DIR", "/c/it's here", "folder"}, {"X", "$(rm -rf /)", "cache key"}}, {"a note"}};
  CHECK(cli::export_lines(env) == "# a note\nexport TRITON_CACHE_DIR='/c/it'\\''s here'\nexport X='$(rm -rf /)'\n");
  CHECK(cli::shell_quoted("") == "''");
}

TEST_CASE("pod settings: the refusal's clause lists what is missing and the two commands that set it, the archive escaped") {
  CHECK(cli::settings_clause({}, "m.ccpack").empty());
  CHECK(cli::settings_clause({"A=0", "unset B"}, "m\n.ccpack") ==
        "this process lacks the settings its cache was built with, so every entry would miss: A=0 unset B; `ccpack run "
        "m\\n.ccpack -- CMD` restores and runs CMD with them, `eval \"$(ccpack env m\\n.ccpack)\"` exports them");
}
