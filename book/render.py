#!/usr/bin/env python3
"""Prepares the book's pages for Doxygen.

Replaces the measurement tokens in each chapter's lesson.md with figures from
the committed results (book/results/*.csv), writes the results page with its
tables and plots, and the main page with the lessons in chapter order. An
unknown token is an error: no number in the book is typed by hand.

  render.py --source <repo> --out <dir> [--edition student|instructor]
  render.py --update-sources <repo>

The lessons and the main page carry each figure written out, so that they read well as
Markdown (on the repository page, in an editor), with a hidden marker naming where it
comes from:

  reaches <!--@@ladder:ceiling:gbps@@-->4313<!--@@end@@--> GB/s

A token that renders to several lines (an ncu table, the list of lessons) has its markers
on lines of their own, with a blank line either side of the block between them. Code the
lessons quote from a stub is written in the same way, as a fenced block:
<!--@@snippet:chapters/13_clusters/kernel.cu:cluster_size@@--> names the lines between the
two `//! [cluster_size]` lines of that file (Doxygen's snippet markers; a stub's or a given header's).
An experiment's figure names its CSV, its rows and its column:
<!--@@exp:host_cost:strategy=11_last_block,n=4194304:host_us_per_call:.2f@@--> (experiment_value). A bare
@@token@@ is still read, but --update-sources writes it in the marked form, and rewrites
every marked value from the current results (running it twice changes nothing). Building
the book replaces each marked or bare token with its value, markers and all.
"""
import argparse
import csv
import json
import math
import pathlib
import re
import sys
import textwrap

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "grader"))
import manifest  # noqa: E402  grader/manifest.py: the one reader of the manifest



TOKEN = re.compile(r"@@([^@\s]+)@@")
# A written figure: <!--@@name@@-->value<!--@@end@@-->, or a bare @@name@@ (not part of a
# marker). Group 1/2: a marker's name and the value written in it; group 3: a bare token.
END = "<!--@@end@@-->"
WRITTEN = re.compile(r"<!--@@([^@\s]+)@@-->(.*?)" + re.escape(END) + r"|(?<!<!--)@@([^@\s]+)@@(?!-->)", re.S)
BLOCK_TOKENS = ("ncu-table:", "lessons")


def run_of(folder):
    """One run's ladder and sweep. Runs before CUB was timed with an int item count (no
    `cub_size_t` rows) timed it with a 64-bit count only: there `cub` is named `cub_size_t`, so
    that `cub` is always CUB as its users call it."""
    ladder = {r["chapter"]: r for r in csv.DictReader(open(folder / "ladder.csv"))}
    sweep = list(csv.DictReader(open(folder / "sweep.csv")))
    if not any(r["strategy"] == "cub_size_t" for r in sweep):
        for r in sweep:
            if r["strategy"] == "cub":
                r["strategy"] = "cub_size_t"
        if "cub" in ladder and "cub_size_t" not in ladder:
            ladder["cub_size_t"] = dict(ladder.pop("cub"), chapter="cub_size_t")
    return ladder, sweep


def load(results):
    ladder, sweep = run_of(results)
    seed = list(csv.DictReader(open(results / "seed-kernels.csv")))
    device = json.load(open(results / "device.json"))
    return ladder, sweep, seed, device


def load_floor(results):
    """floor.csv: an empty launch's microseconds per call, back to back ({} before it was measured)."""
    path = results / "floor.csv"
    return {r["what"]: float(r["us_per_call"]) for r in csv.DictReader(open(path))} if path.exists() else {}


def load_runs(results, ladder, sweep):
    """The committed run first, then the repeats (results/repeats/*/): what varies run to run."""
    runs = [(ladder, sweep)]
    for d in sorted(p for p in (results / "repeats").glob("*") if p.is_dir()):
        runs.append(run_of(d))
    return runs


SNIPPET_MARK = re.compile(r"^\s*//! \[(\w+)\]\s*$")


def snippets(src, relpath):
    """{name: fenced C++ block} for each `//! [name]` ... `//! [name]` pair in a source file."""
    found, open_at = {}, {}
    lines = (src / relpath).read_text().splitlines()
    for i, line in enumerate(lines):
        m = SNIPPET_MARK.match(line)
        if not m:
            continue
        name = m.group(1)
        if name in open_at:
            body = textwrap.dedent("\n".join(lines[open_at.pop(name) + 1:i])).strip("\n")
            found[f"snippet:{relpath}:{name}"] = f"```cpp\n{body}\n```"
        else:
            open_at[name] = i
    if open_at:
        sys.exit(f"{relpath}: snippet marker //! [{next(iter(open_at))}] without its other half")
    return found


