#!/usr/bin/env bash
# Grades a class through grader/slurm on a real single-node Slurm started here:
# munged, slurmctld and slurmd from Debian's packages (slurmctld slurmd
# slurm-client munge), with their own configuration, ports, munge socket and
# state under the work dir, so a Slurm already running on the machine is left
# alone. The node declares one GPU as a generic resource without a device file,
# so grade-class.sbatch's unchanged --gres=gpu:1 is accepted (and its two array
# tasks share that one GPU, one after the other).
#   tests/slurm_class_test.sh <source dir> <work dir> [--real]
# Without --real a stand-in grader written here grades (it writes
# OUT/<id>/report.json naming its shard and exits 3, "no GPU"); with --real it
# is <source dir>/grader/grade on three copies of <source dir>/chapters,
# chapter 00 only. Must run as root (the daemons run as root).
# Exit status: 0 passed, 1 failed, 77 skipped (Slurm or munge not installed).
set -uo pipefail
export PATH=$PATH:/usr/sbin:/sbin

if (($# < 2)) || { (($# == 3)) && [ "$3" != --real ]; } || (($# > 3)); then
  echo "usage: $0 <source dir> <work dir> [--real]" >&2
  exit 2
fi
source=$(cd "$1" && pwd) || exit 2
work=$2
real=0
[ "${3:-}" = --real ] && real=1

for tool in munged slurmctld slurmd sbatch squeue sinfo scontrol scancel; do
  if ! command -v "$tool" >/dev/null; then
    echo "SKIP: $tool not found: install Debian's slurmctld slurmd slurm-client munge" \
         "(apt-get install -y slurm-wlm munge)"
    exit 77
  fi
done
if [ "$(id -u)" -ne 0 ]; then
  echo "SKIP: the test starts slurmd and munged as root; run it as root"
  exit 77
fi

case $work in /|"") echo "refusing work dir '$work'" >&2; exit 2 ;; esac
rm -rf "$work" && mkdir -p "$work" || exit 2
work=$(cd "$work" && pwd -P)
mkdir -p "$work"/{etc,state,log,jobs}
# Sockets and slurmd's spool (which holds the job steps' sockets) need a short
# path: a UNIX socket's path is at most 107 bytes.
run=$(mktemp -d /tmp/wb-slurm.XXXXXX) && chmod 0755 "$run" && mkdir "$run/spool" || exit 2  # munged: clients must reach its socket
conf=$work/etc/slurm.conf
marker="wb-slurm-test-$$-$RANDOM"  # in the daemons' environment, to find what they left
host=$(hostname -s)
wait_jobs_s=$((real ? 600 : 120))

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
note() { echo "-- $*"; }
sl() { SLURM_CONF=$conf "$@"; }  # a Slurm command against this test's cluster
started=$(date +%s)

# --- Stopping everything, whatever happened --------------------------------
pids=()  # daemons: slurmd, slurmctld, munged (stopped in reverse order of start)
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
stop_pid() {  # stop_pid <pid> <name>: TERM, 15 s, KILL
  local pid=$1 name=$2
  alive "$pid" || return 0
  kill -TERM "$pid" 2>/dev/null
  for _ in $(seq 1 150); do alive "$pid" || break; sleep 0.1; done
  if alive "$pid"; then echo "$name ($pid) did not stop on TERM: killed"; kill -KILL "$pid" 2>/dev/null; fi
  wait "$pid" 2>/dev/null
  return 0
}
ours() {  # processes whose environment names this test's marker or configuration
  local p
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = $$ ] && continue
    { tr '\0' '\n' <"/proc/$p/environ"; } 2>/dev/null |
      grep -qxF -e "WORKBOOK_SLURM_TEST=$marker" -e "SLURM_CONF=$conf" && echo "$p"
  done
}
show_logs() {
  local f
  for f in "$work"/log/slurmctld.log "$work"/log/slurmd.log "$work"/log/munged.log \
           "$work"/log/*.stderr "$work"/jobs/*.out; do
    [ -s "$f" ] || continue
    echo "----- tail of $f"
    tail -n 40 "$f"
  done
}
cleanup() {
  local rc=$? left i
  trap - EXIT INT TERM
  trap '' PIPE  # a reader gone must not stop the cleanup halfway
  if alive "${slurmctld_pid:-}"; then
    sl scancel --quiet --user=root 2>/dev/null
    for _ in $(seq 1 50); do
      [ -z "$(sl squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    stop_pid "${pids[i]%%:*}" "${pids[i]#*:}"
  done
  for _ in $(seq 1 50); do  # a job step may still be on its way out
    left=$(ours)
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    echo "FAIL: processes left behind: $(ps -o pid=,args= -p "$(echo $left | tr ' ' ,)" 2>/dev/null | tr '\n' ';')"
    kill -KILL $left 2>/dev/null
    failures=$((failures + 1))
  fi
  rm -rf "$run"
  ((rc == 0 && failures > 0)) && rc=1
  ((rc != 0 && rc != 77)) && show_logs
  echo "slurm_class_test: $(($(date +%s) - started)) s"
  exit "$rc"
}
trap cleanup EXIT
trap 'trap "" PIPE; echo "interrupted" >&2; exit 130' INT TERM

# --- The grader: the real one, or a stand-in --------------------------------
if ((real)); then
  grade=$source/grader/grade
else
  grade=$work/fake-grade
  cat >"$grade" <<EOF
#!/usr/bin/env bash
# Stand-in for grader/grade's class mode: --submissions DIR --out OUT [--shard K/N]
# [--build-dir B] writes OUT/<id>/report.json for its slice (index % N == K-1 of
# the sorted list) and exits \${FAKE_RC:-3}; --merge OUT writes OUT/gradebook.csv.
set -euo pipefail
calls=$work/grader-calls.log
EOF
  cat >>"$grade" <<'EOF'
printf '%s job=%s args=%s\n' "$(date +%s)" "${SLURM_JOB_ID:-none}" "$(printf '[%s]' "$@")" >>"$calls"
subs="" out="" shard=1/1 build="" merge=""
while (($#)); do
  case $1 in
    --help) echo "stand-in grader"; exit 0 ;;
    --submissions) subs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --shard) shard=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --merge) merge=$2; shift 2 ;;
    --ids|--chapter|--gpus) shift 2 ;;
    *) shift ;;
  esac
done
if [ -n "$merge" ]; then
  { echo "id"
    for r in "$merge"/*/report.json; do
      [ -f "$r" ] && sed -n 's/.*"submission":{"id":"\([^"]*\)"}.*/\1/p' "$r"
    done
  } >"$merge/gradebook.csv"
  echo "merge done" >>"$calls"
  exit 0
