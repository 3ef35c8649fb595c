#include "runner/visible_text.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include <fmt/format.h>

namespace workbook {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
constexpr std::string_view kUtf16Note = "[UTF-16 text, decoded]";

// The code point of the valid UTF-8 sequence at s[i] and its length, or a length of 0 if there is none.
std::size_t sequence_at(std::string_view s, std::size_t i, std::uint32_t& cp) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) {
    cp = c;
    return 1;
  }
  std::size_t len;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;  // a continuation byte, 0xC0/0xC1 (overlong) or 0xF5..0xFF
  }
  if (i + len > s.size()) return 0;
  for (std::size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;  // overlong, out of range, or a UTF-16 surrogate
  }
  return len;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

enum class Order { none, little, big };

// Whether `s` looks like UTF-16 without a byte-order mark: NULs in at least 40% of its two-byte
// units, nearly all on one side of the unit (ASCII as UTF-16 is every other byte NUL).
Order utf16_order(std::string_view s) {
  if (s.size() < 4) return Order::none;
  std::size_t even = 0, odd = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\0') ++(i % 2 ? odd : even);
  }
  const std::size_t units = s.size() / 2;
  if (odd * 10 >= units * 4 && even * 10 <= odd) return Order::little;
  if (even * 10 >= units * 4 && odd * 10 <= even) return Order::big;
  return Order::none;
}

// `s` decoded as UTF-16 into UTF-8 (an unpaired surrogate or a last odd byte: U+FFFD; a last odd NUL: dropped).
std::string from_utf16(std::string_view s, Order order) {
  const auto unit = [&](std::size_t i) {
    const auto lo = static_cast<unsigned char>(s[order == Order::little ? i : i + 1]);
    const auto hi = static_cast<unsigned char>(s[order == Order::little ? i + 1 : i]);
    return static_cast<std::uint32_t>(lo | (hi << 8));
  };
  std::string out;
  std::size_t i = 0;
  for (; i + 1 < s.size(); i += 2) {
    const std::uint32_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 3 < s.size() && unit(i + 2) >= 0xDC00 && unit(i + 2) <= 0xDFFF) {
      append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (unit(i + 2) - 0xDC00));
      i += 2;
    } else if (u >= 0xD800 && u <= 0xDFFF) {
      out += kReplacement;
    } else {
      append_utf8(out, u);
    }
  }
  if (i < s.size() && s[i] != '\0') out += kReplacement;
  return out;
}

// `bytes` with what looks like UTF-16 decoded: the whole text (a byte-order mark, or every line
// alike), else each line that does; each decoded part starts with kUtf16Note. Other bytes as they are.
std::string utf16_decoded(std::string_view bytes, Shape shape) {
  const std::string note = std::string(kUtf16Note) + (shape == Shape::block ? "\n" : " ");
  if (bytes.size() >= 2 && bytes.substr(0, 2) == "\xFF\xFE") return note + from_utf16(bytes.substr(2), Order::little);
  if (bytes.size() >= 2 && bytes.substr(0, 2) == "\xFE\xFF") return note + from_utf16(bytes.substr(2), Order::big);
  if (bytes.find('\0') == std::string_view::npos) return std::string(bytes);
  if (const Order whole = utf16_order(bytes); whole != Order::none) return note + from_utf16(bytes, whole);
  std::string out;
  for (std::size_t start = 0; start < bytes.size();) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string_view::npos) end = bytes.size();
    const std::string_view line = bytes.substr(start, end - start);
    const Order order = utf16_order(line);
    if (order == Order::none) {
      out += line;
    } else {
      out += std::string(kUtf16Note) + " " + from_utf16(line, order);
    }
    if (end < bytes.size()) out += '\n';
    start = end + 1;
    if (order == Order::little && start < bytes.size() && bytes[start] == '\0') ++start;  // "\n\0"
  }
  return out;
}

// Bidirectional and invisible formatting characters: they reorder or hide what is around them.
bool formatting(std::uint32_t cp) {
  return cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x2069) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB);
}

// How the character `cp` (`len` bytes at text[i]) is shown.
std::string shown(std::string_view text, std::size_t i, std::size_t len, std::uint32_t cp, Shape shape) {
  if (len == 0) return std::string(kReplacement);
  const bool block = shape == Shape::block;
  switch (cp) {
    case '\n': return block ? "\n" : "\\n";
    case '\t': return block ? "\t" : "\\t";
    case '\r': return block && i + 1 < text.size() && text[i + 1] == '\n' ? "" : "\\r";  // CRLF: dropped
    default: break;
  }
  if (cp < 0x20 || cp == 0x7F) return fmt::format("\\x{:02x}", cp);
  if ((cp >= 0x80 && cp <= 0x9F) || formatting(cp)) return fmt::format("<U+{:04X}>", cp);
  return std::string(text.substr(i, len));
}

}  // namespace

std::string visible(std::string_view bytes, Shape shape, std::size_t limit) {
  const std::string text = utf16_decoded(bytes, shape);
  std::string out;
  out.reserve(std::min(text.size(), limit) + 16);
  for (std::size_t i = 0; i < text.size();) {
    std::uint32_t cp = 0;
    const std::size_t len = sequence_at(text, i, cp);
    const std::string piece = shown(text, i, len, cp, shape);
    if (out.size() + piece.size() > limit) {
      const std::size_t more = text.size() - i;
      if (shape == Shape::line) return out + fmt::format(" [... {} more bytes cut]", more);
      if (!out.empty() && out.back() != '\n') out += '\n';
      return out +
             fmt::format("[... {} more bytes cut: a report entry keeps at most {} KiB]\n", more, (limit + 1023) / 1024);
    }
    out += piece;
    i += len == 0 ? 1 : len;
  }
  return out;
}

bool plain_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name.front() == '.' || name.front() == '-') return false;
  for (const char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace workbook
