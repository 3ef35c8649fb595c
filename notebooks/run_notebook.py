#!/usr/bin/env python3
"""Runs a notebook's code cells as one script, in order, outside Jupyter.

    python3 notebooks/run_notebook.py notebooks/workbook-colab.ipynb --here

checks the Colab notebook on any machine with a GPU, from a clone of the
project, with no Jupyter installed: every code cell runs in one namespace, in
order, and the first failure ends the run with exit status 1.

What is translated, as IPython would run it:
  %%writefile [-a] PATH   the rest of the cell is written to PATH
  !command                a shell command (bash); a failing one fails the run
  %cd DIR, %env NAME=VAL  change directory, set an environment variable
  {name} and $name        in commands and paths: the Python value, as IPython expands it
Any other magic is refused. `from IPython.display import Markdown, display`
prints the text. Cells tagged `colab-only` (they need Colab itself: Google
Drive) are skipped.

Exit statuses the run accepts: 0 from any command; from grader/grade also 1
(it graded, and the chapter failed: the untouched stub does); with
--allow-no-gpu also 3 from grader/grade (nothing graded: no GPU) and any from
nvidia-smi.

Exit status: 0 every cell ran, 1 a cell failed, 2 a usage error or a notebook
that is not valid nbformat 4.
"""

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import traceback
import types


class Failure(Exception):
    """A command or cell that failed the run."""


# ---------------------------------------------------------------- the notebook

def load_notebook(path):
    """The notebook, checked against the parts of nbformat 4 this relies on."""
    try:
        with open(path, encoding="utf-8") as f:
            nb = json.load(f)
    except (OSError, ValueError) as e:
        raise Failure(f"{path}: cannot read it as JSON: {e}")
    problems = []
    if not isinstance(nb, dict):
        raise Failure(f"{path}: not a JSON object")
    if nb.get("nbformat") != 4 or not isinstance(nb.get("nbformat_minor"), int):
        problems.append("nbformat must be 4, with an integer nbformat_minor")
    if not isinstance(nb.get("metadata"), dict):
        problems.append("metadata must be an object")
    cells = nb.get("cells")
    if not isinstance(cells, list):
        problems.append("cells must be a list")
        cells = []
    ids = set()
    for i, cell in enumerate(cells):
        where = f"cell {i}"
        if not isinstance(cell, dict):
            problems.append(f"{where}: not an object")
            continue
        kind = cell.get("cell_type")
        if kind not in ("code", "markdown", "raw"):
            problems.append(f"{where}: cell_type {kind!r}")
        if not isinstance(cell.get("metadata"), dict):
            problems.append(f"{where}: metadata must be an object")
        tags = cell.get("metadata", {}).get("tags", []) if isinstance(cell.get("metadata"), dict) else []
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            problems.append(f"{where}: metadata.tags must be a list of strings")
        source = cell.get("source")
        if not (isinstance(source, str) or (isinstance(source, list) and all(isinstance(s, str) for s in source))):
            problems.append(f"{where}: source must be a string or a list of strings")
        if kind == "code":
            if not isinstance(cell.get("outputs"), list):
                problems.append(f"{where}: a code cell needs outputs (a list)")
            if "execution_count" not in cell or not (cell["execution_count"] is None or isinstance(cell["execution_count"], int)):
                problems.append(f"{where}: a code cell needs execution_count (null or an integer)")
        elif "outputs" in cell or "execution_count" in cell:
            problems.append(f"{where}: only code cells have outputs and execution_count")
        if nb.get("nbformat_minor", 0) >= 5:
            cell_id = cell.get("id")
            if not isinstance(cell_id, str) or not re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", cell_id):
                problems.append(f"{where}: nbformat 4.5 needs an id of 1-64 letters, digits, - or _")
            elif cell_id in ids:
                problems.append(f"{where}: id {cell_id!r} is used twice")
            ids.add(cell_id)
    if problems:
        raise Failure(f"{path} is not a valid nbformat 4 notebook:\n  " + "\n  ".join(problems))
    return nb


