#!/bin/bash
# htoe-dimm --run end to end (suite 'dimm'): test_dimm_run.sh HTOE_DIMM SRC MODE
# An unmodified program runs with its large memory on the embedded second
# node; its own results are compared byte for byte with a plain run.
#   sort         GNU sort at a 25 % budget, and sort --parallel=2 at 50 %:
#                identical output and exit status, pages fetched, evicted and
#                written back; --json; --compare (plain run, in-process pager)
#   python       a Python program (two threads) writing and hashing 96 MiB at
#                50 %; one that forks (the child allocates its own) and runs
#                subprocesses; python3 found through a wrapper that execs it
#   sqlite       sqlite3 building and querying a table larger than the budget
#   status       exit statuses, a signal to htoe-dimm reaches the program, a
#                program killed with SIGKILL: htoe-dimm ends, the lease is released
#   killed       htoe-dimm killed with SIGKILL: the program ends with a clear
#                message instead of hanging
#   lease-lost   the exporter stops answering: the program is stopped, a clear
#                error, exit 1, and its output is never wrong (a prefix at most)
#   outage       both ports drop every frame for 0.5 s: the VL is reset, the
#                pager sends again, the output is identical
#   no-uffd      the program runs as an unprivileged user where
#                vm.unprivileged_userfaultfd=0: a clear message, exit 1
#   memif-next   a separate exporter process (memif): a program killed with
#                SIGKILL, then the next program gets the memory and is right
# No timing assertions: exit codes, outputs and messages (bounded waits only).
set -euo pipefail
DIMM=$1
SRC=$2
MODE=$3
# shellcheck source=tests/dimm/lib.sh
. "$SRC/tests/dimm/lib.sh"
dimm_test_init dimmrun KILL

fail() { echo "FAIL: $*" >&2; [ -f "$TMP/err" ] && tail -30 "$TMP/err" >&2; exit 1; }
ok() { echo "ok: $*"; }

EAL="-l 0-1 --no-huge -m 512 --no-pci --no-shconf --file-prefix $PREFIX --log-level=warning"
# a long lease: on a machine where every CPU is contended the borrower's loop
# can be off its CPU for seconds, and a renewal missed then loses the lease
LEASE="--lease-ms 60000"

# dimm [DEMO-OPTIONS...] --run [RUN-OPTIONS...] -- PROGRAM...: stdout in
# $TMP/out, stderr in $TMP/err, the exit status in RC
dimm() {
  set +e
  timeout 600 "$DIMM" $EAL -- $LEASE "$@" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  set -e
}

# same STATUS FILE-A FILE-B WHAT
same() {
  cmp -s "$2" "$3" || fail "$4: the output differs from the plain run's"
  [ "$RC" = "$1" ] || fail "$4: exit status $RC, the plain run's $1"
}

py() { python3 -c "import json,sys; r=json.load(open('$TMP/r.json')); sys.exit(0 if ($1) else 1)"; }

numbers() { seq 1 "$1" | shuf --random-source=<(yes 7); }

