#include "util/error.hpp"

#include <cerrno>
#include <cstring>

namespace ccpack {

std::string errno_message(const std::string& what, int err) { return what + ": " + std::strerror(err); }

void throw_errno(const std::string& what) { throw Error(errno_message(what, errno)); }

}  // namespace ccpack
