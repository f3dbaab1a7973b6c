#!/usr/bin/env bash
# cJSON for ward.exe, from Debian's own source package: Debian ships
# libcjson-dev for Linux only, and ward vendors nothing. Called by meson at
# setup of the Windows build (src/windows/meson.build):
#
#   cjson-mingw.sh OUTDIR CC...
#
# makes OUTDIR/include/cjson/cJSON.h and OUTDIR/libcjson.a, compiled by the
# cross compiler CC from the source package `apt-get source` fetches (the
# version the Linux build's libcjson-dev came from when the archive still
# has it, else bookworm's current one), with Debian's patches applied
# (dpkg-source -x). Idempotent: when both files are there it does nothing,
# so a configured tree rebuilds offline. The download needs deb.debian.org
# (a package registry, reachable from CI); apt's deb-src index is fetched
# into OUTDIR, the system's apt configuration is not touched.
# WARD_CJSON_DSC=path/to/cjson_*.dsc uses an already downloaded source
# package instead (its .orig and .debian tarballs beside it).
set -euo pipefail
out=$1
shift
[ "$#" -ge 1 ] || { echo "usage: $0 OUTDIR CC..." >&2; exit 2; }
if [ -s "$out/libcjson.a" ] && [ -s "$out/include/cjson/cJSON.h" ]; then
	exit 0
fi
fail() {
	echo "cjson-mingw.sh: $*" >&2
	echo "cjson-mingw.sh: ward.exe needs cJSON built for mingw from Debian's source" \
		"package 'cjson' (deb.debian.org), or WARD_CJSON_DSC=FILE.dsc" >&2
	exit 1
}
command -v dpkg-source >/dev/null || fail "dpkg-source is missing (package dpkg-dev)"
work=$out/src
rm -rf "$work"
mkdir -p "$work"

if [ -n "${WARD_CJSON_DSC:-}" ]; then
	dsc=$(realpath "$WARD_CJSON_DSC")
else
	apt=$work/apt
	mkdir -p "$apt/lists/partial" "$apt/parts" "$apt/dl"
	cat >"$apt/deb-src.sources" <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
	aptopts=(-o "Dir::Etc::SourceList=$apt/deb-src.sources" -o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
		-o "APT::Sandbox::User=root" -q)
	mkdir -p "$apt/cache/archives/partial"
	apt-get "${aptopts[@]}" update >"$apt/update.log" 2>&1 ||
		fail "cannot fetch Debian's source index: $(tail -1 "$apt/update.log")"
	want=cjson
	v=$(dpkg-query -W -f='${source:Version}' libcjson-dev 2>/dev/null || true)
	[ -n "$v" ] && want="cjson=$v"
	(cd "$apt/dl" && { apt-get "${aptopts[@]}" source --download-only "$want" ||
		apt-get "${aptopts[@]}" source --download-only cjson; }) >"$apt/source.log" 2>&1 ||
		fail "cannot download the source package: $(tail -1 "$apt/source.log")"
	dsc=$(ls "$apt"/dl/cjson_*.dsc | head -1)
fi
[ -f "$dsc" ] || fail "no .dsc at '$dsc'"
dpkg-source -x "$dsc" "$work/cjson" >"$work/extract.log" 2>&1 ||
	fail "dpkg-source -x failed: $(tail -1 "$work/extract.log")"
[ -f "$work/cjson/cJSON.c" ] || fail "the source package has no cJSON.c"

"$@" -std=c89 -O2 -fno-strict-aliasing -c "$work/cjson/cJSON.c" -o "$work/cJSON.o"
ar=${AR:-x86_64-w64-mingw32-ar}
rm -f "$out/libcjson.a.tmp"
"$ar" rcs "$out/libcjson.a.tmp" "$work/cJSON.o"
mkdir -p "$out/include/cjson"
cp "$work/cjson/cJSON.h" "$out/include/cjson/cJSON.h"
basename "$dsc" >"$out/SOURCE"
mv "$out/libcjson.a.tmp" "$out/libcjson.a"
rm -rf "$work"