case "$MODE" in
sort)
  numbers 400000 >"$TMP/in"
  set +e; sort -n "$TMP/in" >"$TMP/plain"; PRC=$?; set -e
  dimm --run --budget 25% --json "$TMP/r.json" -- sort -n "$TMP/in"
  same "$PRC" "$TMP/plain" "$TMP/out" "sort at 25 %"
  grep -q "htoe-dimm: run: sort: exit status 0" "$TMP/err" || fail "no summary"
  grep -q "pages faulted in remotely" "$TMP/err" || fail "the summary lacks the faults"
  grep -q "lease .* released" "$TMP/err" || fail "the lease was not released"
  py "r['exit_status'] == 0 and r['pager']['faults'] > 0 and r['pager']['evictions'] > 0 and r['pager']['writebacks'] > 0" \
    || fail "sort at 25 % did not page (JSON)"
  py "r['pager']['in_use_max_pages'] > 4 * 64 and r['budget_pages_max'] < r['pager']['in_use_max_pages']" \
    || fail "the budget did not stay below the memory in use"
  ok "sort at 25 %: identical, $(python3 -c "import json; r=json.load(open('$TMP/r.json')); p=r['pager']; print(p['faults'], 'faults,', p['writebacks'], 'write-backs, p50', p['fault_p50_us'], 'us')")"
  # threads: sort --parallel=2 with a sort buffer of its own
  sort -n --parallel=2 -S 20M "$TMP/in" >"$TMP/plain2"
  dimm --run --budget 50% --json "$TMP/r.json" --compare -- sort -n --parallel=2 -S 20M "$TMP/in"
  same 0 "$TMP/plain2" "$TMP/out" "sort --parallel=2 at 50 %"
  py "r['compare']['plain_seconds'] > 0 and r['compare']['slowdown'] > 0 and r['compare']['fault_p50_ratio'] > 0" \
    || fail "--compare did not measure"
  grep -q "htoe-dimm: compare: plain run" "$TMP/err" || fail "no compare line"
  ok "sort --parallel=2 at 50 %: identical; $(grep 'compare:' "$TMP/err" | tr '\n' ' ')"
  ;;
python)
  cat >"$TMP/hash.py" <<'EOF'