fi
[ -d "$subs" ] && [ -n "$out" ] || { echo "grader: give --submissions and --out" >&2; exit 2; }
k=${shard%/*} n=${shard#*/}
[ -n "$build" ] && mkdir -p "$build" && touch "$build/built"
mkdir -p "$out"
i=0
while IFS= read -r name; do
  if ((i % n == k - 1)); then
    id=${name%.zip}; id=${id%.tar.gz}; id=${id%.tgz}
    if [ ! -f "$out/$id/report.json" ]; then
      mkdir -p "$out/$id"
      printf '{"schema":3,"submission":{"id":"%s"},"shard":"%s"}\n' "$id" "$shard" >"$out/$id/report.tmp"
      mv "$out/$id/report.tmp" "$out/$id/report.json"
      echo "report $id $shard job=${SLURM_JOB_ID:-none} build=$build" >>"$calls"
    fi
  fi
  i=$((i + 1))
done < <(ls -1 "$subs" | LC_ALL=C sort)
exit "${FAKE_RC:-3}"
EOF
  chmod +x "$grade"
fi

# --- The submissions: alice, bob, carol ------------------------------------
subs=$work/submissions
mkdir -p "$subs"
if ((real)); then
  for s in alice bob carol; do mkdir -p "$subs/$s" && cp -r "$source/chapters" "$subs/$s/"; done
  grade_args=(--chapter 00)