def sweep_us(sweep):
    return {(r["strategy"], r["n"]): float(r["us_per_call"]) for r in sweep}


def span(values, fmt):
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


# Nsight Compute metrics as the lessons show them: token name -> (ncu metric, what it counts,
# how to print it). grader/profile-references measures them into book/results/ncu.csv.
def _count(v):
    return f"{v / 1e6:.2f}\u00a0M" if v >= 1e6 else f"{v:,.0f}"


NCU_ROWS = {
    "time": ("gpu__time_duration.sum", "kernel time",
             lambda v: f"{v / 1e3:.2f}\u00a0µs" if v < 1e4 else f"{v / 1e3:.1f}\u00a0µs"),
    "dram_bytes": ("dram__bytes_read.sum", "bytes read from DRAM", lambda v: f"{v / 1e6:.1f}\u00a0MB"),
    "dram_pct": ("dram__throughput.avg.pct_of_peak_sustained_elapsed", "DRAM throughput, % of peak",
                 lambda v: f"{v:.1f}\u00a0%"),
    "ld_bytes": ("l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "bytes of global loads (L1)",
                 lambda v: f"{v / 1e6:.1f}\u00a0MB"),
    "ld_requests": ("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "global load requests", _count),
    "shared_wavefronts": ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                          "shared-load wavefronts", _count),
    "conflicts_ld": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                     "bank conflicts, shared loads", _count),
    "conflicts_st": ("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                     "bank conflicts, shared stores", _count),
    "inst": ("smsp__inst_executed.sum", "warp instructions executed", _count),
    "global_ld_inst": ("smsp__sass_inst_executed_op_global_ld.sum", "global load instructions", _count),
    "shared_ld_inst": ("smsp__sass_inst_executed_op_shared_ld.sum", "shared load instructions", _count),
    "shared_st_inst": ("smsp__sass_inst_executed_op_shared_st.sum", "shared store instructions", _count),
    "threads_per_inst": ("smsp__thread_inst_executed_per_inst_executed.ratio",
                         "active threads per warp instruction", lambda v: f"{v:.1f}"),
    "pred_on_per_inst": ("smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
                         "threads not predicated off, per warp instruction", lambda v: f"{v:.1f}"),
    "branch_inst": ("smsp__sass_inst_executed_op_branch.sum", "branch instructions", _count),
    "uniform_pct": ("smsp__sass_average_branch_targets_threads_uniform.pct",
                    "branch targets uniform across the warp", lambda v: f"{v:.1f}\u00a0%"),
    "divergent": ("smsp__sass_branch_targets_threads_divergent.sum", "divergent branch targets", _count),
    "barrier_stall": ("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
                      "warps waiting at a barrier, per issue", lambda v: f"{v:.2f}"),
    "memory_stall": ("smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio",
                     "warps waiting for a global load, per issue", lambda v: f"{v:.2f}"),
    "occupancy": ("sm__warps_active.avg.pct_of_peak_sustained_active",
                  "achieved occupancy (active warps, % of max)", lambda v: f"{v:.1f}\u00a0%"),
    "grid": ("launch__grid_size", "blocks in the grid", lambda v: f"{v:,.0f}"),
    "regs": ("launch__registers_per_thread", "registers per thread", lambda v: f"{v:.0f}"),
    # ncu reports 0 for these where the launch has no clusters.
    "cluster_size": ("launch__cluster_size", "blocks per cluster", lambda v: f"{v:.0f}" if v else "(none)"),
    "clusters_fit": ("launch__cluster_max_active", "clusters that fit at once", lambda v: f"{v:.0f}" if v else "–"),
    "cluster_occ": ("launch__occupancy_cluster_pct", "cluster occupancy",
                    lambda v: f"{v:.1f}\u00a0%" if v else "–"),
    "limit_warps": ("launch__occupancy_limit_warps", "blocks per SM, as the warps allow", lambda v: f"{v:.0f}"),
    "limit_regs": ("launch__occupancy_limit_registers", "blocks per SM, as the registers allow",
                   lambda v: f"{v:.0f}"),
    "dshared_st": ("smsp__sass_inst_executed_op_dshared_st.sum", "distributed shared memory stores", _count),
    "global_st": ("smsp__sass_inst_executed_op_global_st.sum", "global store instructions", _count),
    "global_atom": ("smsp__sass_inst_executed_op_global_atom.sum", "global atomic instructions", _count),
}


