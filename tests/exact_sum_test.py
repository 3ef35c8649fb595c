#!/usr/bin/env python3
"""Checks workbook::exact_sum_rounded (grader/judge/exact_sum.cpp) against an
independent exact reference: Python's Fraction adds the floats exactly, and integer arithmetic
rounds the exact sum to the nearest float32, ties to even (never through float64, which would
round twice). Adversarial cases: cancellation, the whole exponent range, subnormals, partial
sums beyond FLT_MAX, totals that overflow, exact ties, NaN and infinities, signed zeros, n = 0,
and seeded random ones.

usage: exact_sum_test.py <exact_sum_tool>"""
import random
import struct
import subprocess
import sys
from fractions import Fraction

NAN = 0x7FC00000
PINF = 0x7F800000
NINF = 0xFF800000


def bits_of(f):
    return struct.unpack("<I", struct.pack("<f", f))[0]


def value(b):
    """The exact value of float32 bits b (finite)."""
    sign = -1 if b >> 31 else 1
    e = (b >> 23) & 0xFF
    frac = b & 0x7FFFFF
    if e == 0:
        return sign * Fraction(frac, 2**149)
    return sign * Fraction(frac | 0x800000, 2**150) * Fraction(2) ** e


def round_to_float32(q):
    """Bits of the float32 nearest to the rational q (ties to even), by integer arithmetic."""
    if q == 0:
        return 0
    sign = 0x80000000 if q < 0 else 0
    q = abs(q)
    # Find the exponent E with 2^E <= q < 2^(E+1).
    E = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** E > q:
        E -= 1
    # The spacing of floats around q: 2^(E-23) for normal, 2^-149 for subnormal.
    ulp_exp = max(E, -126) - 23
    scaled = q / Fraction(2) ** ulp_exp  # q in units of the spacing
    n = scaled.numerator // scaled.denominator
    rest = scaled - n
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1):
        n += 1
    # Now the value is n * 2^ulp_exp, n < 2^24 + 1.
    if ulp_exp == -149:
        # subnormal or the smallest normal binade: bits are n itself (n <= 2^24)
        bits = n if n < 2**24 else (1 << 23) + (n >> 1)  # n == 2^24 cannot happen here
    else:
        # normal: n in [2^23, 2^24]; biased exponent = ulp_exp + 23 + 127
        biased = ulp_exp + 150
        bits = (biased << 23) + n - (1 << 23)
    if bits >= PINF:
        bits = PINF
    return sign | bits


def reference(case):
    nan = any(((b >> 23) & 0xFF) == 0xFF and (b & 0x7FFFFF) for b in case)
    pinf = PINF in case
    ninf = NINF in case
    if nan or (pinf and ninf):
        return NAN
    if pinf:
        return PINF
    if ninf:
        return NINF
    total = sum((value(b) for b in case), Fraction(0))
    if total == 0:
        return 0x80000000 if case and all(b == 0x80000000 for b in case) else 0
    return round_to_float32(total)


def f(x):
    return bits_of(x)


