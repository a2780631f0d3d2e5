// libcurl, loaded at run time with dlopen instead of linked, so that ccpack's binary needs nothing outside glibc,
// libstdc++ and libgcc (the portable package's promise, docs/PACKAGING.md) and so that only push, pull and
// restore oci:// need libcurl at all: create, restore, verify, import... run where it is absent.
//
// How: the first call of curl() opens libcurl.so.4 (else libcurl-gnutls.so.4, the same ABI with GnuTLS, which
// git pulls into Debian and Ubuntu images), or exactly the file named by $CCPACK_LIBCURL, resolves every function
// http/http*.cpp use into one table and runs curl_global_init; a function-local static makes that happen once,
// thread-safely, and the library is never closed. The table's types are the curl headers' own (decltype), so a
// signature cannot drift from the declarations. libcurl.so.4's ABI has been stable since 2006; the newest
// function used (curl_url, 7.62.0) is older than every glibc >= 2.34 distribution's libcurl.
//
// When no libcurl loads, curl() throws one Error (exit 1) naming libcurl.so.4, the loader's reason (which names the
// file tried) and how to install it, every time; tests/cli/suites/libcurl_test.sh pins that line through $CCPACK_LIBCURL.
#pragma once

#include <curl/curl.h>

#include <string>

namespace ccpack::http {

// A libcurl to load instead of searching for libcurl.so.4 (a path, or a name for the dynamic loader).
inline constexpr const char* kLibcurlVar = "CCPACK_LIBCURL";

// The libcurl functions http/http*.cpp call; curl_easy_setopt and curl_easy_getinfo are variadic and read
// exactly one argument (long, curl_off_t or a pointer, by option).
struct CurlApi {
  decltype(&curl_global_init) global_init = nullptr;
  decltype(&curl_easy_init) easy_init = nullptr;
  decltype(&curl_easy_cleanup) easy_cleanup = nullptr;
  decltype(&curl_easy_reset) easy_reset = nullptr;
  decltype(&curl_easy_setopt) easy_setopt = nullptr;
  decltype(&curl_easy_perform) easy_perform = nullptr;
  decltype(&curl_easy_getinfo) easy_getinfo = nullptr;
  decltype(&curl_easy_strerror) easy_strerror = nullptr;
  decltype(&curl_slist_append) slist_append = nullptr;
  decltype(&curl_slist_free_all) slist_free_all = nullptr;
  decltype(&curl_url) url = nullptr;
  decltype(&curl_url_cleanup) url_cleanup = nullptr;
  decltype(&curl_url_set) url_set = nullptr;
  decltype(&curl_url_get) url_get = nullptr;
  decltype(&curl_free) free = nullptr;
  decltype(&curl_getdate) getdate = nullptr;
  decltype(&curl_version_info) version_info = nullptr;
};

// The loaded table; throws Error "... need libcurl.so.4 ..." when no libcurl could be loaded.
[[nodiscard]] const CurlApi& curl();

// The loaded libcurl's version ("7.88.1"), or "" when none loads; never throws (for --version).
[[nodiscard]] std::string loaded_curl_version();

}  // namespace ccpack::http
