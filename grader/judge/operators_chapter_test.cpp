// The tests of the generic chapter (WORKBOOK_GENERIC_REDUCE: contract.hpp, Problem): every element
// type with every operator it is asked, each result checked against the host's, computed with the
// same operator objects (workbook/operators.cuh) in long double where that matters.
//
// - Operators.<op>_<element>_n_<n>: seeded inputs of n elements (one of them misaligned by an
//   element), the input unchanged after the call, nothing written past the result, reads outside
//   the input caught by a slack that changes every operator's answer.
// - Operators.ties_<element>: argmax and argmin of an input whose winner appears twice: the first.
// - Operators.specials_<element>: NaN, infinities and signed zeros, under the rules operators.cuh
//   states (a NaN wins max, min, argmax and argmin, the first NaN's index; +0 beats -0 for max).
// - Operators.large_mean_<element>: mean and variance of values near 1e4 (float) or 1e8 (double)
//   whose spread is about 1, where E[x^2] - E[x]^2 loses every digit.
// - Operators.index_past_2_31_bf16: argmax and argmin whose winner lies past element 2^31, where
//   an index kept in an int wraps.
//
// The float sum is also the chapter's plain reduction, on which every full chapter's tests run.
// These tests exist only in the judge of a generic chapter (register_operator_tests, called by
// main), so the other chapters' test lists are unchanged.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "chapter_env.hpp"
#include "judge/device.hpp"
#include "judge/inputs.hpp"
#include "runner/remote.hpp"
#include "runner/shared_memory.hpp"
#include "workbook/operators.cuh"

