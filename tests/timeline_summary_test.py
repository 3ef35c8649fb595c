"""grader/timeline-summary on a made-up run: its processes from the timeline, and inside them the
judges' [timing] lines from the logs, numbers averaged per kind of line and paths by their last part.

  python3 tests/timeline_summary_test.py <source dir>
"""
import os
import subprocess
import sys
import tempfile

source = sys.argv[1]
failures = []


def write_timeline(path, rows):
    """A --timeline CSV of `rows`: "submission,chapter,what,gpu,asked_s,started_s,ended_s" each."""
    with open(path, "w") as f:
        f.write("submission,chapter,what,gpu,asked_s,started_s,ended_s\n" + "".join(r + "\n" for r in rows))
    return path


with tempfile.TemporaryDirectory() as work:
    timeline = write_timeline(os.path.join(work, "timeline.csv"), [
        "(grader),,setup,-1,0,0,1.5", "alice,00_naive,tests,0,0,0,4", "alice,00_naive,memcheck,0,4,5,7", "alice,00_naive,alone,0,3,3.5,4",
        "bob,00_naive,tests,0,2,2,6", "bob,00_naive,memcheck,0,6,6,8", "bob,00_naive,alone,0,5,5,5.5",
        "carol,00_naive,tests,0,6,6,9", "carol,00_naive,memcheck,0,9,9,10", "carol,00_naive,alone,0,8,8,8.5"])
    for sid, (ready, sanitizer, bandwidth) in {"alice": (100, 300, 40), "bob": (200, 500, 60)}.items():
        logs = os.path.join(work, "grades", sid, "logs")
        os.makedirs(logs)
        with open(os.path.join(logs, "00_naive.log"), "w") as f:
            f.write(f"device: a GPU\n[timing] the judge's device ready after {ready} ms\n"
                    f"not a [timing] line: 5 ms\n"
                    f"[timing] under /opt/cuda-{sid}/bin/compute-sanitizer memcheck: ready to test after {sanitizer} ms\n"
                    f"[timing] Bandwidth: 16 inputs made in {bandwidth} ms, the rest 1.5 ms\n")
        with open(os.path.join(logs, "notes.txt"), "w") as f:
            f.write("[timing] in a file that is not a log: 999 ms\n")
    out = subprocess.run([sys.executable, os.path.join(source, "grader", "timeline-summary"), timeline,
                          os.path.join(work, "grades")], capture_output=True, text=True)
    text = out.stdout
    expected = [
        "10 processes and builds over 10 s of wall time",
        "a timed run waited for the GPU alone or held it 2 s of those 10 s (20%)",
        "the grader's set-up (its grading build configured, the harness and the references built): 1.5 s, once for "
        "the class",
        "3 of 3 submissions done (3 kinds of process each)",
        "the submissions began 3.0 s apart (median 3.0 s, 2.0 to 4.0 s)",
        "a submission's processes held a test slot 5.8 s in all (mean of the done); over the 3 that ran at most at "
        "once, 1.9 s a submission",
        "     2  the judge's device ready after N ms: 150 (150)",
        "     2  under compute-sanitizer memcheck: ready to test after N ms: 400 (400)",
        "     2  Bandwidth: N inputs made in N ms, the rest N ms: 16 (16) | 50 (50) | 2 (2)",
    ]
    if out.returncode != 0:
        failures.append(f"exit {out.returncode}: {out.stderr}")
    for line in expected:
        if line not in text:
            failures.append(f"missing: {line!r}")
    for wrong in ("999", "not a [timing]", "cuda-alice"):
        if wrong in text:
            failures.append(f"should not appear: {wrong!r}")
    # A chapter tested again (starved the first time) adds a process, not a kind: its submission is
    # done; one without its tools' run was cut short.
    retested = write_timeline(os.path.join(work, "retested.csv"), [
        "alice,00_naive,tests,0,0,0,4", "alice,00_naive,tests,0,4,4,6", "alice,00_naive,memcheck,0,6,6,7",
        "bob,00_naive,tests,0,2,2,6", "bob,00_naive,memcheck,0,6,7,8", "carol,00_naive,tests,0,6,6,9"])
    again = subprocess.run([sys.executable, os.path.join(source, "grader", "timeline-summary"), retested],
                           capture_output=True, text=True).stdout
    if "2 of 3 submissions done (2 kinds of process each)" not in again:
        failures.append("a chapter tested again must not make the others look cut short:\n" + again)
    if [line for line in again.splitlines() if line.startswith(("alice", "bob")) and "cut short" in line]:
        failures.append("alice (tested again) and bob are done:\n" + again)
    if not [line for line in again.splitlines() if line.startswith("carol") and "cut short" in line]:
        failures.append("carol, without her tool's run, was cut short:\n" + again)
    empty = subprocess.run([sys.executable, os.path.join(source, "grader", "timeline-summary"), timeline, work + "/none"],
                           capture_output=True, text=True)
    if "no [timing] lines" not in empty.stdout:
        failures.append("a folder without logs is not said to have no [timing] lines")
if failures:
    print("\n".join(failures))
    print("--- output:\n" + text)
    sys.exit(1)
print("timeline-summary: processes and [timing] lines summed as expected")
