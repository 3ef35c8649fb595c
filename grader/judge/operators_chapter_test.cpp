// The tests of the generic chapter (WORKBOOK_GENERIC_REDUCE: contract.hpp, Problem): every element
// type with every operator it is asked, each result checked against the host's, computed with the
// same operator objects (workbook/operators.cuh) in long double where that matters.
//
// - Operators.<op>_<element>_n_<n>: seeded inputs of n elements (one of them misaligned by an
//   element), the input unchanged after the call, nothing written past the result, reads outside
//   the input caught by a slack that changes every operator's answer.
// - Operators.ties_<element>: argmax and argmin of inputs whose winner appears twice, everywhere, or
//   in every element from a seeded index on: the first.
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
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "batched_tests.hpp"
#include "chapter_env.hpp"
#include "judge/device.hpp"
#include "judge/inputs.hpp"
#include "runner/remote.hpp"
#include "runner/shared_memory.hpp"
#include "trial.hpp"
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

//! The slack of elements around every input, and the bytes an input of n elements of type e
//! takes with its slacks, `offset` elements past the start.
constexpr std::size_t kSlack = 1024;
std::size_t input_bytes(Element e, std::size_t n, std::size_t offset) {
  return (2 * kSlack + offset + n) * element_bytes(e);
}

//! Writes an input of `values` as elements of type e to `dst` (input_bytes): `offset` elements past
//! its start, between slacks of kSlack elements of `slack`. Its data starts (kSlack + offset)
//! elements in: where dst lies on a 256-byte boundary, `offset` elements past one.
void write_input(Element e, const Values& values, std::size_t offset, double slack, unsigned char* dst) {
  const std::size_t bytes = element_bytes(e), count = 2 * kSlack + offset + values.size();
  with_type(e, [&](auto zero) {
    using T = decltype(zero);
    const T filler = narrow<T>(slack);
    for (std::size_t i = 0; i < count; ++i) {
      const bool inside = i >= kSlack + offset && i < kSlack + offset + values.size();
      const T x = inside ? narrow<T>(values[i - kSlack - offset]) : filler;
      std::memcpy(dst + i * bytes, &x, bytes);
    }
    return 0;
  });
}

//! One input of n elements of type e in a shared buffer of its own, `offset` elements past a
//! 256-byte boundary, between slacks of kSlack elements of `slack`.
class TypedInput {
 public:
  TypedInput(Element e, const Values& values, std::size_t offset, double slack)
      : offset_(offset), bytes_(element_bytes(e)), buffer_(input_bytes(e, values.size(), offset)) {
    std::vector<unsigned char> host(buffer_.size());
    write_input(e, values, offset, slack, host.data());
    // From pageable memory: returns once `host` is staged, so it may go; the call is ordered after
    // the copy by run_calls_after_stream.
    WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(buffer_.data(), host.data(), host.size(), cudaMemcpyHostToDevice, stream()));
  }
  const void* data() const { return buffer_.data() + (kSlack + offset_) * bytes_; }
  int fingerprint(Scans& scans) const { return scans.fingerprint(buffer_.data(), buffer_.size() / 4); }

 private:
  std::size_t offset_, bytes_;
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

//! One problem a test poses: `op` over `values` (and `second`, for dot) as elements of type e, the
//! input `offset` elements past a 256-byte boundary; `what` names it in failures.
struct Case {
  Element e = Element::f32;
  Operator op = Operator::sum;
  Values values, second;
  std::size_t offset = 0;
  std::string what;
};

//! A case as the judge checks it: its values rounded to the element type (what the kernel sees),
//! what the host expects of them, and the words that name it in failures.
struct Posed {
  Element e = Element::f32;
  Operator op = Operator::sum;
  std::size_t n = 0, offset = 0;
  Values v, w;
  Expected x;
  std::string where;
};

