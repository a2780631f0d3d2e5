// The one way ccpack parses JSON that comes from outside (the manifest of an archive, and later the restore
// marker, the fingerprint and the signature block).
//
// nlohmann's parser itself is iterative, but a document nested 60,000 levels deep still crashes whatever walks
// it recursively afterwards (dump(), copies, comparisons): the stack overflows. And JSON lets a key repeat, where
// nlohmann silently keeps one value (the last), so two readers could see two different manifests in the same
// signed bytes. `parse_untrusted` refuses both, naming the JSON path ("entries[3].path", with untrusted keys
// escaped).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>

namespace ccpack::manifest {

// Deeper than anything ccpack writes (the manifest nests 3 levels), shallow enough for any recursive walk.
inline constexpr int kMaxJsonDepth = 64;

template <class Json>
using JsonFilter = std::function<bool(int depth, nlohmann::detail::parse_event_t event, Json& parsed)>;

// Parses `text`, or throws IntegrityError: "<what> is not valid JSON: ...", "<what> field 'PATH' is repeated (a
// JSON key appears twice in one object)" or "<what> field 'PATH' nests deeper than N levels".
//
// Through nlohmann's parser callback it sees every container start with its depth and every key, refuses a
// container nested deeper than `max_depth` before it is built, and keeps the set of keys of each open object to
// refuse a key that repeats in the same object. Nothing here recurses: the state is one frame per open
// container, at most `max_depth` of them.
//
// A caller that streams (Manifest::parse turns each entry into a struct as soon as it is parsed and drops its
// tree) passes its own callback as `filter`; it sees every event after the guard has checked it. A filter may
// drop a value at its `value`, `object_end` or `array_end` event, never at a start (the guard must see the end
// of every container it saw start).
template <class Json>
[[nodiscard]] Json parse_untrusted(std::string_view text, std::string_view what, const JsonFilter<Json>& filter = nullptr,
                                   int max_depth = kMaxJsonDepth);

extern template nlohmann::json parse_untrusted<nlohmann::json>(std::string_view, std::string_view,
                                                               const JsonFilter<nlohmann::json>&, int);
extern template nlohmann::ordered_json parse_untrusted<nlohmann::ordered_json>(std::string_view, std::string_view,
                                                                               const JsonFilter<nlohmann::ordered_json>&, int);

}  // namespace ccpack::manifest
