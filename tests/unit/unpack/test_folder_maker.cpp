// unpack/folder_maker.hpp: folders made where a thread first needs them, parents first, each by one thread while
// the others that need it wait; the error of a folder that cannot be made reaching every thread that needed it;
// empty folders made at the end, modes set last, a component not restored left alone; lists built by hand
// (editable) and parsed (compact) alike.
#include <fcntl.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "unit/support.hpp"
#include "unpack/folder_maker.hpp"
#include "util/error.hpp"
#include "util/fs.hpp"

using namespace ccpack;
namespace fs = std::filesystem;
using manifest::Entry;
using manifest::EntryType;

namespace {

Entry folder_entry(std::string path, unsigned mode = 0755) { return {std::move(path), EntryType::dir, mode, 0, {}, {}, 0}; }
Entry file_entry(std::string path) { return {std::move(path), EntryType::file, 0644, 0, {}, {}, 0}; }

// inductor: a chain of 12 folders with a file at its end, 30 folders of one file each, a read-only folder holding
// a folder, an empty folder; triton (not restored here): one folder and a file.
manifest::EntryList sample_entries() {
  manifest::EntryList list;
  list.push_back(folder_entry("inductor"));
  std::string chain = "inductor";
  for (int i = 0; i < 12; ++i) list.push_back(folder_entry(chain += "/c" + std::to_string(i)));
  list.push_back(file_entry(chain + "/end"));
  for (int i = 0; i < 30; ++i) {
    list.push_back(folder_entry("inductor/f" + std::to_string(i)));
    list.push_back(file_entry("inductor/f" + std::to_string(i) + "/x"));
  }
  list.push_back(folder_entry("inductor/ro", 0555));
  list.push_back(folder_entry("inductor/ro/in"));
  list.push_back(file_entry("inductor/ro/in/y"));
  list.push_back(folder_entry("inductor/empty", 0750));
  list.push_back(folder_entry("triton"));
  list.push_back(folder_entry("triton/k"));
  list.push_back(file_entry("triton/k/z"));
  return list;
}

std::vector<std::size_t> files_of(const manifest::EntryList& list) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list.type(i) == EntryType::file) out.push_back(i);
  }
  return out;
}

// Runs `threads` threads, each calling ensure_folder_of for every file (thread k starting at the k-th), and
// returns what each caught ("" when nothing).
std::vector<std::string> ensure_from_threads(unpack::FolderMaker& maker, const std::vector<std::size_t>& files, int threads) {
  std::vector<std::string> caught(static_cast<std::size_t>(threads));
  std::vector<std::thread> pool;
  for (int k = 0; k < threads; ++k) {
    pool.emplace_back([&, k] {
      try {
        for (std::size_t n = 0; n < files.size(); ++n)
          maker.ensure_folder_of(files[(n + static_cast<std::size_t>(k)) % files.size()]);
      } catch (const Error& e) {
        caught[static_cast<std::size_t>(k)] = e.what();
      }
    });
  }
  for (std::thread& t : pool) t.join();
  return caught;
}

unsigned mode_of(const fs::path& p) { return static_cast<unsigned>(fs::status(p).permissions() & fs::perms::all); }

}  // namespace

TEST_CASE("folders are made where threads need them, each once, parents first, empty ones at the end, modes last") {
  for (bool editable : {false, true}) {
    INFO("editable list " << editable);
    test::ScratchDir t;
    manifest::EntryList list = sample_entries();
    if (editable) (void)list[0];  // a non-const access turns the list into a plain vector
    REQUIRE(list.editable() == editable);
    fs::create_directories(t / "ind");
    UniqueFd root(::open((t / "ind").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    unpack::FolderMaker maker(
        list, [&root](const Entry& e) { return manifest::component_of(e.path) == "inductor" ? root.get() : -1; },
        current_umask());
    std::vector<std::string> caught = ensure_from_threads(maker, files_of(list), 8);
    CHECK(caught == std::vector<std::string>(8, ""));
    CHECK(fs::is_directory(t / "ind/c0/c1/c2/c3/c4/c5/c6/c7/c8/c9/c10/c11"));
    CHECK(fs::is_directory(t / "ind/f29"));
    CHECK(fs::is_directory(t / "ind/ro/in"));
    CHECK_FALSE(fs::exists(t / "ind/empty"));  // no file needed it yet
    CHECK(mode_of(t / "ind/ro") == 0700);      // writable until the end
    maker.finish();
    CHECK(fs::is_directory(t / "ind/empty"));
    CHECK(mode_of(t / "ind/empty") == 0750);
    CHECK_FALSE(fs::exists(t / "ind/k"));
    CHECK(std::distance(fs::recursive_directory_iterator(t / "ind"), fs::recursive_directory_iterator()) == 12 + 30 + 2 + 1);
    maker.apply_modes();
    CHECK(mode_of(t / "ind/ro") == 0555);
    fs::permissions(t / "ind/ro", fs::perms::owner_all, fs::perm_options::add);
  }
}

TEST_CASE("a folder that cannot be made stops every thread that needs it, with its own error") {
  test::ScratchDir t;
  manifest::EntryList list = sample_entries();
  fs::create_directories(t / "ind");
  test::write_file(t / "ind/c0", "in the way\n");
  UniqueFd root(::open((t / "ind").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  unpack::FolderMaker maker(
      list, [&root](const Entry& e) { return manifest::component_of(e.path) == "inductor" ? root.get() : -1; }, current_umask());
  std::vector<std::size_t> chain_file = {13};  // inductor/c0/.../c11/end
  REQUIRE(list.path(13) == "inductor/c0/c1/c2/c3/c4/c5/c6/c7/c8/c9/c10/c11/end");
  std::vector<std::string> caught = ensure_from_threads(maker, chain_file, 6);
  CHECK(caught == std::vector<std::string>(6, "cannot create folder 'inductor/c0': File exists"));
  CHECK(test::slurp(t / "ind/c0") == "in the way\n");
  // Folders elsewhere are still made.
  maker.ensure_folder_of(list.size() - 5);  // inductor/ro/in/y
  CHECK(fs::is_directory(t / "ind/ro/in"));
}