def load_ncu(results):
    """{(chapter, kernel): {metric: value}} in launch order, and the profile's description. The
    experiments' raw profiles (experiments/ncu_<slug>_<n>.csv, ncu's own CSV of one launch at n
    elements) join them as chapter `<slug>#<n>`."""
    kernels = {}
    for r in csv.DictReader(open(results / "ncu.csv")):
        kernels.setdefault((r["chapter"], r["kernel"]), {})[r["metric"]] = float(r["value"])
    for path in sorted((results / "experiments").glob("ncu_*_*.csv")):
        m = re.fullmatch(r"ncu_(\d\d_\w+?)_(\d+)\.csv", path.name)
        if not m:
            continue
        lines = path.read_text().splitlines()
        header = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
        if header is None:
            sys.exit(f"{path}: no ncu CSV in it")
        rows = list(csv.DictReader(lines[header:]))
        first = rows[0]["ID"]  # the first launch profiled
        for r in rows:
            if r["ID"] != first:
                continue
            kernel = re.sub(r"\(.*", "", r["Kernel Name"]).split("::")[-1]
            value = float(r["Metric Value"].replace(",", ""))
            kernels.setdefault((f"{m.group(1)}#{m.group(2)}", kernel), {})[r["Metric Name"]] = value
    return kernels, json.load(open(results / "ncu.json"))


def ncu_line(profile):
    return (f"{profile['gpu']}, driver {profile['driver']}, CUDA {profile['cuda']}, "
            f"Nsight Compute {profile['ncu']}, n = 2^27, measured {profile['date']}")


def ncu_columns(kernels, chapters, versions):
    """The table's columns: each kernel of each chapter named, in launch order."""
    cols = []
    for chapter in chapters:
        slug, _, only = chapter.partition("/")
        ks = [k for (c, k) in kernels if c == slug and (not only or k == only)]
        if not ks:
            sys.exit(f"no ncu results for {chapter} in book/results/ncu.csv")
        for k in ks:
            base, _, n = slug.partition("#")
            version = versions.get(base, base)
            name = version if version.startswith("V") else f"ch. {version}"
            if n:
                name += f", \\f$2^{{{int(n).bit_length() - 1}}}\\f$"
            cols.append(((slug, k), f"{name} `{k}`" if len(ks) > 1 or only else name))
    return cols


def ncu_table(kernels, chapters, rows, versions):
    cols = ncu_columns(kernels, chapters, versions)
    # The ncu metric's name goes last: long and unbreakable, it would push the figures off a
    # phone's screen.
    out = ["| what it counts | " + " | ".join(label for _, label in cols) + " | ncu metric |",
           "|---|" + "---:|" * len(cols) + "---|"]
    for alias in rows:
        if alias not in NCU_ROWS:
            sys.exit(f"unknown ncu row '{alias}' (known: {', '.join(NCU_ROWS)})")
        metric, what, fmt = NCU_ROWS[alias]
        cells = []
        for key, _ in cols:
            v = kernels[key].get(metric)
            cells.append("n/a" if v is None else fmt(v))
        out.append(f"| {what} | " + " | ".join(cells) + f" | `{metric}` |")
    return "\n".join(out)


def measured_line(device):
    return (f"{device['gpu']}, driver {device['driver']}, CUDA {device['runtime_cuda']}, "
            f"measured {device['date']}")


