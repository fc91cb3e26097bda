// JSON helpers shared by the etcd gateway's request/reply code
// (gateway.cpp, txn_gateway.cpp): the gateway's conventions for objects,
// int64 fields written as strings, base64 byte fields and the reply header.
// Internal to targets/etcd/.
//
// Thread-safety: pure functions.
#pragma once

#include <charconv>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "checkers/value.h"
#include "targets/etcd/base64.h"

namespace faultline::targets::etcd::detail {

using json = nlohmann::json;

// Parses a JSON object; nullopt for anything else (including invalid JSON).
inline std::optional<json> ParseObject(std::string_view body) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  return doc;
}

// An integer field that the gateway writes as a string (or, leniently, as a
// number). Absent -> `fallback`; malformed -> nullopt.
template <typename Int>
inline std::optional<Int> IntField(const json& obj, const char* name,
                                   Int fallback) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return fallback;
  if (it->is_number_integer()) return it->get<Int>();
  if (!it->is_string()) return std::nullopt;
  const std::string& s = it->get_ref<const std::string&>();
  Int out{};
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return out;
}

// A base64 bytes field; absent means empty.
inline std::optional<std::string> BytesField(const json& obj,
                                             const char* name) {
  auto it = obj.find(name);
  if (it == obj.end() || it->is_null()) return std::string();
  if (!it->is_string()) return std::nullopt;
  return Base64Decode(it->get_ref<const std::string&>());
}

inline checkers::Value FromJson(const json& j) {
  switch (j.type()) {
    case json::value_t::boolean:
      return checkers::Value::Bool(j.get<bool>());
    case json::value_t::number_integer:
      return checkers::Value::Int(j.get<std::int64_t>());
    case json::value_t::number_unsigned: {
      auto u = j.get<std::uint64_t>();
      if (u <= static_cast<std::uint64_t>(INT64_MAX)) {
        return checkers::Value::Int(static_cast<std::int64_t>(u));
      }
      return checkers::Value::Double(static_cast<double>(u));
    }
    case json::value_t::number_float:
      return checkers::Value::Double(j.get<double>());
    case json::value_t::string:
      return checkers::Value::String(j.get<std::string>());
    case json::value_t::array: {
      checkers::Value::List items;
      for (const auto& item : j) items.push_back(FromJson(item));
      return checkers::Value::MakeList(std::move(items));
    }
    case json::value_t::object: {
      checkers::Value::Object fields;
      for (const auto& [k, v] : j.items()) fields.emplace_back(k, FromJson(v));
      return checkers::Value::MakeObject(std::move(fields));
    }
    default:
      return checkers::Value::Null();
  }
}

// The header every successful reply carries.
inline bool HasHeader(const json& obj) {
  auto it = obj.find("header");
  return it != obj.end() && it->is_object();
}

}  // namespace faultline::targets::etcd::detail
