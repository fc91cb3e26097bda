#include "targets/process/exec_client.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <utility>

#include "checkers/json_parser.h"
#include "harness/process/pipe_process.h"
#include "targets/process/exec_answer.h"

namespace faultline::targets::process {
namespace {

using checkers::Value;
using harness::Completion;
using harness::Operation;
using harness::Outcome;
using harness::PipeProcess;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kQuoteLimit = 200;
// How long a program that closed its stdout is given to exit before it is
// killed (its exit status names what happened).
constexpr auto kExitWait = std::chrono::milliseconds(1000);

using harness::Done;

// `line` cut to kQuoteLimit bytes at a UTF-8 boundary, invalid bytes and
// control characters as '?', for messages and the history's error field.
std::string Quote(std::string_view line) {
  std::string out;
  std::size_t i = 0;
  while (i < line.size() && out.size() < kQuoteLimit) {
    std::size_t n = checkers::Utf8SequenceLength(line, i);
    if (n == 0 || (n == 1 && static_cast<unsigned char>(line[i]) < 0x20)) {
      out.push_back('?');
      i += n == 0 ? 1 : n;
      continue;
    }
    out.append(line.substr(i, n));
    i += n;
  }
  if (i < line.size()) out += "...";
  return out;
}

std::string HelloMessage(const ExecClientOptions& o) {
  Value::Object fields = {{"type", Value::String("hello")},
                          {"protocol", Value::Int(kExecProtocol)},
                          {"workload", Value::String(o.workload)},
                          {"node", Value::String(o.node)}};
  if (o.workload == "bank") {
    fields.emplace_back("accounts", Value::Int(o.accounts));
    fields.emplace_back("total", Value::Int(o.total));
  }
  return Value::MakeObject(std::move(fields)).ToJson();
}

// The text of an answer's optional "error" field.
std::string ErrorText(const Value& answer) {
  const Value* e = answer.Find("error");
  if (e == nullptr || e->is_null()) return "";
  if (e->is_string()) return Quote(e->as_string());
  return Quote(e->ToJson());
}

// Why a program that closed its stdout did so: its exit status (waiting a
// little for it), else "closed its stdout"; then it is killed and reaped.
std::string DescribeEnd(PipeProcess& p) {
  std::optional<int> status = p.WaitExit(Clock::now() + kExitWait);
  if (status) return PipeProcess::DescribeStatus(*status);
  p.Kill();
  return "closed its stdout";
}

std::string WithTail(std::string what, const PipeProcess& p) {
  std::string tail = harness::LogTail(p.log_path(), p.log_offset());
  if (!tail.empty()) what += ": " + tail;
  return what;
}

class ExecClient : public harness::Client {
 public:
  ExecClient(ExecClientOptions options, std::shared_ptr<ExecHealth> health,
             std::unique_ptr<PipeProcess> process)
      : options_(std::move(options)),
        health_(std::move(health)),
        command_(CommandForMessages(options_.argv)),
        process_(std::move(process)) {}

  ~ExecClient() override {
    // A well-behaved program exits when its stdin closes; do not wait for
    // it (Kill reaps it at once).
    if (process_) process_->Kill();
  }

  Completion Invoke(const Operation& op) noexcept override {
    try {
      return Exchange(op);
    } catch (const std::exception& e) {
      Retire();
      return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                  std::string("exception: ") + e.what());
    } catch (...) {
      Retire();
      return Done(op.f == "read" ? Outcome::kFail : Outcome::kInfo, op.value,
                  "exception");
    }
  }

 private:
  void Retire() {
    if (process_) process_->Kill();
    process_.reset();
  }

  // A misbehaviour during `op`: warns, counts it, kills the program.
  // `type` is info, or fail when the operation was certainly not sent.
  Completion Misbehaviour(const Operation& op, Outcome type, std::string error,
                          std::string detail) {
    spdlog::warn("client `{}` on {}: {}", command_, options_.node, detail);
    if (health_) health_->Misbehaved(detail);
    Retire();
    return Done(type, op.value, std::move(error));
  }

