#include "manifest/entry_list.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <type_traits>

#include "util/error.hpp"

namespace ccpack::manifest {

namespace {

static_assert(std::is_trivially_copyable_v<Digest> && std::is_trivially_destructible_v<Digest>);

}  // namespace

EntryList::Block::Block(std::size_t size) : size_(size) {
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
}

EntryList::Block::~Block() { ::munmap(data_, size_); }

std::uint64_t EntryList::Arena::add(std::string_view s) {
  if (s.size() > UINT32_MAX) throw IntegrityError("a manifest path or name is longer than 4 GiB");
  if (cap_ - used_ < s.size() || blocks_.empty()) {
    std::size_t size = std::max(kBlockBytes, s.size());
    blocks_.push_back(std::make_unique<Block>(size));
    used_ = 0;
    cap_ = size;
  }
  std::uint64_t handle = (std::uint64_t{blocks_.size() - 1} << 32) | used_;
  if (!s.empty()) std::memcpy(blocks_.back()->data() + used_, s.data(), s.size());
  used_ += s.size();
  return handle;
}

EntryList::EntryList(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) push_back(e);
}

EntryList::EntryList(const std::vector<Entry>& entries) { assign(entries); }

EntryList::EntryList(const EntryList& other) { *this = other; }

EntryList& EntryList::operator=(const EntryList& other) {
  if (this == &other) return *this;
  *this = EntryList();
  if (other.editable_) {
    editable_ = true;
    loose_ = other.loose_;
    return *this;
  }
  for (std::size_t i = 0; i < other.size(); ++i) append_from(other, i, other.parent(i));
  return *this;
}

void EntryList::assign(const std::vector<Entry>& entries) {
  *this = EntryList();
  for (const Entry& e : entries) push_back(e);
}

std::uint32_t EntryList::add(std::uint32_t parent, std::string_view text, EntryType type, std::uint32_t mode, std::uint64_t size,
                             std::string_view link_target) {
  if (meta_.size() >= UINT32_MAX) throw IntegrityError("manifest has too many entries");
  auto index = static_cast<std::uint32_t>(meta_.size());
  Meta m;
  m.text = arena_.add(text);
  m.text_len = static_cast<std::uint32_t>(text.size());
  m.parent = parent;
  m.mode = static_cast<std::uint16_t>(mode & 0xffff);
  if (mode > 0xffff) throw IntegrityError("manifest entry mode out of range");
  m.type = type;
  meta_.push_back(m);
  size_.push_back(size);
  sha_.push_back(Digest{});
  if (type == EntryType::symlink) links_.emplace(index, std::string(link_target));
  return index;
}

void EntryList::index_folders() {
  for (; indexed_ < meta_.size(); ++indexed_) {
    if (meta_[indexed_].type == EntryType::dir) folders_.emplace(text(indexed_), static_cast<std::uint32_t>(indexed_));
  }
}

void EntryList::forget_folders() {
  std::unordered_map<std::string_view, std::uint32_t>().swap(folders_);
  indexed_ = 0;
}

void EntryList::push_back(const Entry& e) {
  if (editable_) {
    loose_.push_back(e);
    return;
  }
  std::uint32_t parent = kNoParent;
  std::string_view name = e.path;
  auto slash = name.rfind('/');
  if (slash != std::string_view::npos) {
    index_folders();
    auto it = folders_.find(name.substr(0, slash));
    if (it != folders_.end()) {
      parent = it->second;
      name.remove_prefix(slash + 1);
    }
  }
  std::uint32_t i = e.type == EntryType::dir ? add(parent, e.path, e.type, e.mode, e.size, e.link_target)
                                             : add(parent, name, e.type, e.mode, e.size, e.link_target);
  sha_[i] = e.sha256;
  meta_[i].frame = e.frame;
}

std::uint32_t EntryList::append(std::uint32_t parent, std::string_view name, EntryType type, std::uint32_t mode,
                                std::uint64_t size, std::string_view link_target) {
  if (type != EntryType::dir || parent == kNoParent) return add(parent, name, type, mode, size, link_target);
  std::string path(text(parent));
  path += '/';
  path += name;
  return add(parent, path, type, mode, size, link_target);
}

