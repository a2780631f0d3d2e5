// See elf.hpp. The layout is the System V gABI's ELF64 (little-endian only: x86-64 and aarch64 Linux). The
// dynamic string table is found through DT_STRTAB, a virtual address, mapped to a file offset with the PT_LOAD
// segment that contains it.
#include "util/elf.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "util/fs.hpp"

namespace ccpack {
namespace {

constexpr std::uint32_t kPtLoad = 1;
constexpr std::uint32_t kPtDynamic = 2;
constexpr std::int64_t kDtNull = 0;
constexpr std::int64_t kDtNeeded = 1;
constexpr std::int64_t kDtStrtab = 5;
constexpr std::int64_t kDtStrsz = 10;
constexpr std::int64_t kDtRpath = 15;
constexpr std::int64_t kDtRunpath = 29;

template <typename T>
T load(const unsigned char* p) {
  T v{};
  std::memcpy(&v, p, sizeof v);
  return v;
}

struct Segment {
  std::uint32_t type = 0;
  std::uint64_t offset = 0;
  std::uint64_t vaddr = 0;
  std::uint64_t filesz = 0;
};

bool in_file(std::uint64_t offset, std::uint64_t size, std::uint64_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

struct Reader {
  ElfRead read;
  void* ctx;
  std::uint64_t size;
  bool get(std::uint64_t offset, void* out, std::size_t n) const { return in_file(offset, n, size) && read(ctx, offset, out, n); }
};

std::optional<std::vector<Segment>> program_headers(const Reader& r, std::string& why) {
  unsigned char eh[64] = {};  // zeroed: what a reader callback leaves unwritten never reads as a header
  if (!r.get(0, eh, 4) || std::memcmp(eh,
                                      "\x7f"
                                      "ELF",
                                      4) != 0)
    return why = "not an ELF file", std::nullopt;
  if (!r.get(0, eh, sizeof eh)) return why = "shorter than an ELF64 header", std::nullopt;
  if (eh[4] != 2 || eh[5] != 1) return why = "not a little-endian ELF64 file", std::nullopt;
  auto phoff = load<std::uint64_t>(eh + 32);
  auto phentsize = load<std::uint16_t>(eh + 54);
  auto phnum = load<std::uint16_t>(eh + 56);
  if (phentsize < 56 || phnum > kMaxProgramHeaders || !in_file(phoff, std::uint64_t{phnum} * phentsize, r.size)) {
    return why = "bad program header table", std::nullopt;
  }
  std::vector<Segment> segs;
  for (std::uint16_t i = 0; i < phnum; ++i) {
    unsigned char ph[56] = {};
    if (!r.get(phoff + std::uint64_t{i} * phentsize, ph, sizeof ph)) return why = "program header out of the file", std::nullopt;
    segs.push_back(
        {load<std::uint32_t>(ph), load<std::uint64_t>(ph + 8), load<std::uint64_t>(ph + 16), load<std::uint64_t>(ph + 32)});
  }
  return segs;
}

// The file offset of virtual address `vaddr`, through the PT_LOAD segment that holds it.
std::optional<std::uint64_t> file_offset(const std::vector<Segment>& segs, std::uint64_t vaddr) {
  for (const Segment& s : segs) {
    if (s.type == kPtLoad && vaddr >= s.vaddr && s.offset <= s.offset + s.filesz && vaddr - s.vaddr < s.filesz)
      return s.offset + (vaddr - s.vaddr);
  }
  return std::nullopt;
}

std::optional<std::string> string_at(const Reader& r, std::uint64_t table, std::uint64_t table_size, std::uint64_t index) {
  if (index >= table_size) return std::nullopt;
  std::uint64_t n = std::min<std::uint64_t>(table_size - index, kMaxElfString);
  std::string s(static_cast<std::size_t>(n), '\0');
  if (!r.get(table + index, s.data(), s.size())) return std::nullopt;
  std::size_t end = s.find('\0');
  if (end == std::string::npos) return std::nullopt;
  s.resize(end);
  return s;
}

}  // namespace

std::optional<ElfDynamic> parse_elf_dynamic(ElfRead read, void* ctx, std::uint64_t file_size, std::string& why) {
  Reader r{read, ctx, file_size};
  auto segs = program_headers(r, why);
  if (!segs) return std::nullopt;
  const Segment* dyn = nullptr;
  for (const Segment& s : *segs) {
    if (s.type == kPtDynamic) dyn = &s;
  }
  if (!dyn) return why = "no dynamic section (not a shared object)", std::nullopt;
  if (!in_file(dyn->offset, dyn->filesz, file_size)) return why = "dynamic section out of the file", std::nullopt;
  std::vector<std::pair<std::int64_t, std::uint64_t>> tags;
  std::uint64_t strtab = 0, strsz = 0;
  bool have_strtab = false;
  for (std::uint64_t i = 0; i < kMaxDynamicEntries && (i + 1) * 16 <= dyn->filesz; ++i) {
    unsigned char e[16];
    if (!r.get(dyn->offset + i * 16, e, sizeof e)) return why = "dynamic section out of the file", std::nullopt;
    auto tag = load<std::int64_t>(e);
    auto val = load<std::uint64_t>(e + 8);
    if (tag == kDtNull) break;
    if (tag == kDtStrtab) strtab = val, have_strtab = true;
    if (tag == kDtStrsz) strsz = val;
    if (tag == kDtNeeded || tag == kDtRunpath || tag == kDtRpath) tags.emplace_back(tag, val);
  }
  if (tags.empty()) return ElfDynamic{};
  auto table = have_strtab ? file_offset(*segs, strtab) : std::nullopt;
  if (!table || !in_file(*table, strsz, file_size)) return why = "dynamic string table out of the file", std::nullopt;
  ElfDynamic out;
  for (const auto& [tag, index] : tags) {
    auto s = string_at(r, *table, strsz, index);
    if (!s) return why = "dynamic string out of its table", std::nullopt;
    if (tag == kDtNeeded) out.needed.push_back(std::move(*s));
    if (tag == kDtRunpath) out.runpath = std::move(*s);
    if (tag == kDtRpath) out.rpath = std::move(*s);
  }
  return out;
}

std::optional<ElfDynamic> parse_elf_dynamic(std::string_view bytes, std::string& why) {
  auto read = [](void* ctx, std::uint64_t offset, void* out, std::size_t size) {
    const auto* b = static_cast<const std::string_view*>(ctx);
    std::memcpy(out, b->data() + offset, size);  // bounds checked by the caller (Reader::get)
    return true;
  };
  return parse_elf_dynamic(read, const_cast<std::string_view*>(&bytes), bytes.size(), why);
}

std::optional<ElfDynamic> read_elf_dynamic(const std::string& path, std::string& why) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) return why = "cannot open it", std::nullopt;
  if (!S_ISREG(st.st_mode)) return why = "not a regular file", std::nullopt;
  auto read = [](void* ctx, std::uint64_t offset, void* out, std::size_t size) {
    ssize_t n = ::pread(*static_cast<int*>(ctx), out, size, static_cast<off_t>(offset));
    return n == static_cast<ssize_t>(size);
  };
  int raw = fd.get();
  return parse_elf_dynamic(read, &raw, static_cast<std::uint64_t>(st.st_size), why);
}

}  // namespace ccpack