import hashlib, threading
n = 96 << 20
b = bytearray(n)
for i in range(0, n, 4096):
    b[i:i + 8] = ((i * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF).to_bytes(8, 'little')
out = [None, None]
def part(k):
    out[k] = hashlib.sha256(b[k * n // 2:(k + 1) * n // 2]).hexdigest()
ts = [threading.Thread(target=part, args=(k,)) for k in range(2)]
for t in ts: t.start()
for t in ts: t.join()
print(hashlib.sha256(bytes(b)).hexdigest(), *out)
EOF
  cat >"$TMP/fork.py" <<'EOF'
import hashlib, os, subprocess, sys
big = bytearray(b''.join(b'%d ' % i for i in range(300000)))  # large: in the region
pid = os.fork()
if pid == 0:
    # the child's memory is its own (local): a large block of its own
    mine = bytearray(8 << 20)
    mine[::4096] = b'x' * len(mine[::4096])
    want = hashlib.sha256(big).hexdigest()
    big.extend(b'z' * 100000)  # the parent's block grows in the child (realloc)
    ok = hashlib.sha256(big[:-100000]).hexdigest() == want and hashlib.sha256(mine).hexdigest()
    os._exit(0 if ok else 1)
_, st = os.waitpid(pid, 0)
r = subprocess.run(['sort', '-n'], input=bytes(big).replace(b' ', b'\n'), capture_output=True)
print(os.waitstatus_to_exitcode(st), r.returncode, hashlib.sha256(r.stdout).hexdigest(),
      hashlib.sha256(big).hexdigest())
sys.exit(3)
EOF
  PY=$(python3 -c 'import sys; print(sys.executable)')
  "$PY" "$TMP/hash.py" >"$TMP/plain"
  dimm --run --budget 50% --json "$TMP/r.json" -- "$PY" "$TMP/hash.py"
  same 0 "$TMP/plain" "$TMP/out" "python hashing 96 MiB at 50 %"
  py "r['pager']['in_use_max_pages'] * 4096 >= 96 << 20 and r['pager']['writebacks'] > 0" \
    || fail "the 96 MiB were not on remote memory"
  ok "python, two threads, 96 MiB at 50 %: identical"
  set +e; "$PY" "$TMP/fork.py" >"$TMP/plain"; PRC=$?; set -e
  [ "$PRC" = 3 ] || fail "the plain fork.py exited $PRC"
  dimm --run --budget 50% -- "$PY" "$TMP/fork.py"
  same 3 "$TMP/plain" "$TMP/out" "python fork + subprocess"
  ok "python fork and subprocess: identical, exit status 3"
  # a wrapper that execs the program (pyenv's shims do): the new image is served
  printf '#!/bin/sh\nexec "%s" "$@"\n' "$PY" >"$TMP/wrap"
  chmod +x "$TMP/wrap"
  dimm --run --budget 50% --json "$TMP/r.json" -- "$TMP/wrap" "$TMP/hash.py"
  "$PY" "$TMP/hash.py" >"$TMP/plain"
  same 0 "$TMP/plain" "$TMP/out" "python through an exec"
  grep -q "the program exec'd" "$TMP/err" || fail "the exec was not seen"
  py "r['pager']['in_use_max_pages'] * 4096 >= 96 << 20" || fail "the exec'd image was not served"
  ok "python through a wrapper that execs it: identical"
  ;;
sqlite)
  command -v sqlite3 >/dev/null || fail "no sqlite3 (scripts/setup.sh installs it)"
  cat >"$TMP/q.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, k INTEGER, v TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 150000)
INSERT INTO t SELECT x, (x * 7919) % 100003, printf('%0100d', x * 31337) FROM c;
CREATE INDEX tk ON t(k);
SELECT count(*), sum(k), sum(length(v)) FROM t;
SELECT k % 17, count(*), min(id), max(id) FROM t GROUP BY k % 17 ORDER BY 1;
SELECT id, k, substr(v, 90) FROM t WHERE k BETWEEN 5000 AND 5010 ORDER BY id;
EOF
  sqlite3 :memory: <"$TMP/q.sql" >"$TMP/plain"
  set +e
  timeout 600 "$DIMM" $EAL -- $LEASE --run --budget 25% --threshold 4K --json "$TMP/r.json" \
    -- sqlite3 :memory: <"$TMP/q.sql" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  set -e
  same 0 "$TMP/plain" "$TMP/out" "sqlite3 at 25 %"
  # the table (150 000 rows of 100+ bytes) is larger than the budget
  py "r['budget_pages_max'] * 4096 < 15000000 and r['pager']['evictions'] > 0 and r['pager']['faults'] > 0" \
    || fail "the table did not exceed the budget"
  ok "sqlite3 with a table larger than the budget: identical"
  ;;
status)
  # refused before anything runs: exit 2 and what was wrong
  dimm --run --budget 0% -- true
  [ "$RC" = 2 ] && grep -q -- "--budget '0%'" "$TMP/err" || fail "--budget 0%: exit status $RC"
  dimm --run --region 1G3 -- true
  [ "$RC" = 2 ] && grep -q -- "--region '1G3'" "$TMP/err" || fail "--region 1G3: exit status $RC"
  dimm --run
  [ "$RC" = 2 ] && grep -q "no program" "$TMP/err" || fail "--run without a program: exit status $RC"
  dimm --run -- /nonexistent/program
  [ "$RC" = 127 ] && grep -q "cannot start '/nonexistent/program': No such file" "$TMP/err" \
    || fail "a program that does not exist: exit status $RC"
  ok "bad --run arguments refused (exit 2), a missing program: 127 and why"
  dimm --run -- sh -c 'echo out; echo err >&2; exit 3'
  [ "$RC" = 3 ] || fail "exit status $RC, expected 3"
  [ "$(cat "$TMP/out")" = out ] || fail "the program's stdout is not its own: $(cat "$TMP/out")"
  grep -qx err "$TMP/err" || fail "the program's stderr is lost"
  ok "exit status and standard output are the program's"
  dimm --run --log "$TMP/log" -- sh -c 'kill -TERM $$'
  [ "$RC" = 143 ] || fail "killed by SIGTERM: exit status $RC, expected 143"
  grep -q "killed by signal 15" "$TMP/log" || fail "--log has no summary"
  ok "a program killed by a signal: 128 + the signal"
  # a signal sent to htoe-dimm reaches the program (its handler prints)
  cat >"$TMP/sig.py" <<'EOF'
import signal, sys, time
buf = bytearray(4 << 20)
def on(sig, frm):
    print('got', sig, flush=True)
    sys.exit(9)
signal.signal(signal.SIGINT, on)
print('ready', flush=True)
for _ in range(6000):
    time.sleep(0.01)
EOF
  PY=$(python3 -c 'import sys; print(sys.executable)')
  set +e
  "$DIMM" $EAL -- $LEASE --run -- "$PY" "$TMP/sig.py" >"$TMP/out" 2>"$TMP/err" &
  DP=$!
  PIDS+=($DP)
  for _ in $(seq 600); do grep -q ready "$TMP/out" 2>/dev/null && break; sleep 0.1; done
  kill -INT $DP
  wait $DP; RC=$?
  set -e
  PIDS=()
  [ "$RC" = 9 ] || fail "after SIGINT to htoe-dimm: exit status $RC, expected the program's 9"
  grep -q "got 2" "$TMP/out" || fail "the program did not get SIGINT"
  ok "SIGINT to htoe-dimm reaches the program"
  # the program killed with SIGKILL: htoe-dimm ends and gives the lease back
  set +e
  "$DIMM" $EAL -- $LEASE --run -- "$PY" "$TMP/sig.py" >"$TMP/out" 2>"$TMP/err" &
  DP=$!
  PIDS+=($DP)
  for _ in $(seq 600); do grep -q ready "$TMP/out" 2>/dev/null && break; sleep 0.1; done
  pkill -KILL -f "^$PY $TMP/sig.py"
  wait $DP; RC=$?
  set -e
  PIDS=()
  [ "$RC" = 137 ] || fail "program killed: exit status $RC, expected 137"
  grep -q "lease .* released" "$TMP/err" || fail "the lease was not released"
  ok "program killed with SIGKILL: exit 137, lease released"
  ;;
killed)
  cat >"$TMP/loop.py" <<'EOF'
