#!/bin/sh
# fuzz/smoke.sh SECONDS JOBS FUZZ_BUILD HARNESS... -- make fuzz-smoke: each harness SECONDS seconds
# on a copy of its corpus (build/fuzz-smoke/), JOBS of them at once (each is one process on one
# core); then one line a harness, in the order given, and `fuzz-smoke: N passed, M failed`.
# A harness fails on any crash, leak, timeout or broken invariant (libFuzzer's exit status).
# (fuzz/smoke.sh one SECONDS FUZZ_BUILD HARNESS runs one: what xargs starts.)
set -u
if [ "$1" = one ]; then
  s=$2 fb=$3 h=$4
  mkdir -p "build/fuzz-smoke/$h"
  if flags=$(sh fuzz/harnesses.sh flags "$h"); then
    # shellcheck disable=SC2086 # the flags are words
    "$fb/$h" -max_total_time="$s" $flags -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 \
      -print_final_stats=1 -artifact_prefix="build/fuzz-smoke/$h-" \
      "build/fuzz-smoke/$h" "corpus/$h" >"build/fuzz-smoke/$h.log" 2>&1
    echo $? >"build/fuzz-smoke/$h.rc"
  else
    echo "no row in fuzz/harnesses.tsv" >"build/fuzz-smoke/$h.log"
    echo 2 >"build/fuzz-smoke/$h.rc"
  fi
  exit 0
fi
s=$1 jobs=$2 fb=$3
shift 3
rm -rf build/fuzz-smoke
mkdir -p build/fuzz-smoke
printf '%s\n' "$@" | xargs -P "$jobs" -I{} sh fuzz/smoke.sh one "$s" "$fb" {}
n=0 fail=0
for h in "$@"; do
  if [ "$(cat "build/fuzz-smoke/$h.rc" 2>/dev/null)" = 0 ]; then
    n=$((n + 1))
    runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "build/fuzz-smoke/$h.log" | grep -oE '[0-9]+$')
    echo "   $h: ok (${runs:-?} runs)"
  else
    fail=$((fail + 1))
    echo "FAIL $h: see build/fuzz-smoke/$h.log"
    tail -n 20 "build/fuzz-smoke/$h.log"
  fi
done
echo "fuzz-smoke: $n passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$n" -gt 0 ]
