#pragma once

namespace ccpack {
inline constexpr const char* kVersion = "0.1.0";
}
