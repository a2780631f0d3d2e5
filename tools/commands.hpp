// The command front end: each function runs one subcommand from parsed options and prints its report.
// Parsing lives in main.cpp; all work is in the library.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "manifest/locations.hpp"

namespace ccpack::tools {

struct CommonOptions {
  unsigned jobs = 0;
  bool quiet = false;
  bool json = false;
};

struct CreateOptions {
  CommonOptions common;
  std::filesystem::path output;
  manifest::CacheDirOptions dirs;
  std::string level = "default";
};

struct RestoreOptions {
  CommonOptions common;
  std::filesystem::path archive;
  manifest::CacheDirOptions dirs;
  bool durable = false;
};

struct VerifyOptions {
  CommonOptions common;
  std::filesystem::path archive;
};

struct InspectOptions {
  CommonOptions common;
  std::filesystem::path archive;
  bool files = false;
};

int run_create(const CreateOptions& options);
int run_restore(const RestoreOptions& options);
int run_verify(const VerifyOptions& options);
int run_inspect(const InspectOptions& options);

}  // namespace ccpack::tools
