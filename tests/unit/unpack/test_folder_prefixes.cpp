// unpack/folder_prefixes.cpp's FolderPrefixes: insert reports a folder learned twice, longest gives the length of
// the deepest learned folder a value lies below (matching whole path elements, exact bytes), contains names only
// learned folders (not their parents), and each question costs one lookup per path element.
#include <catch2/catch.hpp>
#include <string>

#include "unpack/folder_prefixes.hpp"

using ccpack::unpack::FolderPrefixes;

TEST_CASE("FolderPrefixes::insert counts each folder once and keeps the longest length", "[unpack][folder_prefixes]") {
  FolderPrefixes p;
  CHECK(p.size() == 0);
  CHECK(p.longest_folder() == 0);
  CHECK(p.insert("/a/b"));
  CHECK_FALSE(p.insert("/a/b"));  // learned already
  CHECK(p.insert("/a"));          // a parent of a learned folder is a folder of its own
  CHECK(p.insert("/a/bc/d"));
  CHECK(p.size() == 3);
  CHECK(p.longest_folder() == 7);
}

TEST_CASE("FolderPrefixes::longest matches whole elements and keeps the deepest folder", "[unpack][folder_prefixes]") {
  FolderPrefixes p;
  p.insert("/a");
  p.insert("/a/b/c");
  CHECK(p.longest("/a/x") == 2);
  CHECK(p.longest("/a/b/c/file") == 6);
  CHECK(p.longest("/a/b/file") == 2);  // /a/b is no folder: the deepest below it is /a
  CHECK(p.longest("/a/b/c") == 2);     // a folder itself is not below itself
  CHECK(p.longest("/ab/file") == 0);   // a string prefix that is not a path element
  CHECK(p.longest("/a") == 0);
  CHECK(p.longest("a/x") == 0);
  CHECK(p.longest("") == 0);
  FolderPrefixes empty_elements;
  empty_elements.insert("/a//b");  // empty elements kept: "/a/b" is another folder
  CHECK(empty_elements.longest("/a//b/f") == 5);
  CHECK(empty_elements.longest("/a/b/f") == 0);
}

TEST_CASE("FolderPrefixes::contains names learned folders only", "[unpack][folder_prefixes]") {
  FolderPrefixes p;
  p.insert("/x/y/z");
  CHECK(p.contains("/x/y/z"));
  CHECK_FALSE(p.contains("/x/y"));  // a node on the way, not a folder
  CHECK_FALSE(p.contains("/x/y/z/w"));
  CHECK_FALSE(p.contains("/x/y/"));
  CHECK_FALSE(p.contains(""));
}

TEST_CASE("FolderPrefixes::lookups counts one lookup per element walked", "[unpack][folder_prefixes]") {
  FolderPrefixes p;
  p.insert("/a/b");  // "", "a", "b"
  CHECK(p.lookups() == 3);
  (void)p.longest("/a/b/c/d/e");  // "", "a", "b", "c" (not learned: the walk stops)
  CHECK(p.lookups() == 7);
  (void)p.contains("/q");  // "", "q"
  CHECK(p.lookups() == 9);
  for (int i = 0; i < 1000; ++i) p.insert("/a/f" + std::to_string(i));
  std::uint64_t before = p.lookups();
  (void)p.longest("/a/f999/x");  // independent of the number of folders learned
  CHECK(p.lookups() - before == 3);
}
