#include "unpack/plan.hpp"

#include <algorithm>

#include "util/error.hpp"

namespace ccpack::unpack {

const char* to_string(Action action) {
  switch (action) {
    case Action::restore:
      return "restored";
    case Action::already:
      return "already restored";
    case Action::skip:
      return "skipped";
    case Action::refuse:
      return "refused";
    case Action::purge:
      return "purged";
  }
  return "?";
}

bool RestorePlan::writes() const {
  return std::any_of(components.begin(), components.end(), [](const PlannedComponent& c) { return c.action == Action::restore; });
}

bool RestorePlan::refused() const {
  return std::any_of(components.begin(), components.end(), [](const PlannedComponent& c) { return c.action == Action::refuse; });
}

RestorePlan plan_restore(const manifest::Manifest& manifest, const std::string& manifest_digest_hex,
                         const std::vector<ComponentFacts>& facts) {
  if (facts.size() != manifest.components.size()) throw Error("restore plan: one fact per component is required");
  RestorePlan plan;
  for (std::size_t i = 0; i < facts.size(); ++i) {
    const manifest::Component& c = manifest.components[i];
    const ComponentFacts& f = facts[i];
    PlannedComponent p{i, Action::restore, {}};
    if (!f.target) {
      p.action = Action::skip;
      p.reason = "no folder given: pass --add " + c.name + "=DIR to restore it";
    } else if (f.fit == Fit::stale_refuse) {
      // defence: fingerprint-refusal-plan
      p.action = Action::refuse;
      p.reason = f.fit_reason;
    } else if (f.fit == Fit::stale_purge) {
      p.action = Action::purge;
      p.reason = f.fit_reason;
    } else if (f.marker_digest && *f.marker_digest == manifest_digest_hex) {
      p.action = Action::already;
    }
    plan.components.push_back(std::move(p));
  }
  // All or nothing: when one component is refused, none is written.
  if (plan.refused()) {
    for (PlannedComponent& p : plan.components) {
      if (p.action == Action::restore) {
        p.action = Action::skip;
        p.reason = "not restored: another component is refused";
      }
    }
  }
  return plan;
}

}  // namespace ccpack::unpack
