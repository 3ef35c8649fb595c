#!/usr/bin/env python3
"""Watch mode as a student meets it, through a pseudo-terminal, without a GPU:
start it on chapter 03, write a compile error into the file, see the error
within 5 s of the write, fix it, see it built again, then Ctrl-C: it ends with
status 0 and leaves no process behind.

  python3 tests/watch_test.py <grader> <source dir> <work dir>

With a GPU the fix saved is the reference kernel, and the chapter must pass.
"""
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import time

grader, source, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
tree = os.path.join(work, "chapters")
os.makedirs(tree)
shutil.copytree(os.path.join(source, "chapters", "03_idle_threads"), os.path.join(tree, "03_idle_threads"))
kernel = os.path.join(tree, "03_idle_threads", "kernel.cu")
original = open(kernel).read()

pid, fd = pty.fork()
if pid == 0:
    os.execv(grader, [grader, "--chapters", tree, "watch", "03"])

seen = ""


def read_until(pattern, seconds, since=0):
    """Reads the terminal until `pattern` shows after offset `since`; the seconds it took."""
    global seen
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if re.search(pattern, seen[since:]):
            return time.monotonic() - start
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                seen += os.read(fd, 65536).decode("utf-8", "replace")
            except OSError:
                break
    tail = seen[since:][-3000:]
    print(f"FAIL: no /{pattern}/ within {seconds} s; the terminal shows:\n{tail}")
    os.kill(pid, signal.SIGKILL)
    sys.exit(1)


failures = 0
read_until(r"Watching .*kernel\.cu", 600)  # the first run may build the harness
mark = len(seen)
with open(kernel, "w") as f:
    f.write(original.replace("#include", "this is not C++;\n#include", 1))
took = read_until(r"does not compile", 60, mark)
print(f"compile error shown {took:.1f} s after the write")
if took > 5:
    print("FAIL: the compile error took more than 5 s to show")
    failures += 1
read_until(r"Watching .*kernel\.cu", 60, mark)
mark = len(seen)
# The fix, saved the way many editors do: a new file renamed over the old one. With a
# GPU it is a working kernel, which must pass.
gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0 if shutil.which("nvidia-smi") else False
fix = open(os.path.join(source, "solutions", "03_idle_threads", "kernel.cu")).read() if gpu else original
with open(kernel + ".swp", "w") as f:
    f.write(fix)
os.rename(kernel + ".swp", kernel)
took = read_until(r"passed" if gpu else r"(not graded: no GPU|passed|failed)", 120, mark)
print(f"built again {took:.1f} s after the fix" + (", and passed on the GPU" if gpu else ""))
read_until(r"Watching .*kernel\.cu", 60, mark)
os.write(fd, b"\x03")  # Ctrl-C, as the terminal sends it
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status >> 8
if code != 0:
    print(f"FAIL: watch mode ended with {code} after Ctrl-C, not 0")
    failures += 1
time.sleep(0.5)
left = "\n".join(line for line in subprocess.run(["pgrep", "-af", work], capture_output=True, text=True).stdout.splitlines()
                 if not line.startswith(f"{os.getpid()} "))
if left:
    print(f"FAIL: processes left after Ctrl-C:\n{left}")
    failures += 1
print("watch mode:", "all checks passed" if not failures else f"{failures} checks failed")
sys.exit(1 if failures else 0)