else
  mkdir -p "$subs/alice/chapters" "$subs/bob/chapters" "$work/carol/chapters"
  tar -C "$work/carol" -czf "$subs/carol.tar.gz" chapters  # an archive counts too
  grade_args=(--chapter 03 --gpus "0,1" --note "two words")  # commas and blanks arrive intact
fi

# --- The scripts without Slurm: exit statuses, the shard of any array ------
if ((!real)); then
  note "grade-class.sbatch's exit statuses (run directly)"
  for pair in 0:0 1:0 3:0 2:2 130:130; do
    want=${pair#*:}
    rm -rf "$work/direct"
    env FAKE_RC="${pair%:*}" SUBMISSIONS="$subs" OUT="$work/direct" WORKBOOK_GRADE="$grade" \
      SLURM_ARRAY_TASK_ID=7 SLURM_ARRAY_TASK_MIN=6 SLURM_ARRAY_TASK_COUNT=3 SLURM_JOB_ID=direct$$ \
      SLURM_ARRAY_JOB_ID=direct GRADE_ARGS="" TMPDIR="$work" \
      bash "$source/grader/slurm/grade-class.sbatch" >"$work/direct.log" 2>&1
    got=$?
    [ "$got" = "$want" ] || fail "grader exit ${pair%:*}: the batch script exited $got, not $want ($(tail -2 "$work/direct.log"))"
  done
  grep -q "shard 2/3" "$work/direct.log" || fail "array task 7 of 6-8 is not shard 2/3: $(cat "$work/direct.log")"
  [ "$(cat "$work/direct/bob/report.json" 2>/dev/null)" = '{"schema":3,"submission":{"id":"bob"},"shard":"2/3"}' ] ||
    fail "shard 2/3 did not grade bob (the second of three)"
  [ ! -e "$work/workbook-grading-direct$$" ] || fail "the batch script left its build dir behind"

  note "submit-class's usage errors"
  (cd "$work" && SLURM_CONF=$conf WORKBOOK_GRADE=$grade "$source/grader/slurm/submit-class" "$subs" >/dev/null 2>&1)
  [ $? -eq 2 ] || fail "submit-class without OUT did not exit 2"
  (cd "$work" && SLURM_CONF=$conf WORKBOOK_GRADE=$grade "$source/grader/slurm/submit-class" "$subs" "$subs/out" >/dev/null 2>&1)
  [ $? -eq 2 ] || fail "submit-class with OUT inside SUBMISSIONS did not exit 2"
  [ ! -e "$subs/out" ] || fail "submit-class created OUT inside SUBMISSIONS"
  (cd "$work" && SLURM_CONF=$conf WORKBOOK_GRADE=$grade "$source/grader/slurm/submit-class" "$subs" "$work/o" --tasks 0 >/dev/null 2>&1)
  [ $? -eq 2 ] || fail "submit-class --tasks 0 did not exit 2"
  (cd "$work" && SLURM_CONF=$conf WORKBOOK_GRADE=$grade "$source/grader/slurm/submit-class" "$subs" "$work/o" -- --no-such-option >"$work/unknown.txt" 2>&1)
  [ $? -eq 2 ] && grep -q "unknown grader option --no-such-option" "$work/unknown.txt" ||
    fail "submit-class passed an unknown option on to the tasks: $(cat "$work/unknown.txt")"
  rm -f "$work/grader-calls.log"
fi

# --- The cluster -------------------------------------------------------------
port_used() {  # port_used <port>: any TCP socket on it, IPv4 or IPv6
  local hex
  hex=$(printf ':%04X ' "$1")
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '{print $2" "}' | grep -qF "$hex"
}
free_port() {
  local p
  for _ in $(seq 1 100); do
    p=$((20000 + RANDOM % 40000))
    [ "$p" != "${1:-}" ] && ! port_used "$p" && { echo "$p"; return; }
  done
  return 1
}
ctld_port=$(free_port) && slurmd_port=$(free_port "$ctld_port") || { echo "no free port"; exit 1; }
node=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //')  # the real CPUs and memory
[[ $node == *CPUs=* && $node == *RealMemory=* ]] || { echo "slurmd -C said: $(slurmd -C)"; exit 1; }

cat >"$conf" <<EOF
# A one-node cluster of its own for tests/slurm_class_test.sh.
ClusterName=wbtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$run/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$work/state
SlurmdSpoolDir=$run/spool
SlurmctldPidFile=$work/state/slurmctld.pid
SlurmdPidFile=$run/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$work/etc/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
ReturnToService=2
MailProg=/bin/true
MinJobAge=3600
NodeName=$host NodeAddr=127.0.0.1 $node Gres=gpu:1 State=UNKNOWN
PartitionName=grading Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# One fake GPU. Slurm 22.05's gres/gpu drops a GPU without File= ("Removing
# file-less GPU"), so File= names a device node of our own, a copy of /dev/null
# (or, where mknod is refused, an empty file: slurmd logs an error and still
# counts it). Slurm counts and allocates it; nothing opens it (no cgroups, task/none).
mkdir -p "$run/dev" && { mknod -m 0666 "$run/dev/nvidia0" c 1 3 2>/dev/null || : >"$run/dev/nvidia0"; }
echo "Name=gpu Count=1 File=$run/dev/nvidia0" >"$work/etc/gres.conf"
: >"$work/etc/plugstack.conf"

key=$work/etc/munge.key
if command -v mungekey >/dev/null; then
  mungekey --create --keyfile="$key" >/dev/null
else
  dd if=/dev/urandom of="$key" bs=1024 count=1 status=none
fi
chmod 0400 "$key"

note "starting munged, slurmctld, slurmd (ports $ctld_port, $slurmd_port)"
env WORKBOOK_SLURM_TEST="$marker" munged --foreground --socket="$run/munge.socket" --key-file="$key" \
  --pid-file="$run/munged.pid" --log-file="$work/log/munged.log" --seed-file="$run/munged.seed" \
  >"$work/log/munged.stderr" 2>&1 &
munged_pid=$!
pids+=("$munged_pid:munged")
for _ in $(seq 1 100); do [ -S "$run/munge.socket" ] && break; alive "$munged_pid" || break; sleep 0.1; done
[ -S "$run/munge.socket" ] || { echo "munged did not start"; exit 1; }

env WORKBOOK_SLURM_TEST="$marker" SLURM_CONF="$conf" slurmctld -D -c \
  >"$work/log/slurmctld.stderr" 2>&1 &
slurmctld_pid=$!
pids+=("$slurmctld_pid:slurmctld")
for _ in $(seq 1 100); do sl scontrol ping 2>/dev/null | grep -q UP && break; alive "$slurmctld_pid" || break; sleep 0.2; done
sl scontrol ping 2>/dev/null | grep -q UP || { echo "slurmctld did not start"; exit 1; }

env WORKBOOK_SLURM_TEST="$marker" SLURM_CONF="$conf" slurmd -D \
  >"$work/log/slurmd.stderr" 2>&1 &
slurmd_pid=$!
pids+=("$slurmd_pid:slurmd")
state=""
for _ in $(seq 1 150); do
  state=$(sl sinfo -h -N -n "$host" -o %T 2>/dev/null)
  [ "$state" = idle ] && break
  [[ $state == *inval* || $state == *drain* ]] && break
  alive "$slurmd_pid" || break
  sleep 0.2
done
[ "$state" = idle ] || { echo "the node is not idle: '$state' $(sl scontrol show node "$host" | grep -E 'State|Reason')"; exit 1; }
sl scontrol show node "$host" | grep -q "Gres=gpu:1" || fail "the node has no gpu:1: $(sl scontrol show node "$host" | grep Gres)"
note "node $host idle after $(($(date +%s) - started)) s: $node Gres=gpu:1"

# --- Grading the class through submit-class --------------------------------
note "submit-class: 3 submissions, 2 tasks"
out=$work/out
# The node has 2 CPUs, not the 8 (and 32G) a real grading node has.
(cd "$work/jobs" && SLURM_CONF=$conf WORKBOOK_GRADE=$grade \
   WORKBOOK_SBATCH_ARGS="--cpus-per-task=1 --mem=1G" \
   "$source/grader/slurm/submit-class" "$subs" "$out" --tasks 2 -- "${grade_args[@]}") >"$work/submit.txt" 2>&1
rc=$?
cat "$work/submit.txt"
[ $rc -eq 0 ] || { echo "FAIL: submit-class exited $rc"; exit 1; }
array_job=$(sed -n 's/^grading array: job \([0-9]*\).*/\1/p' "$work/submit.txt")
merge_job=$(sed -n 's/^merge job: *job \([0-9]*\).*/\1/p' "$work/submit.txt")
[ -n "$array_job" ] && [ -n "$merge_job" ] || { echo "FAIL: no job ids in submit-class's output"; exit 1; }

active=""
deadline=$(($(date +%s) + wait_jobs_s))
errors=0
while (($(date +%s) < deadline)); do
  alive "$slurmctld_pid" && alive "$slurmd_pid" || { echo "FAIL: slurmctld or slurmd died"; exit 1; }
  if active=$(sl squeue -h -j "$array_job,$merge_job" -o "%i %T %r" 2>&1); then
    errors=0
    [ -z "$active" ] && break
  else
    errors=$((errors + 1))
    ((errors < 5)) || { echo "FAIL: squeue failed 5 times: $active"; exit 1; }
  fi
  sleep 1
done
[ -z "$active" ] || { echo "FAIL: jobs still queued after $wait_jobs_s s: $active"; exit 1; }
note "both jobs ended after $(($(date +%s) - started)) s"

# --- What Slurm says --------------------------------------------------------
field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p" <<<"$2"; }
epoch() { date -d "$1" +%s 2>/dev/null || echo 0; }
records=$(sl scontrol -o show job "$array_job" 2>&1)
tasks_seen=0 last_end=0 spans=()
while IFS= read -r rec; do
  [[ $rec == *ArrayTaskId=* ]] || continue
  tasks_seen=$((tasks_seen + 1))
  t=$(field ArrayTaskId "$rec")
  [ "$(field JobState "$rec")" = COMPLETED ] && [ "$(field ExitCode "$rec")" = 0:0 ] ||
    fail "array task $t: $(field JobState "$rec") exit $(field ExitCode "$rec") (the grader's 3 must end the job with 0)"
  [[ $rec == *TresPerNode=gres:gpu:1* ]] || fail "array task $t did not ask for gres gpu:1"
  start=$(epoch "$(field StartTime "$rec")") end=$(epoch "$(field EndTime "$rec")")
  spans+=("$start $end")
  ((end > last_end)) && last_end=$end
done <<<"$records"
[ $tasks_seen -eq 2 ] || fail "$tasks_seen array tasks, not 2: $records"
if ((${#spans[@]} == 2)); then  # one GPU: the tasks ran one after the other
  read -r s1 e1 <<<"${spans[0]}"; read -r s2 e2 <<<"${spans[1]}"
  ((s2 >= e1 || s1 >= e2)) || fail "the two tasks overlapped on one GPU: ${spans[*]}"
fi
merge_rec=$(sl scontrol -o show job "$merge_job" 2>&1)
[ "$(field JobState "$merge_rec")" = COMPLETED ] || fail "merge job: $(field JobState "$merge_rec") $(field Reason "$merge_rec")"
[[ $merge_rec != *TresPerNode=gres:gpu* ]] || fail "the merge job asked for a GPU"
merge_start=$(epoch "$(field StartTime "$merge_rec")")
((merge_start >= last_end && last_end > 0)) || fail "the merge job started ($merge_start) before the array ended ($last_end)"

# --- The job logs ---------------------------------------------------------------
shards=""
for t in 1 2; do
  log=$work/jobs/workbook-grade-${array_job}_$t.out
  if [ -s "$log" ]; then
    s=$(sed -n 's/.*: shard \([0-9]*\/[0-9]*\) of .*/\1/p' "$log" | head -1)
    [ "$s" = "$t/2" ] || fail "array task $t graded shard '$s', not $t/2"
    shards+="$s "
    grep -q "NOT GRADED: the grader saw no GPU" "$log" || fail "log of task $t does not say the grader saw no GPU"
  else
    fail "no log $log"
  fi
done
merge_log=$work/jobs/workbook-merge-$merge_job.out
[ -s "$merge_log" ] && grep -q "merge: wrote" "$merge_log" || fail "merge log $merge_log missing or without 'merge: wrote'"

# --- The reports ---------------------------------------------------------------
n_reports=$(find "$out" -name report.json | wc -l)
[ "$n_reports" -eq 3 ] || fail "$n_reports reports, not 3: $(find "$out" -name report.json)"
for id in alice bob carol; do
  r=$out/$id/report.json
  [ -f "$r" ] || { fail "no report for $id"; continue; }
  if ((real)); then
    python3 - "$r" "$id" <<'EOF' || fail "report of $id"
import json, sys
r = json.load(open(sys.argv[1]))
problems = []
if r.get("graded") is not False: problems.append(f'"graded" is {r.get("graded")!r}, not false')
chapters = r.get("chapters") or []
if not any(c.get("slug", "").startswith("00") for c in chapters): problems.append("no chapter 00")
for c in chapters:
    if c.get("status") != "no_gpu":
        problems.append(f'{c.get("slug")}: "{c.get("status")}"')
if problems: print(f"{sys.argv[2]}: " + "; ".join(problems)); sys.exit(1)
EOF
  fi
done
if ((!real)); then
  want="alice 1/2;bob 2/2;carol 1/2;"
  got=$(sed -n 's/^report \([a-z]*\) \([0-9/]*\) .*/\1 \2/p' "$work/grader-calls.log" | sort | tr '\n' ';')
  [ "$got" = "$want" ] || fail "graded (submission shard): '$got', not '$want' (each once)"
  for id in alice bob carol; do
    grep -q "\"shard\":\"$(echo "$want" | tr ';' '\n' | sed -n "s/^$id //p")\"" "$out/$id/report.json" ||
      fail "$id's report names the wrong shard: $(cat "$out/$id/report.json")"
  done
  grep -q '\[--chapter\]\[03\]\[--gpus\]\[0,1\]\[--note\]\[two words\]' "$work/grader-calls.log" ||
    fail "the grader arguments did not arrive intact: $(grep -m1 'args=.*--shard' "$work/grader-calls.log")"
  builds=$(sed -n 's/^report .* build=\(.*\)$/\1/p' "$work/grader-calls.log" | sort -u)
  for b in $builds; do
    [[ $b == "${TMPDIR:-/tmp}"/workbook-grading-[0-9]* ]] || fail "build dir $b is not \${TMPDIR:-/tmp}/workbook-grading-<job>"
    [ ! -e "$b" ] || fail "build dir $b was not removed"
  done
  [ "$(echo "$builds" | wc -w)" -eq 2 ] || fail "not one build dir per task: $builds"
fi
if [ -f "$out/gradebook.csv" ]; then
  for id in alice bob carol; do
    [ "$(grep -c "^\"\{0,1\}$id\b" "$out/gradebook.csv")" -eq 1 ] || fail "gradebook.csv has not one row for $id"
  done
  ((real)) || [ "$(tail -n +2 "$out/gradebook.csv" | wc -l)" -eq 3 ] || fail "gradebook.csv has not 3 rows: $(cat "$out/gradebook.csv")"
else
  fail "no $out/gradebook.csv"
fi

if ((failures)); then
  echo "slurm_class_test: $failures failed (jobs: array $array_job, merge $merge_job; work dir $work)"
  exit 1
fi
echo "slurm_class_test: passed (shards ${shards% }; array $array_job, merge $merge_job)"
exit 0