namespace workbook::judge {
namespace {

using namespace workbook::ops;

static_assert(sizeof(Widened<float>) == result_bytes(Element::f32, Operator::sum));
static_assert(sizeof(Widened<double>) == result_bytes(Element::f64, Operator::max));
static_assert(sizeof(Widened<long long>) == result_bytes(Element::i64, Operator::min));
static_assert(sizeof(Located<float>) == result_bytes(Element::f32, Operator::argmax));
static_assert(sizeof(Located<double>) == result_bytes(Element::f64, Operator::argmin));
static_assert(sizeof(Located<long long>) == result_bytes(Element::i32, Operator::argmax));
static_assert(sizeof(Moments) == result_bytes(Element::f16, Operator::mean_variance));

// The names the judge/runner messages give them (runner/remote.hpp), in test names and failures.
template <class Enum>
std::string name_of(Enum value) {
  return nlohmann::json(value).get<std::string>();
}

constexpr Element kElements[] = {Element::f32, Element::f64, Element::f16, Element::bf16, Element::i32, Element::i64};
constexpr Operator kOperators[] = {Operator::sum,    Operator::max, Operator::min,          Operator::argmax,
                                   Operator::argmin, Operator::dot, Operator::mean_variance};

//! An input as the host holds it: every element as a double (exact for every element type, int64
//! included for the magnitudes drawn here), converted to the element type on upload.
using Values = std::vector<double>;

//! Calls `f` with a value of the element type `e` (its type is what f learns).
template <class F>
decltype(auto) with_type(Element e, F&& f) {
  switch (e) {
    case Element::f32: return f(float{});
    case Element::f64: return f(double{});
    case Element::f16: return f(__half{});
    case Element::bf16: return f(__nv_bfloat16{});
    case Element::i32: return f(int{});
    case Element::i64: break;
  }
  return f(static_cast<long long>(0));
}

//! The elements as the device holds them: the values rounded to the element type (f16 and bf16
//! round), read back as doubles, so the host's reference sees exactly what the kernel sees.
Values rounded(Element e, const Values& v) {
  return with_type(e, [&](auto zero) {
    using T = decltype(zero);
    Values out(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<double>(widen(narrow<T>(v[i])));
    return out;
  });
}

//! A value no operator can ignore, for the slack around an input: a NaN (floating point), or the
//! value that wins `op` (integers: a sum far off, the largest for max, the smallest for min).
double slack_value(Element e, Operator op) {
  if (is_floating(e)) return std::numeric_limits<double>::quiet_NaN();
  const double big = e == Element::i32 ? 2147483647.0 : 9.0e15;
  if (op == Operator::min || op == Operator::argmin) return -big;
  return big;
}

//! One input of n elements of type e in a shared buffer, `offset` elements past a 256-byte
//! boundary, between slacks of kSlack elements of `slack`.
class TypedInput {
 public:
  static constexpr std::size_t kSlack = 1024;
  TypedInput(Element e, const Values& values, std::size_t offset, double slack)
      : e_(e),
        n_(values.size()),
        offset_(offset),
        bytes_(element_bytes(e)),
        buffer_((2 * kSlack + offset + n_) * bytes_) {
    Values all(2 * kSlack + offset + n_, slack);
    for (std::size_t i = 0; i < n_; ++i) all[kSlack + offset + i] = values[i];
    std::vector<unsigned char> host(all.size() * bytes_);
    with_type(e, [&](auto zero) {
      using T = decltype(zero);
      for (std::size_t i = 0; i < all.size(); ++i) {
        const T x = narrow<T>(all[i]);
        std::memcpy(host.data() + i * bytes_, &x, bytes_);
      }
      return 0;
    });
    // From pageable memory: returns once `host` is staged, so it may go; the call is ordered after
    // the copy by run_calls_after_stream.
    WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(buffer_.data(), host.data(), host.size(), cudaMemcpyHostToDevice, stream()));
  }
  const void* data() const { return buffer_.data() + (kSlack + offset_) * bytes_; }
  int fingerprint(Scans& scans) const { return scans.fingerprint(buffer_.data(), buffer_.size() / 4); }

 private:
  Element e_;
  std::size_t n_, offset_, bytes_;
  SharedBuffer<unsigned char> buffer_;
};

//! What the host expects of (op, values[, second]): the result's bytes as the kernel must write
//! them (exact operators), or the figures a tolerance is checked against.
struct Expected {
  double value = 0;                    // sum, dot, max, min; the winner of argmax/argmin
  long long index = -1;                // argmax, argmin
  double magnitude = 0;                // sum, dot: the sum of magnitudes (the rounding bound's scale)
  long double mean = 0, variance = 0;  // mean_variance
  bool exact = false;                  // max, min, arg*, integer sums: bit for bit
};

template <class A>
Expected expect_fold(Operator op, const Values& v, const Values& w) {
  Expected x;
  if (op == Operator::sum || op == Operator::dot) {
    if constexpr (std::is_integral_v<A>) {
      A s = Sum::identity<A>();
      for (std::size_t i = 0; i < v.size(); ++i) s = Sum{}(s, static_cast<A>(v[i]));
      x.value = static_cast<double>(s);
      x.exact = true;
    } else {
      long double s = 0, m = 0;
      for (std::size_t i = 0; i < v.size(); ++i) {
        const long double term = op == Operator::dot ? static_cast<long double>(v[i]) * w[i] : v[i];
        s += term;
        m += std::fabs(term);
      }
      x.value = static_cast<double>(s);
      x.magnitude = static_cast<double>(m);
    }
  } else if (op == Operator::max || op == Operator::min) {
    A r = op == Operator::max ? Max::identity<A>() : Min::identity<A>();
    for (double d : v) r = op == Operator::max ? Max{}(r, static_cast<A>(d)) : Min{}(r, static_cast<A>(d));
    x.value = static_cast<double>(r);
    x.exact = true;
  } else if (op == Operator::argmax || op == Operator::argmin) {
    Located<A> r = op == Operator::argmax ? ArgMax::identity<Located<A>>() : ArgMin::identity<Located<A>>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const Located<A> e{static_cast<A>(v[i]), static_cast<long long>(i)};
      r = op == Operator::argmax ? ArgMax{}(r, e) : ArgMin{}(r, e);
    }
    x.value = static_cast<double>(r.value);
    x.index = r.index;
    x.exact = true;
  } else {  // mean_variance, in long double, two passes
    long double s = 0;
    for (double d : v) s += d;
    x.mean = v.empty() ? 0 : s / v.size();
    long double m2 = 0;
    for (double d : v) m2 += (d - x.mean) * (d - x.mean);
    x.variance = v.empty() ? 0 : m2 / v.size();
  }
  return x;
}

std::string show(double d) {
  return std::isnan(d) ? "NaN" : fmt::format("{:.17g}{}", d, d == 0 && std::signbit(d) ? " (-0)" : "");
}

bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

//! The result's buffer: 64 words, poisoned, the result in the first of them and a guard band after.
constexpr std::size_t kOutWords = 64;
constexpr std::uint32_t kPoison = 0x7fa5a5a5;  // a NaN as a float, absurd as anything else

//! One generic call through the runner: `op` over n elements of type e at `a` (and `b`, for dot),
//! the result to `out`; a fatal failure, naming `where`, if the call could not run.
void call_generic(Element e, Operator op, const void* a, const void* b, std::size_t n, std::uint32_t* out,
                  void* workspace, const std::string& where) {
  Call c;
  c.kind = remote::CallKind::generic;
  c.element = e;
  c.op = op;
  c.in = static_cast<const float*>(a);
  c.in2 = b;
  c.n = n;
  c.out = reinterpret_cast<float*>(out);
  c.workspace = workspace;
  const Outcome o = run_calls_after_stream({c});
  ASSERT_TRUE(o.error.empty()) << where << ": " << o.error;
  ASSERT_EQ(o.results.size(), 1u) << where;
  ASSERT_TRUE(o.results[0].launch_error.empty()) << where << ": " << o.results[0].launch_error;
}

//! Runs `op` over `values` (and `second`, for dot) as elements of type e, and checks the result,
//! the input, and the bytes around the result. `what` names the case in failures.
void check_problem(Element e, Operator op, const Values& raw, const Values& raw_second, std::size_t offset,
                   const std::string& what) {
  const Values v = rounded(e, raw), w = rounded(e, raw_second);
  const std::string where =
      fmt::format("[{}] {} of {} {} elements{}, {}, seed {}", subject_name(), name_of(op), v.size(), name_of(e),
                  offset ? fmt::format(" (offset by {})", offset) : "", what, seed());
  const double slack = slack_value(e, op);
  TypedInput a(e, v, offset, slack);
  std::unique_ptr<TypedInput> b;
  if (op == Operator::dot) b = std::make_unique<TypedInput>(e, w, offset, slack);
  SharedBuffer<std::uint32_t> out(kOutWords);
  fill_words(out.data(), kPoison, kOutWords, stream());
  std::string why;
  const std::optional<std::size_t> bytes = subject().workspace_bytes(v.size(), &why);
  ASSERT_TRUE(bytes.has_value()) << where << ": workspace_bytes: " << why;
  ASSERT_LE(*bytes, max_workspace_bytes(v.size())) << where;
  GuardedWorkspace workspace(*bytes, stream());
  // The scans before and after the call are enqueued and read with the result in one wait: beside
  // other processes each wait for the GPU costs a time slice.
  Scans before(stream());
  const int input_before = a.fingerprint(before);
  before.fetch();
  ASSERT_NO_FATAL_FAILURE(
      call_generic(e, op, a.data(), b ? b->data() : nullptr, v.size(), out.data(), workspace.data(), where));
  Scans after(stream());
  const int input_after = a.fingerprint(after);
  const int guards = workspace.scan_guards(after);
  after.fetch();
  std::vector<std::uint32_t> words(kOutWords);
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(words.data(), out.data(), kOutWords * 4, cudaMemcpyDeviceToHost, stream()));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));  // the result, and both scans
  EXPECT_EQ(after.value(input_after), before.value(input_before)) << where << ": the input changed";
  EXPECT_EQ(workspace.explain_overrun(after, guards), "") << where;
  const std::size_t written = (result_bytes(e, op) + 3) / 4;
  for (std::size_t k = written; k < kOutWords; ++k) {
    ASSERT_EQ(words[k], kPoison) << where << ": a write " << 4 * k << " bytes past the result's start (the result is "
                                 << result_bytes(e, op) << " bytes)";
  }
  const bool wide = e == Element::f64 || e == Element::i32 || e == Element::i64;  // an 8-byte accumulator
  const auto scalar = [&](std::size_t word) {
    if (!is_floating(e)) {
      long long x;
      std::memcpy(&x, &words[word], 8);
      return static_cast<double>(x);
    }
    if (wide) {
      double x;
      std::memcpy(&x, &words[word], 8);
      return x;
    }
    float x;
    std::memcpy(&x, &words[word], 4);
    return static_cast<double>(x);
  };
  const Expected x = with_type(e, [&](auto zero) { return expect_fold<Widened<decltype(zero)>>(op, v, w); });
  if (op == Operator::mean_variance) {
    Moments m;
    std::memcpy(&m, words.data(), sizeof m);
    EXPECT_EQ(m.count, static_cast<double>(v.size())) << where << ": the count";
    // Chan's merge in double: a relative error of a few ulps per level of the tree.
    const long double scale = std::max<long double>(std::fabs(x.mean), 1);
    EXPECT_LE(std::fabs(m.mean - x.mean), 1e-12L * scale)
        << where << ": mean " << show(m.mean) << ", expected " << show(static_cast<double>(x.mean));
    EXPECT_LE(std::fabs(m.variance() - x.variance), 1e-9L * std::max<long double>(x.variance, 1e-300))
        << where << ": variance " << show(m.variance()) << ", expected " << show(static_cast<double>(x.variance))
        << " (E[x^2] - E[x]^2 loses these digits: keep (count, mean, M2) and merge them with Chan's update)";
    return;
  }
  const double got = scalar(0);
  if (op == Operator::argmax || op == Operator::argmin) {
    long long index;
    std::memcpy(&index, &words[2], 8);
    EXPECT_EQ(index, x.index) << where << ": the index (the first of equal values, the first NaN; -1 when empty)";
    if (x.index >= 0) {
      EXPECT_TRUE(same(got, x.value)) << where << ": the value " << show(got) << ", expected " << show(x.value);
    }
    return;
  }
  if (x.exact || std::isnan(x.value)) {  // a NaN anywhere in a sum makes it NaN
    EXPECT_TRUE(same(got, x.value)) << where << ": " << show(got) << ", expected " << show(x.value);
    return;
  }
  // A floating-point sum in any order: within (n + 1) units of rounding of the accumulator times
  // the sum of magnitudes (dot: one more for each product's rounding).
  const double unit = wide ? std::ldexp(1.0, -53) : std::ldexp(1.0, -24);
  const double bound = (static_cast<double>(v.size()) + 2) * unit * x.magnitude;
  EXPECT_LE(std::fabs(got - x.value), bound)
      << where << ": " << show(got) << ", expected " << show(x.value) << " within " << show(bound);
}

