// Fields of a JSON document read without throwing: a missing key, a null or a value of another
// type gives the fallback. For the grader's own files read back (the report, the progress file),
// which an older grader, a run cut short or a hand may have left in any shape.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace grader::json_fields {

inline std::string text(const nlohmann::json& j, const char* key, const std::string& fallback = "") {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

//! A finite number, or none.
inline std::optional<double> number(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

inline bool flag(const nlohmann::json& j, const char* key, bool fallback) {
  if (!j.is_object()) return fallback;
  const auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

//! A non-negative integer, or 0.
inline std::uint64_t count(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return 0;
  const auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

inline const nlohmann::json& member(const nlohmann::json& j, const char* key) {
  static const nlohmann::json none;
  if (!j.is_object()) return none;
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

//! The objects in the array j[key] (anything else in it is skipped).
inline std::vector<const nlohmann::json*> objects(const nlohmann::json& j, const char* key) {
  std::vector<const nlohmann::json*> out;
  const nlohmann::json& a = member(j, key);
  if (!a.is_array()) return out;
  for (const nlohmann::json& e : a) {
    if (e.is_object()) out.push_back(&e);
  }
  return out;
}

}  // namespace grader::json_fields
