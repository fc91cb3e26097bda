// Unit tests for ExecClient (the exec client protocol, version 1), against
// the scripted python3 clients in testdata/fake_client.py.
#include "targets/process/exec_client.h"

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

using faultline::checkers::Value;
using faultline::harness::Client;
using faultline::harness::Completion;
using faultline::harness::Operation;
using faultline::harness::Outcome;
using faultline::targets::process::CommandForMessages;
using faultline::targets::process::ExecClientOptions;
using faultline::targets::process::ExecHealth;
using faultline::targets::process::OpenExecClient;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

const std::string kFake =
    (fs::path(__FILE__).parent_path() / "testdata" / "fake_client.py").string();

// A fresh log file per test case, removed afterwards.
struct TempLog {
  TempLog() {
    char tmpl[] = "/tmp/exec-client-test.XXXXXX";
    int fd = mkstemp(tmpl);
    REQUIRE(fd >= 0);
    close(fd);
    path = tmpl;
  }
  ~TempLog() { fs::remove(path); }
  std::string Read() const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::string path;
};

ExecClientOptions Options(const std::string& mode, const TempLog& log,
                          const std::string& workload = "register") {
  ExecClientOptions o;
  o.argv = {"python3", kFake, mode};
  o.log_path = log.path;
  o.workload = workload;
  o.node = "n1";
  o.op_timeout_ms = 2000;
  o.start_timeout_ms = 10000;
  return o;
}

std::shared_ptr<ExecHealth> Health(const ExecClientOptions& o) {
  return std::make_shared<ExecHealth>(CommandForMessages(o.argv));
}

Operation Op(std::string f, Value key, Value value = Value()) {
  return Operation{std::move(f), std::move(key), std::move(value)};
}

std::unique_ptr<Client> Open(const ExecClientOptions& o,
                             std::shared_ptr<ExecHealth> health) {
  auto c = OpenExecClient(o, std::move(health));
  if (!c.ok()) FAIL(c.error());
  return std::move(c.value());
}

// True once `pid` no longer exists (killed and reaped).
bool Gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

}  // namespace

TEST_CASE("exec client: register round trip with every value type") {
  TempLog log;
  auto o = Options("good", log);
  o.env = {"FAULTLINE_TEST_X=hello"};
  auto health = Health(o);
  auto c = Open(o, health);

  Completion w = c->Invoke(Op("write", Value::Int(3), Value::Int(17)));
  CHECK(w.type == Outcome::kOk);
  CHECK(w.value == Value::Int(17));
  Completion r = c->Invoke(Op("read", Value::Int(3)));
  CHECK(r.type == Outcome::kOk);
  CHECK(r.value == Value::Int(17));
  Completion absent = c->Invoke(Op("read", Value::Int(4)));
  CHECK(absent.type == Outcome::kOk);
  CHECK(absent.value.is_null());
  // f: status (target.status.client) gives the answer's object.
  Completion st = c->Invoke(Op("status", Value()));
  CHECK(st.type == Outcome::kOk);
  REQUIRE(st.value.is_object());
  CHECK(st.value.Find("role")->as_string() == "leader");

  Completion cas = c->Invoke(Op(
      "cas", Value::Int(3), Value::MakeList({Value::Int(17), Value::Int(18)})));
  CHECK(cas.type == Outcome::kOk);
  Completion mismatch = c->Invoke(Op(
      "cas", Value::Int(3), Value::MakeList({Value::Int(1), Value::Int(2)})));
  CHECK(mismatch.type == Outcome::kFail);
  CHECK(mismatch.error == "mismatch");
  CHECK(c->Invoke(Op("read", Value::Int(3))).value == Value::Int(18));

  const Value values[] = {Value::String("héllo \"q\"\n"), Value::Double(1.5),
                          Value::Bool(true),
                          Value::MakeList({Value::Int(1), Value::Null()}),
                          Value::MakeObject({{"a", Value::Int(-5)}})};
  for (const Value& v : values) {
    REQUIRE(c->Invoke(Op("write", Value::String("k"), v)).type == Outcome::kOk);
    Completion back = c->Invoke(Op("read", Value::String("k")));
    CHECK(back.type == Outcome::kOk);
    CHECK(back.value == v);
  }

  Completion env = c->Invoke(Op("read", Value::String("env:FAULTLINE_TEST_X")));
  CHECK(env.value == Value::String("hello"));

  Completion failed =
      c->Invoke(Op("write", Value::String("fail-me"), Value::Int(1)));
  CHECK(failed.type == Outcome::kFail);
  CHECK(failed.error == "refused");
  CHECK(failed.value == Value::Int(1));
  Completion info =
      c->Invoke(Op("write", Value::String("info-me"), Value::Int(2)));
  CHECK(info.type == Outcome::kInfo);
  CHECK(info.error == "unsure");
  // An info answer is a valid answer: the same program goes on.
  CHECK(c->Invoke(Op("read", Value::Int(3))).type == Outcome::kOk);
  CHECK(health->consecutive() == 0);
  CHECK(health->Fatal().empty());
}

