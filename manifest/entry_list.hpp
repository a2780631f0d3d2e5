// The manifest's entries, stored compactly: what `create` and `restore` hold per entry at a million files.
//
// A std::vector<Entry> costs about 230 bytes an entry plus the path (a std::string and its own heap block for the
// path, a second std::string for the link target), too much for the 512 MiB peak target at a million entries.
// EntryList stores each path once as a name below its folder and the fields in arrays (the layout is at its
// private members), a few times smaller (peak RSS in docs/PERFORMANCE.md). Paths are rebuilt on demand:
// operator[] returns a whole Entry by value (a copy), and the accessors (path, append_path, name, type, size,
// sha256, ...) read single fields without building one.
//
// An entry whose folder was not listed before it as a folder (which Manifest::validate refuses) keeps its whole
// path as its name, with no parent. Editing (non-const operator[], insert) turns the list into a plain vector of
// Entry first; that is for tests and small lists. Readers of big lists use const access only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "manifest/tar.hpp"
#include "util/sha256.hpp"

namespace ccpack::manifest {

struct Entry {
  std::string path;  // "<component>/<relative path>", no trailing '/'
  EntryType type = EntryType::file;
  std::uint32_t mode = 0;
  std::uint64_t size = 0;   // files only
  Digest sha256{};          // files only
  std::string link_target;  // symlinks only
  std::uint32_t frame = 0;
};

class EntryList {
 public:
  static constexpr std::uint32_t kNoParent = UINT32_MAX;

  EntryList() = default;
  EntryList(std::initializer_list<Entry> entries);
  EntryList(const std::vector<Entry>& entries);  // NOLINT(google-explicit-constructor): tests assign vectors
  EntryList(const EntryList& other);
  EntryList(EntryList&& other) noexcept = default;
  EntryList& operator=(const EntryList& other);
  EntryList& operator=(EntryList&& other) noexcept = default;
  ~EntryList() = default;

  [[nodiscard]] std::size_t size() const noexcept { return editable_ ? loose_.size() : meta_.size(); }
  [[nodiscard]] bool empty() const noexcept { return size() == 0; }

  // The whole entry, built (a copy).
  [[nodiscard]] Entry operator[](std::size_t i) const;
  [[nodiscard]] Entry back() const { return (*this)[size() - 1]; }

