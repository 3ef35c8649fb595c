// JUnit XML, from a report (formats.hpp).
#include "formats.hpp"

#include <string_view>

#include <fmt/format.h>

#include "report_view.hpp"
#include "text.hpp"

using nlohmann::json;

namespace grader {
using namespace view;

namespace {

// `raw` with what XML 1.0 does not allow dropped: control characters other
// than tab, newline and CR, and U+FFFE/U+FFFF. Invalid UTF-8 becomes U+FFFD.
std::string xml_chars(std::string_view raw) {
  std::string valid;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= raw.size(); ++i) {
    const unsigned char c = i < raw.size() ? static_cast<unsigned char>(raw[i]) : 0;
    if (i == raw.size() || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      valid += valid_utf8(raw.substr(start, i - start));  // piecewise: a dropped byte joins no sequence
      start = i + 1;
    }
  }
  std::string out;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (valid.compare(i, 2, "\xEF\xBF") == 0 && i + 2 < valid.size() &&
        (valid[i + 2] == '\xBE' || valid[i + 2] == '\xBF')) {
      i += 2;  // U+FFFE or U+FFFF
      continue;
    }
    out += valid[i];
  }
  return out;
}

// Escaped for XML text, or for an attribute value (where line ends and tabs
// are character references, so a parser keeps them).
std::string xml(std::string_view raw, bool attribute = false) {
  std::string out;
  for (const char ch : xml_chars(raw)) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\n': out += attribute ? "&#10;" : "\n"; break;
      case '\t': out += attribute ? "&#9;" : "\t"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string attr(std::string_view raw) { return xml(raw, true); }

std::string first_line(const std::string& s) {
  const std::string line = s.substr(0, s.find('\n'));
  return line.size() > 1024 ? line.substr(0, 1024) : line;
}

std::string seconds_text(double s) { return fmt::format("{:.3f}", s); }

struct Suite {
  std::string body;
  int tests = 0, failures = 0, errors = 0, skipped = 0;

  void add(const std::string& classname, const std::string& name, const std::string& inner) {
    ++tests;
    body += "    <testcase classname=\"" + attr(classname) + "\" name=\"" + attr(name) + "\"";
    body += inner.empty() ? "/>\n" : ">\n" + inner + "    </testcase>\n";
  }
  std::string failure(const std::string& type, const std::string& message, const std::string& content) {
    ++failures;
    return "      <failure type=\"" + attr(type) + "\" message=\"" + attr(first_line(message)) + "\">" +
           xml(bounded_text(xml_chars(content), kTestOutputBytes)) + "</failure>\n";
  }
  std::string error(const std::string& type, const std::string& message, const std::string& content) {
    ++errors;
    return "      <error type=\"" + attr(type) + "\" message=\"" + attr(first_line(message)) + "\">" +
           xml(bounded_text(xml_chars(content), kTestOutputBytes)) + "</error>\n";
  }
  std::string skip(const std::string& message) {
    ++skipped;
    return "      <skipped message=\"" + attr(first_line(message)) + "\"/>\n";
  }
};

}  // namespace

std::string junit_xml(const std::vector<json>& reports) {
  std::string suites;
  int tests = 0, failures = 0, errors = 0;
  double seconds = 0;
  for (const json& one : reports) {
    const Report r = report_of(one);
    for (const Chapter& c : r.views) {
      const std::string classname = r.name + "." + c.slug;
      const std::string why = c.status.word() + (c.detail.empty() ? "" : ": " + c.detail);
      Suite s;
      for (const ReportTest& t : c.tests) {
        using workbook::channel::Result;
        if (t.result == Result::passed) {
          s.add(classname, t.name, "");
        } else if (t.result == Result::skipped) {
          s.add(classname, t.name, s.skip("skipped"));
        } else {
          const ReportFailure* f = c.failure(t.name);
          const std::string word = t.result ? json(*t.result).get<std::string>() : "unreadable result";
          const std::string message = f && !f->message.empty() ? f->message : word;
          s.add(classname, t.name, s.failure(word, message, message));
        }
      }
      // One testcase for the chapter when its tests do not tell the whole story.
      const bool reported = !c.tests.empty();
      if (c.kind == Kind::not_graded) {
        s.add(classname, c.slug, s.skip(why.empty() ? "not graded" : why));
      } else if (c.kind == Kind::error) {
        s.add(classname, c.slug, s.error(c.status.word(), why, c.detail.empty() ? c.status.word() : c.detail));
      } else if (c.kind == Kind::failed && (!reported || (c.status != Status::failed))) {
        s.add(classname, c.slug, s.failure(c.status.word(), why, c.detail.empty() ? c.status.word() : c.detail));
      } else if (!reported) {
        s.add(classname, c.slug, "");
      }
      // Performance, judged only once the chapter is correct.
      if (reported && (c.kind == Kind::passed || c.kind == Kind::failed)) {
        if (!c.correctness_passed) {
          s.add(classname, "performance", s.skip(unmeasured_reason(c)));
        } else if (c.bandwidth_passed) {
          s.add(classname, "performance", "");
        } else {
          const std::string numbers = bandwidth_text(c);
          const std::string message = "not fast enough" + (numbers.empty() ? "" : ": " + numbers);
          s.add(classname, "performance", s.failure("performance", message, message));
        }
      }
      std::string head = "  <testsuite name=\"" + attr(r.name + "/" + c.slug) + "\"" +
                         fmt::format(" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"", s.tests, s.failures,
                                     s.errors, s.skipped) +
                         " time=\"" + seconds_text(c.seconds) + "\"";
      if (!r.date.empty()) head += " timestamp=\"" + attr(r.date) + "\"";
      suites += head + ">\n" + s.body + "  </testsuite>\n";
      tests += s.tests;
      failures += s.failures;
      errors += s.errors;
      seconds += c.seconds;
    }
  }
  // <testsuites> carries the attributes the JUnit schema gives it (no "skipped": each suite has it).
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" +
         fmt::format("<testsuites name=\"workbook grader\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{}\">\n",
                     tests, failures, errors, seconds_text(seconds)) +
         suites + "</testsuites>\n";
}

}  // namespace grader
