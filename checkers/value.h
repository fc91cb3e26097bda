// A JSON value as it appears in a history event (`value`, `key`, extra
// fields). Small, copyable, comparable and hashable, so models can keep it in
// their state. Integers are kept exactly (int64); other numbers as double.
//
// Thread-safety: a const Value may be read from many threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::checkers {

class Value {
 public:
  enum class Kind : std::uint8_t { kNull, kBool, kInt, kDouble, kString, kList, kObject };
  using List = std::vector<Value>;
  using Object = std::vector<std::pair<std::string, Value>>;  // in file order

  Value() = default;  // null
  static Value Null() { return Value(); }
  static Value Bool(bool b);
  static Value Int(std::int64_t i);
  static Value Double(double d);
  static Value String(std::string s);
  static Value MakeList(List items);
  static Value MakeObject(Object fields);

  Kind kind() const { return kind_; }
  bool is_null() const { return kind_ == Kind::kNull; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_object() const { return kind_ == Kind::kObject; }

  // Accessors; calling the wrong one for the kind aborts (a broken invariant).
  bool as_bool() const;
  std::int64_t as_int() const;
  double as_double() const;
  const std::string& as_string() const;
  const List& as_list() const;
  const Object& as_object() const;
  // Field of an object, or nullptr when absent or not an object.
  const Value* Find(std::string_view field) const;

  // Compact JSON text (no spaces), strings escaped per RFC 8259.
  std::string ToJson() const;
  void AppendJson(std::string& out) const;

  std::size_t Hash() const;
  friend bool operator==(const Value& a, const Value& b);
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }
  // Total order (by kind, then content); lets values be sorted and mapped.
  friend bool operator<(const Value& a, const Value& b);

 private:
  Kind kind_ = Kind::kNull;
  bool b_ = false;
  std::int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  List list_;
  Object object_;
};

struct ValueHash {
  std::size_t operator()(const Value& v) const { return v.Hash(); }
};

// Appends `s` to `out` as a JSON string literal (with quotes).
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace faultline::checkers
