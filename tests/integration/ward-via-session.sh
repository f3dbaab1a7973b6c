#!/usr/bin/env bash
# A stand-in for the ward binary that runs every `ward run [OPTION]... --
# CMD` through a live session: `ward session new --live [OPTION]...`, then
# `ward exec ID -- CMD`, then `ward session stop ID`. The escape and sandbox
# tests run through it (test-escape-session.sh, test-sandbox-session.sh), so
# that every protection they check for a cold run is checked for an exec.
# Anything else, and a run with an option an exec cannot take (--env,
# --session, --events-fd, --result-fd, a tier other than 2), goes to the
# real binary unchanged.
set -u
real=${WARD_REAL:?WARD_REAL must point at the ward binary}
[ "${1:-}" = run ] || exec "$real" "$@"
shift
sess=() ex=() cmd=()
while [ $# -gt 0 ]; do
	case $1 in
	--) shift; cmd=("$@"); break ;;
	--env|--session|--events-fd|--result-fd|--cow-session) exec "$real" run "$@" ;;
	--env=*|--session=*|--events-fd=*|--result-fd=*) exec "$real" run "$@" ;;
	--tier) [ "${2:-}" = 2 ] || exec "$real" run "$@"; sess+=("$1" "$2"); shift 2 ;;
	--result) ex+=("$1" "$2"); shift 2 ;;
	-w|-p|--preset|--timeout|--net|--allow-domain|--allow-host-port|--log-level|--git|--workspace|--policy)
		sess+=("$1" "$2"); shift 2 ;;
	-*) sess+=("$1"); shift ;;
	*) cmd=("$@"); break ;;
	esac
done
# Whatever the cold run would say about its options.
[ ${#cmd[@]} -gt 0 ] || exec "$real" run "${sess[@]}" "${ex[@]}"
id=$("$real" session new --live "${sess[@]}") || exit $?
# Signals to this stand-in go to ward exec, as they would to ward run.
"$real" exec "$id" "${ex[@]}" -- "${cmd[@]}" <&0 &
child=$!
trap 'kill -TERM $child' TERM
trap 'kill -INT $child' INT
trap 'kill -HUP $child' HUP
while :; do
	wait "$child"
	st=$?
	kill -0 "$child" 2>/dev/null || break
done
"$real" session stop "$id" >/dev/null 2>&1
exit $st