//! Seeded values for element type e: floating point in [-0.5, 1.0) (random_value), integers in
//! [-1000, 1000], and for i32 a few near the type's largest (but below it, which the slack holds),
//! so that a 32-bit accumulator wraps.
Values draw(Element e, std::size_t n, std::uint64_t salt) {
  Values v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = splitmix64(seed() + salt + i * 0x9e3779b97f4a7c15ull);
    if (is_floating(e))
      v[i] = random_value(seed() + salt, i);
    else
      v[i] = static_cast<double>(static_cast<long long>(r % 2001) - 1000);
  }
  if (e == Element::i32 && n > 8) {
    for (std::size_t k = 0; k < 4; ++k) v[(splitmix64(seed() + salt + k) % n)] = k % 2 ? 2147483600.0 : 2147483000.0;
  }
  return v;
}

//! ArgMax and ArgMin over more than 2^31 elements of a 2-byte type (4 GiB): zeros, with the
//! winner (+1 for argmax, -1 for argmin) past index 2^31, where an index kept in an int wraps.
void check_index_past_2_31(Element e, Operator op) {
  const std::size_t n = (std::size_t(1) << 31) + (std::size_t(1) << 20) + 5;
  const std::size_t winner = (std::size_t(1) << 31) + 1 + splitmix64(seed() + 8) % (std::size_t(1) << 20);
  const std::string where = fmt::format("[{}] {} of {} {} elements, all zero but element {}, seed {}", subject_name(),
                                        name_of(op), n, name_of(e), winner, seed());
  const std::size_t bytes = n * element_bytes(e);
  std::string why;
  const std::optional<std::size_t> workspace_bytes = subject().workspace_bytes(n, &why);
  ASSERT_TRUE(workspace_bytes.has_value()) << where << ": workspace_bytes: " << why;
  if (const std::optional<std::string> small = device_too_small(bytes + *workspace_bytes)) GTEST_SKIP() << *small;
  if (!device_memory_free(bytes + *workspace_bytes)) return;
  SharedBuffer<unsigned char> input(bytes);
  WORKBOOK_CUDA_CHECK(cudaMemsetAsync(input.data(), 0, bytes, stream()));  // +0 in every element type
  with_type(e, [&](auto zero) {
    using T = decltype(zero);
    const T x = narrow<T>(op == Operator::argmax ? 1.0 : -1.0);
    WORKBOOK_CUDA_CHECK(
        cudaMemcpyAsync(input.data() + winner * sizeof(T), &x, sizeof(T), cudaMemcpyHostToDevice, stream()));
    return 0;
  });
  SharedBuffer<std::uint32_t> out(kOutWords);
  fill_words(out.data(), kPoison, kOutWords, stream());
  GuardedWorkspace workspace(*workspace_bytes, stream());
  ASSERT_NO_FATAL_FAILURE(call_generic(e, op, input.data(), nullptr, n, out.data(), workspace.data(), where));
  std::uint32_t words[4];
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(words, out.data(), sizeof words, cudaMemcpyDeviceToHost, stream()));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));
  long long index;
  std::memcpy(&index, &words[2], 8);
  EXPECT_EQ(index, static_cast<long long>(winner))
      << where << ": the index (past 2^31: kept in an int, it wraps; the accumulator's index is a long long)";
}

