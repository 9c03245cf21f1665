#!/bin/sh
# fuzz/harnesses.sh -- reads fuzz/harnesses.tsv (the one list of harnesses) for fuzz/fuzz.mk and
# fuzz/campaign.sh, and checks the tree against it.  Run from the top of the tree.
#   fuzz/harnesses.sh names [BUILD]   the harnesses of that build (default: driver), in table order
#   fuzz/harnesses.sh flags NAME      its libFuzzer flags: -max_len=N -dict=FILE (those it has)
#   fuzz/harnesses.sh seeds NAME      its seed folders: corpus/NAME, then the seeds column's
#   fuzz/harnesses.sh check [README]  every fuzz/fuzz_*.c has a row and every row its source and
#                                     corpus/NAME/; README's "## Harnesses" table (default
#                                     fuzz/README.md) names exactly the table's harnesses.  Last
#                                     line "harnesses: N passed, M failed"; exit 1 on a failure
set -u
table=fuzz/harnesses.tsv
[ -r "$table" ] || { echo "harnesses.sh: no $table (run from the top of the tree)" >&2; exit 2; }

# the rows, tab-separated, without comments and the header line
rows() { awk -F'\t' '!/^#/ && NF && $1 != "name"' "$table"; }
# one cell: cell NAME COLUMN ('-' comes out empty); a name without a row is an error
cell() {
  rows | awk -F'\t' -v h="$1" -v c="$2" '
    BEGIN { n = split("name max_len dict seeds build", cols, " "); for (i = 1; i <= n; i++) at[cols[i]] = i }
    $1 == h { found = 1; v = $(at[c]); print (v == "-" ? "" : v) }
    END { exit !found }' || { echo "harnesses.sh: $1 is not in $table" >&2; exit 2; }
}

case ${1:-} in
names)
  rows | awk -F'\t' -v b="${2:-driver}" '$5 == b { print $1 }'
  ;;
flags)
  ml=$(cell "$2" max_len) || exit 2
  dict=$(cell "$2" dict) || exit 2
  echo ${ml:+-max_len=$ml} ${dict:+-dict=$dict}
  ;;
seeds)
  seeds=$(cell "$2" seeds) || exit 2
  echo "corpus/$2" $(echo "$seeds" | tr ',' ' ')
  ;;
check)
  readme=${2:-fuzz/README.md}
  tmp=$(mktemp -d) || exit 2
  trap 'rm -rf "$tmp"' EXIT
  rows | cut -f1 | sort >"$tmp/table"
  ls fuzz/fuzz_*.c | sed 's#^fuzz/##; s#\.c$##' | sort >"$tmp/sources"
  # the first column of the table under "## Harnesses", up to the next heading
  awk '/^## / { inside = ($0 == "## Harnesses") } inside && /^\| `fuzz_/ { split($0, f, "`"); print f[2] }' \
    "$readme" | sort >"$tmp/readme"
  passed=0 failed=0
  report() { # report WHAT FILE: each line of FILE is a failure
    if [ -s "$2" ]; then
      while read -r line; do echo "FAIL $1: $line"; done <"$2"
      failed=$((failed + $(wc -l <"$2")))
    else
      passed=$((passed + 1))
    fi
  }
  comm -13 "$tmp/table" "$tmp/sources" >"$tmp/x"; report "a source without a row in $table" "$tmp/x"
  comm -23 "$tmp/table" "$tmp/sources" >"$tmp/x"; report "a row of $table without fuzz/NAME.c" "$tmp/x"
  for h in $(cat "$tmp/table"); do [ -d "corpus/$h" ] || echo "$h"; done >"$tmp/x"
  report "a harness without its corpus/NAME/" "$tmp/x"
  comm -23 "$tmp/table" "$tmp/readme" >"$tmp/x"; report "a harness $readme's table does not list" "$tmp/x"
  comm -13 "$tmp/table" "$tmp/readme" >"$tmp/x"; report "a row of $readme's table that is no harness" "$tmp/x"
  [ -s "$tmp/table" ] || { echo "FAIL $table: no harnesses"; failed=$((failed + 1)); }
  echo "harnesses: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  ;;
*)
  sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
  ;;
esac