def source_of(cell):
    source = cell["source"]
    return source if isinstance(source, str) else "".join(source)


def tags_of(cell):
    return cell.get("metadata", {}).get("tags", [])


# ---------------------------------------------------------------- translation

def translate(source, index):
    """A code cell's source as plain Python (calls into the runner's helpers)."""
    lines = source.splitlines()
    if lines and lines[0].startswith("%%"):
        magic, _, args = lines[0][2:].partition(" ")
        if magic != "writefile":
            raise Failure(f"cell {index}: the cell magic %%{magic} is not supported")
        body = "\n".join(lines[1:]) + "\n"
        return f"_runner.write_file({args.strip()!r}, {body!r}, globals())\n"
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("!"):
            command = stripped[1:]
            while command.endswith("\\") and i + 1 < len(lines):  # a continued command
                i += 1
                command = command[:-1] + lines[i].strip()
            out.append(f"{indent}_runner.shell({command.strip()!r}, globals())")
        elif stripped.startswith("%") and not stripped.startswith("%%"):
            magic, _, args = stripped[1:].partition(" ")
            if magic not in ("cd", "env"):
                raise Failure(f"cell {index}: the magic %{magic} is not supported")
            out.append(f"{indent}_runner.line_magic({magic!r}, {args.strip()!r}, globals())")
        else:
            out.append(line)
        i += 1
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- the helpers cells call

def expand(text, namespace):
    """IPython's expansion in commands: {expr} is the Python value ({{ and }} stay
    braces), $name a Python variable's value ($$ a dollar sign)."""
    def brace(m):
        if m.group(0) in ("{{", "}}"):
            return m.group(0)[0]
        return str(eval(m.group(1), namespace))  # the notebook's own expression

    def dollar(m):
        if m.group(0) == "$$":
            return "$"
        name = m.group(1)
        return str(namespace[name]) if name in namespace else m.group(0)

    text = re.sub(r"\{\{|\}\}|\{([^{}]+)\}", brace, text)
    return re.sub(r"\$\$|\$([A-Za-z_]\w*)", dollar, text)