def token_values(ladder, sweep, seed, device, ncu, runs, seed_run, bits=()):
    values = {"measured": measured_line(device), "runs": str(len(runs)),
              "seed-measured": f"{seed_run['gpu']}, CUDA {seed_run['cuda']}, measured {seed_run['date']}"}
    # Time ratios between strategies (a/b: above 1 means b is faster), and how much slower a is
    # than b in percent, from the committed run; "range:" forms span every run.
    per_run = [sweep_us(s) for _, s in runs]  # per_run[0] is the committed run
    # Every strategy of any run: a range may span earlier runs only (a chapter's previous version).
    strategies = list(dict.fromkeys(k[0] for u in per_run for k in u))
    ns = list(dict.fromkeys(r["n"] for r in sweep))
    for a in strategies:
        for b in strategies:
            for n in ns:
                ratios = [u[(a, n)] / u[(b, n)] for u in per_run if (a, n) in u and (b, n) in u]
                if (a, n) in per_run[0] and (b, n) in per_run[0]:
                    values[f"ratio:{a}/{b}:{n}"] = f"{ratios[0]:.2f}"
                    values[f"slower-pct:{a}/{b}:{n}"] = f"{100 * (ratios[0] - 1):.1f}"
                if ratios:
                    values[f"range:ratio:{a}/{b}:{n}"] = span(ratios, lambda v: f"{v:.2f}")
                    values[f"range:slower-pct:{a}/{b}:{n}"] = span([100 * (r - 1) for r in ratios],
                                                                   lambda v: f"{v:.1f}")
            # a's extra microseconds over b, over every n of the committed run, and over the sizes
            # from n1 to n2 (range:diff:a/b:n1-n2)
            if ns and all((a, n) in per_run[0] and (b, n) in per_run[0] for n in ns):
                values[f"range:diff:{a}/{b}"] = span([per_run[0][(a, n)] - per_run[0][(b, n)] for n in ns],
                                                     lambda v: f"{v:.1f}")
            for i, n1 in enumerate(ns):
                for n2 in ns[i + 1:]:
                    within = [n for n in ns if int(n1) <= int(n) <= int(n2)]
                    if all((a, n) in per_run[0] and (b, n) in per_run[0] for n in within):
                        values[f"range:diff:{a}/{b}:{n1}-{n2}"] = span(
                            [per_run[0][(a, n)] - per_run[0][(b, n)] for n in within], lambda v: f"{v:.1f}")
            # how many runs timed both: "1 run", "8 runs" (what a range:ratio:a/b spans)
            both = sum(1 for u in per_run if any(k[0] == a for k in u) and any(k[0] == b for k in u))
            values[f"runs-text:{a}/{b}"] = f"{both} run" + ("" if both == 1 else "s")
    for chapter in ladder:
        runs_of = [l[chapter] for l, _ in runs if chapter in l]
        values[f"range:ladder:{chapter}:gbps"] = span([float(r["gbps"]) for r in runs_of],
                                                      lambda v: f"{v:.0f}")
        values[f"range:ladder:{chapter}:pct"] = span(
            [float(r["percent_of_ceiling"]) for r in runs_of], lambda v: f"{v:.1f}")
    kernels, profile = ncu
    values["ncu-measured"] = ncu_line(profile)
    for key, metrics in kernels.items():
        single = sum(1 for c, _ in kernels if c == key[0]) == 1  # ncu:<chapter>:<row> will do
        for alias, (metric, _, fmt) in NCU_ROWS.items():
            if metric in metrics:
                values[f"ncu:{key[0]}/{key[1]}:{alias}"] = fmt(metrics[metric])
                if single:
                    values[f"ncu:{key[0]}:{alias}"] = fmt(metrics[metric])
    values.update(run_tokens(ladder, sweep, bits))
    for r in seed:
        values[f"seed:{r['kernel']}:{r['n']}:gbps"] = r["gbps"]
    if bits:
        values["bits:n"] = bits[0]["n"]
    return values


def run_tokens(ladder, sweep, bits, only=None):
    """One run's own figures: ladder:, sweep:, bits: and bits-value: tokens, of the strategies in
    `only` when it is given."""
    values = {}
    for chapter, r in ladder.items():
        if only is None or chapter in only:
            values[f"ladder:{chapter}:gbps"] = f"{float(r['gbps']):.0f}"
            values[f"ladder:{chapter}:pct"] = f"{float(r['percent_of_ceiling']):.1f}"
    for r in sweep:
        if only is None or r["strategy"] in only:
            values[f"sweep:{r['strategy']}:{r['n']}:us"] = f"{float(r['us_per_call']):.2f}"
            values[f"sweep:{r['strategy']}:{r['n']}:gbps"] = f"{float(r['gbps']):.0f}"
    for r in bits:  # one input summed by every strategy (bits.csv): the result's bits and value
        if only is None or r["strategy"] in only:
            values[f"bits:{r['strategy']}"] = f"`{r['bits']}`"
            values[f"bits-value:{r['strategy']}"] = r["value"]
    return values


def experiment_value(experiments, name):
    """A figure from an experiment's CSV (book/results/experiments/<file>.csv):
    `exp:<file>:<column=value,...>:<column>:<format>`. Rows match every `column=value`; a value
    `a-b` matches the numbers from a to b. One figure renders as the value in the format (a
    Python format spec such as .2f); several as "lowest–highest", or one value if both read the
    same."""
    try:
        _, file, filters, column, spec = name.split(":")
    except ValueError:
        sys.exit(f"@@{name}@@: expected exp:<file>:<column=value,...>:<column>:<format>")
    path = experiments / f"{file}.csv"
    if not path.is_file():
        sys.exit(f"@@{name}@@: no {path}")
    conditions = [f.split("=", 1) for f in filters.split(",")]

    def matches(row):
        for key, want in conditions:
            have = row.get(key)
            span = re.fullmatch(r"(\d+)-(\d+)", want)
            if have is None or not (int(span[1]) <= int(have) <= int(span[2]) if span else have == want):
                return False
        return True

    found = [float(r[column]) for r in csv.DictReader(open(path)) if matches(r)]
    if not found:
        sys.exit(f"@@{name}@@: no row of {path} matches")
    low, high = format(min(found), spec), format(max(found), spec)
    return low if low == high else f"{low}\u2013{high}"


