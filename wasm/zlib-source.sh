#!/bin/sh
# wasm/zlib-source.sh DIR -- the zlib source `make wasm` compiles, unpacked into DIR: never one
# that lacks a fix the installed zlib1g has, unless asked for.  Nothing comes from anywhere but the
# Debian archives, through apt (every file checked against the archive's signed index).
#
#  1. The source of the installed zlib1g, with Debian's patches: the wasm's zlib is then the
#     native build's.  When apt has no deb-src entry for the archives zlib1g comes from, one is
#     added for each (as root: /etc/apt/sources.list.d/npzstream-deb-src.list) and apt's lists
#     are updated.
#  2. Where the archive does not serve it (an index may list a source its pool does not serve, as
#     a security archive's mirror may), the fixes the wasm needs are the CVEs of zlib1g's changelog
#     above the newest source of the same upstream release the archive serves.  If each of them is
#     known (FIXES below) to be fixed in a later upstream release or to lie in files the wasm does
#     not compile, the newest zlib of Debian's development suite (unstable) that is such a release
#     is taken: its Debian source where its pool serves it, else its upstream tarball as Debian
#     ships it, read through a private apt state (the machine's apt settings are left alone).
#  3. Else the build fails, naming the fixes the wasm's zlib would lack; WASM_ZLIB_ALLOW_OLD=1
#     takes the newest source of the same upstream release all the same, and says what it lacks.
# WASM_ZLIB_EXACT=1 takes nothing but step 1.
set -eu
dest=${1:?usage: wasm/zlib-source.sh DIR}
# what is known of each CVE a Debian zlib1g names: "CVE fixed UPSTREAM-VERSION (what)", or
# "CVE outside FILES (what)" for a fix in files the wasm does not compile (mk/wasm.mk: WASM_ZLIB,
# the inflate side only).  A CVE not here stops step 2: add it once its fix is known.
FIXES='CVE-2026-27171 fixed 1.3.2 (crc32.c: crc32_combine64 and crc32_combine_gen64 loop forever on a negative length)
CVE-2026-85091 outside gz*.c (the gzip file functions: gzwrite.c, gz_vacate)
CVE-2022-37434 fixed 1.2.13 (inflate.c: a large gzip header extra field, with inflateGetHeader)
CVE-2018-25032 fixed 1.2.12 (deflate.c: memory corruption when deflating)'
say() { echo "zlib-source: $*" >&2; }
fail() { [ -s "$tmp/log" ] && tail -n 5 "$tmp/log" >&2; say "$*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ver=$(dpkg-query -W -f='${source:Version}' zlib1g 2>/dev/null) ||
  fail "zlib1g is not installed: the wasm build takes the source of the zlib the native build uses (apt-get install zlib1g-dev)"
# the source fetched before, for the same zlib1g: kept when it is the native one's, or one taken
# by these rules (a "why" line) that does not lack fixes or whose lack is still asked for
stamp=$dest/.npzs-version
if [ -f "$stamp" ] && grep -qx "native $ver" "$stamp" && { grep -qx "source $ver" "$stamp" ||
   { grep -q '^why ' "$stamp" && { ! grep -q '^why WASM_ZLIB_ALLOW_OLD' "$stamp" || [ "${WASM_ZLIB_ALLOW_OLD:-0}" = 1 ]; }; }; }; then
  grep -qx "source $ver" "$stamp" ||
    say "the wasm's zlib is $(sed -n 's/^source //p' "$stamp"), not the native $ver: $(sed -n 's/^why //p' "$stamp") (rm -r $dest to try again)"
  exit 0
fi
command -v dpkg-source >/dev/null || fail "dpkg-source is missing: apt-get install dpkg-dev"
upstream=$(echo "$ver" | sed 's/^[0-9]*://; s/-[^-]*$//')
same_release() { grep -E "^([0-9]+:)?$(echo "$upstream" | sed 's/\./\\./g')-"; }

# source versions apt can fetch: the installed one, else the newest of the same upstream release
pick() {
  apt-cache showsrc zlib 2>/dev/null | sed -n 's/^Version: //p' >"$tmp/versions"
  if grep -qx "$ver" "$tmp/versions"; then echo "$ver"; return; fi
  same_release <"$tmp/versions" | sort -V | tail -n 1
}
get() { (cd "$tmp" && apt-get source -q "zlib=$1") >"$tmp/log" 2>&1; }

# the archives zlib1g comes from, as deb-src entries ("URI SUITE COMPONENT"), with the key each
# deb entry names (apt refuses one archive under two keys)
archives() {
  apt-cache madison zlib1g | awk -F' [|] ' '$3 ~ / Packages$/ { split($3, a, " "); n = split(a[2], s, "/");
    c = s[n]; sub("/[^/]*$", "", a[2]); print a[1] " " a[2] " " c }' | sort -u | while read -r uri suite comp; do
    key=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk -v RS= -v u="${uri%/}" '
      { k = ""; m = 0; n = split($0, l, "\n")
        for (i = 1; i <= n; i++) {
          if (l[i] ~ /^URIs:/) { x = l[i] " "; gsub("/ ", " ", x); if (index(x, " " u " ")) m = 1 }
          if (l[i] ~ /^Signed-By:/) { k = l[i]; sub(/^Signed-By: */, "", k) } }
        if (m && k != "") { print k; exit } }')
    echo "deb-src ${key:+[signed-by=$key] }$uri $suite $comp"; done
}

want=$(pick)
if [ -z "$want" ]; then
  out=$(archives)
  [ -n "$out" ] || fail "apt knows no archive with zlib1g: run apt-get update"
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