  class const_iterator {
   public:
    using difference_type = std::ptrdiff_t;
    using value_type = Entry;
    const_iterator() = default;
    const_iterator(const EntryList* list, std::size_t i) : list_(list), i_(i) {}
    Entry operator*() const { return (*list_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator+(std::ptrdiff_t n) const { return {list_, i_ + static_cast<std::size_t>(n)}; }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    [[nodiscard]] std::size_t index() const { return i_; }

   private:
    const EntryList* list_ = nullptr;
    std::size_t i_ = 0;
  };
  [[nodiscard]] const_iterator begin() const { return {this, 0}; }
  [[nodiscard]] const_iterator end() const { return {this, size()}; }

  // Single fields, without building an Entry.
  [[nodiscard]] EntryType type(std::size_t i) const;
  [[nodiscard]] std::uint32_t mode(std::size_t i) const;
  [[nodiscard]] std::uint64_t file_size(std::size_t i) const;
  [[nodiscard]] const Digest& sha256(std::size_t i) const;
  [[nodiscard]] std::uint32_t frame(std::size_t i) const;
  [[nodiscard]] std::string_view link_target(std::size_t i) const;
  [[nodiscard]] std::string path(std::size_t i) const;
  void append_path(std::string& out, std::size_t i) const;
  [[nodiscard]] std::size_t path_size(std::size_t i) const;
  // The component (first name of the path), a view into the list.
  [[nodiscard]] std::string_view component(std::size_t i) const;
  // Compact lists only (see the top of the file): the entry index of the folder holding entry i (kNoParent for a
  // component root, or an entry whose folder was not listed before it), and its name there (the whole path when
  // it has no parent). Views stay valid while the list lives.
  [[nodiscard]] std::uint32_t parent(std::size_t i) const { return meta_[i].parent; }
  [[nodiscard]] std::string_view name(std::size_t i) const;
  [[nodiscard]] bool editable() const noexcept { return editable_; }

  // Appends an entry; its folder is found among the folders appended before it.
  void push_back(const Entry& e);
  // Appends an entry named `name` in the folder entry `parent` (kNoParent: `name` is the whole path), for a
  // builder that knows the tree (the scanner). Returns its index.
  std::uint32_t append(std::uint32_t parent, std::string_view name, EntryType type, std::uint32_t mode, std::uint64_t size,
                       std::string_view link_target = {});
  // Appends entry `i` of `other` (compact) with `parent` as its folder (an index in this list).
  std::uint32_t append_from(const EntryList& other, std::size_t i, std::uint32_t parent);
  // Drops the folder index push_back builds (a later push_back builds it again).
  void forget_folders();

  // Set by the packer as files are read; the list must not grow meanwhile (threads set different entries).
  void set_file_size(std::size_t i, std::uint64_t size);
  void set_sha256(std::size_t i, const Digest& digest);
  void set_frame(std::size_t i, std::uint32_t frame);

  // Editing: turns the list into a vector of Entry (see the top of the file).
  Entry& operator[](std::size_t i);
  void insert(const_iterator at, std::initializer_list<Entry> entries);
  void insert(const_iterator at, const Entry& entry) { insert(at, {entry}); }
  // A compact copy of an edited list (itself when compact); `scratch` holds the copy.
  [[nodiscard]] const EntryList& compact(EntryList& scratch) const;

 private:
  // The compact layout:
  //   - the path once, as a name below its folder: a folder entry holds its whole path in a text arena, any other
  //     entry the entry index of its folder (`parent`) and its own name, so "triton/<52-char key>/" is stored
  //     once per folder, not once per file;
  //   - type, mode and frame in one 24-byte record; size and SHA-256 (32 raw bytes) in their own arrays;
  //   - link targets in a map (symlinks are rare).
  // Storage grows in blocks mapped from the kernel (never by doubling and copying, so building it has no transient
  // peak), and they go straight back to it when the list goes: none of it is left pinned in the malloc heap among
  // the scanner's or parser's small blocks.
  struct Meta {
    std::uint64_t text = 0;  // arena handle: the whole path of a folder or a parentless entry, else the name
    std::uint32_t text_len = 0;
    std::uint32_t parent = kNoParent;
    std::uint32_t frame = 0;
    std::uint16_t mode = 0;
    EntryType type = EntryType::file;
  };
  // Memory mapped from the kernel (mmap), unmapped when it goes.
  class Block {
   public:
    explicit Block(std::size_t size);
    ~Block();
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;
    [[nodiscard]] char* data() const { return data_; }

   private:
    char* data_;
    std::size_t size_;
  };
  static constexpr std::size_t kBlockBytes = 256 << 10;
  // An array of T that grows a block at a time; elements never move.
  template <typename T>
  class Blocks {
   public:
    static constexpr std::size_t kPerBlock = kBlockBytes / sizeof(T);
    T& operator[](std::size_t i) { return reinterpret_cast<T*>(blocks_[i / kPerBlock]->data())[i % kPerBlock]; }
    const T& operator[](std::size_t i) const { return reinterpret_cast<const T*>(blocks_[i / kPerBlock]->data())[i % kPerBlock]; }
    [[nodiscard]] std::size_t size() const { return size_; }
    void push_back(const T& v) {
      if (size_ == blocks_.size() * kPerBlock) blocks_.push_back(std::make_unique<Block>(kBlockBytes));
      // Fresh mapped pages read as zeros: a zero digest is not written, so the page stays untouched (and costs
      // nothing) until a real value is set (the packer's digests, set as files are read). Only for digests,
      // which have no padding bytes: a struct's padding may hold anything, so its bytes are never tested.
      if constexpr (std::is_same_v<T, Digest>) {
        if (std::any_of(v.begin(), v.end(), [](std::uint8_t c) { return c != 0; })) new (&(*this)[size_]) T(v);
      } else {
        new (&(*this)[size_]) T(v);
      }
      ++size_;
    }

   private:
    std::vector<std::unique_ptr<Block>> blocks_;
    std::size_t size_ = 0;
  };
  // Strings that never move: blocks of kBlockBytes (or one of its own for a longer string), handle = block << 32
  // | offset.
  class Arena {
   public:
    std::uint64_t add(std::string_view s);
    [[nodiscard]] std::string_view view(std::uint64_t handle, std::uint32_t len) const {
      return {blocks_[handle >> 32]->data() + (handle & 0xffffffffu), len};
    }

   private:
    std::vector<std::unique_ptr<Block>> blocks_;
    std::size_t used_ = 0;  // in the last block
    std::size_t cap_ = 0;
  };

  [[nodiscard]] std::string_view text(std::size_t i) const { return arena_.view(meta_[i].text, meta_[i].text_len); }
  void make_editable();
  void assign(const std::vector<Entry>& entries);
  std::uint32_t add(std::uint32_t parent, std::string_view text, EntryType type, std::uint32_t mode, std::uint64_t size,
                    std::string_view link_target);

  void index_folders();

  Blocks<Meta> meta_;
  Blocks<std::uint64_t> size_;
  Blocks<Digest> sha_;
  std::unordered_map<std::uint32_t, std::string> links_;
  Arena arena_;
  // Folder path -> entry index, for push_back only (built when it first needs it; folders are ~1 entry in 9).
  std::unordered_map<std::string_view, std::uint32_t> folders_;
  std::size_t indexed_ = 0;  // entries looked at for folders_
  bool editable_ = false;
  std::vector<Entry> loose_;  // the entries while editable_
};

}  // namespace ccpack::manifest
