// util/big_buffer.cpp: a BigBuffer's size and writable bytes, moves that hand the memory over, the zstd allocation
// hooks for small and large blocks, the huge-page advice the policy says (and the sysfs reading it rests on), and
// BufferPool giving a returned buffer out again (and a larger one fresh).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "unit/support.hpp"
#include "util/big_buffer.hpp"

using namespace ccpack;
using ccpack::test::ScratchDir;
using ccpack::test::write_file;

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

TEST_CASE("BigBuffer and big_alloc: their mappings are advised onto huge pages as huge_pages_advised() says") {
  // Advised except where the host takes free memory back (util/big_buffer.hpp): the policy, whichever it is on
  // this machine, is what the mappings carry.
  bool advised = huge_pages_advised();
  CHECK(advised == !free_pages_reported("/sys/bus/virtio/drivers/virtio_balloon"));
  BigBuffer b(8u << 20);
  std::string flags = vm_flags_at(b.data());
  REQUIRE(flags.rfind("VmFlags:", 0) == 0);
  CHECK((flags.find(" hg") != std::string::npos) == advised);
  void* p = big_alloc(nullptr, 8u << 20);
  REQUIRE(p != nullptr);
  flags = vm_flags_at(p);
  REQUIRE(flags.rfind("VmFlags:", 0) == 0);
  CHECK((flags.find(" hg") != std::string::npos) == advised);
  big_free(nullptr, p);
}

TEST_CASE("free_pages_reported: feature bit 5 of a virtio balloon device's features, missing counts as no") {
  ScratchDir t;
  const std::string dir = (t.path() / "virtio_balloon").string();
  CHECK_FALSE(free_pages_reported(dir.c_str()));  // no driver folder: not a VM with a balloon
  auto device = [&](const std::string& name, const std::string& bits) {
    std::filesystem::create_directories(t.path() / "virtio_balloon" / name);
    write_file(t.path() / "virtio_balloon" / name / "features", bits + "\n");
  };
  std::filesystem::create_directories(dir);
  write_file(t.path() / "virtio_balloon" / "uevent", "DRIVER=virtio_balloon\n");
  CHECK_FALSE(free_pages_reported(dir.c_str()));  // the driver, no device
  device("virtio0", "01100001000000000000000000000000100000000000000000000000000000000000000000000000");
  CHECK_FALSE(free_pages_reported(dir.c_str()));  // statistics, deflate on OOM: no reporting
  device("virtio1", "0110");
  CHECK_FALSE(free_pages_reported(dir.c_str()));  // too short to hold bit 5
  device("virtio2", "01100101000000000000000000000000100000000000000000000000000000000000000000000000");
  CHECK(free_pages_reported(dir.c_str()));  // the dev VM's balloon: bit 5 set
  std::filesystem::remove_all(t.path() / "virtio_balloon" / "virtio2");
  device("other5", "11111111");
  CHECK_FALSE(free_pages_reported(dir.c_str()));  // not one of the driver's devices
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
