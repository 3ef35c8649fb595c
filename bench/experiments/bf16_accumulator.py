"""A bf16 accumulator against the any-order bound of chapter 16's Operators tests, on the host.

The tests' random inputs (integers in [-1000, 1000], rounded to the element type) are summed as a
kernel with a bf16 accumulator would: each thread folds `leaf` elements in turn, then a tree of
pairs, every step rounded to bf16 (round to nearest even). The error is printed next to the bound
the tests hold a floating-point sum to, (n + 2) * 2^-24 * sum|x|, at the two sizes of the Operators
tests that take random values: 1000 and 2^20 + 3 elements. Needs numpy.

    python3 bench/experiments/bf16_accumulator.py
"""
import numpy as np
rng = np.random.default_rng(1)
def bf16(x):
    x = np.asarray(x, dtype=np.float32)
    b = x.view(np.uint32).astype(np.uint64)
    lsb = (b >> 16) & 1
    b = (b + 0x7FFF + lsb) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)
def tree_bf16(v, leaf):
    # each thread folds `leaf` elements serially in bf16, then a pairwise tree in bf16
    n = len(v); pad = (-n) % leaf
    v = np.concatenate([v, np.zeros(pad, np.float32)]).reshape(-1, leaf)
    acc = np.zeros(v.shape[0], np.float32)
    for j in range(leaf): acc = bf16(acc + v[:, j])
    while len(acc) > 1:
        if len(acc) % 2: acc = np.append(acc, np.float32(0))
        acc = bf16(acc[0::2] + acc[1::2])
    return float(acc[0])
for n in (1000, (1 << 20) + 3):
    v = bf16(rng.integers(-1000, 1001, n).astype(np.float32))
    exact = float(np.sum(v.astype(np.float64))); mag = float(np.sum(np.abs(v.astype(np.float64))))
    bound = (n + 2) * 2.0**-24 * mag
    for leaf in (1, 8, 64):
        got = tree_bf16(v, leaf)
        print(f"n={n} leaf={leaf}: error {abs(got-exact):.4g} = {abs(got-exact)/mag:.3g} of sum|x|; bound {bound:.4g} = {bound/mag:.3g} of sum|x|; caught={abs(got-exact)>bound}")