std::uint32_t EntryList::append_from(const EntryList& other, std::size_t i, std::uint32_t parent) {
  std::uint32_t j = add(parent, other.text(i), other.type(i), other.mode(i), other.file_size(i), other.link_target(i));
  sha_[j] = other.sha_[i];
  meta_[j].frame = other.meta_[i].frame;
  return j;
}

Entry EntryList::operator[](std::size_t i) const {
  if (editable_) return loose_[i];
  Entry e;
  append_path(e.path, i);
  e.type = meta_[i].type;
  e.mode = meta_[i].mode;
  e.size = size_[i];
  e.sha256 = sha_[i];
  e.link_target = link_target(i);
  e.frame = meta_[i].frame;
  return e;
}

EntryType EntryList::type(std::size_t i) const { return editable_ ? loose_[i].type : meta_[i].type; }
std::uint32_t EntryList::mode(std::size_t i) const { return editable_ ? loose_[i].mode : meta_[i].mode; }
std::uint64_t EntryList::file_size(std::size_t i) const { return editable_ ? loose_[i].size : size_[i]; }
const Digest& EntryList::sha256(std::size_t i) const { return editable_ ? loose_[i].sha256 : sha_[i]; }
std::uint32_t EntryList::frame(std::size_t i) const { return editable_ ? loose_[i].frame : meta_[i].frame; }

std::string_view EntryList::link_target(std::size_t i) const {
  if (editable_) return loose_[i].link_target;
  if (meta_[i].type != EntryType::symlink) return {};
  auto it = links_.find(static_cast<std::uint32_t>(i));
  return it == links_.end() ? std::string_view{} : std::string_view(it->second);
}

std::size_t EntryList::path_size(std::size_t i) const {
  if (editable_) return loose_[i].path.size();
  const Meta& m = meta_[i];
  if (m.parent == kNoParent || m.type == EntryType::dir) return m.text_len;
  return meta_[m.parent].text_len + 1 + m.text_len;
}

void EntryList::append_path(std::string& out, std::size_t i) const {
  if (editable_) {
    out += loose_[i].path;
    return;
  }
  const Meta& m = meta_[i];
  if (m.parent != kNoParent && m.type != EntryType::dir) {
    out.reserve(out.size() + path_size(i));
    out += text(m.parent);
    out += '/';
  }
  out += text(i);
}

std::string EntryList::path(std::size_t i) const {
  std::string out;
  append_path(out, i);
  return out;
}

std::string_view EntryList::component(std::size_t i) const {
  std::string_view t;
  if (editable_) {
    t = loose_[i].path;
  } else {
    const Meta& m = meta_[i];
    t = m.parent != kNoParent && m.type != EntryType::dir ? text(m.parent) : text(i);
  }
  return t.substr(0, t.find('/'));
}

std::string_view EntryList::name(std::size_t i) const {
  std::string_view t = text(i);
  if (meta_[i].type == EntryType::dir && meta_[i].parent != kNoParent) t.remove_prefix(t.rfind('/') + 1);
  return t;
}

void EntryList::set_file_size(std::size_t i, std::uint64_t size) {
  if (editable_) {
    loose_[i].size = size;
  } else {
    size_[i] = size;
  }
}

void EntryList::set_sha256(std::size_t i, const Digest& digest) {
  if (editable_) {
    loose_[i].sha256 = digest;
  } else {
    sha_[i] = digest;
  }
}

void EntryList::set_frame(std::size_t i, std::uint32_t frame) {
  if (editable_) {
    loose_[i].frame = frame;
  } else {
    meta_[i].frame = frame;
  }
}

void EntryList::make_editable() {
  if (editable_) return;
  std::vector<Entry> all;
  all.reserve(size());
  const EntryList& self = *this;
  for (std::size_t i = 0; i < size(); ++i) all.push_back(self[i]);
  *this = EntryList();
  loose_ = std::move(all);
  editable_ = true;
}

Entry& EntryList::operator[](std::size_t i) {
  make_editable();
  return loose_[i];
}

void EntryList::insert(const_iterator at, std::initializer_list<Entry> entries) {
  std::size_t index = at.index();
  make_editable();
  loose_.insert(loose_.begin() + static_cast<std::ptrdiff_t>(index), entries);
}

const EntryList& EntryList::compact(EntryList& scratch) const {
  if (!editable_) return *this;
  scratch.assign(loose_);
  return scratch;
}

}  // namespace ccpack::manifest
