// Text that came from a learner's code, made into data a report can show: the names its
// registration gave, what its process printed, what the compiler said about its file, the
// values a failure message quotes. Such text must never reach a reader as lines, headings,
// terminal escapes or reordered characters of its own; visible() is the one place that decides
// how it looks, for the judge and for every report the grader writes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace workbook {

//! How visible() lays text out.
enum class Shape {
  //! One line: a line end is written `\n`, a tab `\t`, a carriage return `\r`.
  line,
  //! Lines kept (and tabs); the CR of a CRLF line end dropped, a lone CR written `\r`. For a
  //! log shown inside a delimited block (a fenced block, an indented excerpt).
  block,
};

//! The most bytes visible() keeps of one line by default.
inline constexpr std::size_t kVisibleLineBytes = 512;

//! `bytes` as valid UTF-8 where nothing is hidden and nothing acts on the reader:
//! - a control character (C0 but for the line ends and tab that `shape` keeps, and DEL) is
//!   written as an escape: `\n`, `\t`, `\r`, `\x1b`, `\x00`, `\x7f`;
//! - a C1 control (U+0080 to U+009F) and a bidirectional or invisible formatting character
//!   (U+061C, U+200B to U+200F, U+2028 to U+202E, U+2060 to U+2069, U+FEFF, U+FFF9 to U+FFFB)
//!   is written as `<U+202E>`;
//! - a byte sequence that is not UTF-8 (a Latin-1 byte, a stray continuation byte, an overlong
//!   or surrogate encoding) becomes U+FFFD;
//! - text that looks like UTF-16 (a byte-order mark, or a NUL in most two-byte units on one
//!   side), whole or one line of it, is decoded as UTF-16 and marked `[UTF-16 text, decoded]`
//!   instead of being shown as NUL noise.
//! At most `limit` bytes are kept, cut on a character (never inside an escape), with a note
//! saying how many more bytes there were. Visible text is left as it is.
std::string visible(std::string_view bytes, Shape shape = Shape::line, std::size_t limit = kVisibleLineBytes);

//! Whether `name` is a plain name, as a chapter's slug or a subject is: 1 to 64 of the
//! characters a-z, A-Z, 0-9, '_', '-' and '.', not starting with '.' or '-'.
bool plain_name(std::string_view name);

}  // namespace workbook
