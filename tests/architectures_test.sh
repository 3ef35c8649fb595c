#!/usr/bin/env bash
# Every chapter builds for every GPU the course supports: the T4 of Google Colab
# and older course servers (sm_75) as well as Hopper (sm_90).
#   bash tests/architectures_test.sh <source-dir> <work-dir> [archs]
# Configures a build of its own in <work-dir> (only the chapter tests: no grader,
# no book) for [archs] (default "75-real;90-real"), builds the reference and the
# learner object of every chapter in grader/manifest.json and the chapter tests,
# and fails on any compile error and on any warning from nvcc, ptxas or the
# compilers (a warning that only one architecture gives, such as launch bounds
# beyond sm_75's 1024 threads per SM, is one ptxas prints and -Werror would not
# name). Where cuobjdump is on PATH, it also checks that every object carries
# machine code for every architecture asked for. Prints one line: what was built,
# for what, in how long. Needs no GPU.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 <source-dir> <work-dir> [archs, default \"75-real;90-real\"]" >&2
  exit 2
fi
src=$(cd "$1" && pwd)
work=$2
archs=${3:-"75-real;90-real"}
mkdir -p "$work"
work=$(cd "$work" && pwd)
log=$work/architectures.log
start=$(date +%s)

fail() {
  echo "architectures: FAILED for $archs: $* (log: $log)" >&2
  exit 1
}

# The chapters, in the manifest's order.
mapfile -t slugs < <(python3 "$src/grader/manifest.py" slugs "$src/grader/manifest.json")
[ ${#slugs[@]} -gt 0 ] || fail "no chapters in grader/manifest.json"
targets=(chapter_tests)
for slug in "${slugs[@]}"; do targets+=("${slug}_reference" "${slug}_learner"); done

generator=()
if command -v ninja >/dev/null || command -v ninja-build >/dev/null; then generator=(-G Ninja); fi

# A cache from another architecture list would be reused silently: start afresh
# whenever the list differs.
if [ -f "$work/CMakeCache.txt" ] &&
   ! grep -qxF "CMAKE_CUDA_ARCHITECTURES:STRING=$archs" "$work/CMakeCache.txt"; then
  rm -rf "$work/CMakeCache.txt" "$work/CMakeFiles"
fi

{
  echo "== configure ($archs)"
  cmake -S "$src" -B "$work" ${generator[@]+"${generator[@]}"} \
    -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
    -DWORKBOOK_CHAPTERS_ONLY=ON
} >"$log" 2>&1 || { tail -n 20 "$log" >&2; fail "configuring failed"; }

# Build from clean, so that every object's warnings are in this log.
cmake --build "$work" --target clean >>"$log" 2>&1 || true
echo "== build ${targets[*]}" >>"$log"
build_rc=0
cmake --build "$work" --target "${targets[@]}" >>"$log" 2>&1 || build_rc=$?

# Errors and warnings: nvcc's and ptxas's own lines ("nvcc warning :", "ptxas
# warning :", "ptxas error :"), the front end's ("kernel.cu(12): warning #177-D")
# and the host compiler's ("kernel.cu:12:3: warning:").
problems=$(grep -nE '(^|[^A-Za-z_-])([Ww]arning|[Ee]rror)( #[0-9]+(-D)?)? *:|^FAILED:' "$log" || true)
if [ -n "$problems" ] || [ $build_rc -ne 0 ]; then
  echo "architectures: errors or warnings building for $archs:" >&2
  if [ -n "$problems" ]; then
    printf '%s\n' "$problems" | head -n 40 >&2
  else
    tail -n 20 "$log" >&2
  fi
  fail "$(printf '%s\n' "$problems" | grep -c . || true) error or warning lines, build exit $build_rc"
fi

# The machine code in each chapter object, where cuobjdump can tell.
checked=""
if command -v cuobjdump >/dev/null; then
  wanted=()
  IFS=';' read -ra list <<<"$archs"
  for a in "${list[@]}"; do
    [[ $a =~ ^([0-9]+) ]] && [[ $a != *-virtual ]] && wanted+=("sm_${BASH_REMATCH[1]}")
  done
  count=0
  for slug in "${slugs[@]}"; do
    for subject in reference learner; do
      object=$(find "$work/grader/judge/CMakeFiles/${slug}_${subject}.dir" -name 'kernel.cu.o' -print -quit)
      [ -n "$object" ] || fail "no object for ${slug}_${subject}"
      elves=$(cuobjdump --list-elf "$object" 2>>"$log") || fail "cuobjdump cannot read $object"
      for sm in "${wanted[@]}"; do
        grep -q "\.$sm\.cubin" <<<"$elves" || fail "${slug}_${subject} has no $sm machine code"
      done
      count=$((count + 1))
    done
  done
  checked=", $count objects hold ${wanted[*]} machine code"
fi

elapsed=$(($(date +%s) - start))
echo "architectures: ${#slugs[@]} chapters (reference and learner) and the chapter tests build for $archs with no error or warning${checked} (${elapsed} s)"