TEST_CASE("exec client: lock vocabulary and the default ttl") {
  TempLog log;
  auto o = Options("good", log, "lock");
  o.lock_ttl_ms = 1234;
  auto c = Open(o, Health(o));
  Completion a = c->Invoke(Op("acquire", Value::String("L")));
  REQUIRE(a.type == Outcome::kOk);
  REQUIRE(a.value.is_int());
  CHECK(c->Invoke(Op("acquire", Value::String("L"), Value::Int(500))).type ==
        Outcome::kFail);
  CHECK(c->Invoke(Op("renew", Value::String("L"), a.value)).type ==
        Outcome::kOk);
  CHECK(c->Invoke(Op("release", Value::String("L"), a.value)).type ==
        Outcome::kOk);
  Completion again = c->Invoke(Op("renew", Value::String("L"), a.value));
  CHECK(again.type == Outcome::kFail);
  CHECK(again.error == "not-held");
  Completion b = c->Invoke(Op("acquire", Value::String("L"), Value::Int(500)));
  REQUIRE(b.type == Outcome::kOk);
  CHECK(b.value.as_int() > a.value.as_int());
  // The fake logs the ttl it was sent: null became lock_ttl_ms.
  CHECK(log.Read().find("ttl 1234") != std::string::npos);
  CHECK(log.Read().find("ttl 500") != std::string::npos);
}

namespace {

Value Mop(const char* f, std::int64_t k, Value v = Value()) {
  return Value::MakeList({Value::String(f), Value::Int(k), std::move(v)});
}

}  // namespace

TEST_CASE("exec client: txn passes the micro-ops through, ok fills reads") {
  TempLog log;
  auto o = Options("good", log, "list-append");
  auto health = Health(o);
  auto c = Open(o, health);
  const Value first = Value::MakeList(
      {Mop("r", 1), Mop("append", 1, Value::Int(10)), Mop("r", 1)});
  Completion a = c->Invoke(Op("txn", Value(), first));
  REQUIRE(a.type == Outcome::kOk);
  CHECK(a.value ==
        Value::MakeList({Mop("r", 1, Value::MakeList({})),
                         Mop("append", 1, Value::Int(10)),
                         Mop("r", 1, Value::MakeList({Value::Int(10)}))}));
  Completion b = c->Invoke(
      Op("txn", Value(),
         Value::MakeList({Mop("append", 1, Value::Int(11)), Mop("r", 2)})));
  REQUIRE(b.type == Outcome::kOk);
  CHECK(b.value == Value::MakeList({Mop("append", 1, Value::Int(11)),
                                    Mop("r", 2, Value::MakeList({}))}));
  // The client's fail and info keep the invocation's micro-ops.
  const Value conflict = Value::MakeList({Mop("append", -1, Value::Int(12))});
  Completion f = c->Invoke(Op("txn", Value(), conflict));
  CHECK(f.type == Outcome::kFail);
  CHECK(f.error == "conflict");
  CHECK(f.value == conflict);
  const Value unknown = Value::MakeList({Mop("append", -2, Value::Int(13))});
  Completion i = c->Invoke(Op("txn", Value(), unknown));
  CHECK(i.type == Outcome::kInfo);
  CHECK(i.value == unknown);
  CHECK(health->consecutive() == 0);
}

TEST_CASE("exec client: rw-register txn reads null when never written") {
  TempLog log;
  auto o = Options("good", log, "rw-register");
  auto c = Open(o, Health(o));
  Completion a = c->Invoke(Op(
      "txn", Value(),
      Value::MakeList({Mop("r", 5), Mop("w", 5, Value::Int(3)), Mop("r", 5)})));
  REQUIRE(a.type == Outcome::kOk);
  CHECK(a.value ==
        Value::MakeList({Mop("r", 5, Value::Null()), Mop("w", 5, Value::Int(3)),
                         Mop("r", 5, Value::Int(3))}));
}

