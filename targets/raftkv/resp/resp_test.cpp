#include "targets/raftkv/resp/resp.h"

#include <catch2/catch.hpp>
#include <random>

namespace resp = faultline::raftkv::resp;
using Args = std::vector<std::string>;
using Kind = resp::Value::Kind;

namespace {

// Feeds `bytes` one byte at a time and collects every command.
std::vector<Args> CommandsByteAtATime(std::string_view bytes,
                                      std::string* error) {
  resp::Parser p;
  std::vector<Args> out;
  for (char c : bytes) {
    p.Feed(std::string_view(&c, 1));
    while (auto cmd = p.NextCommand(error)) out.push_back(*cmd);
    if (!error->empty()) break;
  }
  return out;
}

std::string ErrorOf(std::string_view bytes, resp::Limits limits = {}) {
  resp::Parser p(limits);
  p.Feed(bytes);
  std::string err;
  while (p.NextCommand(&err)) {
  }
  return err;
}

std::string ReplyErrorOf(std::string_view bytes, resp::Limits limits = {}) {
  resp::Parser p(limits);
  p.Feed(bytes);
  std::string err;
  while (p.NextReply(&err)) {
  }
  return err;
}

resp::Value Simple(std::string s) {
  return resp::Value{Kind::kSimple, std::move(s), 0, {}};
}
resp::Value Error(std::string s) {
  return resp::Value{Kind::kError, std::move(s), 0, {}};
}
resp::Value Int(std::int64_t i) {
  return resp::Value{Kind::kInteger, "", i, {}};
}
resp::Value Bulk(std::string s) {
  return resp::Value{Kind::kBulk, std::move(s), 0, {}};
}
resp::Value Null() { return resp::Value{}; }
resp::Value Array(std::vector<resp::Value> a) {
  return resp::Value{Kind::kArray, "", 0, std::move(a)};
}

}  // namespace

