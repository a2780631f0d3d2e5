// manifest/links: symlinks judged through the other symlinks of the tree, as the kernel would resolve them.
#include <catch2/catch.hpp>
#include <deque>
#include <string>

#include "manifest/links.hpp"

using namespace ccpack::manifest;
using LinkVerdict = EntryTree::LinkVerdict;

namespace {

// A tree under component "c", built from (path, target) pairs: an empty target is a folder, "=file" a file.
class LinkTree {
 public:
  LinkTree() { add("c", ""); }
  std::uint32_t add(const std::string& path, const std::string& target) {
    paths_.push_back(path);
    targets_.push_back(target);
    EntryType type = target.empty() ? EntryType::dir : target == "=file" ? EntryType::file : EntryType::symlink;
    auto r = tree_.add(paths_.back(), type, type == EntryType::symlink ? std::string_view(targets_.back()) : "");
    REQUIRE(r.status == EntryTree::Added::ok);
    return r.node;
  }
  LinkVerdict link(const std::string& path, const std::string& target) { return tree_.resolve_link(add(path, target)); }
  EntryTree& tree() { return tree_; }

 private:
  std::deque<std::string> paths_;  // the tree keeps views: these must not move
  std::deque<std::string> targets_;
  EntryTree tree_;
};

}  // namespace

TEST_CASE("links that stay inside are accepted") {
  LinkTree t;
  t.add("c/fx", "");
  t.add("c/fx/a.py", "=file");
  CHECK(t.link("c/alias", "fx/a.py") == LinkVerdict::inside);
  CHECK(t.link("c/fx/self", "../fx/./a.py") == LinkVerdict::inside);
  CHECK(t.link("c/root", ".") == LinkVerdict::inside);    // the component root itself
  CHECK(t.link("c/fx/up", "..") == LinkVerdict::inside);  // ditto, from below
  CHECK(t.link("c/dangling", "nothing/here") == LinkVerdict::inside);
  CHECK(t.link("c/via", "root/fx/up/fx//a.py") == LinkVerdict::inside);  // through two links, back inside
}

TEST_CASE("links that leave the component root are refused") {
  LinkTree t;
  t.add("c/a", "");
  CHECK(t.link("c/x", "..") == LinkVerdict::escapes);
  CHECK(t.link("c/a/x", "../../etc") == LinkVerdict::escapes);
  CHECK(t.link("c/abs", "/etc/passwd") == LinkVerdict::escapes);
  // Names not in the tree are plain folders: a later mkdir could make this resolve outside.
  CHECK(t.link("c/lex", "missing/../../x") == LinkVerdict::escapes);
  CHECK(t.link("c/a/file-then-up", "../../c") == LinkVerdict::escapes);
}

TEST_CASE("a link escapes through another link") {
  LinkTree t;
  t.link("c/l2", ".");
  CHECK(t.link("c/l1", "l2/..") == LinkVerdict::escapes);  // lexically ".", really the parent of c
  LinkTree deep;
  deep.add("c/a", "");
  deep.add("c/a/b", "");
  CHECK(deep.link("c/a/b/up", "../..") == LinkVerdict::inside);
  CHECK(deep.link("c/a/esc", "b/up/../x") == LinkVerdict::escapes);
  CHECK(deep.link("c/a/ok", "b/up/a/b") == LinkVerdict::inside);
}

TEST_CASE("loops and chains longer than the kernel follows are refused") {
  LinkTree t;
  std::uint32_t a = t.add("c/a", "b");
  t.add("c/b", "a");
  CHECK(t.tree().resolve_link(a) == LinkVerdict::loops);
  LinkTree self;
  CHECK(self.link("c/s", "s/x") == LinkVerdict::loops);
  // A chain: n0 -> n1 -> ... ; the kernel follows 40 links in one lookup, n0 included.
  LinkTree chain;
  std::vector<std::uint32_t> nodes;
  for (int i = 0; i < 45; ++i) nodes.push_back(chain.add("c/n" + std::to_string(i), "n" + std::to_string(i + 1)));
  chain.add("c/n45", "=file");
  CHECK(chain.tree().resolve_link(nodes[44]) == LinkVerdict::inside);
  CHECK(chain.tree().resolve_link(nodes[6]) == LinkVerdict::inside);  // n6..n44: 39 links, then the file
  CHECK(chain.tree().resolve_link(nodes[5]) == LinkVerdict::inside);  // 40 links
  CHECK(chain.tree().resolve_link(nodes[4]) == LinkVerdict::loops);   // 41
}

TEST_CASE("a link that failed fails the same way when resolved again or walked through") {
  LinkTree t;
  std::uint32_t up = t.add("c/up", "..");
  std::uint32_t via = t.add("c/via", "up/x");
  CHECK(t.tree().resolve_link(up) == LinkVerdict::escapes);
  CHECK(t.tree().resolve_link(up) == LinkVerdict::escapes);
  CHECK(t.tree().resolve_link(via) == LinkVerdict::escapes);  // not "loops": the failed walk left no mark
}

TEST_CASE("the tree refuses duplicates and entries before their folder") {
  EntryTree tree;
  CHECK(tree.add("c", EntryType::dir, "").status == EntryTree::Added::ok);
  CHECK(tree.add("c", EntryType::dir, "").status == EntryTree::Added::duplicate);
  CHECK(tree.add("c/a/b", EntryType::file, "").status == EntryTree::Added::no_folder);
  CHECK(tree.add("c/f", EntryType::file, "").status == EntryTree::Added::ok);
  CHECK(tree.add("c/f/x", EntryType::file, "").status == EntryTree::Added::no_folder);
  CHECK(tree.add("c/l", EntryType::symlink, ".").status == EntryTree::Added::ok);
  CHECK(tree.add("c/l/x", EntryType::file, "").status == EntryTree::Added::no_folder);  // never through a link
  CHECK(tree.add("d/x", EntryType::file, "").status == EntryTree::Added::no_folder);
}