  Completion Exchange(const Operation& op) {
    if (!process_) {
      return Done(Outcome::kFail, op.value, "client process is gone");
    }
    const long id = ++next_id_;
    Value value = op.value;
    if (op.f == "acquire" && value.is_null()) {
      value = Value::Int(options_.lock_ttl_ms);
    }
    const std::string message =
        Value::MakeObject({{"type", Value::String("invoke")},
                           {"id", Value::Int(id)},
                           {"f", Value::String(op.f)},
                           {"key", op.key},
                           {"value", value},
                           {"timeout_ms", Value::Int(options_.op_timeout_ms)}})
            .ToJson();
    const auto deadline = Clock::now() +
                          std::chrono::milliseconds(options_.op_timeout_ms) +
                          std::chrono::milliseconds(kGraceMs);
    std::size_t written = 0;
    harness::Status sent = process_->WriteLine(message, deadline, &written);
    if (!sent.ok()) {
      if (written == 0 && sent.error() == "stdin closed") {
        std::string end = DescribeEnd(*process_);
        return Misbehaviour(op, Outcome::kFail,
                            "client " + end + " before the operation was sent",
                            WithTail(end, *process_));
      }
      if (written == 0) {  // stdin full: the program stopped reading
        Retire();
        return Done(Outcome::kFail, op.value, "timeout (not sent)");
      }
      Retire();
      return Done(Outcome::kInfo, op.value, "timeout");
    }
    PipeProcess::ReadResult r = process_->ReadLine(deadline);
    switch (r.status) {
      case PipeProcess::ReadStatus::kTimeout:
        Retire();
        return Done(Outcome::kInfo, op.value, "timeout");
      case PipeProcess::ReadStatus::kEof: {
        std::string end = DescribeEnd(*process_);
        return Misbehaviour(op, Outcome::kInfo, "client " + end,
                            WithTail(end, *process_));
      }
      case PipeProcess::ReadStatus::kTooLong:
        return Misbehaviour(op, Outcome::kInfo,
                            "invalid answer: " + Quote(r.line),
                            "invalid answer (line too long): " + Quote(r.line));
      case PipeProcess::ReadStatus::kError:
        return Misbehaviour(op, Outcome::kInfo, "client stdout: " + r.error,
                            "reading its stdout: " + r.error);
      case PipeProcess::ReadStatus::kLine:
        break;
    }
    return Interpret(op, id, r.line);
  }

  // The completion an answer line gives, or an invalid-answer misbehaviour.
  Completion Interpret(const Operation& op, long id, const std::string& line) {
    auto invalid = [&](const std::string& why) {
      return Misbehaviour(op, Outcome::kInfo, "invalid answer: " + Quote(line),
                          "invalid answer (" + why + "): " + Quote(line));
    };
    Value answer;
    std::string parse_error;
    if (!checkers::ParseJson(line, answer, &parse_error)) {
      return invalid("not JSON, " + parse_error);
    }
    if (!answer.is_object()) return invalid("not a JSON object");
    const Value* type = answer.Find("type");
    if (type == nullptr || !type->is_string()) {
      return invalid("no string \"type\"");
    }
    const Value* got_id = answer.Find("id");
    if (got_id == nullptr || !got_id->is_int()) {
      return invalid("no integer \"id\"");
    }
    if (got_id->as_int() != id) {
      return invalid("id " + std::to_string(got_id->as_int()) + ", expected " +
                     std::to_string(id));
    }
    const std::string& t = type->as_string();
    if (t == "fail" || t == "info") {
      if (health_) health_->Answered();
      return Done(t == "fail" ? Outcome::kFail : Outcome::kInfo, op.value,
                  ErrorText(answer));
    }
    if (t != "ok") return invalid("unknown type \"" + Quote(t) + "\"");
    auto result = OkAnswerValue(options_.workload, options_.accounts, op,
                                answer.Find("value"));
    if (!result.ok()) return invalid(result.error());
    if (health_) health_->Answered();
    return Done(Outcome::kOk, std::move(result.value()));
  }

