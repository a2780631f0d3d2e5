// RecordedSource (recorded_source.hpp): the filesystem source's components with the recorded folders as source.
#include "pack/recorded_source.hpp"

namespace ccpack::pack {

std::vector<manifest::Component> RecordedSource::components() const {
  std::vector<manifest::Component> out = files_.components();
  for (manifest::Component& c : out) {
    for (const manifest::CacheDir& d : recorded_as_) {
      if (d.name == c.name) c.source = d.dir.string();
    }
  }
  return out;
}

}  // namespace ccpack::pack
