// See curl_loader.hpp.
#include "http/curl_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::http {
namespace {

// What the first curl() found: the table, or why there is none.
struct Loaded {
  CurlApi api;
  std::string error;
};

// Resolves `name` into `slot`; false (and `error` set) when the library lacks it.
template <class Fn>
bool resolve(void* lib, const char* name, Fn& slot, const std::string& from, std::string& error) {
  slot = reinterpret_cast<Fn>(::dlsym(lib, name));
  if (slot != nullptr) return true;
  error = from + " lacks " + name + " (libcurl 7.62 or later is needed)";
  return false;
}

bool resolve_all(void* lib, CurlApi& a, const std::string& from, std::string& e) {
  return resolve(lib, "curl_global_init", a.global_init, from, e) && resolve(lib, "curl_easy_init", a.easy_init, from, e) &&
         resolve(lib, "curl_easy_cleanup", a.easy_cleanup, from, e) && resolve(lib, "curl_easy_reset", a.easy_reset, from, e) &&
         resolve(lib, "curl_easy_setopt", a.easy_setopt, from, e) && resolve(lib, "curl_easy_perform", a.easy_perform, from, e) &&
         resolve(lib, "curl_easy_getinfo", a.easy_getinfo, from, e) &&
         resolve(lib, "curl_easy_strerror", a.easy_strerror, from, e) &&
         resolve(lib, "curl_slist_append", a.slist_append, from, e) &&
         resolve(lib, "curl_slist_free_all", a.slist_free_all, from, e) && resolve(lib, "curl_url", a.url, from, e) &&
         resolve(lib, "curl_url_cleanup", a.url_cleanup, from, e) && resolve(lib, "curl_url_set", a.url_set, from, e) &&
         resolve(lib, "curl_url_get", a.url_get, from, e) && resolve(lib, "curl_free", a.free, from, e) &&
         resolve(lib, "curl_getdate", a.getdate, from, e) && resolve(lib, "curl_version_info", a.version_info, from, e);
}

// The first candidate that opens; `why` gets the loader's message for the first one that did not.
void* open_first(const std::vector<std::string>& candidates, std::string& opened, std::string& why) {
  for (const std::string& name : candidates) {
    if (void* lib = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      opened = name;
      return lib;
    }
    if (why.empty()) {
      const char* e = ::dlerror();
      why = escaped(e != nullptr ? e : "cannot be loaded", 300);
    }
  }
  return nullptr;
}

Loaded load() {
  Loaded out;
  const char* override_path = std::getenv(kLibcurlVar);
  bool overridden = override_path != nullptr && *override_path != '\0';
  std::vector<std::string> candidates =
      overridden ? std::vector<std::string>{override_path} : std::vector<std::string>{"libcurl.so.4", "libcurl-gnutls.so.4"};
  std::string opened;
  std::string why;
  void* lib = open_first(candidates, opened, why);
  if (lib == nullptr) {
    out.error = "push, pull and restore oci:// need libcurl.so.4, which cannot be loaded (" + why +
                "); install it (Debian/Ubuntu: apt-get install libcurl4; RHEL/Fedora: dnf install libcurl) or set $" +
                kLibcurlVar + " to its path";
    return out;
  }
  std::string from = "libcurl '" + escaped(opened, 300) + "'";
  if (!resolve_all(lib, out.api, from, out.error)) return out;  // never closed: nothing else uses it, and it is small
  if (out.api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) out.error = "cannot initialise " + from;
  return out;
}

const Loaded& loaded() {
  static const Loaded once = load();  // magic static: loaded once, whichever thread asks first
  return once;
}

}  // namespace

const CurlApi& curl() {
  const Loaded& l = loaded();
  if (!l.error.empty()) throw Error(l.error);
  return l.api;
}

std::string loaded_curl_version() {
  const Loaded& l = loaded();
  if (!l.error.empty()) return {};
  const curl_version_info_data* info = l.api.version_info(CURLVERSION_NOW);
  return info != nullptr && info->version != nullptr ? info->version : "";
}

}  // namespace ccpack::http