def cases():
    FLT_MAX = 0x7F7FFFFF
    TINY = 0x00000001  # 2^-149
    out = []
    out.append([])  # n = 0
    out.append([f(1.0)])
    out.append([0x80000000])  # -0.0 alone
    out.append([0x80000000] * 5)
    out.append([0x80000000, 0])  # -0 + +0 = +0
    out.append([f(1.0), f(-1.0)])  # exact zero from nonzero terms: +0
    out.append([f(-1.0), f(1.0), 0x80000000])
    # Heavy cancellation: x, -x, tiny.
    out.append([f(1e30), TINY, f(-1e30)])
    out.append([f(3.0e38), f(1.0), f(-3.0e38), f(2.0**-140)])
    out.append([f(1.0), f(2.0**-24), f(-1.0)])
    out.append([f(16777216.0), f(1.0), f(-16777216.0), f(1.0)])
    # The whole exponent range: 2^-149 .. 2^127 each once, and with both signs.
    out.append([f(2.0**k) for k in range(-149, 128)])
    out.append([f((-1) ** k * 2.0**k) for k in range(-149, 128)])
    out.append([f(2.0**k) for k in range(127, -150, -1)] + [f(-(2.0**127))])
    # Subnormals only.
    out.append([k for k in range(1, 2000, 7)])
    out.append([0x80000000 | k for k in range(1, 300)])
    out.append([0x007FFFFF, 0x007FFFFF])  # two largest subnormals make a normal
    out.append([0x007FFFFF, 0x00000001])  # the smallest normal exactly
    # Near FLT_MAX: partial sums overflow, the total does not.
    out.append([FLT_MAX, FLT_MAX, FLT_MAX, 0x80000000 | FLT_MAX, 0x80000000 | FLT_MAX])
    out.append([FLT_MAX] * 100 + [0x80000000 | FLT_MAX] * 100 + [f(1.5)])
    out.append([FLT_MAX] * 1000 + [0x80000000 | FLT_MAX] * 999)
    # Totals that overflow, and the boundary: FLT_MAX + half an ulp rounds to inf (a tie, FLT_MAX
    # is odd), just below it stays FLT_MAX.
    out.append([FLT_MAX, FLT_MAX])
    out.append([0x80000000 | FLT_MAX, 0x80000000 | FLT_MAX])
    out.append([FLT_MAX, f(2.0**103)])  # + exactly half an ulp of FLT_MAX (ulp = 2^104)
    out.append([FLT_MAX, f(2.0**103), f(-(2.0**-149))])  # just below the tie: FLT_MAX
    out.append([FLT_MAX, f(2.0**102)])
    out.append([0x80000000 | FLT_MAX, f(-(2.0**103))])
    # Ties exactly halfway between two floats: round to even.
    out.append([f(1.0), f(2.0**-24)])  # 1 + half ulp: tie, 1 is even -> 1
    out.append([f(1.0 + 2.0**-23), f(2.0**-24)])  # odd -> rounds up
    out.append([f(1.0), f(2.0**-24), f(2.0**-149)])  # just above the tie -> up
    out.append([f(-1.0), f(-(2.0**-24))])
    out.append([f(16777216.0), f(1.0)])  # 2^24 + 1: tie, even -> 2^24
    out.append([f(16777218.0), f(1.0)])  # 2^24 + 3: tie -> 2^24 + 4
    out.append([f(2.0**-126), 0x00000001])  # normal + one subnormal unit: exact
    out.append([f(2.0**-125), 0x00000001])  # half an ulp at 2^-125: tie -> even
    # NaN and infinity rules.
    out.append([f(1.0), PINF])
    out.append([f(1.0), NINF, f(1e38)])
    out.append([PINF, NINF])
    out.append([f(1.0), 0x7FC00001, PINF])
    out.append([0xFFC00000])
    out.append([0x7F800001, f(2.0)])  # a signalling NaN
    out.append([FLT_MAX, FLT_MAX, NINF])
    # Seeded random ones: mixed magnitudes, and float32 sums of many terms.
    rng = random.Random(15)
    for _ in range(40):
        n = rng.choice([2, 3, 10, 100, 1000])
        case = []
        for _ in range(n):
            kind = rng.random()
            if kind < 0.6:
                case.append(f(rng.uniform(-1, 1) * 2.0 ** rng.randint(-20, 20)))
            elif kind < 0.8:
                case.append(rng.getrandbits(32) & 0xFF7FFFFF)  # any finite pattern (e != 255)
            else:
                case.append(rng.getrandbits(31) & 0x007FFFFF | (rng.getrandbits(1) << 31))
        out.append(case)
    for _ in range(20):  # cancelling pairs and a small remainder, shuffled
        big = [rng.getrandbits(32) & 0xFF7FFFFF for _ in range(50)]
        case = big + [b ^ 0x80000000 for b in big] + [f(rng.uniform(-1, 1))]
        rng.shuffle(case)
        out.append(case)
    return out


def main():
    tool = sys.argv[1]
    all_cases = cases()
    text = "".join(" ".join(f"{b:08x}" for b in c) + "\n" for c in all_cases)
    got = subprocess.run([tool], input=text, capture_output=True, text=True, check=True).stdout.split()
    if len(got) != len(all_cases):
        print(f"the tool answered {len(got)} lines for {len(all_cases)} cases")
        return 1
    bad = 0
    for i, (case, g) in enumerate(zip(all_cases, got)):
        want = reference(case)
        if int(g, 16) != want:
            bad += 1
            shown = " ".join(f"{b:08x}" for b in case[:8]) + (" ..." if len(case) > 8 else "")
            print(f"case {i} (n = {len(case)}: {shown}): exact_sum_rounded gave {g}, the exact reference {want:08x}")
    print(f"{len(all_cases) - bad} of {len(all_cases)} cases correctly rounded")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
