// kv_load: closed-loop load through faultline's own clients (the ones runs
// use), for bench/raftkv_vs_etcd.sh. N threads, each with one operation
// outstanding, for T seconds; prints one line:
//   ops_per_s=<x> p50_ms=<x> p99_ms=<x> ok=<n> fail=<n> info=<n>
// Latency percentiles are over ok operations.
//
//   kv_load --target raftkv|etcd --addr HOST[:PORT][,HOST[:PORT]...]
//           [--threads 8] [--seconds 10] [--op write|read] [--keys 1000]
//           [--timeout-ms 2000]
// Thread i talks to address i mod count. Writes use unique values; reads
// read keys that a short preload wrote first.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "targets/etcd/etcd_client.h"
#include "targets/raftkv/raftkv_client.h"

namespace {

using faultline::checkers::Value;
using faultline::harness::Client;
using faultline::harness::Operation;
using faultline::harness::Outcome;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string target = "raftkv";
  std::vector<std::string> addrs;
  int threads = 8;
  double seconds = 10;
  std::string op = "write";
  int keys = 1000;
  long timeout_ms = 2000;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "kv_load: %s\nusage: kv_load --target raftkv|etcd --addr "
               "HOST[:PORT][,...] [--threads N] [--seconds T] [--op "
               "write|read] [--keys K] [--timeout-ms MS]\n",
               why);
  std::exit(254);
}

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + k).c_str());
    std::string v = argv[++i];
    if (k == "--target") {
      a.target = v;
    } else if (k == "--addr") {
      std::size_t start = 0;
      while (start <= v.size()) {
        auto comma = v.find(',', start);
        if (comma == std::string::npos) comma = v.size();
        if (comma > start) a.addrs.push_back(v.substr(start, comma - start));
        start = comma + 1;
      }
    } else if (k == "--threads") {
      a.threads = std::atoi(v.c_str());
    } else if (k == "--seconds") {
      a.seconds = std::atof(v.c_str());
    } else if (k == "--op") {
      a.op = v;
    } else if (k == "--keys") {
      a.keys = std::atoi(v.c_str());
    } else if (k == "--timeout-ms") {
      a.timeout_ms = std::atol(v.c_str());
    } else {
      Usage(("unknown flag " + k).c_str());
    }
  }
  if (a.addrs.empty()) Usage("--addr is required");
  if (a.threads < 1 || a.seconds <= 0 || a.keys < 1) Usage("bad numbers");
  if (a.target != "raftkv" && a.target != "etcd") Usage("unknown target");
  if (a.op != "write" && a.op != "read") Usage("unknown op");
  return a;
}

std::unique_ptr<Client> MakeClient(const Args& a, const std::string& addr) {
  std::string host = addr;
  int port = a.target == "raftkv" ? 6379 : 2379;
  if (auto colon = addr.rfind(':'); colon != std::string::npos) {
    host = addr.substr(0, colon);
    port = std::atoi(addr.c_str() + colon + 1);
  }
  if (a.target == "raftkv") {
    faultline::targets::raftkv::RaftkvClientOptions o;
    o.host = host;
    o.port = port;
    o.op_timeout_ms = a.timeout_ms;
    return std::make_unique<faultline::targets::raftkv::RaftkvClient>(o);
  }
  faultline::targets::etcd::EtcdClientOptions o;
  o.ip = host;
  o.port = port;
  o.op_timeout_ms = a.timeout_ms;
  return std::make_unique<faultline::targets::etcd::EtcdClient>(o);
}

Value Key(int k) { return Value::String("b" + std::to_string(k)); }

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  if (a.op == "read") {  // preload, through the first address
    auto c = MakeClient(a, a.addrs[0]);
    for (int k = 0; k < std::min(a.keys, 100); ++k) {
      (void)c->Invoke({"write", Key(k), Value::Int(k)});
    }
  }
  std::atomic<bool> stop{false};
  struct Tally {
    std::vector<double> lat_ms;
    long ok = 0, fail = 0, info = 0;
  };
  std::vector<Tally> tallies(static_cast<std::size_t>(a.threads));
  std::vector<std::thread> threads;
  const auto begin = Clock::now();
  for (int t = 0; t < a.threads; ++t) {
    threads.emplace_back([&, t] {
      auto client =
          MakeClient(a, a.addrs[static_cast<std::size_t>(t) % a.addrs.size()]);
      Tally& tally = tallies[static_cast<std::size_t>(t)];
      std::int64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        ++n;
        Operation op;
        if (a.op == "write") {
          op = {"write", Key(static_cast<int>((n * a.threads + t) % a.keys)),
                Value::Int(n * a.threads + t)};
        } else {
          op = {"read",
                Key(static_cast<int>((n * a.threads + t) %
                                     std::min(a.keys, 100))),
                Value()};
        }
        const auto s = Clock::now();
        auto done = client->Invoke(op);
        const double ms =
            std::chrono::duration<double, std::milli>(Clock::now() - s).count();
        if (done.type == Outcome::kOk) {
          ++tally.ok;
          tally.lat_ms.push_back(ms);
        } else if (done.type == Outcome::kFail) {
          ++tally.fail;
        } else {
          ++tally.info;
        }
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(a.seconds));
  stop = true;
  for (auto& th : threads) th.join();
  const double elapsed =
      std::chrono::duration<double>(Clock::now() - begin).count();
  Tally all;
  for (auto& t : tallies) {
    all.ok += t.ok;
    all.fail += t.fail;
    all.info += t.info;
    all.lat_ms.insert(all.lat_ms.end(), t.lat_ms.begin(), t.lat_ms.end());
  }
  std::sort(all.lat_ms.begin(), all.lat_ms.end());
  auto pct = [&](double p) {
    if (all.lat_ms.empty()) return 0.0;
    auto i = static_cast<std::size_t>(
        p * static_cast<double>(all.lat_ms.size() - 1));
    return all.lat_ms[i];
  };
  std::printf(
      "ops_per_s=%.0f p50_ms=%.2f p99_ms=%.2f ok=%ld fail=%ld info=%ld\n",
      static_cast<double>(all.ok) / elapsed, pct(0.50), pct(0.99), all.ok,
      all.fail, all.info);
  return all.ok > 0 ? 0 : 1;
}
