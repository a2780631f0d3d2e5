// Set-valued fingerprint fields (see field_set.hpp): the syntax table, split and join, and the set difference.
#include "manifest/field_set.hpp"

#include <algorithm>
#include <map>

#include "manifest/fingerprint.hpp"

namespace ccpack::manifest {
namespace {

constexpr std::string_view kCommaSeparator = ", ";

bool is_name_char(char c, bool first) {
  bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
  return alpha || (!first && c >= '0' && c <= '9');
}

// Whether `s` starts with NAME= (a settings entry).
bool starts_setting(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_name_char(s[i], i == 0)) ++i;
  return i > 0 && i < s.size() && s[i] == '=';
}

// The entries of one side by name; a name seen twice on a side keeps its entries apart (compared whole).
std::multimap<std::string, std::string, std::less<>> by_name(ListSyntax syntax, const std::vector<std::string>& entries) {
  std::multimap<std::string, std::string, std::less<>> out;
  for (const std::string& e : entries) out.emplace(std::string(entry_parts(syntax, e).name), e);
  return out;
}

}  // namespace

std::optional<ListSyntax> list_syntax(std::string_view field) {
  if (field == field::wheels_cuda || field == field::python_site_packages) return ListSyntax::comma;
  if (field == field::env_inductor || field == field::env_triton) return ListSyntax::settings;
  return std::nullopt;
}

std::vector<std::string> split_entries(ListSyntax syntax, std::string_view value) {
  std::vector<std::string> out;
  if (value.empty()) return out;
  if (syntax == ListSyntax::comma) {
    for (std::size_t at = 0;;) {
      std::size_t next = value.find(kCommaSeparator, at);
      out.emplace_back(value.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
      if (next == std::string_view::npos) break;
      at = next + kCommaSeparator.size();
    }
    return out;
  }
  std::size_t start = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    if (value[i] == ';' && starts_setting(value.substr(i + 1))) {
      out.emplace_back(value.substr(start, i - start));
      start = i + 1;
    }
  }
  out.emplace_back(value.substr(start));
  return out;
}

std::string join_entries(ListSyntax syntax, const std::vector<std::string>& entries) {
  std::string out;
  for (const std::string& e : entries) {
    if (!out.empty()) out += syntax == ListSyntax::comma ? kCommaSeparator : std::string_view(";");
    out += e;
  }
  return out;
}

EntryParts entry_parts(ListSyntax syntax, std::string_view entry) {
  std::string_view sep = syntax == ListSyntax::comma ? "==" : "=";
  std::size_t at = entry.find(sep);
  if (at == std::string_view::npos || at == 0) return {entry, {}};
  return {entry.substr(0, at), entry.substr(at + sep.size())};
}

SetDiff diff_entries(ListSyntax syntax, std::string_view archive, std::string_view local) {
  return diff_entries(syntax, split_entries(syntax, archive), split_entries(syntax, local));
}

SetDiff diff_entries(ListSyntax syntax, const std::vector<std::string>& archive, const std::vector<std::string>& local) {
  SetDiff d;
  d.syntax = syntax;
  auto a = by_name(syntax, archive);
  auto l = by_name(syntax, local);
  auto has = [](const auto& side, const std::string& name, const std::string& entry) {
    auto [from, to] = side.equal_range(name);
    return std::any_of(from, to, [&](const auto& kv) { return kv.second == entry; });
  };
  for (const auto& [name, entry] : a) {
    if (has(l, name, entry)) continue;
    if (a.count(name) == 1 && l.count(name) == 1) {
      d.changed.push_back(
          {name, std::string(entry_parts(syntax, entry).rest), std::string(entry_parts(syntax, l.find(name)->second).rest)});
    } else {
      d.removed.push_back(entry);
    }
  }
  for (const auto& [name, entry] : l) {
    if (has(a, name, entry)) continue;
    if (!(a.count(name) == 1 && l.count(name) == 1)) d.added.push_back(entry);
  }
  return d;
}

std::vector<std::string> SetDiff::phrases() const {
  std::multimap<std::string, std::string, std::less<>> ordered;
  for (const std::string& e : removed) ordered.emplace(std::string(entry_parts(syntax, e).name), e + " only in the archive");
  for (const std::string& e : added) ordered.emplace(std::string(entry_parts(syntax, e).name), e + " only here");
  for (const ChangedEntry& c : changed) ordered.emplace(c.name, c.name + ": " + c.archive + " -> " + c.local);
  std::vector<std::string> out;
  for (auto& [name, phrase] : ordered) out.push_back(std::move(phrase));
  return out;
}

std::vector<std::string> SetDiff::archive_side() const {
  std::multimap<std::string, std::string, std::less<>> ordered;
  std::string_view sep = syntax == ListSyntax::comma ? "==" : "=";
  for (const std::string& e : removed) ordered.emplace(std::string(entry_parts(syntax, e).name), e);
  for (const ChangedEntry& c : changed) ordered.emplace(c.name, c.name + std::string(sep) + c.archive);
  std::vector<std::string> out;
  for (auto& [name, e] : ordered) out.push_back(std::move(e));
  return out;
}

std::vector<std::string> SetDiff::local_side() const {
  std::multimap<std::string, std::string, std::less<>> ordered;
  std::string_view sep = syntax == ListSyntax::comma ? "==" : "=";
  for (const std::string& e : added) ordered.emplace(std::string(entry_parts(syntax, e).name), e);
  for (const ChangedEntry& c : changed) ordered.emplace(c.name, c.name + std::string(sep) + c.local);
  std::vector<std::string> out;
  for (auto& [name, e] : ordered) out.push_back(std::move(e));
  return out;
}

}  // namespace ccpack::manifest