Posed pose(const Case& c) {
  Posed p;
  p.e = c.e;
  p.op = c.op;
  p.offset = c.offset;
  p.v = rounded(c.e, c.values);
  p.w = rounded(c.e, c.second);
  p.n = p.v.size();
  p.where = fmt::format("[{}] {} of {} {} elements{}, {}, seed {}", subject_name(), name_of(c.op), p.n, name_of(c.e),
                        c.offset ? fmt::format(" (offset by {})", c.offset) : "", c.what, seed());
  p.x = with_type(c.e, [&](auto zero) { return expect_fold<Widened<decltype(zero)>>(c.op, p.v, p.w); });
  return p;
}

//! One generic call: `op` over n elements of type e at `a` (and `b`, for dot), the result to `out`.
Call generic_call(Element e, Operator op, const void* a, const void* b, std::size_t n, std::uint32_t* out,
                  void* workspace) {
  Call c;
  c.kind = remote::CallKind::generic;
  c.element = e;
  c.op = op;
  c.in = static_cast<const float*>(a);
  c.in2 = b;
  c.n = n;
  c.out = reinterpret_cast<float*>(out);
  c.workspace = workspace;
  return c;
}

//! The call through the runner; a fatal failure, naming `where`, if it could not run.
void call_generic(const Call& c, const std::string& where) {
  const Outcome o = run_calls_after_stream({c});
  ASSERT_TRUE(o.error.empty()) << where << ": " << o.error;
  ASSERT_EQ(o.results.size(), 1u) << where;
  ASSERT_TRUE(o.results[0].launch_error.empty()) << where << ": " << o.results[0].launch_error;
}

//! Checks what a call of `p` left: the result's kOutWords words (poisoned before the call), the
//! input's fingerprints before and after it, and what the workspace's guards say ("" if intact).
void judge(const Posed& p, const std::uint32_t* words, std::uint64_t input_before, std::uint64_t input_after,
           const std::string& overrun) {
  const std::string& where = p.where;
  const Element e = p.e;
  const Operator op = p.op;
  EXPECT_EQ(input_after, input_before) << where << ": the input changed";
  EXPECT_EQ(overrun, "") << where;
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
  const Expected& x = p.x;
  if (op == Operator::mean_variance) {
    Moments m;
    std::memcpy(&m, words, sizeof m);
    EXPECT_EQ(m.count, static_cast<double>(p.n)) << where << ": the count";
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
  const double bound = (static_cast<double>(p.n) + 2) * unit * x.magnitude;
  EXPECT_LE(std::fabs(got - x.value), bound)
      << where << ": " << show(got) << ", expected " << show(x.value) << " within " << show(bound);
}

//! The workspace for n elements the chapter asks for; a fatal failure, naming `where`, if it
//! cannot say or asks for more than the contract allows.
void workspace_for(std::size_t n, const std::string& where, std::size_t* bytes) {
  std::string why;
  const std::optional<std::size_t> asked = subject().workspace_bytes(n, &why);
  ASSERT_TRUE(asked.has_value()) << where << ": workspace_bytes: " << why;
  ASSERT_LE(*asked, max_workspace_bytes(n)) << where;
  *bytes = *asked;
}

//! Runs a case alone: its inputs, result and workspace of its own, one call, then every check.
void check_problem(const Case& c) {
  const Posed p = pose(c);
  const double slack = slack_value(p.e, p.op);
  TypedInput a(p.e, p.v, p.offset, slack);
  std::unique_ptr<TypedInput> b;
  if (p.op == Operator::dot) b = std::make_unique<TypedInput>(p.e, p.w, p.offset, slack);
  SharedBuffer<std::uint32_t> out(kOutWords);
  fill_words(out.data(), kPoison, kOutWords, stream());
  std::size_t bytes = 0;
  ASSERT_NO_FATAL_FAILURE(workspace_for(p.n, p.where, &bytes));
  GuardedWorkspace workspace(bytes, stream());
  // The scans before and after the call are enqueued and read with the result in one wait: beside
  // other processes each wait for the GPU costs a time slice.
  Scans before(stream());
  const int input_before = a.fingerprint(before);
  before.fetch();
  ASSERT_NO_FATAL_FAILURE(call_generic(
      generic_call(p.e, p.op, a.data(), b ? b->data() : nullptr, p.n, out.data(), workspace.data()), p.where));
  Scans after(stream());
  const int input_after = a.fingerprint(after);
  const int guards = workspace.scan_guards(after);
  after.fetch();
  std::vector<std::uint32_t> words(kOutWords);
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(words.data(), out.data(), kOutWords * 4, cudaMemcpyDeviceToHost, stream()));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));  // the result, and both scans
  judge(p, words.data(), before.value(input_before), after.value(input_after),
        workspace.explain_overrun(after, guards));
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
  ASSERT_NO_FATAL_FAILURE(
      call_generic(generic_call(e, op, input.data(), nullptr, n, out.data(), workspace.data()), where));
  std::uint32_t words[4];
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(words, out.data(), sizeof words, cudaMemcpyDeviceToHost, stream()));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));
  long long index;
  std::memcpy(&index, &words[2], 8);
  EXPECT_EQ(index, static_cast<long long>(winner))
      << where << ": the index (past 2^31: kept in an int, it wraps; the accumulator's index is a long long)";
}

