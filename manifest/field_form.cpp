// See field_form.hpp.
#include "manifest/field_form.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>

#include "manifest/fingerprint.hpp"

namespace ccpack::manifest {
namespace {

constexpr std::string_view kCount = "a whole number, e.g. 8";
constexpr std::string_view kCountPattern = "[0-9]{1,9}";
constexpr std::string_view kVersion = "a version starting with a digit, e.g. 2.11.0+cu130";
constexpr std::string_view kVersionPattern = "[0-9][0-9A-Za-z.+_-]*";

constexpr std::array<FieldForm, 16> kForms{{
    {field::gpu_arch, "sm_NN for NVIDIA (e.g. sm_90, sm_100a) or gfxNNNN for AMD (e.g. gfx942, gfx90a, gfx1100)",
     "sm_[1-9][0-9]{1,2}[af]?|gfx[1-9][0-9]?[0-9a-f]{2}"},
    {field::gpu_vendor, "nvidia or amd", "nvidia|amd"},
    {field::cpu_arch, "as `uname -m` prints it: x86_64, aarch64, ppc64le, s390x or riscv64",
     "x86_64|aarch64|ppc64le|s390x|riscv64"},
    {field::gpu_count, kCount, kCountPattern},
    {field::gpu_sm_count, kCount, kCountPattern},
    {field::gpu_warp_size, kCount, kCountPattern},
    {field::world_size, kCount, kCountPattern},
    {field::env_compile_threads, kCount, kCountPattern},
    {field::python_version, kVersion, kVersionPattern},
    {field::glibc, kVersion, kVersionPattern},
    {field::torch_version, kVersion, kVersionPattern},
    {field::torch_cuda, kVersion, kVersionPattern},
    {field::torch_hip, kVersion, kVersionPattern},
    {field::triton_version, kVersion, kVersionPattern},
    {field::ptxas_version, kVersion, kVersionPattern},
    {field::gpu_driver, kVersion, kVersionPattern},
}};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return out;
}

// The letters hands type for digits: O for 0, l and i for 1 (already lower case).
std::string digits_for_letters(std::string s) {
  for (char& c : s) {
    if (c == 'o') c = '0';
    if (c == 'l' || c == 'i') c = '1';
  }
  return s;
}

std::string without(std::string s, std::string_view drop) {
  std::erase_if(s, [&](char c) { return drop.find(c) != std::string_view::npos; });
  return s;
}

std::string repaired_arch(std::string_view value) {
  std::string s = without(lower(value), "_-. ");
  if (s.starts_with("compute")) s = "sm" + s.substr(7);
  if (s.starts_with("sm")) return "sm_" + digits_for_letters(s.substr(2));
  if (s.starts_with("gfx")) return "gfx" + digits_for_letters(s.substr(3));
  std::string digits = digits_for_letters(s);
  if (!digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return "sm_" + digits;
  return s;
}

std::string repaired(std::string_view field, std::string_view value) {
  if (field == field::gpu_arch) return repaired_arch(value);
  std::string s = lower(value);
  if (field == field::cpu_arch) {
    s = s == "amd64" || s == "x86-64" || s == "x64" ? "x86_64" : s == "arm64" ? "aarch64" : s;
    return s;
  }
  const FieldForm* form = form_of(field);
  if (form != nullptr && form->description == kCount) return digits_for_letters(s);
  if (form != nullptr && form->description == kVersion && (s.starts_with('v'))) return std::string(value.substr(1));
  return s;
}

}  // namespace

const FieldForm* form_of(std::string_view field) {
  for (const FieldForm& f : kForms) {
    if (f.field == field) return &f;
  }
  return nullptr;
}

bool fits_form(std::string_view field, std::string_view value) {
  const FieldForm* form = form_of(field);
  if (form == nullptr) return true;
  return std::regex_match(value.begin(), value.end(), std::regex(form->pattern.begin(), form->pattern.end()));
}

std::optional<std::string> normalized_value(std::string_view field, std::string_view value) {
  if (form_of(field) == nullptr) return std::nullopt;
  std::string r = repaired(field, value);
  if (r == value || !fits_form(field, r)) return std::nullopt;
  return r;
}

std::vector<std::string> listed_values(std::string_view field) {
  if (field == field::gpu_vendor) return {"nvidia", "amd"};
  if (field == field::cpu_arch) return {"x86_64", "aarch64", "ppc64le", "s390x", "riscv64"};
  return {};
}

}  // namespace ccpack::manifest