why=""
if [ "$want" != "$ver" ] || ! get "$want"; then
  [ "${WASM_ZLIB_EXACT:-0}" = 1 ] && fail "the archive serves no source of the installed zlib1g $ver, and WASM_ZLIB_EXACT=1 takes no other"
  # the newest other source of the same release the archive serves, and the CVEs it lacks: those
  # of zlib1g's changelog above its entry
  old=""
  for v in $(same_release <"$tmp/versions" | grep -vx "$ver" | sort -V -r); do
    if get "$v"; then old=$v; break; fi
  done
  [ -n "$old" ] && mv "$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'zlib-*' | head -n 1)" "$tmp/old"
  changes() { zcat /usr/share/doc/zlib1g/changelog.Debian.gz 2>/dev/null | awk -v v="$old" '$1 == "zlib" && $2 == "(" v ")" { exit } { print }'; }
  lacks=$(changes | grep -oE 'CVE-[0-9]+-[0-9]+' | sort -u || true)
  # step 2: a later upstream release that has every one of those fixes
  need=$upstream
  unknown=""
  for c in $lacks; do
    line=$(echo "$FIXES" | grep "^$c " || true)
    case "$line" in
      *" fixed "*) f=$(echo "$line" | awk '{ print $3 }'); if dpkg --compare-versions "$f" gt "$need"; then need=$f; fi ;;
      *" outside "*) ;;
      *) unknown="$unknown $c" ;;
    esac
  done
  later=""
  if [ -n "$lacks" ] && [ -z "$unknown" ]; then
    uri=$(apt-cache madison zlib1g | awk -F' [|] ' '$3 ~ / Packages$/ && $3 !~ /-(security|updates)[\/ ]/ { split($3, a, " "); print a[1]; exit }')
    key=$(archives | sed -n "s|^deb-src \[signed-by=\([^]]*\)\] ${uri} .*|\1|p" | head -n 1)
    pa="$tmp/apt"
    mkdir -p "$pa/lists/partial" "$pa/cache/archives/partial" "$pa/parts" "$tmp/later"
    echo "deb-src ${key:+[signed-by=$key] }$uri unstable main" >"$pa/sources.list"
    A="-o Dir::Etc::sourcelist=$pa/sources.list -o Dir::Etc::sourceparts=$pa/parts -o Dir::State::Lists=$pa/lists -o Dir::Cache=$pa/cache"
    if [ -n "$uri" ] && apt-get $A update -qq >"$tmp/log" 2>&1; then
      for v in $(apt-cache $A showsrc zlib 2>/dev/null | sed -n 's/^Version: //p' | sort -u | sort -V -r); do
        u=$(echo "$v" | sed 's/^[0-9]*://; s/-[^-]*$//; s/.*really//')
        dpkg --compare-versions "$u" ge "$need" || continue
        # its Debian source where the pool serves it, else the upstream tarball apt fetched
        if (cd "$tmp/later" && apt-get $A source -q "zlib=$v") >"$tmp/log" 2>&1; then
          later="$v (Debian's source)"
        else
          (cd "$tmp/later" && apt-get $A source -q --download-only "zlib=$v") >"$tmp/log" 2>&1 || true
          orig=$(find "$tmp/later" -maxdepth 1 -name 'zlib_*.orig.tar.*' | head -n 1)
          if [ -n "$orig" ] && mkdir -p "$tmp/later/x" && tar -xf "$orig" -C "$tmp/later/x"; then
            later="$v (its upstream tarball: the pool serves no other file of it)"
          fi
        fi
        [ -n "$later" ] && break
      done
    fi
  fi
  if [ -n "$later" ]; then
    mkdir -p "$tmp/later/x"
    mv "$(find "$tmp/later" "$tmp/later/x" -mindepth 1 -maxdepth 1 -type d -name 'zlib-*' | head -n 1)" "$tmp/zlib-later"
    want=${later%% *}
    why="the archive does not serve the source of the installed $ver; zlib $later, from Debian's unstable, has the fixes $old lacks: $(echo $lacks)"
  elif [ -n "$old" ] && { [ -z "$lacks" ] || [ "${WASM_ZLIB_ALLOW_OLD:-0}" = 1 ]; }; then
    mv "$tmp/old" "$tmp/zlib-old"
    want=$old
    if [ -z "$lacks" ]; then why="the archive does not serve the source of the installed $ver; $old lacks no CVE fix of it"
    else why="WASM_ZLIB_ALLOW_OLD=1: it lacks the fixes of $(echo $lacks)"; say "WARNING: $why"; fi
  else
    say "the archive does not serve the source of the installed zlib1g $ver, and the source of zlib $upstream"
    say "it serves (${old:-none}) lacks these fixes of the native zlib (zlib1g's changelog):"
    changes | grep -E '^ +\*' | sed 's/^/zlib-source:   /' >&2 || true
    if [ -n "$unknown" ]; then say "no later release is known to fix$unknown (wasm/zlib-source.sh, FIXES)"
    else say "and no later zlib release with them could be fetched from Debian's unstable (offline?)"; fi
    fail "make wasm WASM_ZLIB_ALLOW_OLD=1 builds with ${old:-that source} all the same (the wasm then lacks those fixes)"
  fi
fi
src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'zlib-*' | head -n 1)
[ -n "$src" ] && [ -f "$src/inflate.c" ] || fail "apt-get source gave no unpacked zlib"
rm -rf "$dest" && mkdir -p "$(dirname "$dest")" && mv "$src" "$dest"
printf 'native %s\nsource %s\n' "$ver" "$want" >"$dest/.npzs-version"
[ -n "$why" ] && printf 'why %s\n' "$why" >>"$dest/.npzs-version"
if [ "$want" = "$ver" ]; then say "zlib $want, Debian's source with its patches, in $dest"
else say "zlib $want in $dest, not the installed $ver: $why"; fi