  ExecClientOptions options_;
  std::shared_ptr<ExecHealth> health_;
  std::string command_;
  std::unique_ptr<PipeProcess> process_;
  long next_id_ = 0;
};

}  // namespace

ExecHealth::ExecHealth(std::string command_for_messages, int max_consecutive)
    : command_(std::move(command_for_messages)),
      max_(max_consecutive < 1 ? 1 : max_consecutive) {}

void ExecHealth::Misbehaved(const std::string& what) {
  std::lock_guard<std::mutex> lock(mu_);
  ++consecutive_;
  last_ = what;
}

void ExecHealth::Answered() {
  std::lock_guard<std::mutex> lock(mu_);
  consecutive_ = 0;
}

int ExecHealth::consecutive() const {
  std::lock_guard<std::mutex> lock(mu_);
  return consecutive_;
}

std::string ExecHealth::Fatal() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (consecutive_ < max_) return "";
  return "client `" + command_ + "` misbehaved " +
         std::to_string(consecutive_) + " times in a row (last: " + last_ +
         "); fix the client, or check it with `faultline client-test`";
}

std::string CommandForMessages(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    bool plain =
        !a.empty() && a.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    if (plain) {
      out += a;
      continue;
    }
    out += '\'';
    for (char c : a) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

harness::Result<std::unique_ptr<harness::Client>> OpenExecClient(
    const ExecClientOptions& options, std::shared_ptr<ExecHealth> health) {
  const std::string command = CommandForMessages(options.argv);
  harness::PipeProcessOptions popts;
  popts.log_path = options.log_path;
  popts.working_dir = options.working_dir;
  popts.env = options.env;
  auto started = PipeProcess::Start(options.argv, popts);
  auto refuse = [&](const std::string& why) -> harness::Error {
    spdlog::warn("client `{}` on {}: {}", command, options.node, why);
    if (health) health->Misbehaved(why);
    return harness::Fail("client `" + command + "`: " + why);
  };
  if (!started.ok()) return refuse(started.error());
  std::unique_ptr<PipeProcess> p = std::move(started.value());
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(options.start_timeout_ms);
  std::size_t written = 0;
  harness::Status sent =
      p->WriteLine(HelloMessage(options), deadline, &written);
  if (!sent.ok()) {
    std::string end = sent.error() == "stdin closed"
                          ? DescribeEnd(*p) + " before the hello"
                          : "hello not sent: " + sent.error();
    return refuse(WithTail(end, *p));
  }
  PipeProcess::ReadResult r = p->ReadLine(deadline);
  if (r.status == PipeProcess::ReadStatus::kTimeout) {
    p->Kill();
    return refuse(WithTail("no answer to the hello within " +
                               std::to_string(options.start_timeout_ms) +
                               " ms (start_timeout)",
                           *p));
  }
  if (r.status == PipeProcess::ReadStatus::kEof) {
    return refuse(
        WithTail(DescribeEnd(*p) + " before answering the hello", *p));
  }
  if (r.status != PipeProcess::ReadStatus::kLine) {
    p->Kill();
    return refuse("invalid hello answer: " + Quote(r.line) + r.error);
  }
  Value answer;
  std::string parse_error;
  const Value* type = nullptr;
  const Value* protocol = nullptr;
  if (checkers::ParseJson(r.line, answer, &parse_error) && answer.is_object()) {
    type = answer.Find("type");
    protocol = answer.Find("protocol");
  }
  if (type == nullptr || !type->is_string() || type->as_string() != "hello" ||
      protocol == nullptr || !protocol->is_int()) {
    p->Kill();
    return refuse(
        "invalid hello answer (expected {\"type\":\"hello\","
        "\"protocol\":1}): " +
        Quote(r.line));
  }
  if (protocol->as_int() != kExecProtocol) {
    p->Kill();
    return refuse(
        "it speaks exec protocol " + std::to_string(protocol->as_int()) +
        "; this faultline speaks protocol " + std::to_string(kExecProtocol));
  }
  return std::unique_ptr<harness::Client>(
      new ExecClient(options, std::move(health), std::move(p)));
}

}  // namespace faultline::targets::process
