// The explanation text and details_json of a transactional verdict
// (checkers/txn/report.h).
#include "checkers/txn/report.h"

#include <string>

#include "checkers/txn/classify.h"
#include "checkers/value.h"

namespace faultline::checkers::txn {
namespace {

std::string CycleTitle(const Cycle& c) {
  int rw = 0;
  for (std::uint8_t l : c.labels) rw += l == kRW;
  std::string base = c.type.substr(0, c.type.find('-', 2));
  if (c.type.starts_with("G-single")) base = "G-single";
  std::string what;
  if (base == "G0") {
    what = "write-write dependencies only";
  } else if (base == "G1c") {
    what = "write-write and write-read dependencies, no anti-dependency";
  } else if (base == "G-single") {
    what = "one anti-dependency";
  } else {
    what = std::to_string(rw) + " anti-dependencies";
  }
  if (c.type.ends_with("-realtime")) what += ", with real-time order";
  if (c.type.ends_with("-process")) what += ", with process order";
  return c.type + " cycle of " + std::to_string(c.txns.size()) +
         " transactions (" + what + "):";
}

std::string EdgeWhy(const Inference& inf, TxnId from, TxnId to,
                    std::uint8_t label) {
  const Txn& a = inf.set.txns[from];
  const Txn& b = inf.set.txns[to];
  if (label == kRealtime) {
    return TxnName(from) + " completed (event " +
           std::to_string(a.complete_index) + ") before " + TxnName(to) +
           " was invoked (event " + std::to_string(b.invoke_index) + ")";
  }
  if (label == kProcess) {
    return TxnName(from) + " and " + TxnName(to) + " ran on process " +
           std::to_string(a.process) + ", " + TxnName(from) + " first";
  }
  if (inf.explainer) {
    return inf.explainer->Why(from, to, static_cast<EdgeBits>(label));
  }
  return "(no explanation available)";
}

// The micro-ops part of DescribeTxn: what follows "):".
std::string Ops(const TxnSet& set, TxnId id) {
  std::string d = DescribeTxn(set, id);
  const std::size_t at = d.find("):");
  if (at == std::string::npos) return d;
  std::size_t from = at + 2;
  while (from < d.size() && d[from] == ' ') ++from;
  return d.substr(from);
}

void AppendStringArray(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(out, v[i]);
  }
  out += ']';
}

std::string ModelsLine(std::uint32_t violated) {
  const std::vector<std::string> sat = StrongestSatisfied(violated);
  const std::vector<std::string> vio = WeakestViolated(violated);
  std::string out = "Satisfies: ";
  out += sat.empty() ? "none of the models checked" : JoinAnd(sat);
  if (!sat.empty() && sat.back() != "read-uncommitted") {
    out += " (and every weaker model)";
  }
  out += ". Violates: ";
  if (vio.empty()) {
    out += "none.";
  } else {
    out += JoinAnd(vio);
    if (vio.front() != "strict-serializable") {
      out += " (and every stronger model)";
    }
    out += ".";
  }
  return out;
}

}  // namespace

std::string TypeSummary(const TypeFound& t) {
  if (!t.is_cycle) return t.type + " (" + std::to_string(t.count()) + ")";
  std::size_t shortest = 0;
  for (const Cycle* c : t.cycles) {
    if (shortest == 0 || c->txns.size() < shortest) shortest = c->txns.size();
  }
  const std::size_t n = t.cycles.size();
  return t.type + " (" + std::to_string(n) +
         (n == 1 ? " cycle, " : " cycles, shortest ") +
         std::to_string(shortest) + " transactions)";
}

std::string RenderExplanation(const Findings& f, int max_per_type) {
  const Inference& inf = *f.inference;
  std::string out =
      "Checked " + std::to_string(inf.set.txns.size()) + " transactions (" +
      std::to_string(f.ok) + " ok, " + std::to_string(f.info) + " info, " +
      std::to_string(f.fail) + " fail); edges: " + std::to_string(f.ww) +
      " ww, " + std::to_string(f.wr) + " wr, " + std::to_string(f.rw) +
      " rw, " + std::to_string(f.realtime) + " real-time, " +
      std::to_string(f.process) + " process; " + std::to_string(f.components) +
      (f.components == 1 ? " strongly connected component with a cycle.\n"
                         : " strongly connected components with a cycle.\n");
  const auto limit =
      static_cast<std::size_t>(max_per_type < 0 ? 0 : max_per_type);
  for (const TypeFound& t : f.types) {
    out += "\n";
    if (t.is_cycle) {
      for (std::size_t i = 0; i < t.cycles.size() && i < limit; ++i) {
        const Cycle& c = *t.cycles[i];
        if (i > 0) out += "\n";
        out += CycleTitle(c) + "\n";
        for (TxnId id : c.txns) out += "  " + DescribeTxn(inf.set, id) + "\n";
        for (std::size_t s = 0; s < c.txns.size(); ++s) {
          const TxnId from = c.txns[s];
          const TxnId to = c.txns[(s + 1) % c.txns.size()];
          out += "  " + TxnName(from) + " -" + EdgeName(c.labels[s]) + "-> " +
                 TxnName(to) + ": " + EdgeWhy(inf, from, to, c.labels[s]) +
                 "\n";
        }
      }
      if (t.cycles.size() > limit) {
        out += "and " + std::to_string(t.cycles.size() - limit) + " more " +
               t.type + " cycles\n";
      }
      continue;
    }
    out += t.type + " (" + std::to_string(t.anomalies.size()) + "):\n";
    for (std::size_t i = 0; i < t.anomalies.size() && i < limit; ++i) {
      out += "  " + t.anomalies[i]->text + "\n";
    }
    if (t.anomalies.size() > limit) {
      out += "  and " + std::to_string(t.anomalies.size() - limit) + " more\n";
    }
  }
  if (f.capped) {
    out +=
        "\nThe cycle search was capped in a large strongly connected "
        "component; some cycle classes may not have been found.\n";
  }
  if (!f.gave_up.empty())
    out += "\nThe check was incomplete: " + f.gave_up + ".\n";
  out += "\n" + ModelsLine(f.violated) + "\n";
  return out;
}