def render_token(name, values, where, ncu=None, versions=None):
    if name.startswith("ncu-table:") and ncu is not None:
        _, chapters, rows = name.split(":")
        return ncu_table(ncu[0], chapters.split(","), rows.split(","), versions)
    if name not in values:
        sys.exit(f"{where}: unknown measurement token @@{name}@@")
    return values[name]


def written_form(name, value):
    """How a lesson carries a figure: the value, between markers GitHub's Markdown hides."""
    if name.startswith(BLOCK_TOKENS) or "\n" in value:
        return f"<!--@@{name}@@-->\n\n{value}\n\n{END}"
    return f"<!--@@{name}@@-->{value}{END}"


def _check_markers(text, where):
    for m in re.finditer(r"<!--@@(?!end@@)[^@\s]+@@-->|" + re.escape(END), text):
        line = text.count("\n", 0, m.start()) + 1
        sys.exit(f"{where}:{line}: measurement marker {m.group(0)} without its other half")


def substitute(text, values, where, ncu=None, versions=None):
    """The page as the book shows it: every token, marked or bare, replaced by its value."""
    out = WRITTEN.sub(lambda m: render_token(m.group(1) or m.group(3), values, where, ncu, versions), text)
    _check_markers(out, where)
    return out


def update_text(text, values, where, ncu=None, versions=None):
    """The source as it should be written: every token in its marked form with today's value."""
    def one(m):
        name = m.group(1) or m.group(3)
        return written_form(name, render_token(name, values, where, ncu, versions))

    out = WRITTEN.sub(one, text)
    _check_markers(WRITTEN.sub("", out), where)
    return out


def written_figures(text):
    """(line, name, value written or None for a bare token) for each figure in a source."""
    for m in WRITTEN.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        if m.group(3):
            yield line, m.group(3), None
        else:
            yield line, m.group(1), m.group(2)


def pow2(n):
    return f"2^{int(math.log2(int(n)))}"