TEST_CASE("exec client: an ok txn answer that is not the micro-op list") {
  TempLog log;
  auto o = Options("txn-short", log, "list-append");
  auto health = Health(o);
  auto c = Open(o, health);
  const Value txn =
      Value::MakeList({Mop("append", 1, Value::Int(1)), Mop("r", 1)});
  Completion a = c->Invoke(Op("txn", Value(), txn));
  CHECK(a.type == Outcome::kInfo);
  CHECK(a.value == txn);
  CHECK(a.error.rfind("invalid answer: ", 0) == 0);
  CHECK(health->consecutive() == 1);
  CHECK(c->Invoke(Op("txn", Value(), txn)).error == "client process is gone");

  // ok without "value" is invalid for a txn as well.
  TempLog log2;
  auto o2 = Options("no-value", log2, "list-append");
  auto c2 = Open(o2, health);
  CHECK(c2->Invoke(Op("txn", Value(), txn)).type == Outcome::kInfo);
  CHECK(health->consecutive() == 2);
}

TEST_CASE("exec client: set, counter and bank vocabularies") {
  TempLog log;
  SECTION("set") {
    auto o = Options("good", log, "set");
    auto health = Health(o);
    auto c = Open(o, health);
    Completion add = c->Invoke(Op("add", Value(), Value::Int(5)));
    CHECK(add.type == Outcome::kOk);
    CHECK(add.value == Value::Int(5));
    REQUIRE(c->Invoke(Op("add", Value(), Value::Int(9))).type == Outcome::kOk);
    Completion read = c->Invoke(Op("read", Value()));
    CHECK(read.type == Outcome::kOk);
    CHECK(read.value == Value::MakeList({Value::Int(5), Value::Int(9)}));
    CHECK(health->consecutive() == 0);
  }
  SECTION("counter") {
    auto o = Options("good", log, "counter");
    auto c = Open(o, Health(o));
    CHECK(c->Invoke(Op("add", Value(), Value::Int(3))).value == Value::Int(3));
    CHECK(c->Invoke(Op("add", Value(), Value::Int(2))).type == Outcome::kOk);
    Completion read = c->Invoke(Op("read", Value()));
    CHECK(read.type == Outcome::kOk);
    CHECK(read.value == Value::Int(5));
  }
  SECTION("bank: the hello carries accounts and total") {
    auto o = Options("good", log, "bank");
    o.accounts = 3;
    o.total = 10;
    auto health = Health(o);
    auto c = Open(o, health);
    auto balances = [](std::int64_t a, std::int64_t b, std::int64_t d) {
      return Value::MakeObject(
          {{"0", Value::Int(a)}, {"1", Value::Int(b)}, {"2", Value::Int(d)}});
    };
    CHECK(c->Invoke(Op("read", Value())).value == balances(4, 3, 3));
    auto transfer = [](int from, int to, int amount) {
      return Value::MakeObject({{"from", Value::Int(from)},
                                {"to", Value::Int(to)},
                                {"amount", Value::Int(amount)}});
    };
    Completion t = c->Invoke(Op("transfer", Value(), transfer(0, 1, 4)));
    CHECK(t.type == Outcome::kOk);
    CHECK(t.value == transfer(0, 1, 4));
    Completion short_funds =
        c->Invoke(Op("transfer", Value(), transfer(0, 2, 1)));
    CHECK(short_funds.type == Outcome::kFail);
    CHECK(short_funds.error == "insufficient funds");
    CHECK(short_funds.value == transfer(0, 2, 1));
    CHECK(c->Invoke(Op("read", Value())).value == balances(0, 7, 3));
    CHECK(health->consecutive() == 0);
    CHECK(log.Read().find("bank hello 3 10 env") != std::string::npos);
  }
}

