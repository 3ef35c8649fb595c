#!/usr/bin/env python3
"""The manifest (grader/manifest.json) is the one list of chapters. This test
fails where something else disagrees with it:
  - a lesson's title (its first line) is not the manifest's version and title;
  - a lesson's Previous/Next line does not follow the manifest's order;
  - the README's chapter table does not list the manifest's chapters, in order;
  - code names a chapter's derived target or page (lesson_NN_x, reference_NN_x,
    test_NN_x) instead of reading the manifest;
  - a stub and its reference disagree on their includes, their registration or the
    code the stub gives;
  - the manifest does not have the shape grader/manifest.schema.json describes.

  python3 tests/catalogue_test.py <source dir>
"""
import json
import pathlib
import re
import subprocess
import sys

src = pathlib.Path(sys.argv[1])
sys.path.insert(0, str(src / "grader"))
import manifest as manifest_reader  # noqa: E402  grader/manifest.py
manifest = manifest_reader.load(src / "grader" / "manifest.json")
chapters = manifest["chapters"]
slugs = [c["slug"] for c in chapters]
problems = []


def heading(c):
    label = c["version"] if c["version"].startswith("V") else f"Chapter {c['version']}"
    return f"# {label}: {c['title']} {{#lesson_{c['slug']}}}"


def navigation(i):
    parts = []
    if i > 0:
        parts.append(f"Previous: \\ref lesson_{slugs[i - 1]}")
    parts.append(f"Next: \\ref lesson_{slugs[i + 1]}" if i + 1 < len(slugs) else "Next: \\ref results")
    return " · ".join(parts)


for i, c in enumerate(chapters):
    lesson = src / "chapters" / c["slug"] / "lesson.md"
    if not lesson.exists():
        problems.append(f"{lesson}: missing")
        continue
    lines = lesson.read_text(encoding="utf-8").splitlines()
    if lines[0] != heading(c):
        problems.append(f"{lesson}: first line\n    {lines[0]}\n  the manifest says\n    {heading(c)}")
    nav = [l for l in lines if l.startswith(("Previous: ", "Next: "))]
    if not nav or nav[-1] != navigation(i):
        problems.append(f"{lesson}: navigation\n    {nav[-1] if nav else '(none)'}\n  the manifest's order says\n    {navigation(i)}")

readme = (src / "README.md").read_text(encoding="utf-8")
listed = re.findall(r"^\| `(\d\d_[a-z_]+)` \|", readme, re.M)
if listed != slugs:
    problems.append(f"README.md: the chapter table lists {listed}, the manifest {slugs}")

derived = re.compile(r"\b(lesson|reference|test)_(" + "|".join(map(re.escape, slugs)) + r")\b")
code = subprocess.run(["git", "-C", str(src), "ls-files"], capture_output=True, text=True).stdout.split()
if not code:  # not a git checkout: every file
    code = [str(p.relative_to(src)) for p in src.rglob("*") if p.is_file() and "build" not in p.parts]
for name in code:
    path = src / name
    if (name.startswith(("chapters/", "solutions/", "tests/submissions/", "tests/data/", "book/results/", "docs/", "notebooks/"))
            or name.endswith((".md", ".json", ".ipynb")) or not path.is_file()):
        continue
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        continue
    for n, line in enumerate(text.splitlines(), 1):
        m = derived.search(line)
        if m:
            problems.append(f"{name}:{n}: names {m.group(0)}; read the chapters from the manifest")

# The given block pass is the first block-pass chapter's answer that later chapters get; that
# chapter's reference, a file a learner could hand in, holds the same text (between markers).
def block_pass_text(path):
    text = path.read_text(encoding="utf-8")
    begin = text.find("// ---- begin: the block pass")
    end = text.find("// ---- end: the block pass")
    return text[begin:end] if 0 <= begin < end else None