def plots(ladder, sweep, device, images):
    import matplotlib  # only here: the metric list (NCU_ROWS) is read without it

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images.mkdir(parents=True, exist_ok=True)
    caption = measured_line(device)
    chapters = [c for c in ladder if c not in ("ceiling",)]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    gbps = [float(ladder[c]["gbps"]) for c in chapters]
    labels = [ladder[c]["version"] for c in chapters]
    # Block passes (versions V0-V7) blue; the whole reductions beside them (CUB, chapter 15, CUB's
    # gpu_to_gpu mode) grey.
    bars = ax.bar(labels, gbps, color=["#4c72b0" if v.startswith("V") else "#999999" for v in labels])
    ceiling = float(ladder["ceiling"]["gbps"])
    ax.axhline(ceiling, color="#c44e52", linestyle="--", linewidth=1)
    ax.text(0, ceiling * 1.01, f"streaming-read ceiling {ceiling:.0f} GB/s", color="#c44e52", fontsize=8)
    for b, c in zip(bars, chapters):
        ax.text(b.get_x() + b.get_width() / 2, b.get_height() + 40,
                f"{float(ladder[c]['percent_of_ceiling']):.0f}%", ha="center", fontsize=8)
    ax.set_ylabel("GB/s at n = 2^27")
    ax.set_title("Reference block passes V0-V7; whole reductions (grey): CUB, chapter 15", fontsize=10)
    ax.set_ylim(0, ceiling * 1.12)
    fig.text(0.01, 0.01, caption, fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(images / "ladder.svg")
    plt.close(fig)

    fig, ax = plt.subplots(figsize=(8, 4.2))
    strategies = list(dict.fromkeys(r["strategy"] for r in sweep))
    for s in strategies:
        rows = [r for r in sweep if r["strategy"] == s]
        ax.plot([int(r["n"]) for r in rows], [float(r["gbps"]) for r in rows], marker="o",
                markersize=3, label=s, linestyle="--" if s == "cub" else "-")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (floats)")
    ax.set_ylabel("GB/s (whole reduction, back to back)")
    ax.set_title("Whole reductions against cub::DeviceReduce::Sum", fontsize=10)
    ax.legend(fontsize=8)
    fig.text(0.01, 0.01, caption, fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(images / "sweep.svg")
    plt.close(fig)


def results_page(ladder, sweep, seed, device, ncu, versions, runs, values, manifest):
    line = measured_line(device)
    dates = values["run-dates"]
    out = ["# Results {#results}", "",
           "Every figure in the book comes from these tables, committed as CSV under `book/results/` and "
           "turned into pages and plots when the book is built.", "",
           "## The ladder: block passes V0-V7 at n = 2^27", "",
           "Input bytes read over the median of 30 CUDA-event timings after 3 warm-ups; the ceiling is the "
           "harness's streaming-read kernel in the same process. CUB, chapter 15 and CUB's reproducible "
           "`gpu_to_gpu` mode (where the run had CCCL 3.1 or later) are whole reductions to one float.", "",
           "\\image html ladder.svg", "", "| chapter | version | GB/s | % of ceiling |", "|---|---|---:|---:|"]
    for c, r in ladder.items():
        out.append(f"| {c} | {r['version']} | {float(r['gbps']):.0f} | {float(r['percent_of_ceiling']):.1f}% |")
    out += ["", f"<em>{line}</em>", "",
            "## Whole reductions against CUB", "",
            "Microseconds per call, 20 calls back to back between one pair of events, median of 15.", "",
            "\\image html sweep.svg", ""]
    strategies = list(dict.fromkeys(r["strategy"] for r in sweep))
    us = sweep_us(sweep)
    ns = list(dict.fromkeys(r["n"] for r in sweep))
    out.append("| n | " + " | ".join(strategies) + " |")
    out.append("|---|" + "---:|" * len(strategies))
    for n in ns:
        out.append(f"| {pow2(n)} | " + " | ".join(f"{us[(s, n)]:.2f}" for s in strategies) + " |")
    out += ["", f"<em>{line}</em>", "",
            "## Run to run", "",
            f"The tables above are one run. The benchmark ran {len(runs) - 1} more times on the same "
            f"GPU model, driver and CUDA ({dates}; `book/results/repeats/`); these are the ranges over "
            f"all the runs that measured each strategy ({len(runs)} for the oldest, one for a strategy "
            "added in the latest run).", "",
            "| chapter | GB/s | % of that run's ceiling |", "|---|---:|---:|"]
    for c in ladder:
        out.append(f"| {c} | {values[f'range:ladder:{c}:gbps']} | {values[f'range:ladder:{c}:pct']}% |")
    out += ["", "CUB's time over each strategy's, per n (above 1: the strategy is faster than CUB):", "",
            "| n | " + " | ".join(s for s in strategies if s != "cub") + " |",
            "|---|" + "---:|" * (len(strategies) - 1)]
    for n in ns:
        cells = [values[f"range:ratio:cub/{s}:{n}"] for s in strategies if s != "cub"]
        out.append(f"| {pow2(n)} | " + " | ".join(cells) + " |")
    out += ["", f"<em>{line}; repeats: same GPU model, driver and CUDA, {dates}</em>", "",
            "## The source articles' kernels, as printed", "",
            "What the articles' own first-pass kernels do on the same GPU (per-block partials; GB/s).", "",
            "| kernel | " + " | ".join(pow2(n) for n in dict.fromkeys(r["n"] for r in seed)) + " |",
            "|---|" + "---:|" * len(set(r["n"] for r in seed))]
    kernels = list(dict.fromkeys(r["kernel"] for r in seed))
    for k in kernels:
        rows = [r for r in seed if r["kernel"] == k]
        out.append(f"| {rows[0]['description']} | " + " | ".join(r["gbps"] for r in rows) + " |")
    out += ["", f"<em>{values['seed-measured']}</em>", "",
            "## What Nsight Compute counts", "",
            "Each reference's kernels in one call at n = 2^27 (the `RandomSums` test of that size), "
            "profiled by `grader/profile-references` with `ncu --clock-control none`. Kernel replay runs "
            "each kernel several times to collect the counters, so the times here are single launches "
            "with cold caches, not the benchmark's medians.", ""]
    kernels = ncu[0]
    profiled = set(c for c, _ in kernels)
    # One table per kind of chapter (the manifest's "kind": a block pass, or a whole reduction).
    for kind in dict.fromkeys(c["kind"] for c in manifest["chapters"]):
        part = [c["slug"] for c in manifest["chapters"] if c["kind"] == kind and c["slug"] in profiled]
        if part:
            out += [ncu_table(kernels, part, list(NCU_ROWS), versions), ""]
    out += [f"<em>{ncu_line(ncu[1])}</em>", "",
            f"Previous: \\ref lesson_{manifest['chapters'][-1]['slug']}", ""]
    return "\n".join(out)


SEARCH_PAGE = """# Search the text {#search_text}

Every word you type must appear on a page: the lessons, the main page and the results, code and
figures included. (The search box at the top finds names and titles by their first letters.)

\\htmlonly
<form class="workbook-search-form" onsubmit="return false;">
<input id="workbook-search" type="search" size="40" autofocus
       placeholder="for example: map_shared_rank, bank conflict">
</form>
<div id="workbook-search-results"></div>
<script src="text_index.js"></script>
<script src="search_text.js"></script>
\\endhtmlonly
"""


def plain_text(markdown):
    """A page's words as a reader sees them, for the full-text search: no markers, anchors,
    Doxygen commands or HTML tags; code and math kept as written."""
    text = re.sub(r"\\dot\b.*?\\enddot", " ", markdown, flags=re.S)
    text = re.sub(r"<!--.*?-->", " ", text, flags=re.S)
    text = re.sub(r"\{#[\w-]+\}", " ", text)
    text = re.sub(r"\\(ref|subpage|include|snippet)\s+", "", text)
    text = re.sub(r"\\f[$\[\]]", "", text)
    text = re.sub(r"</?(a|b|i|em|strong|br|sup|sub|span|div|p|code|kbd|tt|img|table|tr|td|th|ul|ol|li)\b[^>]*>",
                  " ", text)
    text = re.sub(r"[*#|`]+", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def text_index(pages):
    """text_index.js: (title, url, markdown) of every page, as the search page reads it."""
    entries = [{"title": title, "url": url, "text": plain_text(markdown)} for title, url, markdown in pages]
    return "window.WORKBOOK_TEXT = " + json.dumps(entries, ensure_ascii=False) + ";\n"


def page_title(markdown):
    first = markdown.lstrip().splitlines()[0]
    return re.sub(r"\s*\{#[\w-]+\}\s*$", "", first.lstrip("# ")).strip()


def reference_section(src, slug):
    """The instructor edition's listing of a chapter's reference (each a file a learner could hand
    in: the given block pass it may include is in the API reference)."""
    kernel = f"solutions/{slug}/kernel.cu"
    return "\n\n## Reference solution (instructor edition)\n\n" + f"\\include {kernel}\n"


class Book:
    """The committed results, read once: what every token renders to."""

    def __init__(self, src):
        results = src / "book" / "results"
        self.src = src
        self.ladder, self.sweep, self.seed, self.device = load(results)
        self.ncu = load_ncu(results)
        self.manifest = manifest.load(src / "grader" / "manifest.json")
        self.versions = {c["slug"]: c["version"] for c in self.manifest["chapters"]}
        self.runs = load_runs(results, self.ladder, self.sweep)
        seed_run = json.load(open(results / "seed-kernels.json"))
        bits_csv = results / "bits.csv"  # absent until a benchmark run writes it: its tokens are then unknown
        bits = list(csv.DictReader(open(bits_csv))) if bits_csv.exists() else []
        self.values = token_values(self.ladder, self.sweep, self.seed, self.device, self.ncu, self.runs, seed_run,
                                   bits)
        run_dates = {self.device["date"]} | {json.load(open(d))["date"] for d in results.glob("repeats/*/device.json")}
        self.values["run-dates"] = " and ".join(sorted(run_dates))
        for name in set(self.ladder) | {r["strategy"] for r in self.sweep}:
            self.values[f"run-date:{name}"] = self.device["date"]
        # A strategy the committed run did not time (CUB's gpu_to_gpu mode needs CCCL headers the
        # run may not have had): its figures from the newest earlier run that has it, and that
        # run's date (@@run-date:<strategy>@@), which the lesson must give beside them.
        for d in sorted((p for p in (results / "repeats").glob("*") if p.is_dir()),
                        key=lambda p: int(p.name) if p.name.isdigit() else 0, reverse=True):
            ladder, sweep = run_of(d)
            bits_file = d / "bits.csv"
            bits = list(csv.DictReader(open(bits_file))) if bits_file.exists() else []
            timed = {r["strategy"] for r in self.sweep}
            names = {c for c in ladder if c not in self.ladder} | {r["strategy"] for r in sweep} - timed
            date = json.load(open(d / "device.json"))["date"]
            for name in names:
                self.values.setdefault(f"run-date:{name}", date)
            for key, value in run_tokens(ladder, sweep, bits, only=names).items():
                self.values.setdefault(key, value)
        # The floor (an empty launch, back to back) of the committed run: @@floor:<what>:us@@.
        raw = json.load(open(results / "experiments" / "ncu.json"))
        self.values["ncu-experiments-measured"] = (
            f"{raw['gpu']}, driver {raw['driver']}, CUDA {raw['cuda']}, Nsight Compute {raw['ncu']}, "
            f"one launch profiled, measured {raw['date']}")
        for what, us in load_floor(results).items():
            self.values[f"floor:{what}:us"] = f"{us:.2f}"
        self.lessons = [c for c in self.manifest["chapters"]
                        if (src / "chapters" / c["slug"] / "lesson.md").exists()]
        # The experiments' figures the pages quote (@@exp:...@@), each from its CSV.
        for page in self.sources():
            for name in set(re.findall(r"@@(exp:[^@\s]+)@@", page.read_text())):
                self.values[name] = experiment_value(results / "experiments", name)
        # The main page's list of lessons (@@lessons@@), in chapter order.
        self.values["lessons"] = "\n".join(f"- \\ref lesson_{c['slug']}" for c in self.lessons)
        # The code each lesson quotes from its stub (@@snippet:chapters/<slug>/kernel.cu:<name>@@)
        # and from the given headers (@@snippet:harness/workbook/<header>:<name>@@).
        for c in self.lessons:
            self.values.update(snippets(src, f"chapters/{c['slug']}/kernel.cu"))
        for header in sorted({g for c in self.manifest["chapters"] for g in c.get("given", [])}):
            self.values.update(snippets(src, f"harness/{header}"))

    def sources(self):
        """Every page whose figures are written in: each chapter's lesson.md, and the main page."""
        return sorted(self.src.glob("chapters/*/lesson.md")) + [self.src / "book" / "mainpage.md"]

    def where(self, path):
        return path.relative_to(self.src) if path.is_relative_to(self.src) else path

    def substitute(self, path):
        return substitute(path.read_text(), self.values, self.where(path), self.ncu, self.versions)

    def updated(self, path):
        return update_text(path.read_text(), self.values, self.where(path), self.ncu, self.versions)

    def expected(self, name, path):
        return render_token(name, self.values, self.where(path), self.ncu, self.versions)


def update_sources(src):
    book = Book(src)
    for path in book.sources():
        text = book.updated(path)
        if text != path.read_text():
            path.write_text(text)
            print(f"updated {book.where(path)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", type=pathlib.Path)
    ap.add_argument("--out", type=pathlib.Path)
    ap.add_argument("--edition", choices=["student", "instructor"], default="student")
    ap.add_argument("--update-sources", type=pathlib.Path, metavar="REPO",
                    help="write today's results into the lessons and the main page, in place")
    args = ap.parse_args()
    if args.update_sources:
        update_sources(args.update_sources.resolve())
        return
    if not args.source or not args.out:
        ap.error("--source and --out are needed to build (or --update-sources REPO)")
    src, out = args.source, args.out
    book = Book(src)
    (out / "pages").mkdir(parents=True, exist_ok=True)
    searchable = []  # (title, url, text) of each page, for the full-text search
    for ch in book.lessons:
        lesson = src / "chapters" / ch["slug"] / "lesson.md"
        text = book.substitute(lesson)
        searchable.append((page_title(text), f"lesson_{ch['slug']}.html", text))
        if args.edition == "instructor":
            text += reference_section(src, ch["slug"])
        (out / "pages" / f"{ch['slug']}.md").write_text(text)
    # The lessons hang under a page of their own: Doxygen's sidebar leaves out the
    # main page's subpages, and a reader wants them there, in order.
    (out / "pages" / "lessons.md").write_text(
        "# The lessons {#lessons}\n\nOne idea per chapter, in order.\n\n" +
        "\n".join(f"- \\subpage lesson_{c['slug']}" for c in book.lessons) + "\n")
    main_page = book.substitute(src / "book" / "mainpage.md")
    (out / "mainpage.md").write_text(main_page)
    results = results_page(book.ladder, book.sweep, book.seed, book.device, book.ncu,
                           book.versions, book.runs, book.values, book.manifest)
    (out / "results.md").write_text(results)
    # The full-text search: a page of its own (after the lessons in the sidebar) and the index.
    (out / "pages" / "search.md").write_text(SEARCH_PAGE)
    searchable += [(page_title(main_page), "index.html", main_page), (page_title(results), "results.html", results)]
    (out / "text_index.js").write_text(text_index(searchable))
    plots(book.ladder, book.sweep, book.device, out / "images")


if __name__ == "__main__":
    main()