TEST_CASE("exec client: collection answers of the wrong shape are invalid") {
  TempLog log;
  auto answering = [&](const std::string& workload, const std::string& json) {
    auto o = Options("answer-env", log, workload);
    o.accounts = 3;
    o.env = {"FAULTLINE_TEST_ANSWER=" + json};
    return o;
  };
  auto health = std::make_shared<ExecHealth>("fake", 100);
  struct Case {
    const char* workload;
    Operation op;
    const char* answer;
  };
  const Value transfer = Value::MakeObject({{"from", Value::Int(0)},
                                            {"to", Value::Int(1)},
                                            {"amount", Value::Int(2)}});
  const Case bad[] = {
      {"set", Op("read", Value()), "5"},
      {"set", Op("add", Value(), Value::Int(7)), "8"},
      {"counter", Op("read", Value()), "[1]"},
      {"counter", Op("add", Value(), Value::Int(3)), "\"3\""},
      {"bank", Op("read", Value()), R"({"0":1,"1":2,"2":3,"3":4})"},
      {"bank", Op("read", Value()), R"({"0":"1"})"},
      {"bank", Op("transfer", Value(), transfer),
       R"({"from":0,"to":1,"amount":3})"},
  };
  int misbehaviours = 0;
  for (const Case& k : bad) {
    INFO(k.workload << " " << k.op.f << " answered " << k.answer);
    auto c = Open(answering(k.workload, k.answer), health);
    Completion done = c->Invoke(k.op);
    CHECK(done.type == Outcome::kInfo);
    CHECK(done.value == k.op.value);
    CHECK(done.error.rfind("invalid answer: {", 0) == 0);
    CHECK(health->consecutive() == ++misbehaviours);
    CHECK(c->Invoke(k.op).error == "client process is gone");
  }
  // A bank read that leaves an account out is the system's answer, passed
  // on for the checker; a transfer echoed in another order is the same.
  auto c = Open(answering("bank", R"({"2":1,"0":9})"), health);
  Completion read = c->Invoke(Op("read", Value()));
  CHECK(read.type == Outcome::kOk);
  CHECK(read.value ==
        Value::MakeObject({{"2", Value::Int(1)}, {"0", Value::Int(9)}}));
  CHECK(health->consecutive() == 0);
  auto t = Open(answering("bank", R"({"amount":2,"to":1,"from":0})"), health);
  CHECK(t->Invoke(Op("transfer", Value(), transfer)).type == Outcome::kOk);
  // ok to an add without "value" is invalid (the echo is required).
  TempLog log2;
  auto o = Options("no-value", log2, "set");
  auto n = Open(o, health);
  CHECK(n->Invoke(Op("add", Value(), Value::Int(1))).type == Outcome::kInfo);
  CHECK(health->consecutive() == 1);
}

TEST_CASE(
    "exec client: no answer in time is info timeout, the child is killed") {
  TempLog log;
  auto o = Options("slow", log);
  o.op_timeout_ms = 300;
  auto health = Health(o);
  auto c = Open(o, health);
  // The slow fake printed nothing yet; find its pid through /proc.
  pid_t pid = -1;
  for (const auto& e : fs::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmd(e.path() / "cmdline");
    std::string args((std::istreambuf_iterator<char>(cmd)), {});
    std::ifstream stat(e.path() / "stat");
    std::string st;
    std::getline(stat, st);
    auto rp = st.rfind(')');
    if (rp == std::string::npos) continue;
    std::istringstream rest(st.substr(rp + 2));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == getpid() && args.find("slow") != std::string::npos &&
        args.find(kFake) != std::string::npos) {
      pid = std::stoi(name);
    }
  }
  REQUIRE(pid > 0);
  auto t0 = Clock::now();
  Completion done = c->Invoke(Op("write", Value::Int(1), Value::Int(1)));
  auto took = Clock::now() - t0;
  CHECK(done.type == Outcome::kInfo);
  CHECK(done.error == "timeout");
  CHECK(took >= std::chrono::milliseconds(300));
  CHECK(took < std::chrono::milliseconds(1500));
  CHECK(Gone(pid));
  CHECK(health->consecutive() == 0);  // a timeout is not a misbehaviour
  Completion after = c->Invoke(Op("read", Value::Int(1)));
  CHECK(after.type == Outcome::kFail);
  CHECK(after.error == "client process is gone");
}

TEST_CASE("exec client: a crash is info naming the exit status") {
  TempLog log;
  auto o = Options("crash", log);
  auto health = Health(o);
  auto c = Open(o, health);
  Completion done = c->Invoke(Op("write", Value::Int(1), Value::Int(5)));
  CHECK(done.type == Outcome::kInfo);
  CHECK(done.error == "client exited with status 3");
  CHECK(done.value == Value::Int(5));
  CHECK(health->consecutive() == 1);
  CHECK(health->Fatal().empty());
  CHECK(c->Invoke(Op("read", Value::Int(1))).type == Outcome::kFail);
}

