// Text taken from child processes (compiler output, test output, crash logs)
// before it goes into a report: valid UTF-8 and bounded in size.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace grader {

//! The most bytes of one child's text that go into one report entry.
constexpr std::size_t kMaxEntryBytes = 64 * 1024;

//! `bytes` as valid UTF-8: every byte sequence that is not valid UTF-8 (a
//! Latin-1 or GBK byte, half of a UTF-16 unit, a NUL, a stray continuation
//! byte, an overlong or surrogate encoding) becomes U+FFFD. Control
//! characters other than tab and newline become U+FFFD too, so that no
//! escape sequence reaches a terminal.
std::string valid_utf8(std::string_view bytes);

//! valid_utf8(bytes), cut to at most `limit` bytes on a character boundary,
//! with a last line saying how much was cut.
std::string bounded_text(std::string_view bytes, std::size_t limit = kMaxEntryBytes);

//! Up to `limit` bytes of a file: its beginning, and when it is longer, a
//! note and its end. Made valid UTF-8. "" if the file cannot be read.
std::string read_bounded(const std::string& path, std::size_t limit = kMaxEntryBytes);

//! The first `n` lines of `text`.
std::string first_lines(const std::string& text, std::size_t n);

//! The last `n` lines of a file (read from its last kMaxEntryBytes), made valid UTF-8.
std::string tail_of(const std::string& path, std::size_t n);

//! The non-empty items of `text` between `sep`s ("a|b||c" -> a, b, c).
std::vector<std::string> split(std::string_view text, char sep);

//! Every line of `text` indented by `spaces`.
std::string indent(const std::string& text, std::size_t spaces);

//! Whether standard output is a terminal and NO_COLOR is unset.
bool colour_wanted();

//! `text` in an SGR colour ("32" green, "31" red, "33" yellow, "2" dim, "1" bold) where colour is wanted.
std::string paint(const std::string& text, const char* sgr);

}  // namespace grader
