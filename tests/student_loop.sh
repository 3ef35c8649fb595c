#!/usr/bin/env bash
# The student's loop: list, hints one step at a time, status, reset (asks, keeps a
# backup), and a debug build that says it needs a GPU where there is none; with a GPU,
# chapters 00-02 filled in and passed one by one, and the race detector on a racy 04.
#   tests/student_loop.sh <grader> <source dir> <work dir>
set -uo pipefail
grader=$1 source=$2 work=$3
# A tree of a new path each run: progress (build/default/progress.json) is kept per tree.
rm -rf "$work" && work="$work/run-$$" && mkdir -p "$work" && cp -r "$source/chapters" "$work/chapters"
cd "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
g() { "$grader" --chapters "$work/chapters" "$@"; }

[ "$(g list | grep -c 'lesson:')" -eq "$(ls -d "$source"/chapters/[0-9][0-9]_*/ | wc -l)" ] ||
  fail "list does not name every chapter's lesson: $(g list | head -5)"

g hint 3 >h1.txt; g hint 03 >h2.txt; g hint 03_idle_threads --all >h3.txt
grep -q '^Hint 1/' h1.txt && ! grep -q '^Hint 2/' h1.txt || fail "the first hint alone, first: $(cat h1.txt)"
grep -q '^Hint 2/' h2.txt && ! grep -q '^Hint 1/' h2.txt || fail "asking again shows the next hint alone: $(cat h2.txt)"
grep -q 'That was the last hint' h3.txt || fail "--all shows every hint: $(cat h3.txt)"
grep -q 'lesson.md, "' h1.txt || fail "a hint names its lesson section: $(cat h1.txt)"

g status >s1.txt
grep -Eq '^  00_naive +not started' s1.txt || fail "an untouched stub is not started: $(cat s1.txt)"
grep -q 'Next: 00_naive' s1.txt || fail "status names the next chapter: $(cat s1.txt)"
echo "// my work" >>chapters/00_naive/kernel.cu
grep -Eq '^  00_naive +in progress' <(g status) || fail "an edited stub is in progress: $(g status | head -4)"

echo "// my work on 03" >>chapters/03_idle_threads/kernel.cu
g reset 03 </dev/null >r1.txt 2>&1
[ $? -eq 2 ] && grep -q -- '--yes' r1.txt || fail "reset without a terminal must ask for --yes: $(cat r1.txt)"
grep -q 'my work on 03' chapters/03_idle_threads/kernel.cu || fail "reset changed the file without asking"
g reset 03 --yes >r2.txt 2>&1 || fail "reset --yes failed: $(cat r2.txt)"
cmp -s chapters/03_idle_threads/kernel.cu "$source/chapters/03_idle_threads/kernel.cu" ||
  fail "reset did not restore the stub"
backup=$(ls chapters/03_idle_threads/kernel.cu.*.bak 2>/dev/null | head -1)
[ -n "$backup" ] && grep -q 'my work on 03' "$backup" || fail "reset kept no backup of the student's file"

# Graded chapters are recorded: status shows the last result; an untouched stub that was graded
# is still not started.
g --chapter 0 --chapter 1 >grade.txt 2>&1
rc=$?
[ $rc -eq 3 ] || [ $rc -eq 1 ] || fail "grading 00 and 01 exited $rc"
grep -Eq '^  00_naive +in progress +(not graded: no GPU|failed)' <(g status) || fail "status shows no result for 00: $(g status | head -4)"
grep -Eq '^  01_divergence +not started +(not graded: no GPU|failed)' <(g status) || fail "a graded, untouched stub is not started: $(g status | head -4)"

# A debug build: with device line information; without a GPU it says so and exits 3.
g debug 3 --tool racecheck >d.txt 2>&1
rc=$?
if [ $rc -eq 3 ]; then
  grep -q 'needs a CUDA device' d.txt || fail "debug without a GPU: $(tail -5 d.txt)"
elif [ $rc -gt 1 ]; then
  fail "debug exited $rc: $(tail -10 d.txt)"
fi

# With a GPU: fill chapters 00 to 02 with working kernels, one at a time, as a student
# would; each passes, status counts them done and names 03 next; the race detector on a
# racy chapter 04 names the student's file and line.
if [ $rc -ne 3 ]; then
  g reset 0 --yes >/dev/null 2>&1
  for c in 00_naive 01_divergence 02_bank_conflicts; do
    cp "$source/solutions/$c/kernel.cu" "chapters/$c/kernel.cu"
    g --chapter "$c" >"grade-$c.txt" 2>&1 || fail "a working $c did not pass: $(tail -15 grade-$c.txt)"
  done
  g status >s2.txt
  for c in 00_naive 01_divergence 02_bank_conflicts; do
    grep -Eq "^  $c +done +passed" s2.txt || fail "status does not show $c done: $(cat s2.txt)"
  done
  grep -q '3 of .* chapters done. Next: 03_idle_threads' s2.txt || fail "status after 00-02: $(tail -2 s2.txt)"
  cp "$source/tests/submissions/faulty/04_last_warp/kernel.cu" chapters/04_last_warp/kernel.cu
  g debug 4 --tool racecheck >d4.txt 2>&1
  # compute-sanitizer names the file as it was compiled, by its base name: kernel.cu:LINE.
  grep -Eq "Race reported .* in kernel\.cu:[0-9]+" d4.txt ||
    fail "racecheck on a racy 04 names no line of the student's file: $(grep -m5 -E 'hazard|kernel\.cu' d4.txt)"
fi

if [ $failures -eq 0 ]; then echo "student loop: all checks passed"; else echo "student loop: $failures checks failed"; fi
[ $failures -eq 0 ]
