// junit.xml: one test suite per run, one test case per checker, so any CI
// system shows a run's result natively.
//
// Mapping: a checker that says `invalid` is a <failure> (message = summary,
// body = explanation); `unknown` is an <error> (the test could not decide).
// A run with `expect:` gets one more test case, "expect: <verdict>", which
// fails when the verdict is not the expected one; when the expectation is
// met, the checkers' verdicts are reported as passing (with the
// explanation in <system-out>), since the anomaly was the point of the run.
// An interrupted run (RunSummary::aborted) gets one more test case,
// "interrupted", which is an <error> whatever the verdict, and a property
// `interrupted` naming the signal. Properties: seed, verdict, target (with
// its version), faultline (version and commit), run_dir.
// Every string is XML-escaped; characters XML 1.0 cannot carry become U+FFFD.
#pragma once

#include <string>

#include "reports/results.h"

namespace faultline::reports {

std::string JunitXml(const RunSummary& s);

// `s` escaped for XML text and attribute values.
std::string XmlEscape(const std::string& s);

}  // namespace faultline::reports