import sys, time
buf = bytearray(32 << 20)
print('ready', flush=True)
for r in range(100000):
    for i in range(0, len(buf), 4096):
        buf[i] = (buf[i] + 1) & 255
    time.sleep(0.001)
EOF
  PY=$(python3 -c 'import sys; print(sys.executable)')
  set +e
  "$DIMM" $EAL -- $LEASE --run --budget 25% -- "$PY" "$TMP/loop.py" >"$TMP/out" 2>"$TMP/err" &
  DP=$!
  PIDS+=($DP)
  for _ in $(seq 600); do grep -q ready "$TMP/out" 2>/dev/null && break; sleep 0.1; done
  CP=$(pgrep -P $DP -f loop.py)
  [ -n "$CP" ] || fail "the program is not running"
  kill -KILL $DP
  wait $DP
  # the program notices at once; bounded wait, only to catch a hang
  for _ in $(seq 300); do kill -0 "$CP" 2>/dev/null || break; sleep 0.1; done
  set -e
  PIDS=()
  kill -0 "$CP" 2>/dev/null && { kill -9 "$CP"; fail "the program hangs after htoe-dimm was killed"; }
  grep -q "htoe-dimm, which holds this program's memory, is gone" "$TMP/err" \
    || fail "the program did not say why it ends"
  ok "htoe-dimm killed: the program ends with a clear message"
  ;;
lease-lost)
  numbers 400000 >"$TMP/in"
  sort -n "$TMP/in" >"$TMP/plain"
  dimm --kill-after-faults 300 --run --budget 25% -- sort -n "$TMP/in"
  [ "$RC" = 1 ] || fail "exit status $RC, expected 1"
  grep -q "the program was stopped: its remote memory failed" "$TMP/err" || fail "no clear error"
  [ -s "$TMP/out" ] && ! cmp -s <(head -c "$(stat -c %s "$TMP/out")" "$TMP/plain") "$TMP/out" \
    && fail "wrong output (not a prefix of the right one)"
  ok "remote memory lost: the program stopped, exit 1, no wrong output"
  ;;
