// http/curl_loader.cpp without the network: the table the loaded libcurl gives (every function resolved, one
// table for every thread, its version), and, in a fresh process of this test binary (the library is loaded once
// per process), the one-line errors for a $CCPACK_LIBCURL that does not load and for a library that is not
// libcurl.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "http/curl_loader.hpp"
#include "unit/support.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

using namespace ccpack;

namespace {

// Where the child writes what curl() said (set by the parent test for its child only).
constexpr const char* kReportVar = "CCPACK_TEST_CURL_REPORT";

// What a fresh process says when it loads libcurl with $CCPACK_LIBCURL = `library`: "error: ..." or "loaded".
std::string fresh_process_load(const std::string& library) {
  test::ScratchDir t;
  test::ScopedEnv lib(http::kLibcurlVar, library);
  test::ScopedEnv report(kReportVar, (t / "report").string());
  RunLimits no_limit{std::chrono::hours(1), 1 << 20};
  RunResult r = run_program({"/proc/self/exe", "[.curl-loader-child]"}, no_limit);
  INFO(r.out);
  REQUIRE(r.ok());
  return test::slurp(t / "report");
}

}  // namespace

TEST_CASE("curl loader: the fresh process the test below runs (hidden)", "[.curl-loader-child]") {
  const char* report = std::getenv(kReportVar);
  if (report == nullptr) {
    SUCCEED("only the test below runs this, as a fresh process with CCPACK_LIBCURL set");
    return;
  }
  std::string said;
  try {
    (void)http::curl();
    said = "loaded " + http::loaded_curl_version();
  } catch (const Error& e) {
    said = std::string("error: ") + e.what() + (http::loaded_curl_version().empty() ? "" : " (but a version)");
  }
  std::ofstream(report) << said;
}

TEST_CASE("curl loader: a library that does not load, or is not libcurl, is one error line naming it", "[curl-loader]") {
  const std::string install =
      "; install it (Debian/Ubuntu: apt-get install libcurl4; RHEL/Fedora: dnf install libcurl) or set "
      "$CCPACK_LIBCURL to its path";
  test::ScratchDir t;
  const std::string none = (t / "no-libcurl.so.4").string();
  CHECK(fresh_process_load(none) == "error: push, pull and restore oci:// need libcurl.so.4, which cannot be loaded (" + none +
                                        ": cannot open shared object file: No such file or directory)" + install);
  test::write_file(t / "fake.so", "not an ELF file");
  CHECK_THAT(fresh_process_load((t / "fake.so").string()),
             Catch::StartsWith("error: push, pull and restore oci:// need libcurl.so.4, which cannot be loaded (" +
                               (t / "fake.so").string() + ": ") &&
                 Catch::EndsWith(install));
  CHECK(fresh_process_load("libm.so.6") == "error: libcurl 'libm.so.6' lacks curl_global_init (libcurl 7.62 or later is needed)");
}

TEST_CASE("curl loader: every function resolved, the same table for every thread, the loaded version", "[curl-loader]") {
  const http::CurlApi* api = &http::curl();  // the registry tests need it too
  for (const void* f : {reinterpret_cast<const void*>(api->global_init), reinterpret_cast<const void*>(api->easy_init),
                        reinterpret_cast<const void*>(api->easy_perform), reinterpret_cast<const void*>(api->easy_setopt),
                        reinterpret_cast<const void*>(api->url), reinterpret_cast<const void*>(api->url_get),
                        reinterpret_cast<const void*>(api->getdate), reinterpret_cast<const void*>(api->version_info)}) {
    CHECK(f != nullptr);
  }
  std::vector<const http::CurlApi*> seen(4);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&seen, i] { seen[i] = &http::curl(); });
  for (std::thread& th : threads) th.join();
  for (const http::CurlApi* s : seen) CHECK(s == api);
  std::string version = http::loaded_curl_version();
  CHECK(version == api->version_info(CURLVERSION_NOW)->version);
  CHECK(version.find_first_not_of("0123456789.") == std::string::npos);
  CHECK(std::count(version.begin(), version.end(), '.') == 2);
}