TEST_CASE("resp: writers produce the RESP2 bytes", "[resp]") {
  std::string out;
  resp::AppendSimple(&out, "OK");
  resp::AppendError(&out, "ERR bad\r\nthing");
  resp::AppendInteger(&out, -42);
  resp::AppendBulk(&out, "hi");
  resp::AppendBulk(&out, "");
  resp::AppendNull(&out);
  resp::AppendArrayHeader(&out, 2);
  CHECK(out ==
        "+OK\r\n-ERR bad  thing\r\n:-42\r\n$2\r\nhi\r\n$0\r\n\r\n"
        "$-1\r\n*2\r\n");
  CHECK(resp::EncodeCommand({"SET", "k", "v v"}) ==
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv v\r\n");
  CHECK(resp::EncodeCommand({}) == "*0\r\n");
}

TEST_CASE("resp: commands fed one byte at a time, pipelined", "[resp]") {
  std::string bytes = resp::EncodeCommand({"SET", "key", "a\r\nb"}) +
                      "GET key\r\n" + resp::EncodeCommand({"GET", ""}) +
                      "*0\r\n" + "\r\n" + "PING\n" +
                      resp::EncodeCommand({std::string("\0bin", 4)});
  std::string err;
  auto cmds = CommandsByteAtATime(bytes, &err);
  CHECK(err.empty());
  REQUIRE(cmds.size() == 5);
  CHECK(cmds[0] == Args{"SET", "key", "a\r\nb"});
  CHECK(cmds[1] == Args{"GET", "key"});
  CHECK(cmds[2] == Args{"GET", ""});
  CHECK(cmds[3] == Args{"PING"});
  CHECK(cmds[4] == Args{std::string("\0bin", 4)});

  // All at once gives the same.
  resp::Parser p;
  p.Feed(bytes);
  std::vector<Args> all;
  while (auto c = p.NextCommand(&err)) all.push_back(*c);
  CHECK(all == cmds);
  CHECK(p.buffered() == 0);
}

TEST_CASE("resp: incomplete input waits for more bytes", "[resp]") {
  resp::Parser p;
  std::string err;
  p.Feed("*2\r\n$3\r\nGET\r\n$5\r\nab");
  CHECK_FALSE(p.NextCommand(&err));
  CHECK_FALSE(p.NextCommand(&err));  // polled again, nothing new
  CHECK(err.empty());
  p.Feed("cde\r");
  CHECK_FALSE(p.NextCommand(&err));
  p.Feed("\n");
  auto c = p.NextCommand(&err);
  REQUIRE(c);
  CHECK(*c == Args{"GET", "abcde"});
}

TEST_CASE("resp: inline commands with quotes", "[resp]") {
  resp::Parser p;
  std::string err;
  p.Feed("SET  \"a b\\n\\x41\" 'it\\'s'\r\n  \t \r\nGET\t\"\"\r\n");
  auto c = p.NextCommand(&err);
  REQUIRE(c);
  CHECK(*c == Args{"SET", "a b\nA", "it's"});
  c = p.NextCommand(&err);
  REQUIRE(c);
  CHECK(*c == Args{"GET", ""});
  CHECK(err.empty());
}

TEST_CASE("resp: malformed commands are one-line protocol errors", "[resp]") {
  CHECK(ErrorOf("*x\r\n") == "Protocol error: invalid multibulk length");
  CHECK(ErrorOf("*2000000\r\n") == "Protocol error: invalid multibulk length");
  CHECK(ErrorOf("*1\r\n:1\r\n") == "Protocol error: expected '$', got ':'");
  CHECK(ErrorOf("*1\r\n\n") == "Protocol error: expected '$', got '\\x0a'");
  CHECK(ErrorOf("*1\r\n$-1\r\n") == "Protocol error: invalid bulk length");
  CHECK(ErrorOf("*1\r\n$9999999999\r\n") ==
        "Protocol error: invalid bulk length");
  CHECK(ErrorOf("*1\r\n$1\r\nabc\r\n") ==
        "Protocol error: bulk string not terminated by CRLF");
  CHECK(ErrorOf("*1\rX") == "Protocol error: expected CRLF");
  CHECK(ErrorOf("SET \"abc\r\n") ==
        "Protocol error: unbalanced quotes in request");
  CHECK(ErrorOf("SET \"abc\"def\r\n") ==
        "Protocol error: unbalanced quotes in request");
  CHECK(ErrorOf("SET 'abc\r\n") ==
        "Protocol error: unbalanced quotes in request");
}

TEST_CASE("resp: limits bound memory", "[resp]") {
  resp::Limits small;
  small.max_line = 16;
  small.max_bulk = 8;
  small.max_array = 3;
  small.max_buffered = 64;
  // An inline line that never ends is refused once past the limit.
  CHECK(ErrorOf(std::string(17, 'a'), small) ==
        "Protocol error: too big inline request");
  CHECK(ErrorOf(std::string(16, 'a'), small).empty());  // may still end
  CHECK(ErrorOf("*" + std::string(20, '1'), small) ==
        "Protocol error: line too long");
  CHECK(ErrorOf("*4\r\n", small) == "Protocol error: invalid multibulk length");
  CHECK(ErrorOf("*1\r\n$9\r\n", small) ==
        "Protocol error: invalid bulk length");
  CHECK(ErrorOf("*1\r\n$8\r\n12345678\r\n", small).empty());
  // Too much unconsumed input.
  resp::Parser p(small);
  p.Feed("*3\r\n$8\r\n12345678\r\n$8\r\n12345678\r\n$8\r\n");
  p.Feed(std::string(40, 'x'));
  std::string err;
  CHECK_FALSE(p.NextCommand(&err));
  CHECK(err == "Protocol error: request too large");
  CHECK(p.buffered() == 0);
}

TEST_CASE("resp: errors are sticky", "[resp]") {
  resp::Parser p;
  p.Feed("*1\r\n:1\r\n");
  std::string err;
  CHECK_FALSE(p.NextCommand(&err));
  CHECK_FALSE(err.empty());
  p.Feed("PING\r\n");
  std::string err2;
  CHECK_FALSE(p.NextCommand(&err2));
  CHECK(err2 == err);
}

TEST_CASE("resp: every reply kind round trips, byte at a time", "[resp]") {
  std::vector<resp::Value> values = {
      Simple("OK"),
      Simple(""),
      Error("NOTLEADER 2 10.0.0.2:6379"),
      Int(0),
      Int(std::numeric_limits<std::int64_t>::min()),
      Int(std::numeric_limits<std::int64_t>::max()),
      Bulk(""),
      Bulk(std::string("\r\n\0\xff", 4)),
      Null(),
      Array({}),
      Array({Int(1), Bulk("x"), Null(), Array({Array({}), Error("E")}),
             Simple("s")}),
  };
  std::string bytes;
  for (const auto& v : values) resp::AppendValue(&bytes, v);
  resp::Parser p;
  std::vector<resp::Value> got;
  std::string err;
  for (char c : bytes) {
    p.Feed(std::string_view(&c, 1));
    while (auto v = p.NextReply(&err)) got.push_back(*v);
  }
  CHECK(err.empty());
  CHECK(got == values);
  // The null array also reads as null.
  resp::Parser q;
  q.Feed("*-1\r\n");
  auto v = q.NextReply(&err);
  REQUIRE(v);
  CHECK(v->kind == Kind::kNull);
}

TEST_CASE("resp: malformed replies are protocol errors", "[resp]") {
  CHECK(ReplyErrorOf("?x\r\n") == "Protocol error: unexpected type byte '?'");
  CHECK(ReplyErrorOf("\r\n") == "Protocol error: unexpected type byte '\\x0d'");
  CHECK(ReplyErrorOf(":12a\r\n") == "Protocol error: invalid integer");
  CHECK(ReplyErrorOf(":99999999999999999999\r\n") ==
        "Protocol error: invalid integer");
  CHECK(ReplyErrorOf("$-2\r\n") == "Protocol error: invalid bulk length");
  CHECK(ReplyErrorOf("*-2\r\n") == "Protocol error: invalid multibulk length");
  CHECK(ReplyErrorOf("$1\r\nab") == "");  // waits for 3 bytes
  CHECK(ReplyErrorOf("$1\r\nabc") ==
        "Protocol error: bulk string not terminated by CRLF");
  resp::Limits shallow;
  shallow.max_depth = 3;
  CHECK(ReplyErrorOf("*1\r\n*1\r\n*1\r\n*0\r\n", shallow).empty());
  CHECK(ReplyErrorOf("*1\r\n*1\r\n*1\r\n*1\r\n", shallow) ==
        "Protocol error: arrays nested too deeply");
  // Deep nesting with default limits cannot overflow the stack.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "*1\r\n";
  CHECK(ReplyErrorOf(deep) == "Protocol error: arrays nested too deeply");
}

namespace {

resp::Value RandomValue(std::mt19937_64& rng, int depth) {
  switch (rng() % (depth < 3 ? 6 : 5)) {
    case 0: {
      std::string s(rng() % 8, 'a');
      for (char& c : s) c = static_cast<char>('a' + rng() % 26);
      return Simple(s);
    }
    case 1:
      return Error("ERR " + std::to_string(rng() % 1000));
    case 2:
      return Int(static_cast<std::int64_t>(rng()));
    case 3: {
      std::string s(rng() % 40, '\0');
      for (char& c : s) c = static_cast<char>(rng());
      return Bulk(s);
    }
    case 4:
      return Null();
    default: {
      std::vector<resp::Value> a(rng() % 5);
      for (auto& e : a) e = RandomValue(rng, depth + 1);
      return Array(std::move(a));
    }
  }
}

}  // namespace

TEST_CASE("resp: randomized round trip in random chunks", "[resp]") {
  std::mt19937_64 rng(2026);
  for (int round = 0; round < 200; ++round) {
    std::vector<resp::Value> values(1 + rng() % 20);
    std::string bytes;
    for (auto& v : values) {
      v = RandomValue(rng, 0);
      resp::AppendValue(&bytes, v);
    }
    std::vector<Args> cmds(1 + rng() % 10);
    std::string cbytes;
    for (auto& c : cmds) {
      c.resize(1 + rng() % 4);
      for (auto& a : c) {
        a.resize(rng() % 30);
        for (char& ch : a) ch = static_cast<char>(rng());
      }
      cbytes += resp::EncodeCommand(c);
    }
    resp::Parser rp;
    resp::Parser cp;
    std::vector<resp::Value> got;
    std::vector<Args> got_cmds;
    std::string err;
    for (std::size_t i = 0; i < std::max(bytes.size(), cbytes.size());) {
      std::size_t n = 1 + rng() % 17;
      if (i < bytes.size()) rp.Feed(std::string_view(bytes).substr(i, n));
      if (i < cbytes.size()) cp.Feed(std::string_view(cbytes).substr(i, n));
      i += n;
      while (auto v = rp.NextReply(&err)) got.push_back(*v);
      while (auto c = cp.NextCommand(&err)) got_cmds.push_back(*c);
    }
    REQUIRE(err.empty());
    CHECK(got == values);
    CHECK(got_cmds == cmds);
  }
}

TEST_CASE("resp: random garbage never crashes the parser", "[resp]") {
  std::mt19937_64 rng(99);
  const char alphabet[] = "*$+-:\r\n0123456789-x \"'\\";
  int errors = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string g(rng() % 40, '\0');
    for (char& c : g) c = alphabet[rng() % (sizeof(alphabet) - 1)];
    resp::Parser a;
    resp::Parser b;
    a.Feed(g);
    b.Feed(g);
    std::string ea;
    std::string eb;
    while (a.NextCommand(&ea)) {
    }
    while (b.NextReply(&eb)) {
    }
    errors += !ea.empty() + !eb.empty();
    CHECK(ea.find('\n') == std::string::npos);
    CHECK(eb.find('\n') == std::string::npos);
  }
  CHECK(errors > 0);
}