outage)
  numbers 400000 >"$TMP/in"
  sort -n "$TMP/in" >"$TMP/plain"
  # the outage is a window of wall-clock time: a borrower descheduled through all of it (a
  # loaded host) has nothing in flight to lose. A run the outage hit resends; three runs of
  # which none resent anything fail
  for try in 1 2 3; do
    dimm --set bridge.rto_max=20ms --set bridge.retry_limit=12 \
      --set impair.outage_start=150ms --set impair.outage_len=500ms \
      --run --budget 25% --json "$TMP/r.json" -- sort -n "$TMP/in"
    same 0 "$TMP/plain" "$TMP/out" "sort across a VL reset"
    py "r['pager']['fetch_retries'] + r['pager']['writeback_retries'] > 0" && break
    echo "try $try: nothing was sent again (the outage found nothing in flight): again"
  done
  py "r['pager']['fetch_retries'] + r['pager']['writeback_retries'] > 0" \
    || fail "nothing was sent again in 3 runs: did the outage hit any of them?"
  ok "VL reset during the run: identical output, $(python3 -c "import json; r=json.load(open('$TMP/r.json')); p=r['pager']; print(p['fetch_retries'], 'fetches and', p['writeback_retries'], 'write-backs sent again')")"
  ;;
no-uffd)
  [ "$(cat /proc/sys/vm/unprivileged_userfaultfd)" = 0 ] || { echo "skip: unprivileged userfaultfd allowed"; exit 77; }
  command -v setpriv >/dev/null || { echo "skip: no setpriv"; exit 77; }
  numbers 1000 >"$TMP/in"
  chmod 755 "$TMP"; chmod 644 "$TMP/in"
  dimm --run -- setpriv --reuid=65534 --regid=65534 --clear-groups sort -n "$TMP/in"
  [ "$RC" = 1 ] || fail "exit status $RC, expected 1"
  grep -q "the program cannot use remote memory: userfaultfd: Operation not permitted" "$TMP/err" \
    || fail "no clear message"
  grep -q "vm.unprivileged_userfaultfd=1" "$TMP/err" || fail "the message does not say what would allow it"
  [ -s "$TMP/out" ] && fail "the program ran without its memory"
  ok "userfaultfd not allowed: a clear message, exit 1"
  ;;
memif-next)
  SOCK="$TMP/memif.sock"
  CFG="$SRC/config/dimm-memif.ini"
  EB="-l 1 --no-huge -m 512 --no-pci --file-prefix $PREFIX-b --log-level=warning"
  EA="-l 0 --no-huge -m 512 --no-pci --file-prefix $PREFIX-a --log-level=warning"
  # not under timeout(1): cleanup's SIGKILL would reach timeout, not the
  # exporter, and leave it running after the test
  "$DIMM" $EB --vdev="net_memif0,role=server,socket=$SOCK,socket-abstract=no" \
    -- --config "$CFG" --node 2 --quota-bytes 16M >"$TMP/b.out" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
  [ -S "$SOCK" ] || { cat "$TMP/b.out"; fail "the exporter did not open $SOCK"; }
  numbers 200000 >"$TMP/in"
  sort -n "$TMP/in" >"$TMP/plain"
  A=(timeout 600 "$DIMM" $EA --vdev="net_memif0,role=client,socket=$SOCK,socket-abstract=no"
     -- --config "$CFG" --node 1 $LEASE --run --region 12M --budget 25%)
  # the first program is killed with SIGKILL after it paged
  PY=$(python3 -c 'import sys; print(sys.executable)')
  set +e
  "${A[@]}" -- "$PY" -c 'import os; b = bytearray(8 << 20); b[::4096] = b"y" * 2048; os.kill(os.getpid(), 9)' \
    >"$TMP/out" 2>"$TMP/err"
  RC=$?
  set -e
  [ "$RC" = 137 ] || fail "first program: exit status $RC, expected 137"
  for _ in $(seq 100); do grep -q "lease .* released" "$TMP/b.out" && break; sleep 0.1; done
  grep -q "lease .* released" "$TMP/b.out" || { cat "$TMP/b.out"; fail "the exporter did not get the lease back"; }
  set +e
  "${A[@]}" -- sort -n "$TMP/in" >"$TMP/out" 2>"$TMP/err"
  RC=$?
  set -e
  same 0 "$TMP/plain" "$TMP/out" "the next program over memif"
  [ "$(grep -c "lease .* to node 1" "$TMP/b.out")" -ge 2 ] || fail "the exporter did not lease twice"
  ok "exporter process: lease released after SIGKILL, the next program served and right"
  ;;
*)
  fail "unknown mode $MODE"
  ;;
esac
