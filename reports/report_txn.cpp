// The cycles of the transactional checkers for report.html
// (reports/report_txn.h).
#include "reports/report_txn.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "checkers/txn/txn.h"
#include "reports/utf8.h"

namespace faultline::reports {
namespace {

using nlohmann::json;

// Field readers that never throw: a missing field or one of another type
// reads as the default.
std::int64_t Int(const json& o, const char* field, std::int64_t def) {
  auto it = o.find(field);
  if (it == o.end() || !it->is_number_integer()) return def;
  return it->get<std::int64_t>();
}

std::string Str(const json& o, const char* field, std::size_t max) {
  auto it = o.find(field);
  if (it == o.end() || !it->is_string()) return "";
  return CutUtf8(it->get<std::string>(), max);
}

json Strings(const json& o, const char* field, std::size_t max) {
  json out = json::array();
  auto it = o.find(field);
  if (it == o.end() || !it->is_array()) return out;
  for (const json& v : *it) {
    if (v.is_string()) out.push_back(CutUtf8(v.get<std::string>(), max));
  }
  return out;
}

json Step(const json& st, std::size_t max_chars) {
  return {{"txn", Int(st, "txn", -1)},
          {"process", Int(st, "process", -1)},
          {"invoke_index", Int(st, "invoke_index", -1)},
          {"complete_index", Int(st, "complete_index", -1)},
          {"ops", Str(st, "ops", 4 * max_chars)},
          {"edge", Str(st, "edge", 16)},
          {"to", Int(st, "to", -1)},
          {"why", Str(st, "why", 8 * max_chars)}};
}

}  // namespace

json TxnCyclesData(const RunSummary& s, std::size_t max_chars) {
  if (max_chars == 0) max_chars = 1;
  json out = json::array();
  for (const auto& v : s.verdicts) {
    if (v.checker != checkers::txn::kListAppendChecker &&
        v.checker != checkers::txn::kRwRegisterChecker) {
      continue;
    }
    json details = json::parse(v.details_json, nullptr, false);
    if (!details.is_object()) continue;
    auto cycles = details.find("cycles");
    if (cycles == details.end() || !cycles->is_array()) continue;
    json drawn = json::array();
    std::size_t more = 0;
    for (const json& c : *cycles) {
      if (!c.is_object()) continue;
      auto steps = c.find("steps");
      if (steps == c.end() || !steps->is_array() || steps->empty()) continue;
      if (drawn.size() >= kMaxTxnCycles) {
        ++more;
        continue;
      }
      json row = {{"type", Str(c, "type", 64)}, {"steps", json::array()}};
      for (const json& st : *steps) {
        if (!st.is_object()) continue;
        if (row["steps"].size() >= kMaxTxnSteps) {
          row["cut"] = true;
          break;
        }
        row["steps"].push_back(Step(st, max_chars));
      }
      if (row["steps"].empty()) continue;
      drawn.push_back(std::move(row));
    }
    if (drawn.empty()) continue;
    out.push_back({{"checker", v.checker},
                   {"summary", CutUtf8(v.summary, 8 * max_chars)},
                   {"satisfied", Strings(details, "satisfied", 64)},
                   {"violated", Strings(details, "violated", 64)},
                   {"cycles", std::move(drawn)},
                   {"cycles_more", more}});
  }
  if (out.empty()) return nullptr;
  return out;
}

}  // namespace faultline::reports
