// The inline stylesheet and script of report.html (report_script.cpp).
// Internal to reports/: the script reads the page's
// <script type="application/json" id="faultline-data"> block (see
// ReportDataJson) and draws the violation, timeline, latency and throughput
// charts as SVG, building every node with createElementNS/textContent.
#pragma once

#include <string_view>

namespace faultline::reports {

std::string_view ReportCss();
std::string_view ReportScript();

}  // namespace faultline::reports