//! A test of cases: its full name, and the cases it poses (drawn from the seed, the same each time).
struct CaseTest {
  std::string name;
  std::function<std::vector<Case>()> cases;
};

//! The tests of cases, each of which may take its pass from the batch (every Operators test but the
//! index past 2^31, whose 4 GiB input is a test of its own).
std::vector<CaseTest>& case_tests() {
  static std::vector<CaseTest> tests;
  return tests;
}

std::size_t round_up(std::size_t x, std::size_t to) { return (x + to - 1) / to * to; }

//! The cases of the tests `selected` (indices into case_tests()) in one batch: their inputs in one
//! shared buffer (each between its slacks, at the alignment it has alone) copied in one upload,
//! their results in one, a workspace for each n that all its calls share (as one trial's calls do,
//! in the contract: the chapter leaves it zero), one request, every check read with one wait and
//! made as the tests make them. True when every case passed every check.
bool run_cases_together(const std::vector<std::size_t>& selected) {
  const auto started = std::chrono::steady_clock::now();
  struct Placed {
    Posed p;
    std::size_t a = 0, b = 0;  // where its inputs' data start in the shared buffer, in bytes
  };
  std::vector<Placed> cases;
  std::vector<unsigned char> image;  // the shared buffer's bytes, made here
  const auto place = [&](Element e, const Values& v, std::size_t offset, double slack) {
    const std::size_t at = round_up(image.size(), 256);
    image.resize(at + input_bytes(e, v.size(), offset));
    write_input(e, v, offset, slack, image.data() + at);
    return at + (kSlack + offset) * element_bytes(e);
  };
  for (std::size_t t : selected) {
    for (const Case& c : case_tests()[t].cases()) {
      Placed x{pose(c)};
      const double slack = slack_value(c.e, c.op);
      x.a = place(c.e, x.p.v, c.offset, slack);
      if (c.op == Operator::dot) x.b = place(c.e, x.p.w, c.offset, slack);
      x.p.v = Values{};  // on the device now; the expectation is made
      x.p.w = Values{};
      cases.push_back(std::move(x));
    }
  }
  image.resize(round_up(image.size(), 256));
  SharedBuffer<unsigned char> inputs(image.size());
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(inputs.data(), image.data(), image.size(), cudaMemcpyHostToDevice, stream()));
  SharedBuffer<std::uint32_t> outs(kOutWords * cases.size());
  fill_words(outs.data(), kPoison, outs.size(), stream());
  std::map<std::size_t, std::unique_ptr<GuardedWorkspace>> workspaces;  // by n
  for (const Placed& x : cases) {
    if (workspaces.count(x.p.n)) continue;
    std::string why;
    const std::optional<std::size_t> bytes = subject().workspace_bytes(x.p.n, &why);
    if (!bytes || *bytes > max_workspace_bytes(x.p.n)) return false;  // the test alone says why
    workspaces[x.p.n] = std::make_unique<GuardedWorkspace>(*bytes, stream());
  }
  Scans before(stream());
  const int input_before = before.fingerprint(inputs.data(), inputs.size() / 4);
  before.fetch();
  std::vector<Call> calls;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const Placed& x = cases[i];
    calls.push_back(generic_call(x.p.e, x.p.op, inputs.data() + x.a, x.b ? inputs.data() + x.b : nullptr, x.p.n,
                                 outs.data() + i * kOutWords, workspaces[x.p.n]->data()));
  }
  BatchResult r;
  r.outcome = run_batch_after_stream(calls);
  const bool ran = batch_ran(r, "Operators");
  count_batch(calls.size(), std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  if (!ran) return false;
  for (const remote::CallResult& result : r.outcome.results)
    if (!result.launch_error.empty()) return false;
  // The scans after the calls: the inputs' fingerprint and two guard bands a workspace, each Scans
  // holding kMaxSlots of them; all read with the results in one wait.
  std::vector<std::unique_ptr<Scans>> after;
  int used = 0;  // slots of after.back()
  const auto scans = [&](int slots) -> Scans& {
    if (after.empty() || used + slots > Scans::kMaxSlots) {
      after.push_back(std::make_unique<Scans>(stream()));
      used = 0;
    }
    used += slots;
    return *after.back();
  };
  Scans& fingerprint = scans(1);
  const int input_after = fingerprint.fingerprint(inputs.data(), inputs.size() / 4);
  std::map<std::size_t, std::pair<Scans*, int>> guards;  // by n
  for (const auto& [n, workspace] : workspaces) {
    Scans& s = scans(2);
    guards[n] = {&s, workspace->scan_guards(s)};
  }
  for (const auto& s : after) s->fetch();
  std::vector<std::uint32_t> words(outs.size());
  WORKBOOK_CUDA_CHECK(cudaMemcpyAsync(words.data(), outs.data(), words.size() * 4, cudaMemcpyDeviceToHost, stream()));
  WORKBOOK_CUDA_CHECK(cudaStreamSynchronize(stream()));  // the results, and every scan
  std::map<std::size_t, std::string> overruns;
  for (const auto& [n, workspace] : workspaces)
    overruns[n] = workspace->explain_overrun(*guards[n].first, guards[n].second);
  // The same checks as alone, their failures kept here: a case that fails is made again alone, by
  // its test, where its failure is the test's.
  const std::uint64_t inputs_before = before.value(input_before), inputs_after = fingerprint.value(input_after);
  ::testing::TestPartResultArray failures;
  std::size_t passed = 0;
  {
    const ::testing::ScopedFakeTestPartResultReporter quiet(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const int before_case = failures.size();
      judge(cases[i].p, words.data() + i * kOutWords, inputs_before, inputs_after, overruns[cases[i].p.n]);
      passed += failures.size() == before_case;
    }
  }
  if (passed == cases.size()) return true;
  fmt::print("[batch] {} of the {} Operators calls passed every check; every test makes its calls alone\n", passed,
             cases.size());
  return false;
}

