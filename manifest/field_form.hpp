// The written form of a fingerprint field's value, as the probes spell it: what a value typed by hand (`--select
// gpu.arch=sm_90`) must look like, so a typo (`sm90`, `SM_90`, `sm_9O`) is refused at once instead of making every
// comparison stale. One owner: the probes (probe/) write these forms, and `--select` is checked against them.
//
//   gpu.arch      sm_NN[N][a|f] (NVIDIA: sm_90, sm_100a) or gfxN[N]XX (AMD: gfx942, gfx90a, gfx1100)
//   gpu.vendor    nvidia | amd
//   cpu.arch      as `uname -m` prints it: x86_64, aarch64, ppc64le, s390x, riscv64
//   counts        gpu.count, gpu.sm_count, gpu.warp_size, world_size, env.compile_threads: a whole number
//   versions      python.version, glibc, torch.version, torch.cuda, torch.hip, triton.version, ptxas.version,
//                 ck4inductor.version, gpu.driver: a digit, then digits, letters and . + _ -
// Other fields (names, paths, lists, settings) have no fixed form here.
//
// normalized_value() repairs the typos hands make (case, a missing or different separator, the letter O for the
// digit 0, l or I for 1) and returns the repaired value when it has the field's form: the "did you mean" of a
// refusal. It never silently replaces what was typed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccpack::manifest {

struct FieldForm {
  std::string_view field;
  std::string_view description;  // "sm_NN (NVIDIA, e.g. sm_90) or gfxNNNN (AMD, e.g. gfx942)"
  std::string_view pattern;      // ECMAScript regular expression the whole value must match
};

// The form of `field`; nullptr when its values have no fixed form.
[[nodiscard]] const FieldForm* form_of(std::string_view field);
// Whether `value` has the form of `field` (always true for a field without one).
[[nodiscard]] bool fits_form(std::string_view field, std::string_view value);
// The value `value` was most likely meant to be, when repairing its typos gives one of the field's form and it
// differs from `value`; nullopt otherwise.
[[nodiscard]] std::optional<std::string> normalized_value(std::string_view field, std::string_view value);
// The values of a field whose values are a closed list (gpu.vendor, cpu.arch); empty for the others.
[[nodiscard]] std::vector<std::string> listed_values(std::string_view field);

}  // namespace ccpack::manifest