TEST_CASE("resp: large items arriving in small pieces", "[resp]") {
  // 8 arguments of 4 MiB fed 4 KiB at a time, polled after every piece:
  // linear work (the parser neither re-copies arguments nor re-scans a
  // bulk string it is waiting for).
  Args big(8);
  for (std::size_t i = 0; i < big.size(); ++i) {
    big[i].assign(4u << 20, static_cast<char>('a' + i));
  }
  std::string bytes = resp::EncodeCommand(big);
  resp::Parser p;
  std::string err;
  std::optional<Args> got;
  for (std::size_t i = 0; i < bytes.size(); i += 4096) {
    CHECK_FALSE(got);
    p.Feed(std::string_view(bytes).substr(i, 4096));
    got = p.NextCommand(&err);
  }
  REQUIRE(got);
  CHECK(*got == big);
  CHECK(p.buffered() == 0);

  resp::Value reply =
      Array({Bulk(big[0]), Bulk(big[1]), Array({Bulk(big[2])})});
  std::string rbytes;
  resp::AppendValue(&rbytes, reply);
  resp::Parser r;
  std::optional<resp::Value> v;
  for (std::size_t i = 0; i < rbytes.size(); i += 4096) {
    CHECK_FALSE(v);
    r.Feed(std::string_view(rbytes).substr(i, 4096));
    v = r.NextReply(&err);
  }
  REQUIRE(v);
  CHECK(*v == reply);
  CHECK(err.empty());
}
