#!/usr/bin/env bash
# The grader's command line as a new user meets it, without a GPU: usage errors
# exit 2 with one line, paths are the caller's, an interrupt ends every process
# the grader started and still writes the report, marked interrupted.
#   tests/grader_command_line.sh <grader> <source dir> <work dir>
set -uo pipefail
grader=$1 source=$2 work=$3
rm -rf "$work" && mkdir -p "$work/alice/chapters" && cd "$work"
cp -r "$source/chapters/00_naive" alice/chapters/
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

usage_error() {  # usage_error <what the message must say> <args...>
  local expect=$1; shift
  "$grader" "$@" >out.txt 2>err.txt
  local rc=$?
  [ $rc -eq 2 ] || fail "grader $* exited $rc, not 2"
  grep -q -- "$expect" err.txt || fail "grader $*: stderr does not say '$expect': $(cat err.txt)"
  [ "$(grep -c '^grader:' err.txt)" -eq 1 ] || fail "grader $*: not one line: $(cat err.txt)"
}
usage_error "03_idle_threads" --chapter 3x
mkdir -p empty-class && usage_error "no submission in it" --submissions empty-class --out empty-grades
mkdir -p read-only && chmod 555 read-only
if ! touch read-only/probe 2>/dev/null; then  # not as root, who may write anywhere
  usage_error "cannot write there" --report read-only/report.json --chapter 0
fi
usage_error "whole number" --seed -1
usage_error "whole number" --seed 12abc
usage_error "larger than" --seed 99999999999999999999
usage_error "not in range" --timeout -5
usage_error "not in range" --timeout 0
usage_error "did you mean $work/alice/chapters" --chapters alice
usage_error "no such directory" --chapters nowhere
usage_error "does not exist" --chapters alice/chapters --report missing-dir/alice.json
usage_error "does not exist" --chapters alice/chapters --junit missing-dir/junit.xml
usage_error "needs --out" --submissions .
usage_error "K/N" --submissions . --out grades --shard 3/2
usage_error "K/N" --submissions . --out grades --shard x
usage_error "go with --submissions" --shard 1/2
usage_error "for one" --submissions . --out grades --report r.json
usage_error "no such directory" --submissions nowhere --out grades
usage_error "GPU numbers" --gpus 0,a
usage_error "after_due_date" --gradescope-visibility sometimes
usage_error "no such directory" --merge nowhere
usage_error "no such file" --merge . --ids nowhere.csv
usage_error "not expected" --no-such-option
"$grader" --help >/dev/null 2>&1 || fail "--help exited $?"

# Relative paths are the caller's.
"$grader" --chapters alice/chapters --chapter 0 --report alice.json --gradescope results.json \
  --prairielearn pl.json --junit junit.xml --feedback feedback.md --seed 0 >grade.txt 2>&1
rc=$?
# 3 without a GPU (built and checked, not graded); 1 with one (the untouched stub fails).
[ $rc -eq 3 ] || [ $rc -eq 1 ] || { fail "grading alice exited $rc"; tail -20 grade.txt; }
# Without a GPU, a chapter that does not compile is 4, not the 3 of a clean build.
if [ $rc -eq 3 ]; then
  mkdir -p broken/chapters/00_naive && echo "this is not C++" >broken/chapters/00_naive/kernel.cu
  "$grader" --chapters broken/chapters --chapter 0 --report broken.json >broken.txt 2>&1
  rc_broken=$?
  [ $rc_broken -eq 4 ] || fail "without a GPU, a chapter that does not compile must exit 4, not $rc_broken"
  grep -q "docs/no-gpu.md" broken.txt || fail "without a GPU the grader must point to docs/no-gpu.md: $(tail -5 broken.txt)"
  grep -q 'The chapters marked "not graded: no GPU" were built' broken.txt ||
    fail "without a GPU the grader must name the status it marks: $(grep -F 'chapters marked' broken.txt)"
