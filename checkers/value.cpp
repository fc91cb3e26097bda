// Value: construction, accessors, JSON rendering, hashing and ordering.
#include "checkers/value.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace faultline::checkers {

// The heap nodes behind strings, lists and objects (value.h).
struct Value::StringNode : Value::Node {
  explicit StringNode(std::string v) : s(std::move(v)) {}
  std::string s;
};
struct Value::ListNode : Value::Node {
  explicit ListNode(List v) : items(std::move(v)) {}
  List items;
};
struct Value::ObjectNode : Value::Node {
  explicit ObjectNode(Object v) : fields(std::move(v)) {}
  Object fields;
};

namespace {

[[noreturn]] void WrongKind(const char* wanted, int line) {
  std::fprintf(stderr, "%s:%d: Value accessor for %s called on another kind\n",
               __FILE__, line, wanted);
  std::abort();
}

std::size_t Mix(std::size_t seed, std::size_t h) {
  // boost::hash_combine-style mixing (64-bit constant).
  return seed ^ (h + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

// Orders doubles totally: NaN sorts after every other double and equals
// itself, so Value's operator< stays a strict weak order.
int CompareDouble(double a, double b) {
  bool an = std::isnan(a);
  bool bn = std::isnan(b);
  if (an || bn) return an == bn ? 0 : (an ? 1 : -1);
  if (a < b) return -1;
  if (b < a) return 1;
  return 0;
}

int Compare(const Value& a, const Value& b);

int CompareList(const Value::List& a, const Value::List& b) {
  std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    int c = Compare(a[i], b[i]);
    if (c != 0) return c;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

int CompareObject(const Value::Object& a, const Value::Object& b) {
  std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    int c = a[i].first.compare(b[i].first);
    if (c != 0) return c < 0 ? -1 : 1;
    c = Compare(a[i].second, b[i].second);
    if (c != 0) return c;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : 1;
}

int Compare(const Value& a, const Value& b) {
  if (a.kind() != b.kind()) return a.kind() < b.kind() ? -1 : 1;
  switch (a.kind()) {
    case Value::Kind::kNull:
      return 0;
    case Value::Kind::kBool:
      return a.as_bool() == b.as_bool() ? 0 : (a.as_bool() ? 1 : -1);
    case Value::Kind::kInt:
      return a.as_int() == b.as_int() ? 0 : (a.as_int() < b.as_int() ? -1 : 1);
    case Value::Kind::kDouble:
      return CompareDouble(a.as_double(), b.as_double());
    case Value::Kind::kString: {
      int c = a.as_string().compare(b.as_string());
      return c == 0 ? 0 : (c < 0 ? -1 : 1);
    }
    case Value::Kind::kList:
      return CompareList(a.as_list(), b.as_list());
    case Value::Kind::kObject:
      return CompareObject(a.as_object(), b.as_object());
  }
  return 0;
}

void AppendDouble(std::string& out, double d) {
  if (!std::isfinite(d)) {  // JSON has no NaN/Infinity
    out += "null";
    return;
  }
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d);
  std::string_view text(buf, static_cast<std::size_t>(res.ptr - buf));
  out.append(text);
  // Keep the number a double when read back: "1" would parse as an int.
  if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

}  // namespace

Value Value::WithNode(Kind kind, const Node* n) {
  Value v;
  v.kind_ = kind;
  v.bits_ = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(n));
  return v;
}

void Value::Destroy() {
  switch (kind_) {
    case Kind::kString:
      delete static_cast<const StringNode*>(node());
      break;
    case Kind::kList:
      delete static_cast<const ListNode*>(node());
      break;
    case Kind::kObject:
      delete static_cast<const ObjectNode*>(node());
      break;
    default:
      break;
  }
  kind_ = Kind::kNull;
  bits_ = 0;
}

Value Value::Bool(bool b) {
  Value v;
  v.kind_ = Kind::kBool;
  v.bits_ = b ? 1 : 0;
  return v;
}

Value Value::Int(std::int64_t i) {
  Value v;
  v.kind_ = Kind::kInt;
  v.bits_ = static_cast<std::uint64_t>(i);
  return v;
}

Value Value::Double(double d) {
  Value v;
  v.kind_ = Kind::kDouble;
  v.bits_ = std::bit_cast<std::uint64_t>(d);
  return v;
}

Value Value::String(std::string s) {
  return WithNode(Kind::kString, new StringNode(std::move(s)));
}

Value Value::MakeList(List items) {
  return WithNode(Kind::kList, new ListNode(std::move(items)));
}

Value Value::MakeObject(Object fields) {
  return WithNode(Kind::kObject, new ObjectNode(std::move(fields)));
}

bool Value::as_bool() const {
  if (kind_ != Kind::kBool) WrongKind("bool", __LINE__);
  return bits_ != 0;
}

std::int64_t Value::as_int() const {
  if (kind_ != Kind::kInt) WrongKind("int", __LINE__);
  return static_cast<std::int64_t>(bits_);
}

double Value::as_double() const {
  if (kind_ != Kind::kDouble) WrongKind("double", __LINE__);
  return std::bit_cast<double>(bits_);
}

const std::string& Value::as_string() const {
  if (kind_ != Kind::kString) WrongKind("string", __LINE__);
  return static_cast<const StringNode*>(node())->s;
}

const Value::List& Value::as_list() const {
  if (kind_ != Kind::kList) WrongKind("list", __LINE__);
  return static_cast<const ListNode*>(node())->items;
}

const Value::Object& Value::as_object() const {
  if (kind_ != Kind::kObject) WrongKind("object", __LINE__);
  return static_cast<const ObjectNode*>(node())->fields;
}

const Value* Value::Find(std::string_view field) const {
  if (kind_ != Kind::kObject) return nullptr;
  for (const auto& [name, v] : as_object()) {
    if (name == field) return &v;
  }
  return nullptr;
}

std::string Value::ToJson() const {
  std::string out;
  AppendJson(out);
  return out;
}

void Value::AppendJson(std::string& out) const {
  switch (kind_) {
    case Kind::kNull:
      out += "null";
      return;
    case Kind::kBool:
      out += as_bool() ? "true" : "false";
      return;
    case Kind::kInt: {
      char buf[24];
      auto res = std::to_chars(buf, buf + sizeof(buf), as_int());
      out.append(buf, res.ptr);
      return;
    }
    case Kind::kDouble:
      AppendDouble(out, as_double());
      return;
    case Kind::kString:
      AppendJsonString(out, as_string());
      return;
    case Kind::kList: {
      out += '[';
      bool first = true;
      for (const Value& item : as_list()) {
        if (!first) out += ',';
        first = false;
        item.AppendJson(out);
      }
      out += ']';
      return;
    }
    case Kind::kObject: {
      out += '{';
      bool first = true;
      for (const auto& [name, v] : as_object()) {
        if (!first) out += ',';
        first = false;
        AppendJsonString(out, name);
        out += ':';
        v.AppendJson(out);
      }
      out += '}';
      return;
    }
  }
}

std::size_t Value::Hash() const {
  std::size_t h = static_cast<std::size_t>(kind_) * 0x100000001b3ULL;
  switch (kind_) {
    case Kind::kNull:
      return h;
    case Kind::kBool:
      return Mix(h, bits_ != 0 ? 1 : 2);
    case Kind::kInt:
      return Mix(h, std::hash<std::int64_t>{}(as_int()));
    case Kind::kDouble:
      // All NaNs compare equal (see CompareDouble), so they hash alike; and
      // 0.0 == -0.0, so hash them alike too.
      if (std::isnan(as_double())) return Mix(h, 0x7ff8);
      return Mix(h, std::hash<double>{}(as_double() == 0 ? 0.0 : as_double()));
    case Kind::kString:
      return Mix(h, std::hash<std::string>{}(as_string()));
    case Kind::kList:
      for (const Value& item : as_list()) h = Mix(h, item.Hash());
      return Mix(h, as_list().size());
    case Kind::kObject:
      for (const auto& [name, v] : as_object()) {
        h = Mix(h, std::hash<std::string>{}(name));
        h = Mix(h, v.Hash());
      }
      return Mix(h, as_object().size());
  }
  return h;
}

bool Value::EqualSlow(const Value& a, const Value& b) {
  return Compare(a, b) == 0;
}

bool operator<(const Value& a, const Value& b) { return Compare(a, b) < 0; }

void AppendJsonString(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  std::size_t run = 0;  // start of the pending run of bytes needing no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        out += "\\u00";
        out += kHex[c >> 4];
        out += kHex[c & 0xf];
    }
  }
  out.append(s.data() + run, s.size() - run);
  out += '"';
}

}  // namespace faultline::checkers
