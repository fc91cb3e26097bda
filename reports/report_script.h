// The inline stylesheet and script of report.html (report_script.cpp,
// report_script_panels.cpp, report_script_txn.cpp). Internal to reports/:
// the script reads the page's <script type="application/json"
// id="faultline-data"> block (see ReportDataJson) and draws the violation
// in its context, the transaction cycles, the timeline, the
// holders and leaders charts, latency and throughput as SVG, building every
// node with createElementNS/textContent.
#pragma once

#include <string_view>

namespace faultline::reports {

std::string_view ReportCss();
// The whole script, with ReportPanelsScript() inside it.
std::string_view ReportScript();

// The violation, holders and leaders panels: a fragment of ReportScript()
// (it uses the helpers defined before it there); not a script of its own.
std::string_view ReportPanelsScript();

// The transaction cycles panel (report_script_txn.cpp, drawTxn): a fragment
// of ReportScript() like ReportPanelsScript().
std::string_view ReportTxnScript();

}  // namespace faultline::reports
