#!/usr/bin/env python3
"""Chapter 16's figure of catastrophic cancellation, on the host (no GPU): the variance of
2^20 + 7 float values near 1e4 with a spread of about 1 (the test Operators.large_mean_f32's
shape: 1e4 + 2u, u uniform in [-0.5, 1)), computed four ways, each operation rounded as its type
rounds it:
  naive_float   E[x^2] - E[x]^2 with float accumulators, added in index order
  naive_double  the same with double accumulators
  chan_float    per-chunk (n, mean, M2) in float, 1024 chunks merged with Chan's update in float
  exact         math.fsum of the deviations from the fsum mean, in double (the reference)
Writes CSV: method,variance,relative_error.
  python3 bench/experiments/naive_variance.py > book/results/experiments/naive_variance.csv"""
import math
import random
import struct


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def main():
    n = (1 << 20) + 7
    rng = random.Random(16)
    xs = [f32(1e4 + 2 * (rng.random() * 1.5 - 0.5)) for _ in range(n)]

    mean = math.fsum(xs) / n
    exact = math.fsum((x - mean) ** 2 for x in xs) / n

    s1 = s2 = 0.0
    for x in xs:
        s1 = f32(s1 + x)
        s2 = f32(s2 + f32(x * x))
    m = f32(s1 / n)
    naive_float = f32(f32(s2 / n) - f32(m * m))

    d1 = d2 = 0.0
    for x in xs:
        d1 += x
        d2 += x * x
    naive_double = d2 / n - (d1 / n) ** 2

    # Chan: 1024 chunks, each with Welford's update in float, merged pairwise in float.
    chunks = 1024
    size = (n + chunks - 1) // chunks
    parts = []
    for c in range(chunks):
        count, mu, m2 = 0.0, 0.0, 0.0
        for x in xs[c * size:(c + 1) * size]:
            count += 1
            delta = f32(x - mu)
            mu = f32(mu + f32(delta / count))
            m2 = f32(m2 + f32(delta * f32(x - mu)))
        parts.append((count, mu, m2))
    while len(parts) > 1:
        merged = []
        for (na, ma, qa), (nb, mb, qb) in zip(parts[0::2], parts[1::2]):
            count = na + nb
            delta = f32(mb - ma)
            merged.append((count, f32(ma + f32(delta * f32(nb / count))),
                           f32(f32(qa + qb) + f32(f32(delta * delta) * f32(na * nb / count)))))
        parts = merged
    chan_float = f32(parts[0][2] / parts[0][0])

    print("method,variance,relative_error")
    for method, v in (("exact", exact), ("naive_double", naive_double), ("naive_float", naive_float),
                      ("chan_float", chan_float)):
        print(f"{method},{v:.9g},{abs(v - exact) / exact:.3g}")


if __name__ == "__main__":
    main()
