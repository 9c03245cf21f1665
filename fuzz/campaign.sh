#!/usr/bin/env bash
# fuzz/campaign.sh -- a fuzzing campaign that adds up: every harness in turn, its share of HOURS of
# CPU time, on JOBS cores (default: the cores the load average leaves free, at least 1) at NICE
# (default 19), each run appending one row to the ledger in fuzz/README.md (harness, commit, CPU
# time, executions, seeds, findings).  `make fuzz-campaign HOURS=N [JOBS=J] [NICE=N]
# [FUZZ_HARNESSES="..."]` runs it.
#
# The harnesses, their -max_len, dictionary and seed folders: fuzz/harnesses.tsv.  Seeds: the
# harness's (its committed corpus corpus/<h> first), then corpus/peers and tests/vectors (real files
# and every hand-built vector; harnesses with a control prefix read their first bytes as control).
# New inputs stay in build/fuzz-campaign/<h> across campaigns; a finding is kept in
# build/fuzz-campaign/findings/ and named in the row.  Merge the finds with `make fuzz-merge`.
set -u
cd "$(dirname "$0")/.."
hours=${HOURS:-1}
harnesses=${FUZZ_HARNESSES:-$(sh fuzz/harnesses.sh names driver)}
ledger=fuzz/README.md
fb=build/fuzz
work=build/fuzz-campaign
mkdir -p "$work/findings" "$work/logs"
n=$(echo $harnesses | wc -w)
[ "$n" -gt 0 ] || { echo "campaign: no harnesses" >&2; exit 2; }
if [ -z "${JOBS:-}" ]; then
  cores=$(nproc)
  load=$(cut -d' ' -f1 /proc/loadavg | cut -d. -f1)
  JOBS=$((cores - load)); [ "$JOBS" -ge 1 ] || JOBS=1
fi
secs=$(awk -v h="$hours" -v n="$n" 'BEGIN { s = int(h * 3600 / n); if (s < 10) s = 10; print s }')
commit=$(git rev-parse --short HEAD)
dirty=$(git status --porcelain -- src include 'fuzz/*.c' 'fuzz/*.h' | grep -v '^??' | head -n 1)
[ -n "$dirty" ] && commit="$commit+"
# the binaries of this commit, copied: a rebuild during the campaign does not change what it runs
bin=$work/bin-$commit-$$
mkdir -p "$bin"
for h in $harnesses; do
  [ -x "$fb/$h" ] || { echo "campaign: $fb/$h is not built (make fuzz)" >&2; exit 2; }
  cp "$fb/$h" "$bin/"
done
echo "campaign: $n harnesses, $secs s each, $JOBS at a time, commit $commit"

run_one() {
  local h=$1 flags dirs log t0 t1 execs cpu found seeds rc
  # the copies (and the logs) are under build/: `make clean` during a campaign ends it here
  [ -x "$bin/$h" ] && [ -d "$work/logs" ] || { echo "campaign: $bin/$h is gone (make clean?): $h not run" >&2; return 3; }
  # -max_len and -dict from fuzz/harnesses.tsv; the seeds: the harness's, then every campaign's
  flags=$(sh fuzz/harnesses.sh flags "$h") && dirs=$(sh fuzz/harnesses.sh seeds "$h") || return 2
  for d in corpus/peers tests/vectors; do case " $dirs " in *" $d "*) ;; *) dirs="$dirs $d";; esac; done
  mkdir -p "$work/$h"
  log=$work/logs/$h-$(date +%Y%m%d-%H%M%S).log
  seeds="corpus/$h ($(ls corpus/$h 2>/dev/null | wc -l))$(echo " ${dirs#corpus/$h}" | sed 's/  */ + /g; s/^ + $//')"
  local start=$(date +%s) mark=$work/logs/$h.start
  touch "$mark"
  nice -n "${NICE:-19}" "$bin/$h" -max_total_time="$secs" $flags -timeout=20 -rss_limit_mb=2048 \
      -malloc_limit_mb=${MALLOC_LIMIT_MB:-512} -print_final_stats=1 \
      -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
      -artifact_prefix="$work/findings/$h-" "$work/$h" $dirs >"$log" 2>&1
  rc=$?
  local wall=$(( $(date +%s) - start ))
  # the CPU time of the run: bash's `times`, the children of this subshell (the fuzzer and its jobs)
  times >"$work/logs/$h.times"
  cpu=$(tail -n 1 "$work/logs/$h.times" | awk '{ split($1, u, "m"); split($2, s, "m"); sub("s", "", u[2]); sub("s", "", s[2]); print int(u[1] * 60 + u[2] + s[1] * 60 + s[2]) }')
  execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
  # with -fork the execs are summed by the parent's status lines
  [ -n "$execs" ] || execs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | awk '{ s += $2 } END { print s + 0 }')
  found=$(find "$work/findings" -name "$h-*" -newer "$mark" -printf '%f ' | sed 's/ $//')
  [ -n "$found" ] || found=none
  printf '| %s | %s | %s | %s s (%s s wall) | %s | %s | %s |\n' "$(date +%Y-%m-%d)" "$h" "$commit" \
      "$cpu" "$wall" "${execs:-?}" "$seeds" "$found" >"$work/logs/$h.row"
  echo "  $h: exit $rc, ${execs:-?} execs, $cpu s CPU, findings: $found"
}

append_row() {
  # insert before the ledger's end marker (one table, newest last)
  local row=$1
  awk -v row="$row" '/^<!-- ledger-end -->/ { print row } { print }' "$ledger" >"$ledger.tmp" && mv "$ledger.tmp" "$ledger"
}

set -- $harnesses
while [ $# -gt 0 ]; do
  pids=
  batch=
  for _ in $(seq 1 "$JOBS"); do
    [ $# -gt 0 ] || break
    ( run_one "$1" ) & pids="$pids $!"; batch="$batch $1"; shift
  done
  gone=0
  for pid in $pids; do wait "$pid" || [ $? -ne 3 ] || gone=1; done
  for h in $batch; do
    [ -f "$work/logs/$h.row" ] && append_row "$(cat "$work/logs/$h.row")" && rm -f "$work/logs/$h.row"
  done
  [ "$gone" = 0 ] || { echo "campaign: stopped: its copies of the harnesses were removed" >&2; exit 3; }
done
rm -rf "$bin"
echo "campaign: rows appended to $ledger"
