// A JSON value as it appears in a history event (`value`, `key`, extra
// fields). Small, copyable, comparable and hashable, so models can keep it in
// their state. Integers are kept exactly (int64); other numbers as double.
//
// Representation: 16 bytes, a kind tag and a union of bool/int64/double or a
// pointer to an immutable, reference-counted heap node holding a string, a
// list or an object. Copies of strings, lists and objects share the node
// (one atomic increment); nothing can mutate a node once built.
//
// Thread-safety: a const Value may be read, and copied, from many threads
// (the reference count is atomic).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace faultline::checkers {

class Value {
 public:
  enum class Kind : std::uint8_t {
    kNull,
    kBool,
    kInt,
    kDouble,
    kString,
    kList,
    kObject
  };
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
  friend bool operator==(const Value& a, const Value& b) {
    if (a.kind_ != b.kind_) return false;
    // Null, bool and int are equal iff their bits are; a shared node is
    // equal to itself. Doubles (NaN, -0.0) and distinct nodes compare.
    if (a.kind_ <= Kind::kInt ||
        (a.kind_ != Kind::kDouble && a.bits_ == b.bits_)) {
      return a.bits_ == b.bits_;
    }
    return EqualSlow(a, b);
  }
  friend bool operator!=(const Value& a, const Value& b) { return !(a == b); }
  // Total order (by kind, then content); lets values be sorted and mapped.
  friend bool operator<(const Value& a, const Value& b);

 private:
  // Heap node of a string, list or object; the payload types live in
  // value.cpp. Immutable after construction except for `refs`.
  struct Node {
    mutable std::atomic<std::uint32_t> refs{1};
  };
  struct StringNode;
  struct ListNode;
  struct ObjectNode;
  const Node* node() const {
    return reinterpret_cast<const Node*>(static_cast<std::uintptr_t>(bits_));
  }
  void Retain() const {
    if (kind_ >= Kind::kString) {
      node()->refs.fetch_add(1, std::memory_order_relaxed);
    }
  }
  void Release() {
    if (kind_ >= Kind::kString &&
        node()->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Destroy();
    }
  }
  void Destroy();  // frees the node (its last reference is gone)
  static Value WithNode(Kind kind, const Node* n);
  static bool EqualSlow(const Value& a, const Value& b);

  Kind kind_ = Kind::kNull;
  // bool (0/1), int64, the bits of a double, or the node's address.
  std::uint64_t bits_ = 0;

 public:
  Value(const Value& o) : kind_(o.kind_), bits_(o.bits_) { Retain(); }
  Value(Value&& o) noexcept : kind_(o.kind_), bits_(o.bits_) {
    o.kind_ = Kind::kNull;
    o.bits_ = 0;
  }
  Value& operator=(const Value& o) {
    o.Retain();  // first: o may be *this
    Release();
    kind_ = o.kind_;
    bits_ = o.bits_;
    return *this;
  }
  Value& operator=(Value&& o) noexcept {
    if (this != &o) {
      Release();
      kind_ = o.kind_;
      bits_ = o.bits_;
      o.kind_ = Kind::kNull;
      o.bits_ = 0;
    }
    return *this;
  }
  ~Value() { Release(); }
};

struct ValueHash {
  std::size_t operator()(const Value& v) const { return v.Hash(); }
};

// Appends `s` to `out` as a JSON string literal (with quotes).
void AppendJsonString(std::string& out, std::string_view s);

}  // namespace faultline::checkers