TEST_CASE("exec client: invalid answers are info quoting the line") {
  TempLog log;
  SECTION("not JSON") {
    auto o = Options("garbage", log);
    auto health = Health(o);
    auto c = Open(o, health);
    Completion done = c->Invoke(Op("read", Value::Int(1)));
    CHECK(done.type == Outcome::kInfo);
    CHECK(done.error == "invalid answer: this is not json");
    CHECK(health->consecutive() == 1);
  }
  SECTION("wrong id") {
    auto o = Options("wrong-id", log);
    auto c = Open(o, Health(o));
    Completion done = c->Invoke(Op("read", Value::Int(1)));
    CHECK(done.type == Outcome::kInfo);
    CHECK(done.error.rfind("invalid answer: {", 0) == 0);
    CHECK(done.error.find("\"id\": 2") != std::string::npos);
  }
  SECTION("ok to a read without a value") {
    auto o = Options("no-value", log);
    auto c = Open(o, Health(o));
    CHECK(c->Invoke(Op("write", Value::Int(1), Value::Int(1))).type ==
          Outcome::kOk);  // value is not needed for write
    CHECK(c->Invoke(Op("read", Value::Int(1))).type == Outcome::kInfo);
  }
  SECTION("ok to a status without an object") {
    auto o = Options("no-value", log);
    auto c = Open(o, Health(o));
    Completion done = c->Invoke(Op("status", Value()));
    CHECK(done.type == Outcome::kInfo);
    CHECK(done.error.rfind("invalid answer: {", 0) == 0);
  }
  SECTION("a token that is not an integer") {
    auto o = Options("bad-token", log, "lock");
    auto c = Open(o, Health(o));
    Completion done = c->Invoke(Op("acquire", Value::String("L")));
    CHECK(done.type == Outcome::kInfo);
    CHECK(done.error ==
          "invalid answer: {\"type\": \"ok\", \"id\": 1, \"value\": \"abc\"}");
  }
  SECTION("stdout closed") {
    auto o = Options("close-stdout", log);
    auto c = Open(o, Health(o));
    Completion done = c->Invoke(Op("read", Value::Int(1)));
    CHECK(done.type == Outcome::kInfo);
    CHECK(done.error == "client closed its stdout");
  }
}

TEST_CASE(
    "exec client: ten misbehaviours in a row are fatal, an answer resets") {
  TempLog log;
  auto crash = Options("crash", log);
  auto health =
      std::make_shared<ExecHealth>(CommandForMessages(crash.argv), 10);
  auto misbehave = [&] {
    auto c = Open(crash, health);
    CHECK(c->Invoke(Op("write", Value::Int(1), Value::Int(1))).type ==
          Outcome::kInfo);
  };
  for (int i = 0; i < 9; ++i) misbehave();
  CHECK(health->Fatal().empty());
  SECTION("the tenth is fatal and names the command") {
    misbehave();
    std::string fatal = health->Fatal();
    CHECK(fatal.find("client `python3 " + kFake +
                     " crash` misbehaved 10 "
                     "times in a row (last: exited with status 3: boom)") == 0);
    CHECK(fatal.find("faultline client-test") != std::string::npos);
  }
  SECTION("a valid answer resets the count") {
    auto good = Options("good", log);
    auto c = Open(good, health);
    CHECK(health->consecutive() == 9);  // a hello alone does not reset
    CHECK(c->Invoke(Op("read", Value::Int(1))).type == Outcome::kOk);
    CHECK(health->consecutive() == 0);
    misbehave();
    CHECK(health->consecutive() == 1);
    CHECK(health->Fatal().empty());
  }
}

TEST_CASE("exec client: a hello with another protocol version is refused") {
  TempLog log;
  auto o = Options("hello-v2", log);
  auto health = Health(o);
  auto c = OpenExecClient(o, health);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error() == "client `python3 " + kFake +
                         " hello-v2`: it speaks exec protocol 2; this "
                         "faultline speaks protocol 1");
  CHECK(health->consecutive() == 1);
}

TEST_CASE("exec client: no hello answer fails within start_timeout") {
  TempLog log;
  auto o = Options("hello-silent", log);
  o.start_timeout_ms = 400;
  auto health = Health(o);
  auto t0 = Clock::now();
  auto c = OpenExecClient(o, health);
  auto took = Clock::now() - t0;
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().find("no answer to the hello within 400 ms") !=
        std::string::npos);
  CHECK(took >= std::chrono::milliseconds(400));
  CHECK(took < std::chrono::milliseconds(2000));
  CHECK(health->consecutive() == 1);
}

TEST_CASE("exec client: a program that cannot start fails clearly") {
  TempLog log;
  ExecClientOptions o;
  o.argv = {"/nonexistent/faultline-client"};
  o.log_path = log.path;
  auto health = Health(o);
  auto c = OpenExecClient(o, health);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error() ==
        "client `/nonexistent/faultline-client`: cannot start "
        "/nonexistent/faultline-client: No such file or directory");
  CHECK(health->consecutive() == 1);
}

TEST_CASE("exec client: CommandForMessages quotes what needs it") {
  CHECK(CommandForMessages({"python3", "c.py", "a b", "it's"}) ==
        "python3 c.py 'a b' 'it'\\''s'");
}
