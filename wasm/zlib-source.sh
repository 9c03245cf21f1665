#!/bin/sh
# wasm/zlib-source.sh DIR -- Debian's source of the zlib the native build links (the source of the
# installed zlib1g), unpacked with Debian's patches into DIR, for `make wasm`.  Nothing comes from
# anywhere but the Debian archives apt takes zlib1g from: when apt has no deb-src entry for them,
# one is added for each (as root: /etc/apt/sources.list.d/npzstream-deb-src.list) and apt's lists
# are updated.  The installed version is taken when the archive serves its source.  Where it does
# not (an archive whose index lists a source its pool does not serve, as a security archive's
# mirror may), the newest source of the same upstream release is taken, and the build says so
# loudly, with the Debian changes the native zlib has and the wasm's lacks (from zlib1g's
# changelog); WASM_ZLIB_EXACT=1 refuses that and fails instead.
set -eu
dest=${1:?usage: wasm/zlib-source.sh DIR}
say() { echo "zlib-source: $*" >&2; }
fail() { [ -s "$tmp/log" ] && tail -n 5 "$tmp/log" >&2; say "$*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ver=$(dpkg-query -W -f='${source:Version}' zlib1g 2>/dev/null) ||
  fail "zlib1g is not installed: the wasm build takes the source of the zlib the native build uses (apt-get install zlib1g-dev)"
if [ -f "$dest/.npzs-version" ] && grep -qx "native $ver" "$dest/.npzs-version"; then
  grep -qx "source $ver" "$dest/.npzs-version" ||
    say "WARNING: the wasm's zlib is $(sed -n 's/^source //p' "$dest/.npzs-version"), not the native $ver: the archive served no other source when it was fetched (rm -r $dest to try again)"
  exit 0
fi
command -v dpkg-source >/dev/null || fail "dpkg-source is missing: apt-get install dpkg-dev"
upstream=$(echo "$ver" | sed 's/^[0-9]*://; s/-[^-]*$//')

# source versions apt can fetch: the installed one, else the newest of the same upstream release
pick() {
  apt-cache showsrc zlib 2>/dev/null | sed -n 's/^Version: //p' >"$tmp/versions"
  if grep -qx "$ver" "$tmp/versions"; then echo "$ver"; return; fi
  grep -E "^([0-9]+:)?$(echo "$upstream" | sed 's/\./\\./g')-" "$tmp/versions" | sort -V | tail -n 1
}
get() { (cd "$tmp" && apt-get source -q "zlib=$1") >"$tmp/log" 2>&1; }

want=$(pick)
if [ -z "$want" ]; then
  # the archives zlib1g comes from, as deb-src entries ("URI SUITE COMPONENT"), with the key each
  # deb entry names (apt refuses one archive under two keys)
  lines=$(apt-cache madison zlib1g | awk -F' [|] ' '{ split($3, a, " "); n = split(a[2], s, "/");
    c = s[n]; sub("/[^/]*$", "", a[2]); print a[1] " " a[2] " " c }' | sort -u)
  [ -n "$lines" ] || fail "apt knows no archive with zlib1g: run apt-get update"
  out=$(echo "$lines" | while read -r uri suite comp; do
    key=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v RS= -v u="${uri%/}" '
      { k = ""; m = 0; n = split($0, l, "\n")
        for (i = 1; i <= n; i++) {
          if (l[i] ~ /^URIs:/) { x = l[i] " "; gsub("/ ", " ", x); if (index(x, " " u " ")) m = 1 }
          if (l[i] ~ /^Signed-By:/) { k = l[i]; sub(/^Signed-By: */, "", k) } }
        if (m && k != "") { print k; exit } }')
    echo "deb-src ${key:+[signed-by=$key] }$uri $suite $comp"; done)
  list=/etc/apt/sources.list.d/npzstream-deb-src.list
  if [ "$(id -u)" != 0 ]; then
    say "apt has no deb-src entry for zlib; as root, put these lines in $list:"
    echo "$out" >&2
    fail "then run apt-get update and make wasm again"
  fi
  say "adding $list (the Debian archives of the installed zlib1g) and updating apt's lists:"
  echo "$out" | tee "$list" >&2
  apt-get update -qq >"$tmp/log" 2>&1 || fail "apt-get update failed (offline?): the wasm build needs zlib's source"
  want=$(pick)
  [ -n "$want" ] || fail "the archives serve no source of zlib $upstream (the installed zlib1g is $ver)"
fi
if ! get "$want"; then
  # an index may list a version its pool does not serve: the newest other of the same release
  other=$(grep -E "^([0-9]+:)?$(echo "$upstream" | sed 's/\./\\./g')-" "$tmp/versions" | grep -vx "$want" | sort -V | tail -n 1)
  [ "${WASM_ZLIB_EXACT:-0}" = 1 ] && fail "apt-get source zlib=$want failed, and WASM_ZLIB_EXACT=1 takes no other version"
  [ -n "$other" ] && get "$other" && want=$other ||
    fail "apt-get source zlib=$want failed (offline?): the wasm build needs zlib's source"
fi
src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'zlib-*' | head -n 1)
[ -n "$src" ] && [ -f "$src/inflate.c" ] || fail "apt-get source gave no unpacked zlib"
rm -rf "$dest" && mkdir -p "$(dirname "$dest")" && mv "$src" "$dest"
printf 'native %s\nsource %s\n' "$ver" "$want" >"$dest/.npzs-version"
if [ "$want" = "$ver" ]; then say "zlib $want, Debian's source with its patches, in $dest"
else
  say "WARNING: zlib $want in $dest, not the installed $ver, whose source the archive does not serve"
  say "WARNING: (the same upstream zlib $upstream); the wasm's zlib lacks these changes of the native one:"
  # zlib1g's changelog, from its top to the entry of the version taken
  zcat /usr/share/doc/zlib1g/changelog.Debian.gz 2>/dev/null | awk -v v="$want" '$1 == "zlib" && $2 == "(" v ")" { exit } { print }' |
    grep -E '^ +\*' | sed 's/^/zlib-source:   /' >&2 || true
  say "WARNING: make wasm WASM_ZLIB_EXACT=1 refuses this; the exact source needs an archive that serves it"
fi
