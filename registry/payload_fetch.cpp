// The frame-checked payload download; see payload_fetch.hpp.
#include "registry/payload_fetch.hpp"

#include <chrono>
#include <thread>

#include "http/http.hpp"
#include "util/error.hpp"

namespace ccpack::registry {

void FetchLog::add(const Resume& r) {
  std::lock_guard lock(mutex_);
  resumes_.push_back(r);
}

std::vector<Resume> FetchLog::resumes() const {
  std::lock_guard lock(mutex_);
  return resumes_;
}

std::string describe(const Resume& r) {
  return "cut at byte " + std::to_string(r.cut_at) + " in frame " + std::to_string(r.frame) + " (" + r.why +
         "); resumed at byte " + std::to_string(r.resumed_from) + ", the end of the last verified frame (" +
         std::to_string(r.dropped) + " staged bytes dropped)" +
         (r.range_ignored ? "; the registry ignores Range: its answers start at byte 0 and are skipped into" : "");
}

nlohmann::ordered_json resumes_json(const FetchLog& log) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Resume& r : log.resumes()) {
    out.push_back({{"cut_at", r.cut_at},
                   {"resumed_from", r.resumed_from},
                   {"frame", r.frame},
                   {"dropped", r.dropped},
                   {"range_ignored", r.range_ignored},
                   {"why", r.why}});
  }
  return out;
}

namespace {

// The frames' bytes as they arrive: staged until each frame's hash checks, then handed on.
class FrameStager {
 public:
  FrameStager(const PayloadPlan& plan, Sha256& layer_hash, const FrameSink& deliver)
      : plan_(plan), layer_hash_(layer_hash), deliver_(deliver), verified_end_(plan.payload_start) {}

  void take(const char* data, std::size_t size) {
    while (size > 0) {
      if (k_ >= plan_.frames.size())
        throw IntegrityError("blob " + plan_.digest + ": the registry sent more than the archive's payload");
      const manifest::Frame& f = plan_.frames[k_];
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, f.compressed_size - staged_.size()));
      staged_.append(data, n);
      hash_.update(data, n);
      data += n;
      size -= n;
      if (staged_.size() == f.compressed_size) finish_frame(f);
    }
  }

  // Drops what was staged after the last verified frame.
  void drop() {
    staged_.clear();
    (void)hash_.finish();  // resets it
  }

  [[nodiscard]] std::uint64_t verified_end() const { return verified_end_; }
  [[nodiscard]] std::size_t frame() const { return k_; }
  [[nodiscard]] std::uint64_t staged() const { return staged_.size(); }

 private:
  void finish_frame(const manifest::Frame& f) {
    if (hash_.finish() != f.sha256) {
      throw IntegrityError("blob " + plan_.digest + ": frame " + std::to_string(k_) +
                           " does not match the SHA-256 its manifest gives (corrupt or tampered blob)");
    }
    layer_hash_.update(staged_);
    if (k_ + 1 == plan_.frames.size()) {
      std::string got = oci::digest_string(layer_hash_.finish());
      if (got != plan_.digest)
        throw IntegrityError("blob " + plan_.digest + ": the downloaded bytes hash to " + got + " (corrupt or tampered blob)");
    }
    deliver_(staged_.data(), staged_.size(), plan_.payload_start + f.offset);
    verified_end_ = plan_.payload_start + f.offset + f.compressed_size;
    staged_.clear();
    ++k_;
  }

  const PayloadPlan& plan_;
  Sha256& layer_hash_;
  const FrameSink& deliver_;
  std::string staged_;
  Sha256 hash_;
  std::size_t k_ = 0;
  std::uint64_t verified_end_;
};

}  // namespace

void fetch_payload(registry::Session& session, const PayloadPlan& plan, Sha256& layer_hash, const FrameSink& deliver,
                   FetchLog& log, const ResumeNote& note, const std::atomic<bool>* cancelled) {
  const http::Options defaults;
  FrameStager stager(plan, layer_hash, deliver);
  int in_a_row = 0;  // resumes without a frame verified in between
  std::size_t last_frame = SIZE_MAX;
  while (stager.verified_end() < plan.layer_size) {
    std::uint64_t from = stager.verified_end();
    try {
      registry::Session::BlobRead read =
          session.get_blob(plan.digest, from, plan.layer_size - 1, [&](const char* d, std::size_t n) { stager.take(d, n); },
                           {cancelled, false, plan.layer_size});
      if (stager.verified_end() < plan.layer_size) throw Error("blob " + plan.digest + ": the payload ended early");
      (void)read;
    } catch (const http::Interrupted& e) {
      Resume r{from + e.delivered(), stager.verified_end(), stager.frame(), stager.staged(), e.status() == 200, e.what()};
      r.dropped = r.cut_at - r.resumed_from;
      stager.drop();
      in_a_row = stager.frame() == last_frame ? in_a_row + 1 : 1;
      last_frame = stager.frame();
      if (in_a_row >= defaults.max_attempts) {
        throw Error("blob " + plan.digest + ": the transfer was cut " + std::to_string(in_a_row) + " times in frame " +
                    std::to_string(r.frame) + " (last at byte " + std::to_string(r.cut_at) + ": " + e.what() + ")");
      }
      log.add(r);
      if (note) note(r);
      std::this_thread::sleep_for(defaults.backoff_base * (1 << (in_a_row - 1)));
    }
  }
}

}  // namespace ccpack::registry
