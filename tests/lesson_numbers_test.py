#!/usr/bin/env python3
"""The figures written into the lessons and the main page are today's results, and the code
they quote is what the stubs hold today.

Each figure a lesson shows is written out where a reader of the Markdown sees it, with a
hidden marker naming where it comes from (<!--@@name@@-->value<!--@@end@@-->; see
book/render.py). This fails when a written value differs from what book/results give (that
is, when `book/render.py --update-sources` would change the file), or when a bare @@token@@
is left, printing the file, the line and both values.

  lesson_numbers_test.py <source dir>

Needs neither matplotlib nor Doxygen.
"""
import importlib.util
import pathlib
import sys


def load_render(src):
    spec = importlib.util.spec_from_file_location("render", src / "book" / "render.py")
    render = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(render)
    return render


def show(value):
    return "'" + value.strip("\n") + "'"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: lesson_numbers_test.py <source dir>")
    src = pathlib.Path(sys.argv[1]).resolve()
    render = load_render(src)
    book = render.Book(src)
    failures = []
    figures = 0
    for path in book.sources():
        where = book.where(path)
        text = path.read_text()
        before = len(failures)
        for line, name, written in render.written_figures(text):
            figures += 1
            if written is None:
                failures.append(f"{where}:{line}: bare token @@{name}@@ (not written out; run "
                                f"python3 book/render.py --update-sources {sys.argv[1]})")
                continue
            expected = book.expected(name, path)
            if f"<!--@@{name}@@-->{written}{render.END}" == render.written_form(name, expected):
                continue
            if written.strip("\n") == expected.strip("\n"):
                failures.append(f"{where}:{line}: @@{name}@@: the block's blank lines differ from "
                                f"what --update-sources writes (one blank line either side)")
            elif "\n" in expected or "\n" in written:
                first = line + len(written) - len(written.lstrip("\n"))  # the block's first line
                old, new = written.strip("\n").splitlines(), expected.strip("\n").splitlines()
                for i in range(max(len(old), len(new))):
                    a = old[i] if i < len(old) else "(no line)"
                    b = new[i] if i < len(new) else "(no line)"
                    if a != b:
                        failures.append(f"{where}:{first + i}: @@{name}@@ (block):\n"
                                        f"    written: {a}\n    now:     {b}")
            else:
                failures.append(f"{where}:{line}: @@{name}@@: written {show(written)}, "
                                f"results give {show(expected)}")
        # Anything else --update-sources would change (a block's blank lines, say).
        if len(failures) == before and book.updated(path) != text:
            failures.append(f"{where}: book/render.py --update-sources would rewrite this file")
    for f in failures:
        print(f)
    if failures:
        print(f"\n{len(failures)} problem(s): refresh the figures with\n"
              f"  python3 book/render.py --update-sources {sys.argv[1]}")
        return 1
    print(f"{figures} figures in {len(book.sources())} pages match book/results")
    return 0


if __name__ == "__main__":
    sys.exit(main())