class Runner:
    def __init__(self, options):
        self.options = options
        self.kernel_written = False  # the cell tagged kernel ran with --kernel
        self.cell_tags = []
        self.saved = {}  # path: its content before the run (--here), or None if it did not exist

    def program_of(self, command):
        try:
            words = shlex.split(command, comments=True)
        except ValueError:  # unbalanced quotes: bash said what it made of them
            words = command.split()
        while words and re.fullmatch(r"[A-Za-z_]\w*=.*", words[0]):  # NAME=value before the command
            words.pop(0)
        return os.path.basename(words[0]) if words else "", words

    def accepted(self, command, rc):
        if rc == 0:
            return True
        program, words = self.program_of(command)
        if program == "nvidia-smi" and self.options.allow_no_gpu:
            print(f"(no GPU here: nvidia-smi exited {rc}, accepted with --allow-no-gpu)", flush=True)
            return True
        if program == "grade" and words and words[0].endswith("grader/grade"):
            if rc in (3, 4) and self.options.allow_no_gpu:
                print("(not graded: no GPU, accepted with --allow-no-gpu)", flush=True)
                return True
            if rc == 1 and not (self.options.kernel and self.kernel_written):
                print("(graded: the chapter failed, as a stub does)", flush=True)
                return True
        return False

    def shell(self, template, namespace):
        command = expand(template, namespace)
        print(f"$ {command}", flush=True)
        report = None  # the grader's report, from its "report: PATH" line
        with subprocess.Popen(command, shell=True, executable="/bin/bash", stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace") as child:
            for line in child.stdout:
                print(line, end="", flush=True)
                m = re.match(r"report: (.+)$", line.rstrip("\n"))
                if m:
                    report = m.group(1)
        rc = child.returncode
        if not self.accepted(command, rc):
            raise Failure(f"exit status {rc}: {command}")
        if self.options.kernel and self.kernel_written and self.program_of(command)[0] == "grade":
            self.check_report(report, command)

    def check_report(self, report, command):
        """With --kernel: every chapter graded passed (or, with --allow-no-gpu, was
        built and checked, and only the GPU was missing)."""
        if report is None:
            if "--check-setup" in command or "--help" in command:
                return
            raise Failure(f"no report named in the output of: {command}")
        with open(report, encoding="utf-8") as f:
            chapters = json.load(f)["chapters"]
        good = {"passed"} | ({"no_gpu"} if self.options.allow_no_gpu else set())
        bad = [f"{c['slug']}: {c['status']}" for c in chapters if c["status"] not in good]
        if bad or not chapters:
            raise Failure(f"--kernel {self.options.kernel}: {', '.join(bad) or 'no chapter graded'}")
        print(f"(--kernel: {', '.join(c['slug'] + ' ' + c['status'] for c in chapters)})", flush=True)

    def line_magic(self, magic, args, namespace):
        args = expand(args, namespace)
        if magic == "cd":
            os.chdir(os.path.expanduser(shlex.split(args)[0]) if args else os.path.expanduser("~"))
            print(os.getcwd())
        else:  # env NAME=VALUE or NAME VALUE
            name, sep, value = args.partition("=")
            if not sep:
                name, _, value = args.partition(" ")
            os.environ[name.strip()] = value.strip()

    def write_file(self, args, body, namespace):
        words = shlex.split(expand(args, namespace))
        append = any(w in ("-a", "--append") for w in words)
        paths = [w for w in words if w not in ("-a", "--append")]
        if len(paths) != 1:
            raise Failure(f"%%writefile needs one path, not {args!r}")
        path = os.path.abspath(paths[0])
        if "kernel" in self.cell_tags and self.options.kernel:
            with open(self.options.kernel, encoding="utf-8") as f:
                body = f.read()
            self.kernel_written = True
            print(f"(writing {self.options.kernel} instead of the cell's text)")
        exists = os.path.exists(path)
        if self.options.here and path not in self.saved:
            self.saved[path] = open(path, encoding="utf-8").read() if exists else None
            if exists and "kernel" in self.cell_tags and not self.options.kernel and self.saved[path] != body:
                print(f"note: the notebook's {paths[0]} differs from this checkout's: "
                      "is the notebook's copy of the stub out of date?", flush=True)
        with open(path, "a" if append else "w", encoding="utf-8") as f:
            f.write(body)
        print(("Appending to " if append else "Overwriting " if exists else "Writing ") + paths[0])

    def restore(self):
        for path, text in self.saved.items():
            if text is None:
                if os.path.exists(path):
                    os.remove(path)
            else:
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
            print(f"(put back {path} as it was)")


# `from IPython.display import Markdown, display` prints the text here.
def install_display_stand_in():
    display_module = types.ModuleType("IPython.display")

    class Markdown:
        def __init__(self, data=None, filename=None):
            if data is None and filename:
                with open(filename, encoding="utf-8") as f:
                    data = f.read()
            self.data = data or ""

    def display(*objects, **_):
        for o in objects:
            print(getattr(o, "data", o))

    display_module.Markdown = Markdown
    display_module.display = display
    package = types.ModuleType("IPython")
    package.display = display_module
    sys.modules["IPython"] = package
    sys.modules["IPython.display"] = display_module


# ---------------------------------------------------------------- the run

def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("notebook", help="the .ipynb file")
    parser.add_argument("--here", action="store_true",
                        help="the project is the current directory (a clone): the cell tagged `clone` is "
                             "skipped, PROJECT is this directory and WORK its build/notebook/; files the "
                             "notebook overwrites in the checkout are put back when the run ends")
    parser.add_argument("--allow-no-gpu", action="store_true",
                        help="accept what a machine without a GPU gives: nvidia-smi failing, grader/grade "
                             "exiting 3; checks everything but the grading itself")
    parser.add_argument("--kernel", metavar="FILE",
                        help="the cell tagged `kernel` writes FILE instead of its own text (e.g. "
                             "solutions/00_naive/kernel.cu), and every grading after it must pass: exit 0 "
                             "and every chapter of its report passed (with --allow-no-gpu, 'not graded: no "
                             "GPU' will do, so a compile error or a refused file still fails the run)")
    parser.add_argument("--skip-tag", action="append", default=[], metavar="TAG",
                        help="also skip the cells tagged TAG (e.g. install: where the build's needs are "
                             "installed already, or apt-get and pip may not be used); repeatable")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="after the cell tagged `settings`, set the variable NAME to the string VALUE "
                             "(e.g. --set REPO_URL=/path/to/a/clone); repeatable")
    parser.add_argument("--print", action="store_true", help="print the script and run nothing")
    options = parser.parse_args()

    overrides = {}
    for item in options.set:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            parser.error(f"--set wants NAME=VALUE, not {item!r}")
        overrides[name] = value
    if options.kernel:
        options.kernel = os.path.abspath(options.kernel)
        if not os.path.isfile(options.kernel):
            parser.error(f"--kernel {options.kernel}: no such file")
    here = os.getcwd()
    if options.here and not os.path.isfile(os.path.join(here, "grader", "grade")):
        parser.error("--here: run it from the project's root (grader/grade is not here)")

    try:
        nb = load_notebook(options.notebook)
        cells = []
        skip = {"colab-only", *options.skip_tag} | ({"clone"} if options.here else set())
        for index, cell in enumerate(nb["cells"]):
            if cell["cell_type"] != "code":
                continue
            tags = tags_of(cell)
            first = next((l for l in source_of(cell).splitlines() if l.strip()), "")
            skipped = sorted(skip.intersection(tags))
            cells.append((index, tags, first, skipped, None if skipped else translate(source_of(cell), index)))
    except Failure as e:
        print(f"run_notebook: {e}", file=sys.stderr)
        return 2

    if options.print:
        for index, tags, first, skipped, code in cells:
            print(f"# ---- cell {index}{' [' + ', '.join(tags) + ']' if tags else ''}")
            print(f"# skipped (tagged {', '.join(skipped)})\n" if skipped else code)
        return 0

    install_display_stand_in()
    runner = Runner(options)
    namespace = {"__name__": "__main__", "_runner": runner}
    failed = None
    try:
        for index, tags, first, skipped, code in cells:
            label = f"cell {index}{' [' + ', '.join(tags) + ']' if tags else ''}: {first[:70]}"
            if skipped:
                print(f"==== {label}  -- skipped (tagged {', '.join(skipped)})", flush=True)
                if "clone" in skipped and options.here:
                    os.chdir(namespace.get("PROJECT", here))
                continue
            print(f"==== {label}", flush=True)
            runner.cell_tags = tags
            try:
                exec(compile(code, f"<cell {index}>", "exec"), namespace)
            except Failure as e:
                failed = f"cell {index} failed: {e}"
            except SystemExit as e:
                if e.code not in (None, 0):
                    failed = f"cell {index} failed: {e.code}"
            except BaseException:  # the cell's own error, Ctrl-C included
                traceback.print_exc()
                failed = f"cell {index} failed: {sys.exc_info()[0].__name__}"
            if failed:
                break
            if "settings" in tags:
                settings = dict(overrides)
                if options.here:  # the checkout is the project; what the notebook writes goes to build/
                    settings = {"PROJECT": here, "WORK": os.path.join(here, "build", "notebook"), **settings}
                for name, value in settings.items():
                    namespace[name] = value
                    print(f"(settings: {name} = {value!r})")
                if "WORK" in settings:
                    os.makedirs(namespace["WORK"], exist_ok=True)
    finally:
        os.chdir(here)
        runner.restore()
    if failed:
        print(f"run_notebook: {failed}", file=sys.stderr)
        return 1
    print(f"run_notebook: every cell ran ({sum(1 for c in cells if not c[3])} run, "
          f"{sum(1 for c in cells if c[3])} skipped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
