// See purge_rules.hpp. Every function here is pure apart from the callbacks it is given.
#include "unpack/purge_rules.hpp"

#include <charconv>

#include "manifest/reserved_names.hpp"
#include "manifest/transient_names.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace ccpack::unpack {
using manifest::Fingerprint;

namespace {

std::optional<std::string> local_value(const Fingerprint& fp, std::string_view field) {
  const manifest::FieldValue* v = fp.get(field);
  if (!v || !v->value) return std::nullopt;
  return v->value;
}

std::optional<long> leading_number(std::string_view s) {
  long v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  return v;
}

// The name a needed library resolves to here: the first folder that holds it, or nullopt.
std::optional<std::string> resolve(const std::string& name, const std::vector<std::string>& dirs, const LibrarySearch& s) {
  if (name.find('/') != std::string::npos) return s.exists(name) ? std::optional(name) : std::nullopt;
  for (const std::string& d : dirs) {
    std::string p = d.ends_with('/') ? d : d + '/';
    p += name;
    if (s.exists(p)) return p;
  }
  return std::nullopt;
}

}  // namespace

const char* to_string(PurgeRule rule) {
  switch (rule) {
    case PurgeRule::marker:
      return "marker";
    case PurgeRule::kernel:
      return "triton-kernel";
    case PurgeRule::library:
      return "library";
    case PurgeRule::debris:
      return "debris";
  }
  return "?";
}

Judgement judge_kernel(const manifest::TritonTarget& target, const Fingerprint& local) {
  std::string stale;
  std::string unknown;
  auto check = [&](std::string_view field, const std::string& built) {
    auto here = local_value(local, field);
    if (!here) {
      unknown += (unknown.empty() ? "" : ", ") + std::string(field) + " absent here";
    } else if (*here != built) {
      stale += (stale.empty() ? "" : ", ") + std::string(field) + " " + escaped(built, 40) + " here " + escaped(*here, 40);
    }
  };
  check(manifest::field::gpu_arch, manifest::arch_name(target));
  check(manifest::field::gpu_warp_size, std::to_string(target.warp_size));
  check(manifest::field::triton_version, target.triton_version);
  if (!stale.empty()) return {Judgement::stale, "built for " + stale};
  if (!unknown.empty()) return {Judgement::unjudged, unknown};
  return {};
}

Judgement judge_marker(const Fingerprint& built_for, const Fingerprint& local, const manifest::ComponentRef& component) {
  if (!built_for.recorded()) return {Judgement::unjudged, "its marker records no fingerprint"};
  manifest::Comparison c = manifest::compare(built_for, local, {component});
  if (c.worst() < manifest::Verdict::stale) return {};
  return {Judgement::stale, "restored for another machine: " + c.summary()};
}

std::optional<int> wheel_cuda_major(std::string_view path) {
  std::size_t at = path.find("/nvidia/");
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view rest = path.substr(at + 8);
  for (std::size_t i = 0; i + 2 < rest.size(); ++i) {
    bool starts = i == 0 || rest[i - 1] == '/' || rest[i - 1] == '_' || rest[i - 1] == '-';
    if (!starts || rest.compare(i, 2, "cu") != 0 || rest[i + 2] < '0' || rest[i + 2] > '9') continue;
    std::size_t end = i + 2;
    while (end < rest.size() && rest[end] >= '0' && rest[end] <= '9') ++end;
    std::string_view digits = rest.substr(i + 2, std::min<std::size_t>(end - i - 2, 2));  // cu128 -> 12
    if (auto n = leading_number(digits)) return static_cast<int>(*n);
  }
  return std::nullopt;
}

std::optional<int> cuda_major(const Fingerprint& local) {
  auto v = local_value(local, manifest::field::torch_cuda);
  if (!v) return std::nullopt;
  auto n = leading_number(*v);
  return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
}

std::vector<std::string> split_search_path(std::string_view path, std::string_view origin) {
  std::vector<std::string> out;
  if (path.empty()) return out;
  for (;;) {
    std::size_t colon = path.find(':');
    std::string item(path.substr(0, colon));
    for (std::string_view var : {"${ORIGIN}", "$ORIGIN"}) {
      for (std::size_t p = item.find(var); p != std::string::npos; p = item.find(var, p + origin.size())) {
        item.replace(p, var.size(), origin);
      }
    }
    if (!item.empty()) out.push_back(std::move(item));
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return out;
}

Judgement judge_library(const ElfDynamic& dyn, const std::string& lib, const LibrarySearch& search) {
  std::string origin = lib.substr(0, lib.rfind('/') == std::string::npos ? 0 : lib.rfind('/'));
  std::vector<std::string> dirs = split_search_path(dyn.runpath ? *dyn.runpath : dyn.rpath.value_or(""), origin);
  dirs.insert(dirs.end(), search.dirs.begin(), search.dirs.end());
  for (const std::string& name : dyn.needed) {
    auto found = resolve(name, dirs, search);
    if (!found) return {Judgement::stale, "needs '" + escaped(name, 80) + "', which resolves nowhere here"};
    auto wheel = wheel_cuda_major(*found);
    if (wheel && search.cuda_major && *wheel != *search.cuda_major) {
      return {Judgement::stale, "needs '" + escaped(name, 80) + "', found only in a CUDA " + std::to_string(*wheel) + " wheel (" +
                                    escaped(*found, 120) + ") where torch is built for CUDA " +
                                    std::to_string(*search.cuda_major)};
    }
  }
  return {};
}

Judgement judge_debris(std::string_view name, bool is_dir, const std::function<bool(long)>& alive) {
  if (!is_dir && name.ends_with(manifest::kLockSuffix) && name.size() > manifest::kLockSuffix.size())
    return {Judgement::stale, "a lock file"};
  auto pid_at = [&](std::string_view tail) -> std::optional<long> { return leading_number(tail); };
  if (is_dir && name.starts_with(manifest::kTritonTempPrefix)) {
    auto pid = pid_at(name.substr(manifest::kTritonTempPrefix.size()));
    if (pid && alive(*pid)) return {Judgement::fits, "its writer (pid " + std::to_string(*pid) + ") still runs"};
    return {Judgement::stale, "a Triton temporary folder whose writer is gone"};
  }
  std::size_t infix = name.find(manifest::kStagingInfix);
  if (is_dir && name.starts_with('.') && infix != std::string_view::npos) {
    auto pid = pid_at(name.substr(infix + manifest::kStagingInfix.size()));
    if (pid && alive(*pid)) return {Judgement::fits, "its writer (pid " + std::to_string(*pid) + ") still runs"};
    return {Judgement::stale, "a ccpack staging folder left by a run that ended"};
  }
  return {};
}

}  // namespace ccpack::unpack
