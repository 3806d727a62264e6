#!/usr/bin/env bash
# Run every fuzz target for SECONDS seconds, starting from its committed seed
# corpus (tests/fuzz/corpus/<target>/). New inputs go to a scratch directory,
# never into the committed corpus; crashes are written to
# BUILD_DIR/fuzz-artifacts/<target>/. Exits non-zero if any target fails.
#
#   CC=clang meson setup build-fuzz -Dfuzz=true && ninja -C build-fuzz
#   tests/fuzz/run-short.sh build-fuzz 60
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR SECONDS" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
secs=$2
here=$(cd "$(dirname "$0")" && pwd)
targets=(fuzz_frame fuzz_ht fuzz_macsec fuzz_bridges)

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

rc=0
for t in "${targets[@]}"; do
  exe=$build/tests/fuzz/$t
  if [ ! -x "$exe" ]; then
    echo "run-short: $exe missing (configure with CC=clang -Dfuzz=true)" >&2
    exit 2
  fi
  work=$(mktemp -d)
  art=$build/fuzz-artifacts/$t
  mkdir -p "$art"
  echo "== $t: ${secs}s, seeds $(ls "$here/corpus/$t" | wc -l)"
  if "$exe" -max_total_time="$secs" -print_final_stats=1 -max_len=9100 \
       -artifact_prefix="$art/" "$work" "$here/corpus/$t" >"$build/fuzz-$t.log" 2>&1; then
    grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)|cov: " \
      "$build/fuzz-$t.log" | tail -4
    echo "   corpus grew to $(ls "$work" | wc -l) inputs; log $build/fuzz-$t.log"
  else
    echo "!! $t FAILED; log $build/fuzz-$t.log, artifacts in $art" >&2
    tail -40 "$build/fuzz-$t.log" >&2
    rc=1
  fi
  rm -rf "$work"
done
exit $rc
