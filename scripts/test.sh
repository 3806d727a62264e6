#!/usr/bin/env bash
# The README's test command: installs what is needed (scripts/setup.sh), builds,
# and runs the whole test suite twice: a normal build and an ASan+UBSan build.
# Usage: bash scripts/test.sh [--quick]   (--quick: skip the sanitizer build)
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1

bash scripts/setup.sh

total_ok=0; total_fail=0; total_skip=0

run_suite() { # dir, meson options...
  local dir=$1; shift
  if [ ! -d "$dir" ]; then
    meson setup "$dir" "$@" >/dev/null
  else
    meson setup --reconfigure "$dir" "$@" >/dev/null
  fi
  ninja -C "$dir"
  local rc=0
  meson test -C "$dir" --print-errorlogs --num-processes 2 ${TEST_ARGS:-} || rc=$?
  local ok fail skip
  ok=$(jq -s '[.[] | select(.result=="OK" or .result=="EXPECTEDFAIL")] | length' "$dir/meson-logs/testlog.json")
  fail=$(jq -s '[.[] | select(.result=="FAIL" or .result=="TIMEOUT" or .result=="ERROR" or .result=="UNEXPECTEDPASS")] | length' "$dir/meson-logs/testlog.json")
  skip=$(jq -s '[.[] | select(.result=="SKIP")] | length' "$dir/meson-logs/testlog.json")
  echo "== $dir: $ok ok, $fail failed, $skip skipped (meson exit $rc)"
  total_ok=$((total_ok + ok)); total_fail=$((total_fail + fail)); total_skip=$((total_skip + skip))
  [ "$rc" -eq 0 ] || total_fail=$((total_fail > 0 ? total_fail : 1))
  # A test cleans up what it started: a process still running in the build
  # directory (where meson runs the tests) after the suite is a leak.
  local p left=()
  for p in /proc/[0-9]*; do
    [ "$(readlink "$p/cwd" 2>/dev/null)" = "$PWD/$dir" ] && left+=("${p#/proc/}")
  done
  if [ "${#left[@]}" -gt 0 ]; then
    echo "== $dir: FAILED: processes left behind by the tests:"
    ps -o pid=,args= -p "${left[@]}" | cut -c1-200 || true
    kill -KILL "${left[@]}" 2>/dev/null || true
    total_fail=$((total_fail + 1))
  fi
}

run_suite build-test
if [ "$quick" -eq 0 ]; then
  # Sanitizers: every test again under ASan+UBSan, aborting on any report.
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  # the instrumented code runs 2-3 times slower: so may a test, within its bound
  TEST_ARGS="--timeout-multiplier 2" run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug \
    -Db_lto=false
fi

# A short libFuzzer run of every fuzz target (clang, ASan+UBSan).
if [ "$quick" -eq 0 ]; then
  fuzz_secs=${HTOE_FUZZ_SECONDS:-20}
  if [ -d build-fuzz ]; then
    CC=clang meson setup --reconfigure build-fuzz -Dfuzz=true -Dtests=false -Db_lto=false >/dev/null
  else
    CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false -Db_lto=false >/dev/null
  fi
  if ninja -C build-fuzz && tests/fuzz/run-short.sh build-fuzz "$fuzz_secs"; then
    echo "== fuzz: ok (${fuzz_secs}s per target)"
    total_ok=$((total_ok + 1))
  else
    echo "== fuzz: FAILED"
    total_fail=$((total_fail + 1))
  fi
fi

echo "tests: $total_ok passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
