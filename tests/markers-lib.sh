# shellcheck shell=bash
# Helpers for tests/t-markers-*.sh (source after lib.sh):
#
#   . "$(dirname "$0")/lib.sh"
#   . "$(dirname "$0")/markers-lib.sh"
#   need_markers
#
# need_prog_markers / need_markers: skip unless the workload (and a recorder
# that records markers) is there; both set P to prog-markers.
# norm_perf / norm_pm FILE: the markers of a recording, one normalized line
# each, from stock perf script and from perfmark script --json.
# MARKERS_AWK_HEX: awk functions for the hex payloads of those lines.
# seqs TYPE FILE / contiguous FILE: the sequence numbers prog-children puts
# in its markers, and whether they run without a gap.

# P=prog-markers of this build, or skip.
need_prog_markers() {
	P=$PROGS/prog-markers
	[ -x "$P" ] || skip "no test program $P"
}

# Everything a test that records markers needs: root, perf, bpffs, perfmark
# record (not PM_RECORDER=perf: stock perf records no markers), prog-markers.
need_markers() {
	need_root; need_perf; need_bpffs
	[ "$PM_RECORDER" = perf ] && skip "markers need perfmark record"
	[ -x "$PERFMARK" ] || skip "no perfmark binary at $PERFMARK"
	need_prog_markers
}

# --- one normalized line per marker: KIND PID TID TYPE FLAGS SIZE PAYLOAD -----
# KIND P (perfmark:printf, PAYLOAD = text) or U (perfmark:uevent, PAYLOAD = hex
# of the data, "-" when empty); FLAGS 1 truncated, 2 fault.  norm_perf adds
# two fields to U lines: the header's VERSION and ORIG_SIZE.

# hv(HEX): the number a hex string spells; le32(HEX, OFF): the little-endian
# u32 at byte OFF of a payload's hex.  Prepend to an awk program:
#   awk "$MARKERS_AWK_HEX"'PROGRAM'
MARKERS_AWK_HEX='
function hv(h,   i, v) {
	v = 0
	for (i = 1; i <= length(h); i++)
		v = v * 16 + index("0123456789abcdef", substr(h, i, 1)) - 1
	return v
}
function le32(h, off) {
	return hv(substr(h, off * 2 + 7, 2) substr(h, off * 2 + 5, 2) substr(h, off * 2 + 3, 2) substr(h, off * 2 + 1, 2))
}
'

# stock perf script: header line, then the BPF output hex dump
norm_perf() {
	perf script -i "$1" -F comm,pid,tid,time,event,ip,sym,bpf-output 2>/dev/null | awk "$MARKERS_AWK_HEX"'
	function le(off, n,   i, s) {   # little-endian field of n bytes at byte off
		s = ""
		for (i = n - 1; i >= 0; i--)
			s = s substr(hex, (off + i) * 2 + 1, 2)
		return hv(s)
	}
	function flush(   size) {
		if (ev == "printf") {
			print "P", pid, tid, 0, 0, length(str) + 1, str
		} else if (ev == "uevent") {
			size = le(8, 4)
			print "U", pid, tid, le(4, 4), le(2, 2), size, (size ? substr(hex, 33, size * 2) : "-"), le(0, 2), le(12, 4)
		}
		ev = ""
	}
	/^ *(BPF output: )?[0-9a-f][0-9a-f][0-9a-f][0-9a-f]: / {
		if (ev == "") next
		i = match($0, /[0-9a-f][0-9a-f][0-9a-f][0-9a-f]: /)
		h = substr($0, i + 5, 24)
		gsub(/ /, "", h)
		hex = hex h
		next
	}
	/^ *BPF string: "/ {
		str = $0
		sub(/^ *BPF string: "/, "", str)
		sub(/"$/, "", str)
		next
	}
	/^ *$/ { next }
	{
		flush()
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[0-9]+\/[0-9]+$/) { split($i, pt, "/"); pid = pt[1]; tid = pt[2] }
			if ($i == "perfmark:printf:") ev = "printf"
			if ($i == "perfmark:uevent:") ev = "uevent"
		}
		hex = ""; str = ""
	}
	END { flush() }'
}

# perfmark script --json: one object per line
norm_pm() {
	"$PERFMARK" script -i "$1" --json 2>/dev/null | awk '
	function num(k,   m) {
		if (!match($0, "\"" k "\":-?[0-9]+")) return ""
		m = substr($0, RSTART, RLENGTH); sub(/.*:/, "", m); return m
	}
	function str(k,   m) {
		if (!match($0, "\"" k "\":\"[^\"]*\"")) return ""
		m = substr($0, RSTART, RLENGTH); sub("^\"" k "\":\"", "", m); sub(/"$/, "", m); return m
	}
	/"event":"perfmark:(printf|uevent)"/ {
		fl = ($0 ~ /"truncated":true/ ? 1 : 0) + ($0 ~ /"fault":true/ ? 2 : 0)
		if ($0 ~ /"event":"perfmark:printf"/)
			print "P", num("pid"), num("tid"), num("type"), fl, num("size"), str("text")
		else {
			d = str("data")
			print "U", num("pid"), num("tid"), num("type"), fl, num("size"), (d == "" ? "-" : d)
		}
	}'
}

# seqs TYPE FILE: the sequence numbers of that type's markers, in file order
seqs() {
	"$PERFMARK" script -i "$2" --json --type "$1" 2>/dev/null | awk '
		match($0, /"data":"[0-9a-f]*"/) {
			d = substr($0, RSTART + 8, RLENGTH - 9); s = 0
			for (i = 7; i >= 1; i -= 2)
				s = s * 256 + (index("0123456789abcdef", substr(d, 8 + i, 1)) - 1) * 16 + index("0123456789abcdef", substr(d, 9 + i, 1)) - 1
			print s
		}'
}

# contiguous FILE-OF-SEQS: "first last count" when the numbers run without gaps
contiguous() {
	awk 'NR == 1 { f = $1 } { if (NR > 1 && $1 != p + 1) bad = 1; p = $1 }
	     END { if (bad || !NR) print "gap"; else print f, p, NR }' "$1"
}
