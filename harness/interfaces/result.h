// Result<T>: a value or an error message, for expected failures (design.md:
// results as values; exceptions only at the CLI and config boundary).
#pragma once

#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace faultline::harness {

struct Error {
  std::string message;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() {
    if (!ok()) std::abort();
    return std::get<0>(v_);
  }
  const T& value() const {
    if (!ok()) std::abort();
    return std::get<0>(v_);
  }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const std::string& error() const {
    if (ok()) std::abort();
    return std::get<1>(v_).message;
  }

 private:
  std::variant<T, Error> v_;
};

// Result of an action with no value.
struct Unit {};
using Status = Result<Unit>;
inline Status Ok() { return Unit{}; }
inline Error Fail(std::string message) { return Error{std::move(message)}; }

}  // namespace faultline::harness
