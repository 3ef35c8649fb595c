#include "judge/verify.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace workbook {
namespace {

constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24
constexpr std::size_t kMaxLines = 8;

std::uint32_t bits_of(float v) {
  std::uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

std::string describe_value(float v) {
  if (bits_of(v) == kPoisonBits) return "never written (still holds the harness's poison NaN)";
  if (std::isnan(v)) {
    return "NaN: usually a read outside in[0, n) (the harness surrounds the input with NaN) or "
           "arithmetic on shared memory nothing wrote";
  }
  return fmt::format("{}", v);
}

// The marked elements whose bits are set in `units`.
std::vector<std::size_t> decode(const ExactPlan& plan, std::uint32_t units) {
  std::vector<std::size_t> ks;
  for (std::size_t k = 0; k < plan.exponents.size(); ++k) {
    if (units & plan.units(k)) ks.push_back(k);
  }
  return ks;
}

// `v` in units of the plan, when it is a whole number of them in [0, 2^24).
bool whole_units(const ExactPlan& plan, float v, std::uint32_t* units) {
  if (!std::isfinite(v) || v < 0.0f) return false;
  const double u = static_cast<double>(v) / plan.unit();
  if (u >= 16777216.0 || u != std::floor(u)) return false;
  *units = static_cast<std::uint32_t>(u);
  return true;
}

// "2^-3": the value of marked element k.
std::string value_name(const ExactPlan& plan, std::size_t k) {
  return fmt::format("2^{}", plan.exponents[k] + plan.scale);
}

void add_line(std::string& out, std::size_t& lines, const std::string& line) {
  if (lines < kMaxLines)
    out += line + "\n";
  else if (lines == kMaxLines)
    out += "...\n";
  ++lines;
}

}  // namespace

double sum_tolerance(std::size_t n, double sum_abs) {
  if (n <= 1) return 0.0;
  const double ku = static_cast<double>(n - 1) * kUnitRoundoff;
  if (ku >= 0.5) return std::numeric_limits<double>::infinity();
  return ku / (1.0 - ku) * sum_abs;
}

bool SumCheck::passes(double got) const { return std::isfinite(got) && std::fabs(got - reference) <= tolerance; }

std::string SumCheck::describe(double got) const {
  const double off = got - reference;
  if (exact) {
    return fmt::format(
        "got {:.9g}, expected exactly {:.9g} (off by {:.3g}): the input holds "
        "multiples of 1/16 in [-8, 8] whose partial sums are exact in float, so "
        "every summation order gives exactly the expected sum",
        got, reference, off);
  }
  if (!std::isfinite(tolerance)) {
    return fmt::format(
        "got {:.9g}, expected about {:.9g} (no order-free rounding bound at this "
        "size: only finiteness is checked)",
        got, reference);
  }
  return fmt::format("got {:.9g}, expected {:.9g} +- {:.3g} (off by {:.3g}{})", got, reference, tolerance, off,
                     tolerance > 0 ? fmt::format(" = {:.3g} tolerances", std::fabs(off) / tolerance) : std::string());
}

SumCheck reference_sum(const float* x, std::size_t n) {
  SumCheck check;
  for (std::size_t i = 0; i < n; ++i) {
    check.reference += x[i];
    check.sum_abs += std::fabs(x[i]);
  }
  check.tolerance = sum_tolerance(n, check.sum_abs);
  return check;
}

SumCheck exact_sum(std::int64_t sixteenths) {
  SumCheck check;
  check.reference = static_cast<double>(sixteenths) / kDenseExactScale;
  check.exact = true;
  return check;
}

double sum_in_double(const std::vector<float>& values) {
  double s = 0;
  for (float v : values) s += v;
  return s;
}

std::string explain_non_finite(const std::vector<float>& values, std::size_t limit) {
  std::string out;
  std::size_t bad = 0;
  for (std::size_t j = 0; j < values.size(); ++j) {
    if (std::isfinite(values[j])) continue;
    if (bad < limit) out += fmt::format("partial {} is {}\n", j, describe_value(values[j]));
    ++bad;
  }
  if (bad > limit) out += fmt::format("... {} of {} partials are not finite\n", bad, values.size());
  return out;
}

std::string explain_exact_partials(const ExactPlan& plan, const std::vector<float>& partials) {
  const std::size_t count = plan.positions.size();
  std::string out;
  std::size_t lines = 0;
  std::map<std::size_t, std::vector<std::size_t>> owners;  // marked element k -> partials
  for (std::size_t j = 0; j < partials.size(); ++j) {
    const float v = partials[j];
    std::uint32_t units = 0;
    if (!whole_units(plan, v, &units)) {
      add_line(out, lines, fmt::format("partial {} is {}", j, describe_value(v)));
      continue;
    }
    for (std::size_t k : decode(plan, units)) owners[k].push_back(j);
    if (units & ~plan.total_units()) {
      add_line(out, lines,
               fmt::format("partial {} is {}, which no set of the marked elements adds "
                           "up to (one of them counted twice, or something else added)",
                           j, v));
    }
  }
  if (!out.empty()) {
    return out + fmt::format(
                     "(on this input every partial is a whole multiple of 2^{} below "
                     "2^{}: the sum of the marked elements its block holds)\n",
                     plan.scale, plan.scale + 24);
  }
  for (std::size_t k = 0; k < count; ++k) {
    const auto it = owners.find(k);
    const std::size_t where = plan.positions[k];
    if (it == owners.end()) {
      add_line(out, lines,
               fmt::format("element {} (value {}) is in no partial: it was dropped", where, value_name(plan, k)));
    } else if (it->second.size() > 1) {
      add_line(out, lines,
               fmt::format("element {} (value {}) is counted in partials {}: it was added more than once", where,
                           value_name(plan, k), fmt::join(it->second, ", ")));
    }
  }
  if (out.empty() && sum_in_double(partials) != plan.total()) {
    // Bits decoded cleanly but the sum is off: a carry from a double count.
    add_line(out, lines,
             fmt::format("the partials add up to {}, expected {}: some element was added twice",
                         sum_in_double(partials), plan.total()));
  }
  return out;
}

std::string explain_exact_total(const ExactPlan& plan, float total) {
  if (bits_of(total) == kPoisonBits || !std::isfinite(total)) {
    return fmt::format("the sum is {}\n", describe_value(total));
  }
  const double expected = plan.total();
  if (static_cast<double>(total) == expected) return "";
  std::string out = fmt::format("the sum is {}, expected {}\n", total, expected);
  std::size_t lines = 1;
  std::uint32_t units = 0;
  const bool whole = whole_units(plan, total, &units);
  if (whole && (units & ~plan.total_units()) == 0) {
    for (std::size_t k : decode(plan, plan.total_units() & ~units)) {
      add_line(out, lines,
               fmt::format("element {} (value {}) is missing from the sum", plan.positions[k], value_name(plan, k)));
    }
  } else if (whole && static_cast<double>(total) > expected) {
    add_line(out, lines, "the sum is too large: some element was added more than once");
  }
  return out;
}

}  // namespace workbook
