# Real users for the tests of who may see what (sourced after lib.sh and
# daemon-lib.sh).  Names are unique to the run and removed at exit.
#
#   test_users PREFIX  creates ${PREFIX}member$$ (group perfmark, made when
#                      missing) and ${PREFIX}outsider$$; sets MEMBER_UID,
#                      OUTSIDER_UID, PM_GID
#   extra_members N    N more members ${PREFIX}m$$x<i>; their uids in EXTRA_UIDS
#   as_member CMD...   runs CMD as the member (setpriv), as_outsider likewise,
#   as_uid UID CMD...  as that member
command -v setpriv >/dev/null || skip "setpriv missing"
command -v useradd >/dev/null || skip "useradd missing"
_users=()
_made_group=

users_cleanup() {
	local u p
	for p in "${_bg_pids[@]}"; do   # a user with processes cannot be removed
		kill -9 "$p" 2>/dev/null
	done
	for p in "${_bg_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	# and whatever still runs as them: a background `as_member CMD &` is a
	# subshell whose kill leaves CMD running (t-hostile-jitmap's helper spun
	# on for 10 minutes, through the tests after it, and kept its user)
	for u in "${_users[@]}"; do
		pkill -KILL -u "$u" 2>/dev/null
	done
	for u in "${_users[@]}"; do
		wait_until 30 _user_gone "$u" || echo "users-lib: processes of $u outlive the test: $(pgrep -u "$u" -l | tr '\n' ' ')"
		userdel "$u" 2>/dev/null
	done
	# the group perfmark stays: tests running beside this one (other
	# checkouts, make check in parallel) may use it, and deleting it under
	# them turned their members into outsiders mid-test
	daemon_cleanup
}

_user_gone() { ! pgrep -u "$1" >/dev/null; }

# _add_user NAME [useradd options...]: skip when useradd refuses
_add_user() {
	local u=$1; shift
	useradd -M -N -s /bin/false "$@" "$u" || skip "cannot add users"
	_users+=("$u")
}

test_users() {
	_users_prefix=$1
	getent group perfmark >/dev/null || groupadd perfmark || getent group perfmark >/dev/null ||
		skip "cannot add group perfmark"
	trap users_cleanup EXIT
	_add_user "${1}member$$" -G perfmark
	_add_user "${1}outsider$$"
	MEMBER_UID=$(id -u "${1}member$$") OUTSIDER_UID=$(id -u "${1}outsider$$")
	PM_GID=$(getent group perfmark | cut -d: -f3)
	chmod 0755 "$T"
}

extra_members() {
	local i u
	EXTRA_UIDS=()
	for i in $(seq "$1"); do
		u=${_users_prefix}m$$x$i
		_add_user "$u" -G perfmark
		EXTRA_UIDS+=("$(id -u "$u")")
	done
}

as_uid() { local u=$1; shift; setpriv --reuid="$u" --regid=65534 --groups="$PM_GID" "$@"; }
as_member() { as_uid "$MEMBER_UID" "$@"; }
as_outsider() { setpriv --reuid="$OUTSIDER_UID" --regid=65534 --clear-groups "$@"; }