BatchedTests& batched_case_tests() {
  static BatchedTests group = [] {
    std::vector<std::string> names;
    for (const CaseTest& t : case_tests()) names.push_back(t.name);
    return BatchedTests("Operators", names, run_cases_together);
  }();
  return group;
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

//! A test of the cases `cases` poses: passed in the batch, or each case checked alone.
void register_cases(const std::string& name, std::function<std::vector<Case>()> cases) {
  case_tests().push_back({"Operators." + name, cases});
  register_test(name, [cases] {
    if (batched_case_tests().passed()) return;
    for (const Case& c : cases()) check_problem(c);
  });
}

}  // namespace

void register_operator_tests() {
  constexpr std::size_t kSizes[] = {0, 1, 1000, (std::size_t(1) << 20) + 3};
  for (Element e : kElements) {
    for (Operator op : kOperators) {
      if (!is_asked(e, op)) continue;
      for (std::size_t n : kSizes) {
        const std::size_t offset = n == 1000 ? 1 : 0;
        register_cases(fmt::format("{}_{}_n_{}", name_of(op), name_of(e), n), [e, op, n, offset] {
          return std::vector<Case>{
              {e, op, draw(e, n, 1), op == Operator::dot ? draw(e, n, 2) : Values{}, offset, "seeded values"}};
        });
      }
    }
    register_cases(fmt::format("ties_{}", name_of(e)), [e] {
      const std::size_t n = 100003;
      Values v = draw(e, n, 3);
      for (double& x : v) x = std::clamp(x, -1000.0, 1000.0);
      const std::size_t first = splitmix64(seed() + 4) % (n / 2), second = n / 2 + splitmix64(seed() + 5) % (n / 2);
      v[first] = v[second] = 2000.0;  // above every other value (exact in every element type)
      Values u = v;
      u[first] = u[second] = -2000.0;  // below every other value
      // Ties among one thread's own elements, whatever the kernel's layout: every element equal (the
      // winner is element 0), and the winner in every element from a seeded index on (that one).
      // A thread that takes an equal value it meets later (>= for >) answers with a later index.
      const Values flat(n, 7.0);
      const std::size_t from = splitmix64(seed() + 9) % n;
      Values rise = draw(e, n, 10), fall = rise;
      for (std::size_t i = 0; i < n; ++i) {
        rise[i] = i < from ? std::clamp(rise[i], -1000.0, 1000.0) : 2000.0;
        fall[i] = i < from ? rise[i] : -2000.0;
      }
      return std::vector<Case>{
          {e, Operator::argmax, v, {}, 0, "the largest value twice"},
          {e, Operator::argmin, u, {}, 0, "the smallest value twice"},
          {e, Operator::argmax, flat, {}, 0, "every element equal (the first wins)"},
          {e, Operator::argmin, flat, {}, 0, "every element equal (the first wins)"},
          {e, Operator::argmax, rise, {}, 0, fmt::format("the largest value in every element from {} on", from)},
          {e, Operator::argmin, fall, {}, 0, fmt::format("the smallest value in every element from {} on", from)}};
    });
    if (e == Element::bf16) {
      register_test(fmt::format("index_past_2_31_{}", name_of(e)), [e] {
        check_index_past_2_31(e, Operator::argmax);
        check_index_past_2_31(e, Operator::argmin);
      });
    }
    if (!is_floating(e)) continue;
    register_cases(fmt::format("specials_{}", name_of(e)), [e] {
      const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
      const std::size_t n = 70001;
      std::vector<Case> cases;
      Values v = draw(e, n, 6);
      v[n / 3] = inf;
      v[n / 2] = -inf;
      for (Operator op : {Operator::max, Operator::min, Operator::argmax, Operator::argmin}) {
        cases.push_back({e, op, v, {}, 0, "with +inf and -inf"});
      }
      Values with_nan = v;
      with_nan[n / 4] = nan;
      with_nan[3 * n / 4] = nan;
      for (Operator op : {Operator::max, Operator::min, Operator::argmax, Operator::argmin, Operator::sum}) {
        cases.push_back({e, op, with_nan, {}, 0, "with two NaNs (a NaN wins; the first NaN's index)"});
      }
      Values zeros(n, 0.0);
      for (std::size_t i = 0; i < n; i += 3) zeros[i] = -0.0;
      for (Operator op : {Operator::max, Operator::min}) cases.push_back({e, op, zeros, {}, 0, "+0 and -0 only"});
      return cases;
    });
    register_cases(fmt::format("large_mean_{}", name_of(e)), [e] {
      // A mean far from zero and a spread of about 1: f16 and bf16 cannot hold such values with any
      // spread left, so they get a mean of 100.
      const double mean = e == Element::f64 ? 1e8 : e == Element::f32 ? 1e4 : 100;
      const std::size_t n = (std::size_t(1) << 20) + 7;
      Values v = draw(e, n, 7);
      for (double& x : v) x = mean + 2 * x;
      return std::vector<Case>{{e, Operator::mean_variance, v, {}, 3, fmt::format("values near {:g}", mean)}};
    });
  }
}

}  // namespace workbook::judge
