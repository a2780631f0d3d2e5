// util/big_buffer.cpp: a BigBuffer's size and writable bytes, moves that hand the memory over, the zstd allocation
// hooks for small and large blocks, and BufferPool giving a returned buffer out again (and a larger one fresh).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "util/big_buffer.hpp"

using namespace ccpack;

TEST_CASE("BigBuffer: size, writable bytes, moves hand the memory over") {
  BigBuffer empty;
  CHECK(empty.data() == nullptr);
  CHECK(empty.size() == 0);
  BigBuffer b(5u << 20);
  REQUIRE(b.data() != nullptr);
  CHECK(b.size() == (5u << 20));
  std::memset(b.data(), 0xab, b.size());
  CHECK(static_cast<unsigned char>(b.data()[b.size() - 1]) == 0xab);
  char* memory = b.data();
  BigBuffer moved(std::move(b));
  CHECK(moved.data() == memory);
  CHECK(moved.size() == (5u << 20));
  CHECK(b.data() == nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is the contract
  CHECK(b.size() == 0);
  BigBuffer other(4096);
  other = std::move(moved);
  CHECK(other.data() == memory);
  CHECK(other.size() == (5u << 20));
}

TEST_CASE("big_alloc and big_free: small and large blocks are writable and freed") {
  for (std::size_t size : {std::size_t{64}, std::size_t{3u << 20}}) {
    void* p = big_alloc(nullptr, size);
    REQUIRE(p != nullptr);
    std::memset(p, 1, size);
    CHECK(static_cast<unsigned char*>(p)[size - 1] == 1);
    big_free(nullptr, p);
  }
  big_free(nullptr, nullptr);  // as free(NULL): nothing
}

namespace {

// The VmFlags line of the mapping of this process that holds `address` (/proc/self/smaps), "" when none does.
std::string vm_flags_at(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  auto at = reinterpret_cast<std::uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo = 0;
    std::uintptr_t hi = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> lo >> dash >> hi && dash == '-' && line.find(' ') != std::string::npos) {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

}  // namespace

TEST_CASE("BigBuffer and big_alloc: their mappings are not advised onto huge pages") {
  // A fresh huge page on a VM whose free memory the host takes back costs several times its 4 KiB pages
  // (util/big_buffer.hpp); the system's own THP policy is left to decide.
  BigBuffer b(8u << 20);
  std::string flags = vm_flags_at(b.data());
  REQUIRE(flags.rfind("VmFlags:", 0) == 0);
  CHECK(flags.find(" hg") == std::string::npos);
  void* p = big_alloc(nullptr, 8u << 20);
  REQUIRE(p != nullptr);
  flags = vm_flags_at(p);
  REQUIRE(flags.rfind("VmFlags:", 0) == 0);
  CHECK(flags.find(" hg") == std::string::npos);
  big_free(nullptr, p);
}

TEST_CASE("BufferPool: a returned buffer is given out again, a larger request gets its own") {
  BufferPool pool(1u << 20);
  CHECK(pool.buffer_size() == (1u << 20));
  char* first = nullptr;
  {
    auto a = pool.take();
    REQUIRE(a);
    CHECK(a->size() == (1u << 20));
    first = a->data();
    auto b = pool.take(100);
    CHECK(b->size() == (1u << 20));
    CHECK(b->data() != first);
  }
  auto again = pool.take();
  auto again2 = pool.take();
  CHECK((again->data() == first || again2->data() == first));
  auto big = pool.take((1u << 20) + 1);
  CHECK(big->size() == (1u << 20) + 1);
  CHECK(big->data() != again->data());
  CHECK(big->data() != again2->data());
}
