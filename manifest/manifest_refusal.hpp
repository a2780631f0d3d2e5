// What the manifest's reader (manifest_parse.cpp) and its validator (manifest_validate.cpp) share: the one form
// of a refusal ("manifest field 'F' why", naming the JSON path), the quoting of untrusted names in it, and the
// component check the top-level reader runs. Internal to manifest/.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "manifest/manifest.hpp"

namespace ccpack::manifest::detail {

// Throws IntegrityError("manifest field '<field>' <why>").
[[noreturn]] void bad(const std::string& field, const std::string& why);
// An untrusted name inside a message: quoted and escaped (util/escape.hpp), so the message stays one line.
[[nodiscard]] std::string q(std::string_view untrusted);
// The member `key` of the object `obj`, whose JSON path is `where`; refused as "<where>.<key>" "is missing".
[[nodiscard]] const nlohmann::json& member(const nlohmann::json& obj, const char* key, const std::string& where);

using ComponentNames = std::unordered_set<std::string_view>;
// Components: valid, unique names whose kind matches; returns the names, which every entry path must start with.
[[nodiscard]] ComponentNames validate_components(const std::vector<Component>& components);

}  // namespace ccpack::manifest::detail
