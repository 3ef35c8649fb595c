#include "text.hpp"

#include <unistd.h>
#include <cstdlib>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "runner/visible_text.hpp"

namespace grader {
namespace {

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
  return workbook::visible(bytes, workbook::Shape::block, std::string::npos);
}

std::string bounded_text(std::string_view bytes, std::size_t limit) {
  return workbook::visible(bytes, workbook::Shape::block, limit);
}

std::string visible_line(std::string_view bytes, std::size_t limit) {
  return workbook::visible(bytes, workbook::Shape::line, limit);
}

std::string quoted_block(std::string_view bytes, std::size_t limit) { return indent(bounded_text(bytes, limit), 4); }

std::string read_bounded(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  const std::streamoff size = file_size(in);
  if (static_cast<std::size_t>(size) <= limit) return valid_utf8(read_range(in, 0, static_cast<std::size_t>(size)));
  const std::size_t half = limit / 2;
  const std::string head = read_range(in, 0, half);
  const std::string tail = read_range(in, size - static_cast<std::streamoff>(half), half);
  return valid_utf8(head) + fmt::format("\n[... {} bytes cut from the middle ...]\n", size - 2 * std::streamoff(half)) +
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
