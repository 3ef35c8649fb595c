#include "text.hpp"

#include <unistd.h>
#include <cstdlib>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

#include <fmt/format.h>

namespace grader {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the valid UTF-8 sequence at s[i], or 0 if there is none.
std::size_t sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return 1;
  std::size_t len;
  std::uint32_t cp;
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
  if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;  // overlong, out of range, or a UTF-16 surrogate
  }
  return len;
}

// The size of a file, and `count` of its bytes from `from` (as many as there are).
std::streamoff file_size(std::ifstream& in) {
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  return size < 0 ? 0 : size;
}

std::string read_range(std::ifstream& in, std::streamoff from, std::size_t count) {
  std::string bytes(count, '\0');
  in.seekg(from);
  in.read(bytes.data(), static_cast<std::streamsize>(count));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

}  // namespace

std::string valid_utf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    const std::size_t len = sequence_length(bytes, i);
    if (len == 0) {
      out += kReplacement;
      ++i;
    } else if (len == 1 && ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F)) {
      if (c != '\r') out += kReplacement;  // CR of CRLF line ends: dropped
      ++i;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

std::string bounded_text(std::string_view bytes, std::size_t limit) {
  std::string text = valid_utf8(bytes);
  if (text.size() <= limit) return text;
  std::size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not mid-character
  const std::size_t dropped = text.size() - cut;
  text.resize(cut);
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += fmt::format("[... {} more bytes cut: a report entry keeps at most {} KiB]\n", dropped,
                      limit / 1024);
  return text;
}

std::string read_bounded(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  const std::streamoff size = file_size(in);
  if (static_cast<std::size_t>(size) <= limit) return valid_utf8(read_range(in, 0, static_cast<std::size_t>(size)));
  const std::size_t half = limit / 2;
  const std::string head = read_range(in, 0, half);
  const std::string tail = read_range(in, size - static_cast<std::streamoff>(half), half);
  return valid_utf8(head) +
         fmt::format("\n[... {} bytes cut from the middle ...]\n", size - 2 * std::streamoff(half)) +
         valid_utf8(tail);
}

std::string first_lines(const std::string& text, std::size_t n) {
  std::string out;
  std::size_t lines = 0, pos = 0;
  while (pos < text.size() && lines < n) {
    const std::size_t end = text.find('\n', pos);
    out += text.substr(pos, end == std::string::npos ? std::string::npos : end - pos + 1);
    pos = end == std::string::npos ? text.size() : end + 1;
    ++lines;
  }
  return out;
}

std::string tail_of(const std::string& path, std::size_t n) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  const std::streamoff size = file_size(in);
  const std::streamoff from = size > std::streamoff(kMaxEntryBytes) ? size - std::streamoff(kMaxEntryBytes) : 0;
  const std::string text = valid_utf8(read_range(in, from, static_cast<std::size_t>(size - from)));
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n') starts.push_back(i + 1);
  }
  const std::size_t first = starts.size() > n ? starts[starts.size() - n] : 0;
  std::string out = text.substr(first);
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> items;
  for (std::size_t pos = 0; pos <= text.size();) {
    const std::size_t end = std::min(text.find(sep, pos), text.size());
    if (end > pos) items.emplace_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return items;
}

std::string indent(const std::string& text, std::size_t spaces) {
  const std::string pad(spaces, ' ');
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    out += pad + text.substr(pos, end == std::string::npos ? std::string::npos : end - pos) + "\n";
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

bool colour_wanted() {
  static const bool wanted = isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  return wanted;
}

std::string paint(const std::string& text, const char* sgr) {
  return colour_wanted() ? "\033[" + std::string(sgr) + "m" + text + "\033[0m" : text;
}

}  // namespace grader
