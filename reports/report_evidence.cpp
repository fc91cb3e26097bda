// The evidence section of report.html; see report_evidence.h.
#include "reports/report_evidence.h"

#include <cstdio>

#include "reports/report_html.h"

namespace faultline::reports {
namespace {

std::string Seconds(const std::optional<std::int64_t>& at, bool timed) {
  if (!at) return "end";
  if (!timed) return "#" + std::to_string(*at);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(*at) / 1e9);
  return buf;
}

std::string Counts(const PhaseCounts& c) {
  return std::to_string(c.ok) + " ok, " + std::to_string(c.fail) + " fail, " +
         std::to_string(c.info) + " info";
}

std::string Opt(const std::optional<std::int64_t>& v) {
  return v ? std::to_string(*v) : "—";
}

}  // namespace

std::string EvidenceSectionHtml(const RunSummary& s,
                                const checkers::History& history) {
  if (!s.evidence && history.empty()) return "";
  const Evidence e = s.evidence ? *s.evidence : ComputeEvidence(history);
  std::string out =
      "<section id=\"evidence\">\n<h2>Was the run able to find anything?</h2>"
      "\n<style>#evidence table{border-collapse:collapse;margin:6px 0}"
      "#evidence td,#evidence th{padding:2px 10px 2px 0;text-align:left;"
      "vertical-align:top}#evidence tr.nobite td{color:#7a8194}"
      "#evidence p.weak{padding:4px 10px;border-left:4px solid #e0a100;"
      "background:#fdf6e3}</style>\n";
  if (e.weak) {
    out += "<p class=\"weak\"><b>Weak run:</b> ";
    for (std::size_t i = 0; i < e.weak_reasons.size(); ++i)
      out += (i ? "; " : "") + HtmlEscape(e.weak_reasons[i]);
    out +=
        ". The verdict stands as the checkers gave it, but this run could "
        "hardly have found a bug.</p>\n";
  }
  out += "<p>" + std::to_string(e.faults.size()) + " fault" +
         (e.faults.size() == 1 ? "" : "s") + ", " +
         std::to_string(e.faults_bit()) + " with a visible effect.</p>\n";
  if (!e.faults.empty()) {
    out +=
        "<table class=\"evidence\">\n<tr><th>fault</th><th>targets</th>"
        "<th>window</th><th>invoked</th><th>completed</th><th>errors</th>"
        "<th>timeouts</th><th>packets dropped</th><th>leader changes</th>"
        "<th>clock applied / observed (ms)</th><th>bit</th></tr>\n";
    for (const FaultEvidence& f : e.faults) {
      std::string signs;
      for (const auto& sign : f.signs)
        signs += (signs.empty() ? "" : "; ") + HtmlEscape(sign);
      out += std::string("<tr") + (f.bit ? "" : " class=\"nobite\"") + "><td>" +
             HtmlEscape(f.kind) + "</td><td>" + HtmlEscape(TargetsLabel(f)) +
             "</td><td>" + Seconds(f.start, e.timed) + " – " +
             Seconds(f.end, e.timed) + "</td><td>" + std::to_string(f.invoked) +
             "</td><td>" + Counts(f.in_window) + "</td><td>" +
             std::to_string(f.errors) + "</td><td>" +
             std::to_string(f.timeouts) + "</td><td>" + Opt(f.packets_dropped) +
             "</td><td>" + std::to_string(f.leader_changes) + "</td><td>" +
             Opt(f.clock_applied_ms) + " / " + Opt(f.clock_observed_ms) +
             "</td><td>" + (f.bit ? "yes: " + signs : "no visible effect") +
             "</td></tr>\n";
    }
    out += "</table>\n";
  }
  out += "<table class=\"facts\">\n<tr><th>workload</th><td>" +
         Counts(e.workload) +
         "</td></tr>\n<tr><th>outside every fault</th><td>" +
         Counts(e.outside) + "</td></tr>\n<tr><th>final reads</th><td>" +
         Counts(e.final_reads) + "</td></tr>\n<tr><th>observer reads</th><td>" +
         Counts(e.observer) + "</td></tr>\n";
  if (auto share = e.cas_share()) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%lld of %lld succeeded (%.0f %%)",
                  static_cast<long long>(e.cas_ok),
                  static_cast<long long>(e.cas_completed), *share * 100.0);
    out +=
        std::string("<tr><th>compare-and-sets</th><td>") + buf + "</td></tr>\n";
  }
  out += "</table>\n</section>\n";
  return out;
}

}  // namespace faultline::reports
