#!/usr/bin/env python3
"""The commands the lessons tell a reader to type name files the build makes.

A lesson shows commands on the default build's files (build/default/grader/judge/reference_<chapter>,
the reference's object for cuobjdump, ...). This fails when such a path is neither in the build tree
nor a file the build can make on request (an output in build.ninja: test_<chapter>, which the lesson
builds first), and when a command gives a learner's test program (test_<chapter>) the reference's
subject (--subject=reference): the judge refuses a subject its implementation did not register as.

  lesson_commands_test.py <source dir> <build dir>

Run after the build (the workflow's test step); paths with a shell variable ($ch) are not checked, nor
those of a chapter this build has no targets for (chapter 17 where CMake found no NCCL).
"""
import pathlib
import re
import sys

PATH = re.compile(r"build/default/([A-Za-z0-9_./-]+)")
LEARNER_WITH_REFERENCE_SUBJECT = re.compile(r"\btest_\d\d_\w+\b[^\n`]*--subject=reference")


def buildable(build):
    """The files build.ninja can make, relative to the build folder (empty for another generator)."""
    outputs = set()
    ninja = build / "build.ninja"
    if not ninja.exists():
        return outputs
    for line in ninja.read_text(encoding="utf-8", errors="replace").splitlines():
        if line.startswith("build "):
            head = line[len("build "):].replace("$ ", "\0").split(":", 1)[0]
            outputs.update(word.replace("\0", " ") for word in head.split())
    return outputs


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: lesson_commands_test.py <source dir> <build dir>")
    src = pathlib.Path(sys.argv[1]).resolve()
    build = pathlib.Path(sys.argv[2]).resolve()
    failures = []
    checked = 0
    outputs = buildable(build)
    sys.path.insert(0, str(src / "grader"))
    import manifest  # noqa: E402  grader/manifest.py: the one list of chapters
    chapters = manifest.slugs(src / "grader" / "manifest.json")
    for lesson in (src / "chapters" / slug / "lesson.md" for slug in chapters):
        where = lesson.relative_to(src)
        for number, line in enumerate(lesson.read_text(encoding="utf-8").splitlines(), 1):
            for match in PATH.finditer(line):
                rest = match.group(1).rstrip(".")
                after = line[match.end():match.end() + 1]
                if after == "$" or rest.endswith("_"):  # reference_$ch: a shell loop's file
                    continue
                chapter = next((c for c in chapters if c in rest), "")
                if chapter and outputs and f"grader/judge/reference_{chapter}" not in outputs:
                    continue  # no targets for this chapter in this build
                checked += 1
                if not (build / rest).exists() and rest not in outputs:
                    failures.append(f"{where}:{number}: build/default/{rest} is not in the build ({build / rest})")
            if LEARNER_WITH_REFERENCE_SUBJECT.search(line):
                failures.append(f"{where}:{number}: a learner's test program with --subject=reference (the judge "
                                f"refuses it): {line.strip()}")
    for f in failures:
        print(f)
    print(f"{checked} paths in the lessons checked against {build}; {len(failures)} problems")
    if checked == 0:
        print("no build/default/ path found in the lessons: the pattern or the lessons changed")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
