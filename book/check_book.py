#!/usr/bin/env python3
"""Reads the built book as a reader would, in headless Chromium.

Checks that every internal link and image resolves, that every chapter's
lesson is reachable from the main page, that math is rendered by MathJax with
no raw TeX left on the page, that the sidebar lists the lessons in order, that
the offline search has an index of them, that the full-text search page finds a word from
the middle of a lesson (and nothing for a word that is nowhere), and takes screenshots (desktop and phone width)
of the main page and one lesson. Exits non-zero on the first kind of failure
found, listing every instance.
"""
import argparse
import html.parser
import json
import pathlib
import re
import subprocess
import sys
import urllib.parse


class Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.targets = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for key in ("href", "src", "data"):
            if a.get(key):
                self.targets.append((tag, a[key]))


def local_target(page, url):
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme or url.startswith("#") or url.startswith("javascript:"):
        return None
    return (page.parent / urllib.parse.unquote(parsed.path)).resolve()


def chromium(binary, *args):
    cmd = [binary, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--allow-file-access-from-files", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--html", required=True, type=pathlib.Path)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--manifest", required=True)
    ap.add_argument("--chapters", required=True, type=pathlib.Path)
    ap.add_argument("--screenshots", required=True, type=pathlib.Path)
    args = ap.parse_args()
    root = args.html.resolve()
    problems = []

    # 1. Every internal link and image on every page resolves.
    pages = sorted(root.glob("*.html"))
    links = {}
    for page in pages:
        parser = Links()
        parser.feed(page.read_text(errors="replace"))
        links[page] = []
        for tag, url in parser.targets:
            target = local_target(page, url)
            if target is None:
                continue
            if not target.exists():
                problems.append(f"{page.name}: <{tag}> {url} does not resolve")
            elif target.suffix == ".html":
                links[page].append(target)
    # 2. Every lesson is reachable from the main page.
    seen, todo = set(), [root / "index.html"]
    while todo:
        page = todo.pop()
        if page in seen or page not in links:
            continue
        seen.add(page)
        todo.extend(links[page])
    lessons = []
    for ch in json.load(open(args.manifest))["chapters"]:
        if (args.chapters / ch["slug"] / "lesson.md").exists():
            page = root / f"lesson_{ch['slug']}.html"
            lessons.append(page)
            if page not in seen:
                problems.append(f"{page.name}: the lesson of {ch['slug']} is not reachable from index.html")
    if (root / "results.html") not in seen:
        problems.append("results.html is not reachable from index.html")

    # 3. Math is rendered: MathJax has run, and no TeX delimiters are left as text.
    for page in [root / "index.html"] + lessons:
        if not page.exists():
            problems.append(f"{page.name}: missing")
            continue
        source = page.read_text(errors="replace")
        if "\\(" not in source and "\\[" not in source:
            continue  # no math on this page
        dom = chromium(args.chromium, "--virtual-time-budget=8000", "--dump-dom", page.as_uri()).stdout
        if "MathJax" not in dom or not re.search(r'class="[^"]*(MathJax|MJX|mjx)', dom):
            problems.append(f"{page.name}: MathJax did not render the math")
        text = re.sub(r"<script.*?</script>", "", dom, flags=re.S)
        text = re.sub(r"<[^>]+>", "", text)
        raw = re.findall(r"\\[\(\[]|\\f\$|\\f\[", text)
        if raw:
            problems.append(f"{page.name}: raw TeX left on the page ({len(raw)} delimiters)")

    # 4. The sidebar is the book's table of contents: on a lesson's page it lists
    #    "The lessons" and every lesson, in the manifest's order.
    if lessons:
        page = lessons[min(3, len(lessons) - 1)]
        dom = chromium(args.chromium, "--virtual-time-budget=8000", "--dump-dom", page.as_uri()).stdout
        nav = dom[dom.find('id="nav-tree"'):] if 'id="nav-tree"' in dom else ""
        if "The lessons" not in nav:
            problems.append(f"{page.name}: the sidebar has no 'The lessons'")
        order = [nav.find(f'href="{p.name}') for p in lessons]
        missing = [p.name for p, at in zip(lessons, order) if at < 0]
        if missing:
            problems.append(f"{page.name}: the sidebar does not list {', '.join(missing)}")
        elif order != sorted(order):
            problems.append(f"{page.name}: the sidebar lists the lessons out of order")
        heads = [nav.find(h) for h in ("The lessons", "Results", "API reference")]
        if min(heads) < 0 or heads != sorted(heads):
            problems.append(f"{page.name}: the sidebar is not the lessons, then the results, then the API reference")

    # 5. Search works offline: the search box is on the page and its index holds the lessons' titles.
    index = chromium(args.chromium, "--virtual-time-budget=8000", "--dump-dom", (root / "index.html").as_uri()).stdout
    if "MSearchField" not in index:
        problems.append("index.html: no search box")
    data = " ".join(p.read_text(errors="replace") for p in (root / "search").glob("*.js")) if (root / "search").is_dir() else ""
    if not data:
        problems.append("no search index (search/*.js)")
    elif lessons and "lesson_" not in data:
        problems.append("the search index does not reach the lessons")
    # The full-text search finds words inside a lesson's text and code, not only titles: for each
    # lesson, a word from the middle of its page must bring that lesson up, and nonsense nothing.
    search_page = root / "search_text.html"
    if not search_page.is_file():
        problems.append("no full-text search page (search_text.html)")
    else:
        index_js = (root / "text_index.js").read_text(errors="replace") if (root / "text_index.js").is_file() else ""
        entries = json.loads(index_js[index_js.find("["):index_js.rfind("]") + 1]) if index_js else []
        probes = [(e["url"], sorted(w for w in re.findall(r"[A-Za-z_]{9,}", e["text"][len(e["text"]) // 2:])
                                    if "_" in w)[:1]) for e in entries if e["url"].startswith("lesson_")]
        if len(probes) != len(lessons):
            problems.append(f"text_index.js holds {len(probes)} lessons, the book {len(lessons)}")
        for url, words in probes[:4] + [("(none)", ["qqxyzzy"])]:
            if not words:
                continue
            found = chromium(args.chromium, "--virtual-time-budget=5000", "--dump-dom",
                             search_page.as_uri() + "?q=" + urllib.parse.quote(words[0])).stdout
            hits = re.findall(r'class="workbook-search-hit"><a href="([^"]+)"', found)
            if url == "(none)" and hits:
                problems.append(f"search_text.html?q={words[0]}: found {hits} for a word that is nowhere")
            elif url != "(none)" and url not in hits:
                problems.append(f"search_text.html?q={words[0]}: {url} not among the results {hits}")

    # 6. Screenshots for a person to look at.
    args.screenshots.mkdir(parents=True, exist_ok=True)
    shots = [("index", root / "index.html"), ("lesson", lessons[min(7, len(lessons) - 1)] if lessons else None)]
    for name, page in shots:
        if page is None:
            continue
        for label, size in (("desktop", "1280,1800"), ("phone", "390,1800")):
            out = args.screenshots / f"{name}-{label}.png"
            chromium(args.chromium, "--virtual-time-budget=8000", f"--window-size={size}",
                     f"--screenshot={out}", page.as_uri())
            if not out.exists() or out.stat().st_size < 10000:
                problems.append(f"no screenshot of {page.name} at {label} width")
    print(f"{len(pages)} pages, {len(lessons)} lessons, {len(seen)} pages reachable from index.html; "
          f"screenshots in {args.screenshots}")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
