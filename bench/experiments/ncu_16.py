#!/usr/bin/env python3
"""Chapter 16's Nsight Compute figures, from the profiles bench/experiments/ncu_16.sh takes.

Reads <dir>/<op>_<log2>_raw.csv and <dir>/<op>_<log2>_details.csv (`ncu -i ... --csv --page raw`
and `--page details` of one launch of the reference's reduce_any_kernel) for every operator and
size found there, and prints book/results/experiments/ncu_16_any_operator.csv:

  type,op,log2_n,metric,value,unit

  python3 bench/experiments/ncu_16.py <dir> > book/results/experiments/ncu_16_any_operator.csv

Percentages of a pipe are of its peak over the kernel's elapsed cycles (Nsight Compute's "Pipe
Utilization (% of peak instructions executed over elapsed cycles)", the basis of its
"highest-utilized pipeline" rule), except the *_active_percent rows, which are over the cycles
the SMs had work. Stall rows are the cycles a warp spent in that state per instruction issued
(the main parts of warp_cycles_per_issued_instruction). The fp64_/fp32_ rows are from ncu's
FPInstructions rule (fused and non-fused instructions of that precision). Per-element rows count a warp instruction
as 32 thread instructions, one per lane: n = 2^log2_n elements.
"""
import csv
import pathlib
import re
import sys

OPS = ("sum", "argmax", "meanvar")
TYPES = {"__nv_bfloat16": "bfloat16", "__half": "half", "float": "float", "double": "double",
         "int": "int32", "long long": "int64"}
# Pipes of the elapsed-cycles table, by their name in the metrics and as ncu prints them.
PIPES = {"alu": "ALU", "fma": "FMA", "fp64": "FP64", "xu": "XU", "lsu": "LSU", "adu": "ADU", "cbu": "CBU",
         "uniform": "Uniform", "tex": "TEX", "fma_type_fp16": "FMA (FP16)", "tensor_op_dmma": "Tensor (DP)",
         "tensor_op_gmma": "Tensor (Warp Group)", "tensor_op_hmma": "Tensor (FP)", "tensor_op_imma": "Tensor (INT)",
         "tma": "TMA"}
STALLS = ("long_scoreboard", "math_pipe_throttle", "not_selected", "dispatch_stall", "wait", "barrier")


def number(text):
    text = text.strip().replace(",", "")
    return float(text) if re.fullmatch(r"-?\d+(\.\d*)?([eE][-+]?\d+)?", text) else None


def read_raw(path):
    """{metric: (unit, value)} of the first launch in an `ncu --csv --page raw` file."""
    rows = list(csv.reader(path.read_text().splitlines()))
    header = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    names, units, values = rows[header], rows[header + 1], rows[header + 2]
    return {n: (u, v) for n, u, v in zip(names, units, values)}


def read_details(path):
    """{(section, metric): (unit, value)} and the rules' descriptions of an `ncu --csv --page details` file."""
    lines = path.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.DictReader(lines[header:]))
    first = rows[0]["ID"]
    metrics, rules = {}, []
    for r in rows:
        if r["ID"] != first:
            continue
        if r["Metric Name"]:
            metrics.setdefault((r["Section Name"], r["Metric Name"]), (r["Metric Unit"], r["Metric Value"]))
        if r.get("Rule Description"):
            rules.append(r["Rule Description"])
    return metrics, rules, rows[0]["Kernel Name"]


