// cli/command_name: a mistyped command gets the closest names, and a word far from every name gets none.
#include <catch2/catch.hpp>

#include "cli/command_name.hpp"

using namespace ccpack::cli;

namespace {
const std::vector<std::string> kNames{"create",      "restore", "verify", "inspect", "keygen", "sign",
                                      "fingerprint", "check",   "import", "push",    "pull",   "purge"};
}

TEST_CASE("unknown_command_message suggests the closest command") {
  CHECK(unknown_command_message("creat", kNames) == "unknown command 'creat'; did you mean 'create'?");
  CHECK(unknown_command_message("resotre", kNames) == "unknown command 'resotre'; did you mean 'restore'?");
  CHECK(unknown_command_message("fingerprnt", kNames) == "unknown command 'fingerprnt'; did you mean 'fingerprint'?");
  // Two at the same distance: both, in the order given.
  CHECK(unknown_command_message("pulh", kNames) == "unknown command 'pulh'; did you mean 'push' or 'pull'?");
  CHECK(unknown_command_message("pusg", kNames) == "unknown command 'pusg'; did you mean 'push'?");
  CHECK(unknown_command_message("pul", kNames) == "unknown command 'pul'; did you mean 'pull'?");
}

TEST_CASE("unknown_command_message suggests nothing far off, and escapes what was typed") {
  CHECK(unknown_command_message("deploy", kNames) == "unknown command 'deploy' (see ccpack --help)");
  CHECK(unknown_command_message("x", kNames) == "unknown command 'x' (see ccpack --help)");
  CHECK(unknown_command_message("a\nccpack: error: forged", kNames) ==
        "unknown command 'a\\nccpack: error: forged' (see ccpack --help)");
}