fi
for f in alice.json results.json pl.json junit.xml feedback.md; do [ -s "$f" ] || fail "$f was not written here"; done
grep -Eq '"seed": 0,?$' alice.json || fail "--seed 0 is a seed like any other"
if [ $rc -eq 3 ]; then
  grep -q '"status": "no_gpu"' alice.json || fail "no GPU: the report must say not graded"
  grep -q '"gradable": false' pl.json || fail "no GPU: PrairieLearn must be told it is not gradable"
fi

# A class: folders (bare, wrapped) and archives, graded into --out, then merged with an id mapping.
mkdir -p class/bob/handin class/carol
cp -r alice/chapters class/bob/handin/
cp -r alice/chapters/00_naive class/carol/
(cd alice && tar czf ../class/dave.tar.gz chapters)
echo "not an archive" >class/eve.zip
"$grader" --submissions class --out grades --chapter 0 --seed 1 >class.txt 2>&1
rc=$?
[ $rc -eq 3 ] || [ $rc -eq 4 ] || [ $rc -eq 1 ] || { fail "grading the class exited $rc"; tail -20 class.txt; }
for id in bob carol dave eve; do
  for f in report.json feedback.md results.json prairielearn.json junit.xml; do
    [ -s "grades/$id/$f" ] || fail "grades/$id/$f was not written"
  done
done
grep -q '"status": "rejected"' grades/eve/report.json || fail "an archive that is none must be rejected"
grep -q 'archive is refused' grades/eve/report.json || fail "the rejection must say why: $(grep detail grades/eve/report.json)"
for f in gradebook.csv junit.xml summary.txt; do [ -s "grades/$f" ] || fail "grades/$f was not written"; done
[ "$(wc -l <grades/gradebook.csv)" -eq 5 ] || fail "the gradebook has not one row per submission: $(cat grades/gradebook.csv)"
printf 'submission,student\nbob,s1001\ncarol,s1002\n' >ids.csv
"$grader" --merge grades --ids ids.csv >merge.txt 2>&1 || fail "merge exited $?: $(tail -5 merge.txt)"
grep -q '^s1001,' grades/gradebook.csv || fail "the id mapping is not in the gradebook: $(cat grades/gradebook.csv)"
# Shards: every submission in exactly one.
rm -rf shards && for k in 1 2 3; do
  "$grader" --submissions class --out shards --shard $k/3 --chapter 0 >shard$k.txt 2>&1
done
[ "$(ls -d shards/*/ | wc -l)" -eq 4 ] || fail "three shards did not grade each of 4 submissions once: $(ls shards)"
grep -q "Grading 2 submissions" shard1.txt || fail "shard 1/3 of 4 is 2 submissions: $(head -3 shard1.txt)"

# Ctrl-C while compiling: every process the grader started ends, the compilers ninja started
# in process groups of their own (nvcc, cicc, ptxas) too; the report says interrupted. Every
# process it starts inherits its environment, so a marker there finds them all.
marker="WORKBOOK_TEST_MARKER=ctrl-c-$$"
descendants() { grep -ls "$marker" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 | grep -v "^$pid$" || true; }
rm -rf build2
env "$marker" "$grader" --chapters alice/chapters --build-dir "$work/build2" --report interrupted.json >int.txt 2>&1 &
pid=$!
for _ in $(seq 1 600); do  # wait until ninja runs a compiler (not CMake's own checks)
  names=$(for p in $(descendants); do cat /proc/$p/comm 2>/dev/null; done)
  grep -qx ninja <<<"$names" && grep -Eqx 'nvcc|cicc|ptxas|cudafe\+\+|cc1plus' <<<"$names" && break
  sleep 0.2
done
sleep 0.5
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "an interrupted grader exited $rc, not 130"
sleep 0.5
left=$(descendants)
[ -z "$left" ] || { fail "processes left running after Ctrl-C: $(ps -o pid,args -p $left | tail -n +2)"; kill -9 $left; }
grep -q '"interrupted": true' interrupted.json || fail "the report of an interrupted run does not say so"

if [ $failures -eq 0 ]; then echo "command line: all checks passed"; else echo "command line: $failures checks failed"; fi
[ $failures -eq 0 ]