def profile(folder, op, log2):
    raw = read_raw(folder / f"{op}_{log2}_raw.csv")
    details, rules, kernel = read_details(folder / f"{op}_{log2}_details.csv")
    n = 2 ** log2
    m = re.search(r"reduce_any_kernel<([^,]+),", kernel)
    type_name = TYPES.get(m[1].strip() if m else "", m[1].strip() if m else "?")

    def r(name):
        unit, value = raw[name]
        v = number(value)
        if v is None:
            sys.exit(f"{folder}/{op}_{log2}_raw.csv: {name} = {value!r}, not a number")
        return unit, v

    def d(section, name):
        unit, value = details[(section, name)]
        v = number(value)
        if v is None:
            sys.exit(f"{folder}/{op}_{log2}_details.csv: {section}/{name} = {value!r}, not a number")
        return v

    def mhz(unit, value):  # a frequency in Hz, kHz, MHz or GHz, in MHz
        return value * {"hz": 1e-6, "khz": 1e-3, "mhz": 1.0, "ghz": 1e3}[unit.lower()]

    out = []

    def row(metric, value, unit):
        out.append((type_name, op, log2, metric, value, unit))

    unit, duration = r("gpu__time_duration.sum")
    row("duration_ns", duration * {"ns": 1, "us": 1e3, "ms": 1e6, "usecond": 1e3, "nsecond": 1}[unit], "ns")
    row("dram_percent", d("GPU Speed Of Light Throughput", "DRAM Throughput"), "%")
    row("sm_throughput_percent", d("GPU Speed Of Light Throughput", "Compute (SM) Throughput"), "%")
    row("issue_slots_busy_percent", d("Compute Workload Analysis", "Issue Slots Busy"), "%")
    row("warp_cycles_per_issued_instruction", d("Warp State Statistics", "Warp Cycles Per Issued Instruction"), "cycle")
    row("registers_per_thread", d("Launch Statistics", "Registers Per Thread"), "register/thread")
    row("theoretical_occupancy_percent", d("Occupancy", "Theoretical Occupancy"), "%")
    row("achieved_occupancy_percent", d("Occupancy", "Achieved Occupancy"), "%")
    pipes = {}
    for key, label in PIPES.items():
        name = f"sm__inst_executed_pipe_{key}.avg.pct_of_peak_sustained_elapsed"
        if name in raw and number(raw[name][1]) is not None:
            pipes[label] = r(name)[1]
    busiest = max(pipes, key=pipes.get)
    row("busiest_pipe_percent", pipes[busiest], busiest)
    for key in ("fp64", "xu", "alu"):
        row(f"{key}_pipe_percent", pipes[PIPES[key]], "%")
        row(f"{key}_pipe_active_percent", r(f"sm__inst_executed_pipe_{key}.avg.pct_of_peak_sustained_active")[1], "%")
    for stall in STALLS:
        row(f"stall_{stall}_cycles", r(f"smsp__average_warps_issue_stalled_{stall}_per_issue_active.ratio")[1], "cycle")
    unit, hz = r("sm__cycles_elapsed.avg.per_second")
    row("sm_clock_mhz", mhz(unit, hz), "MHz")
    unit, hz = r("dram__cycles_elapsed.avg.per_second")
    row("dram_clock_mhz", mhz(unit, hz), "MHz")
    instructions = r("smsp__inst_executed.sum")[1]
    row("instructions_per_element", instructions * 32 / n, "instruction/element")
    # ncu's FPInstructions rule: "This kernel executes F fused and N non-fused FP64 instructions."
    for text in rules:
        m = re.search(r"executes (\d+) fused and (\d+) non-fused (FP\d+) instructions", text)
        if m and int(m[1]) + int(m[2]) > 0:
            fused, plain, precision = int(m[1]), int(m[2]), m[3].lower()
            row(f"{precision}_fused_per_element", fused * 32 / n, "instruction/element")
            row(f"{precision}_non_fused_per_element", plain * 32 / n, "instruction/element")
            row(f"{precision}_share_of_instructions_percent", 100 * (fused + plain) / instructions, "%")
    return out


def fmt(value):
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.4g}" if abs(value) < 10 else f"{value:.2f}".rstrip("0").rstrip(".")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ncu_16.py <folder of ncu_16.sh's output>")
    folder = pathlib.Path(sys.argv[1])
    found = sorted({(op, int(m[1])) for op in OPS for p in folder.glob(f"{op}_*_raw.csv")
                    if (m := re.fullmatch(rf"{op}_(\d+)_raw\.csv", p.name))},
                   key=lambda k: (k[1], OPS.index(k[0])))
    if not found:
        sys.exit(f"{folder}: no <op>_<log2>_raw.csv (op: {', '.join(OPS)})")
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["type", "op", "log2_n", "metric", "value", "unit"])
    for op, log2 in found:
        for type_name, op_, log2_, metric, value, unit in profile(folder, op, log2):
            writer.writerow([type_name, op_, log2_, metric, fmt(value), unit])


if __name__ == "__main__":
    main()
