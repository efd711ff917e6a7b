#!/usr/bin/env bash
# Issue 8 case 1: no child crashes on a traced marker, whatever made it.
# prog-children all N, traced, makes in turn: a raw clone(SIGCHLD) child, a
# _Fork() child, a vfork() child, a posix_spawn()ed program, a raw clone()
# thread sharing its parent's TLS (both emitting into one ring at once),
# and a fork() child of a PR_SET_MDWE process (MemoryDenyWriteExecute, where
# no code page can be repaired).  Each exits 0, and each kind's N markers
# are in the file once, in order, unflagged; the children wrote theirs
# through the fast lane ("fast K 1").  The same again as another user's
# process (setpriv), and with the shared library and a static link.
# Before the fix, a uprobe on a five-byte nop was optimised into a call to a
# trampoline page these children lack: the raw clone child died of SIGSEGV.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/markers-lib.sh"
need_markers
N=2000
TYPE0=65836   # TYPE_CHILD in prog-children.c

# check NAME PROG-OUT DATA: every child exited 0, every kind's markers there
check() {
	local name=$1 out=$2 data=$3 main kind got
	grep -qx done "$out" || die "$name: prog-children did not finish" -- "$out"
	for c in clone _Fork vfork posix_spawn thread mdwe; do
		grep -qx "child $c status 0" "$out" || die "$name: the $c child did not exit 0" -- "$out"
	done
	for k in 1 2 4 7; do
		grep -qx "fast $k 1" "$out" || die "$name: child kind $k never had its fast lane attached" -- "$out"
	done
	main=$(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$out")
	"$PERFMARK" script -i "$data" --json 2>/dev/null >"$T/$name.json"
	for kind in 1 2 3 4 5 6 7; do
		got=$(awk -v ty=$((TYPE0 + kind)) -v main="$main" '
			index($0, "\"type\":" ty ",") {
				n++
				if (!match($0, /"data":"[0-9a-f]*"/)) { bad++; next }
				d = substr($0, RSTART + 8, RLENGTH - 9)
				if (substr(d, 1, 8) != "1dc41dc4" || $0 ~ /"truncated":true|"fault":true/) bad++
				# seq: the little-endian u32 after the magic
				s = 0
				for (i = 7; i >= 1; i -= 2) s = s * 256 + (index("0123456789abcdef", substr(d, 8 + i, 1)) - 1) * 16 + index("0123456789abcdef", substr(d, 9 + i, 1)) - 1
				if (s != n - 1) bad++
				match($0, /"pid":[0-9]+/); p = substr($0, RSTART + 6, RLENGTH - 6)
				if (p == main) inmain++
			}
			END { printf "%d %d %d\n", n, bad, inmain }' "$T/$name.json")
		read -r n bad inmain <<<"$got"
		[ "$n" -eq "$N" ] && [ "$bad" -eq 0 ] ||
			die "$name: kind $kind: $n markers ($bad out of order or flagged), want $N in order"
		case $kind in
		1|2|4|7) [ "$inmain" -eq 0 ] || die "$name: kind $kind recorded as the parent's";;
		esac
	done
	ok "$name: 7 kinds x $N markers, each once and in order; no child crashed"
}

F=$T/children.data
"$PERFMARK" record -o "$F" -- "$PROGS/prog-children" all $N >"$T/so.out" 2>"$T/so.err" ||
	die "record exited $?" -- "$T/so.err" "$T/so.out"
check shared "$T/so.out" "$F"

"$PERFMARK" record -o "$T/static.data" -- "$PROGS/prog-children-static" all $N \
	>"$T/st.out" 2>"$T/st.err" || die "record exited $?" -- "$T/st.err" "$T/st.out"
check static "$T/st.out" "$T/static.data"

# as another user's process
command -v setpriv >/dev/null && command -v useradd >/dev/null || skip "setpriv/useradd missing"
U=pm13child$$
useradd -M -N -s /bin/false "$U" || skip "cannot add a user"
trap 'userdel "$U" 2>/dev/null; cleanup' EXIT
uid=$(id -u "$U")
mkdir -m 0777 "$T/u"
"$PERFMARK" record -o "$T/user.data" -- setpriv --reuid="$uid" --regid=65534 --clear-groups \
	"$PROGS/prog-children" all $N >"$T/u/out" 2>"$T/user.err" ||
	die "record exited $?" -- "$T/user.err" "$T/u/out"
check user "$T/u/out" "$T/user.data"
grep -q "\"pid\":$(sed -n 's/^pid \([0-9]*\) .*/\1/p' "$T/u/out")," "$T/user.json" ||
	die "the user's process is not in the recording"
echo "t-markers-children: all checks passed"
