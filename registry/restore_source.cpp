// An ArchiveStream as restore's stream source (restore_source.hpp).
#include "registry/restore_source.hpp"

#include <utility>

namespace ccpack::registry {

unpack::StreamedArchive restore_source(ArchiveStream& stream, bool single_may_differ, std::function<void()> before_header) {
  return unpack::StreamedArchive{
      [&stream, single_may_differ](const manifest::Fingerprint& local) { stream.choose(local, single_may_differ); },
      [&stream, before_header = std::move(before_header)] {
        if (before_header) before_header();
        manifest::ArchiveHeader header = stream.fetch_header();
        return unpack::OpenedStream{stream.what(), std::move(header), stream.payload_start(),
                                    [&stream](const auto& push, const auto& cancelled) { stream.produce(push, cancelled); }};
      }};
}

}  // namespace ccpack::registry
