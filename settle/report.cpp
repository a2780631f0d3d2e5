// What a settle reports (report.hpp): its runs' lines and its --json object.
#include "settle/report.hpp"

#include <csignal>
#include <cstdio>

namespace ccpack::settle {
namespace {

std::string counted(std::uint64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string joined(const std::vector<std::string>& list) {
  std::string out;
  for (const std::string& s : list) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string compiled_text(const manifest::CompiledCounts& c) {
  return counted(c.triton_kernels, "Triton kernel", "Triton kernels") + ", " + counted(c.fx_graphs, "FX graph", "FX graphs") +
         ", " + counted(c.autotune, "autotune result", "autotune results") + ", " + counted(c.other, "other file", "other files");
}

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

nlohmann::ordered_json run_json(const RunReport& r) {
  return {{"run", r.index},
          {"warm_up", r.index == 0},
          {"seconds", r.seconds},
          {"exit_code", r.exit_code ? nlohmann::ordered_json(*r.exit_code) : nlohmann::ordered_json(nullptr)},
          {"signal", r.signal == 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.signal)},
          {"timed_out", r.timed_out},
          {"interrupted", r.interrupted},
          {"compiled", r.compiled ? r.compiled->to_tree() : nlohmann::ordered_json(nullptr)}};
}

}  // namespace

std::string run_line(const RunReport& r) {
  std::string line = r.index == 0 ? "warm-up: " : "settle run " + std::to_string(r.index) + ": ";
  if (r.timed_out) {
    line += "killed at the time limit";
  } else if (r.interrupted) {
    line += std::string("stopped: ") + (r.signal == SIGINT ? "SIGINT" : "SIGTERM") + " passed on to it";
  } else if (r.exit_code) {
    line += "exit " + std::to_string(*r.exit_code);
  } else {
    line += "ended by signal " + std::to_string(r.signal);
  }
  line += " in " + seconds_text(r.seconds);
  if (r.compiled) line += "; compiled " + compiled_text(*r.compiled);
  return line;
}

std::string stop_line(const SettleOutcome& o, unsigned max_runs) {
  const RunReport& last = o.runs.back();
  std::string runs = counted(last.index, "settle run", "settle runs");
  if (o.stopped == Stopped::fixed_point) {
    return "settled after " + runs + " (fixed point: settle run " + std::to_string(last.index) +
           " compiled no Triton kernel, FX graph or autotune result)";
  }
  return "not settled after " + runs + " (run limit --settle=" + std::to_string(max_runs) +
         " reached: the last run still compiled " + compiled_text(*last.compiled) + "); the archive is marked not settled";
}

nlohmann::ordered_json outcome_json(const SettleOutcome* outcome) {
  if (outcome == nullptr) return nullptr;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const RunReport& r : outcome->runs) runs.push_back(run_json(r));
  manifest::SettleRecord record = outcome->record();
  return {{"settled", record.settled},
          {"stopped", record.stopped},
          {"runs", record.runs},
          {"last_run_compiled", record.last_run_compiled.to_tree()},
          {"run_reports", runs}};
}

std::string tuning_line(const manifest::TuningRecord& record) {
  std::string line =
      "tuned settings for the warm-up and its runs: " + (record.applied.empty() ? std::string("none") : joined(record.applied));
  if (!record.kept.empty()) line += "; kept yours: " + joined(record.kept);
  if (!record.skipped.empty()) line += "; not applied: " + joined(record.skipped);
  return line;
}

}  // namespace ccpack::settle
