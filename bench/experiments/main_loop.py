#!/usr/bin/env python3
"""The size of chapter 16's main loop, per (type, operator), from `cuobjdump -sass` of the reference.

The main loop is the smallest loop (a backward branch and the code from its target) that issues
the thread's 16-byte loads in flight: 4 for one input, 8 for dot's two. Prints CSV:
type,op,instructions,elements (elements one trip of the loop folds into a thread).

  cuobjdump -sass 16_any_operator.o | bench/experiments/main_loop.py > main_loop.csv
"""
import re
import sys

LOADS_IN_FLIGHT = 4  # solutions/16_any_operator/kernel.cu's kLoadsInFlight
TYPES = {"f": ("float", 4), "d": ("double", 8), "i": ("int32", 4), "x": ("int64", 8),
         "6__half": ("half", 2), "13__nv_bfloat16": ("bfloat16", 2)}


def operator(name):
    """The operator of an instance, from its fold's mangled name."""
    greater = "Lb1E" in name
    if "MomentsFold" in name:
        return "meanvar"
    if "DotFold" in name:
        return "dot"
    if "ArgFold" in name or "ArgExtreme" in name:  # ArgFold<T, ArgExtreme<..>> or ArgExtremeFold
        return "argmax" if greater else "argmin"
    if "Extreme" in name:  # Fold<T, Extreme<..>> or ExtremeFold
        return "max" if greater else "min"
    if "3Sum" in name:
        return "sum"
    return None


def main_loop(instructions, loads):
    """The instruction count of the smallest backward-branch loop holding `loads` 16-byte loads."""
    at = {offset: k for k, (offset, _) in enumerate(instructions)}
    best = None
    for k, (offset, text) in enumerate(instructions):
        m = re.search(r"\bBRA\s+(?:`\(\.L_x_\d+\)\s*)?(0x[0-9a-f]+)", text)
        if not m or int(m[1], 16) >= offset or int(m[1], 16) not in at:
            continue
        body = instructions[at[int(m[1], 16)]:k + 1]
        if sum("LDG.E.128" in t for _, t in body) == loads and (best is None or len(body) < best):
            best = len(body)
    return best


def main():
    print("type,op,instructions,elements")
    for function in re.split(r"\n\s*Function : ", sys.stdin.read())[1:]:
        name = function.split("\n", 1)[0]
        m = re.search(r"reduce_any_kernelI(\d+__\w+?|[a-z])N", name)
        op = operator(name)
        if not m or m[1] not in TYPES or op is None:
            continue
        type_name, size = TYPES[m[1]]
        instructions = [(int(a, 16), t) for a, t in re.findall(r"/\*([0-9a-f]{4,})\*/\s+([^;]*);", function)]
        count = main_loop(instructions, LOADS_IN_FLIGHT * (2 if op == "dot" else 1))
        if count is not None:
            print(f"{type_name},{op},{count},{LOADS_IN_FLIGHT * 16 // size}")


if __name__ == "__main__":
    main()