given = [c for c in chapters if "workbook/block_pass.cuh" in c.get("given", [])]
if given:
    answer = chapters[chapters.index(given[0]) - 1]["slug"]
    header = block_pass_text(src / "harness" / "workbook" / "block_pass.cuh")
    reference = block_pass_text(src / "solutions" / answer / "kernel.cu")
    if header is None or reference is None or header != reference:
        problems.append(f"harness/workbook/block_pass.cuh and solutions/{answer}/kernel.cu: the block pass "
                        "between their '// ---- begin/end: the block pass' markers must be the same text")

# Each stub against its reference and its manifest entry:
# - what a stub gives is what its reference uses: both include the same harness headers, and each
#   of them is workbook/chapter.cuh or listed in the chapter's "given" (else the grader refuses it);
# - each registers with the line the manifest's kind asks for;
# - the code a stub gives in its text (a `//! [name]` block with no TODO, which its lesson shows)
#   is the reference's own, comments, spacing and [[maybe_unused]] aside.
snippet_mark = re.compile(r"^\s*//! \[(\w+)\]\s*$")


def code_only(text):
    text = re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))
    return re.sub(r"\s+", " ", text.replace("[[maybe_unused]]", "")).strip()


def given_blocks(text):
    """{name: the code between `//! [name]` markers} for each block of a stub with no TODO in it."""
    found, open_at, lines = {}, {}, text.splitlines()
    for i, line in enumerate(lines):
        m = snippet_mark.match(line)
        if m and m.group(1) in open_at:
            body = lines[open_at.pop(m.group(1)) + 1:i]
            if not any("TODO" in b for b in body):
                found[m.group(1)] = "\n".join(body)
        elif m:
            open_at[m.group(1)] = i
    return found


include = re.compile(r'^\s*#\s*include\s+"(workbook/[^"]+)"', re.M)
registration = re.compile(r"^WORKBOOK_(BLOCK_PASS|FULL_REDUCE|TUNED_REDUCE|GENERIC_REDUCE|RANK_REDUCE)\(", re.M)
for c in chapters:
    files = {tree: src / tree / c["slug"] / "kernel.cu" for tree in ("chapters", "solutions")}
    texts = {tree: path.read_text(encoding="utf-8") for tree, path in files.items() if path.is_file()}
    if len(texts) == 2:
        gives, uses = (set(include.findall(texts[tree])) for tree in ("chapters", "solutions"))
        if gives != uses:
            problems.append(f"chapters/{c['slug']}/kernel.cu includes {sorted(gives)}, its reference {sorted(uses)}: "
                            "the stub must give what the reference uses")
        reference = code_only(texts["solutions"])
        for name, block in given_blocks(texts["chapters"]).items():
            if code_only(block) not in reference:
                problems.append(f"chapters/{c['slug']}/kernel.cu gives `{name}`, which is not the code of its "
                                "reference: the stub must give what the reference runs")
        for header in sorted(gives - {"workbook/chapter.cuh"} - set(c.get("given", []))):
            problems.append(f"chapters/{c['slug']}/kernel.cu includes {header}, which its manifest entry does not "
                            "list as given: the grader would refuse the stub")
    wanted = ("BLOCK_PASS" if c["kind"] == "block_pass" else "TUNED_REDUCE" if c.get("tuned")
              else "GENERIC_REDUCE" if c.get("generic") else "RANK_REDUCE" if c.get("ranks") else "FULL_REDUCE")
    for tree, text in texts.items():
        found = registration.findall(text)
        if found != [wanted]:
            problems.append(f"{tree}/{c['slug']}/kernel.cu registers with {['WORKBOOK_' + f for f in found]}; its "
                            f"manifest entry (kind {c['kind']}{', tuned' if c.get('tuned') else ''}"
                            f"{', generic' if c.get('generic') else ''}{', ranks' if c.get('ranks') else ''}) asks for "
                            f"WORKBOOK_{wanted}")

for p in problems:
    print("PROBLEM:", p)
print("catalogue:", "the lessons, the README and the code agree with the manifest" if not problems
      else f"{len(problems)} problems")
sys.exit(1 if problems else 0)
