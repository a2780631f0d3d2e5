// util/elf.cpp, the bounded ELF reader: DT_NEEDED and RUNPATH from a well-formed file, a reason for every
// truncated or lying one and never a crash, and the file reader's own refusals (a link, not a regular file).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "unit/support.hpp"
#include "util/elf.hpp"

using namespace ccpack;
namespace fs = std::filesystem;

namespace {

template <typename T>
void put(std::string& b, std::size_t at, T v) {
  if (b.size() < at + sizeof v) b.resize(at + sizeof v, '\0');
  std::memcpy(b.data() + at, &v, sizeof v);
}

// A minimal ELF64: header, PT_LOAD (whole file, vaddr 0), PT_DYNAMIC at 0x100, strings at 0x200.
std::string tiny_elf(std::uint64_t strtab_vaddr = 0x200) {
  std::string b(0x300, '\0');
  std::memcpy(b.data(),
              "\x7f"
              "ELF\x02\x01\x01",
              7);
  put<std::uint64_t>(b, 32, 64);  // e_phoff
  put<std::uint16_t>(b, 54, 56);  // e_phentsize
  put<std::uint16_t>(b, 56, 2);   // e_phnum
  put<std::uint32_t>(b, 64, 1);   // PT_LOAD
  put<std::uint64_t>(b, 64 + 8, 0);
  put<std::uint64_t>(b, 64 + 16, 0);
  put<std::uint64_t>(b, 64 + 32, 0x300);
  put<std::uint32_t>(b, 120, 2);  // PT_DYNAMIC
  put<std::uint64_t>(b, 120 + 8, 0x100);
  put<std::uint64_t>(b, 120 + 32, 6 * 16);
  const char strings[] = "\0libc.so.6\0libcudart.so.13\0$ORIGIN/../lib";
  std::memcpy(b.data() + 0x200, strings, sizeof strings);
  std::int64_t dyn[][2] = {{1, 1}, {1, 11}, {29, 27}, {5, static_cast<std::int64_t>(strtab_vaddr)}, {10, sizeof strings}, {0, 0}};
  std::memcpy(b.data() + 0x100, dyn, sizeof dyn);
  return b;
}

}  // namespace

TEST_CASE("ELF reader: needed and runpath from a well-formed file") {
  std::string why;
  auto d = parse_elf_dynamic(tiny_elf(), why);
  REQUIRE(d);
  CHECK(d->needed == std::vector<std::string>{"libc.so.6", "libcudart.so.13"});
  CHECK(d->runpath == "$ORIGIN/../lib");
  CHECK_FALSE(d->rpath);
}

TEST_CASE("ELF reader: hostile files give a reason, never a crash") {
  std::string why;
  CHECK_FALSE(parse_elf_dynamic(std::string("not an elf"), why));
  CHECK(why == "not an ELF file");
  CHECK_FALSE(parse_elf_dynamic(std::string("\x7f"
                                            "ELF\x02\x01"),
                                why));
  CHECK(why == "shorter than an ELF64 header");
  std::string good = tiny_elf();
  for (std::size_t n :
       {std::size_t{4}, std::size_t{63}, std::size_t{64}, std::size_t{130}, std::size_t{0x120}, std::size_t{0x205}}) {
    CHECK_FALSE(parse_elf_dynamic(std::string_view(good).substr(0, n), why));
  }
  CHECK_FALSE(parse_elf_dynamic(tiny_elf(0xffffffffffff0000ull), why));
  CHECK(why == "dynamic string table out of the file");
  std::string b = good;
  put<std::uint64_t>(b, 32, ~0ull - 8);  // e_phoff near the end of the address space
  CHECK_FALSE(parse_elf_dynamic(b, why));
  b = good;
  b[4] = 1;  // ELF32
  CHECK_FALSE(parse_elf_dynamic(b, why));
  CHECK(why == "not a little-endian ELF64 file");
  b = good;
  put<std::int64_t>(b, 0x100 + 8, 0x7fffffff);  // DT_NEEDED index past the table
  CHECK_FALSE(parse_elf_dynamic(b, why));
  // every single-byte change of the headers: no crash (ASan watches the reads)
  for (std::size_t i = 0; i < 0x160; ++i) {
    std::string m = good;
    m[i] = static_cast<char>(m[i] ^ 0xff);
    (void)parse_elf_dynamic(m, why);
  }
}

TEST_CASE("ELF reader: a file read from disk, never through a final link, only a regular file") {
  test::ScratchDir t;
  test::write_file(t / "lib.so", tiny_elf());
  std::string why;
  auto d = read_elf_dynamic((t / "lib.so").string(), why);
  REQUIRE(d);
  CHECK(d->needed == std::vector<std::string>{"libc.so.6", "libcudart.so.13"});
  fs::create_symlink("lib.so", t / "link.so");
  CHECK_FALSE(read_elf_dynamic((t / "link.so").string(), why));
  CHECK(why == "cannot open it");
  CHECK_FALSE(read_elf_dynamic((t / "none.so").string(), why));
  CHECK(why == "cannot open it");
  CHECK_FALSE(read_elf_dynamic(t.path().string(), why));
  CHECK(why == "not a regular file");
  test::write_file(t / "script.so", "#!/bin/sh\n");
  CHECK_FALSE(read_elf_dynamic((t / "script.so").string(), why));
  CHECK(why == "not an ELF file");
}
