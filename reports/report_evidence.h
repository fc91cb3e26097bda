// The "Was the run able to find anything?" section of report.html: for each
// fault its kind, targets, window and the signs that it bit (packets
// dropped, requests that failed or timed out in its window, leader changes,
// clock offsets), the ok operations per phase, the compare-and-set share,
// and a "weak run" banner with its reasons (reports/evidence.h).
//
// Every string is HTML-escaped (HtmlEscape). Pure; thread-safe; never
// throws.
#pragma once

#include <string>

#include "checkers/history.h"
#include "reports/results.h"

namespace faultline::reports {

// The section's HTML, from s.evidence, or from ComputeEvidence(history)
// when the summary has none (a results.json written before evidence
// existed); "" when neither has anything (a run that never started).
std::string EvidenceSectionHtml(const RunSummary& s,
                                const checkers::History& history);

}  // namespace faultline::reports
