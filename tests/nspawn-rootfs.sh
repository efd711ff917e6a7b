#!/usr/bin/env bash
# The system test's container root (t-system-nspawn.sh): a debootstrap'ed
# Debian 12 minbase with systemd, dbus, perf and perfmark's run-time
# libraries, cached in $PM_NSPAWN_CACHE/rootfs (default
# /var/cache/perfmark-nspawn), from the Debian mirror in this machine's apt
# sources (PM_NSPAWN_MIRROR to choose another).  It needs the package
# registry once, about 80 s; later runs reuse it.
#
# Run as a script (make check does, before any test): builds the cache when
# it is missing, stale or PM_NSPAWN_REBUILD=1, showing debootstrap's progress.
# Sourced (by the test): the names below, and nspawn_build LOG.

CACHE=${PM_NSPAWN_CACHE:-/var/cache/perfmark-nspawn}
SUITE=bookworm
PKGS=systemd,systemd-sysv,dbus,libbpf1,libelf1,libdw1,libzstd1,libjson-c5,zlib1g,libprotobuf-c1,libtracefs1,libtraceevent1,libmicrohttpd12,libncursesw6,linux-perf,util-linux,procps
CACHE_KEY="perfmark-nspawn v1 $SUITE minbase $PKGS"

# The bookworm mirror apt uses here (deb822 .sources and one-line .list).
apt_mirror() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		awk -v s="$SUITE" 'BEGIN { RS = ""; FS = "\n" }
			{ uri = ""; ok = 0; deb = 0
			  for (i = 1; i <= NF; i++) {
				if ($i ~ /^URIs:/) { uri = $i; sub(/^URIs:[ \t]*/, "", uri); sub(/[ \t].*/, "", uri) }
				if ($i ~ /^Types:.*deb([ \t]|$)/) deb = 1
				if ($i ~ /^Suites:/ && (" " substr($i, 8) " ") ~ ("[ \t]" s "[ \t]")) ok = 1
			  }
			  if (ok && deb && uri != "") print uri }' "$f"
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		awk -v s="$SUITE" '$1 == "deb" { for (i = 2; i < NF; i++) if ($i ~ /^[a-z+]+:\/\//) { if ($(i + 1) == s) print $i; break } }' "$f"
	done
}

cache_ok() {
	[ -f "$CACHE/rootfs/.perfmark-cache-key" ] &&
		[ "$(cat "$CACHE/rootfs/.perfmark-cache-key")" = "$CACHE_KEY" ] &&
		[ -x "$CACHE/rootfs/lib/systemd/systemd" ] && [ -x "$CACHE/rootfs/usr/bin/perf" ] &&
		[ -x "$CACHE/rootfs/usr/bin/dbus-daemon" ]
}

nspawn_mirror() {
	local m=${PM_NSPAWN_MIRROR:-$(apt_mirror | head -n 1)}

	echo "${m:-http://deb.debian.org/debian}"
}

# Build $CACHE/rootfs (the caller holds $CACHE/lock exclusively); debootstrap
# writes to LOG.  0 built, 2 the mirror is unreachable, 1 another failure.
nspawn_build() {
	local log=$1 mirror
	mirror=$(nspawn_mirror)
	rm -rf "$CACHE/rootfs.new"
	if ! debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$CACHE/rootfs.new" "$mirror" \
		>"$log" 2>&1 </dev/null; then
		rm -rf "$CACHE/rootfs.new"
		grep -qiE "Failed getting release file|Couldn't download|Temporary failure resolving|Could not resolve" "$log" &&
			return 2
		return 1
	fi
	echo "$CACHE_KEY" >"$CACHE/rootfs.new/.perfmark-cache-key"
	rm -rf "$CACHE/rootfs"
	mv "$CACHE/rootfs.new" "$CACHE/rootfs"
	cache_ok || return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	command -v debootstrap >/dev/null || { echo "nspawn-rootfs: debootstrap is not installed" >&2; exit 1; }
	mkdir -p "$CACHE"
	exec 9>"$CACHE/lock"
	flock -x -w 600 9 || { echo "nspawn-rootfs: cannot lock $CACHE/lock" >&2; exit 1; }
	if [ -z "${PM_NSPAWN_REBUILD:-}" ] && cache_ok; then
		echo "system test container: $CACHE/rootfs (cached)"
		exit 0
	fi
	echo "system test container: debootstrap $SUITE from $(nspawn_mirror) into $CACHE/rootfs (once, about 80 s)"
	log=$(mktemp /tmp/perfmark-debootstrap.XXXXXX)
	nspawn_build "$log" &
	pid=$!
	# its progress: the packages as they come
	tail -n +1 -f "$log" --pid="$pid" 2>/dev/null | grep --line-buffered -E '^I: (Retrieving|Validating|Extracting|Installing|Configuring|Base system)' |
		awk '{ printf "\r  %-70.70s", $0 } END { print "" }'
	wait "$pid"; rc=$?
	case $rc in
	0) echo "system test container: ready"; rm -f "$log";;
	2) echo "nspawn-rootfs: the Debian mirror is unreachable (see $log); the system test will say so" >&2; exit 0;;
	*) echo "nspawn-rootfs: debootstrap failed, see $log" >&2; exit 1;;
	esac
fi
