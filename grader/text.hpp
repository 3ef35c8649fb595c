// Text taken from child processes (compiler output, test output, crash logs) and from a
// learner's code before it goes into a report: visible, valid UTF-8 and bounded in size.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace grader {

//! The most bytes of one child's text that go into one report entry.
constexpr std::size_t kMaxEntryBytes = 64 * 1024;

// Every function here that takes a child's text shows it through workbook::visible()
// (runner/visible_text.hpp): valid UTF-8, control and bidirectional formatting characters
// written as escapes (`\x1b`, `<U+202E>`), UTF-16 decoded.

//! `bytes` as visible text of any length, lines kept (workbook::Shape::block): every byte
//! sequence that is not valid UTF-8 (a Latin-1 or GBK byte, a stray continuation byte, an
//! overlong or surrogate encoding) becomes U+FFFD, a control character other than tab and
//! newline an escape (`\x1b`: no escape sequence reaches a terminal), the CR of a CRLF is dropped.
std::string valid_utf8(std::string_view bytes);

//! valid_utf8(bytes), cut to at most `limit` bytes on a character boundary,
//! with a last line saying how much was cut.
std::string bounded_text(std::string_view bytes, std::size_t limit = kMaxEntryBytes);

//! Text from a learner (a name it registered, a message its process gave) as one visible line
//! of at most `limit` bytes (workbook::Shape::line): a line end is written `\n`.
std::string visible_line(std::string_view bytes, std::size_t limit = 512);

//! A log excerpt from a learner's process (its last lines, a tool's findings) as a block that
//! cannot pass for the grader's own lines: bounded_text(bytes, limit), each line indented by 4.
std::string quoted_block(std::string_view bytes, std::size_t limit = kMaxEntryBytes);

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
