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
usage_error "whole number" --seed -1
usage_error "whole number" --seed 12abc
usage_error "larger than" --seed 99999999999999999999
usage_error "not in range" --timeout -5
usage_error "not in range" --timeout 0
usage_error "did you mean $work/alice/chapters" --chapters alice
usage_error "no such directory" --chapters nowhere
usage_error "does not exist" --chapters alice/chapters --report missing-dir/alice.json
usage_error "does not exist" --chapters alice/chapters --roster missing-dir/roster.csv
usage_error "not expected" --no-such-option
"$grader" --help >/dev/null 2>&1 || fail "--help exited $?"

# Relative paths are the caller's.
"$grader" --chapters alice/chapters --chapter 0 --build-dir build --report alice.json \
  --gradescope results.json --roster roster.csv --seed 0 >grade.txt 2>&1
rc=$?
# 0 without a GPU (built, skipped); 1 with one (the untouched stub fails).
[ $rc -le 1 ] || { fail "grading alice exited $rc"; tail -20 grade.txt; }
for f in alice.json results.json roster.csv; do [ -s "$f" ] || fail "$f was not written here"; done
grep -Eq '"seed": 0,?$' alice.json || fail "--seed 0 is a seed like any other"
[ "$(head -1 roster.csv | tr ',' '\n' | grep -c '^[0-9][0-9]_')" -eq "$(ls "$source/solutions" | grep -c '^[0-9][0-9]_')" ] ||
  fail "the roster has not one column per chapter: $(head -1 roster.csv)"

# Ctrl-C while building: every child process ends, the report says interrupted.
rm -rf build2
"$grader" --chapters alice/chapters --build-dir "$work/build2" --report interrupted.json >int.txt 2>&1 &
pid=$!
for _ in $(seq 1 100); do  # wait until the build runs
  pgrep -f "$work/build2" | grep -vq "^$pid$" && break
  sleep 0.2
done
sleep 1
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] || fail "an interrupted grader exited $rc, not 130"
sleep 0.5
left=$(pgrep -f "$work/build2" | grep -v "^$pid$" || true)
[ -z "$left" ] || { fail "processes left running after Ctrl-C: $(ps -o pid,args -p $left | tail -n +2)"; kill -9 $left; }
grep -q '"interrupted": true' interrupted.json || fail "the report of an interrupted run does not say so"

if [ $failures -eq 0 ]; then echo "command line: all checks passed"; else echo "command line: $failures checks failed"; fi
[ $failures -eq 0 ]