std::string RenderDetails(const Findings& f, int max_per_type) {
  const Inference& inf = *f.inference;
  const auto limit =
      static_cast<std::size_t>(max_per_type < 0 ? 0 : max_per_type);
  std::string out = "{\"workload\":\"";
  out += WorkloadName(inf.workload);
  out += "\",\"transactions\":" + std::to_string(inf.set.txns.size());
  out += ",\"ok\":" + std::to_string(f.ok) +
         ",\"info\":" + std::to_string(f.info) +
         ",\"fail\":" + std::to_string(f.fail);
  out += ",\"edges\":{\"ww\":" + std::to_string(f.ww) +
         ",\"wr\":" + std::to_string(f.wr) + ",\"rw\":" + std::to_string(f.rw) +
         ",\"realtime\":" + std::to_string(f.realtime) +
         ",\"process\":" + std::to_string(f.process) + "}";
  std::vector<std::string> names;
  for (const TypeFound& t : f.types) names.push_back(t.type);
  out += ",\"anomaly_types\":";
  AppendStringArray(out, names);
  out += ",\"anomalies\":{";
  for (std::size_t i = 0; i < f.types.size(); ++i) {
    if (i > 0) out += ',';
    AppendJsonString(out, f.types[i].type);
    out += ':' + std::to_string(f.types[i].count());
  }
  out += "},\"cycles\":[";
  bool first = true;
  for (const TypeFound& t : f.types) {
    for (std::size_t i = 0; t.is_cycle && i < t.cycles.size() && i < limit;
         ++i) {
      const Cycle& c = *t.cycles[i];
      if (!first) out += ',';
      first = false;
      out += "{\"type\":";
      AppendJsonString(out, c.type);
      out += ",\"steps\":[";
      for (std::size_t s = 0; s < c.txns.size(); ++s) {
        const TxnId id = c.txns[s];
        const TxnId to = c.txns[(s + 1) % c.txns.size()];
        const Txn& txn = inf.set.txns[id];
        if (s > 0) out += ',';
        out += "{\"txn\":" + std::to_string(id) +
               ",\"process\":" + std::to_string(txn.process) +
               ",\"invoke_index\":" + std::to_string(txn.invoke_index) +
               ",\"complete_index\":" + std::to_string(txn.complete_index) +
               ",\"ops\":";
        AppendJsonString(out, Ops(inf.set, id));
        out += ",\"edge\":\"";
        out += EdgeName(c.labels[s]);
        out += "\",\"to\":" + std::to_string(to) + ",\"why\":";
        AppendJsonString(out, EdgeWhy(inf, id, to, c.labels[s]));
        out += '}';
      }
      out += "]}";
    }
  }
  out += "],\"other\":[";
  first = true;
  for (const TypeFound& t : f.types) {
    for (std::size_t i = 0; !t.is_cycle && i < t.anomalies.size() && i < limit;
         ++i) {
      const Anomaly& a = *t.anomalies[i];
      if (!first) out += ',';
      first = false;
      out += "{\"type\":";
      AppendJsonString(out, a.type);
      out += ",\"txns\":[";
      for (std::size_t k = 0; k < a.txns.size(); ++k) {
        if (k > 0) out += ',';
        out += std::to_string(a.txns[k]);
      }
      out += "],\"key\":";
      if (a.key < inf.set.keys.size()) {
        inf.set.keys[a.key].AppendJson(out);
      } else {
        out += "null";
      }
      out += ",\"text\":";
      AppendJsonString(out, a.text);
      out += '}';
    }
  }
  out += "],\"satisfied\":";
  AppendStringArray(out, StrongestSatisfied(f.violated));
  out += ",\"violated\":";
  AppendStringArray(out, WeakestViolated(f.violated));
  if (f.capped) out += ",\"search_capped\":true";
  if (!f.gave_up.empty()) {
    out += ",\"gave_up\":";
    AppendJsonString(out, f.gave_up);
  }
  out += '}';
  return out;
}

}  // namespace faultline::checkers::txn