void register_test(const std::string& name, std::function<void()> body) {
  struct OperatorTest : ::testing::Test {
    explicit OperatorTest(std::function<void()> b) : body(std::move(b)) {}
    void TestBody() override { body(); }
    std::function<void()> body;
  };
  ::testing::RegisterTest("Operators", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [body]() -> ::testing::Test* { return new OperatorTest(body); });
}

}  // namespace

void register_operator_tests() {
  constexpr std::size_t kSizes[] = {0, 1, 1000, (std::size_t(1) << 20) + 3};
  for (Element e : kElements) {
    for (Operator op : kOperators) {
      if (!is_asked(e, op)) continue;
      for (std::size_t n : kSizes) {
        const std::size_t offset = n == 1000 ? 1 : 0;
        register_test(fmt::format("{}_{}_n_{}", name_of(op), name_of(e), n), [e, op, n, offset] {
          check_problem(e, op, draw(e, n, 1), draw(e, n, 2), offset, "seeded values");
        });
      }
    }
    register_test(fmt::format("ties_{}", name_of(e)), [e] {
      const std::size_t n = 100003;
      Values v = draw(e, n, 3);
      for (double& x : v) x = std::clamp(x, -1000.0, 1000.0);
      const std::size_t first = splitmix64(seed() + 4) % (n / 2), second = n / 2 + splitmix64(seed() + 5) % (n / 2);
      v[first] = v[second] = 2000.0;  // above every other value (exact in every element type)
      Values u = v;
      u[first] = u[second] = -2000.0;  // below every other value
      check_problem(e, Operator::argmax, v, {}, 0, "the largest value twice");
      check_problem(e, Operator::argmin, u, {}, 0, "the smallest value twice");
    });
    if (e == Element::bf16) {
      register_test(fmt::format("index_past_2_31_{}", name_of(e)), [e] {
        check_index_past_2_31(e, Operator::argmax);
        check_index_past_2_31(e, Operator::argmin);
      });
    }
    if (!is_floating(e)) continue;
    register_test(fmt::format("specials_{}", name_of(e)), [e] {
      const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
      const std::size_t n = 70001;
      Values v = draw(e, n, 6);
      v[n / 3] = inf;
      v[n / 2] = -inf;
      for (Operator op : {Operator::max, Operator::min, Operator::argmax, Operator::argmin}) {
        check_problem(e, op, v, {}, 0, "with +inf and -inf");
      }
      Values with_nan = v;
      with_nan[n / 4] = nan;
      with_nan[3 * n / 4] = nan;
      for (Operator op : {Operator::max, Operator::min, Operator::argmax, Operator::argmin, Operator::sum}) {
        check_problem(e, op, with_nan, {}, 0, "with two NaNs (a NaN wins; the first NaN's index)");
      }
      Values zeros(n, 0.0);
      for (std::size_t i = 0; i < n; i += 3) zeros[i] = -0.0;
      for (Operator op : {Operator::max, Operator::min}) check_problem(e, op, zeros, {}, 0, "+0 and -0 only");
    });
    register_test(fmt::format("large_mean_{}", name_of(e)), [e] {
      // A mean far from zero and a spread of about 1: f16 and bf16 cannot hold such values with any
      // spread left, so they get a mean of 100.
      const double mean = e == Element::f64 ? 1e8 : e == Element::f32 ? 1e4 : 100;
      const std::size_t n = (std::size_t(1) << 20) + 7;
      Values v = draw(e, n, 7);
      for (double& x : v) x = mean + 2 * x;
      check_problem(e, Operator::mean_variance, v, {}, 3, fmt::format("values near {:g}", mean));
    });
  }
}

}  // namespace workbook::judge
