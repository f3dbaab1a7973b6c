#!/usr/bin/env bash
# ward inside a container (docs/containers.md): a rootful Podman container
# (Debian's podman with runc; the host's root file system as the
# container's, read-only through an overlay, so no image is needed), once
# with the default settings and once with the documented ones. Checks the
# tier each gets, that a run works or refuses with the documented message,
# and that --tier 1 runs in the default container and still confines.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/podman-lib.sh"

podman_require

# What each container gets: ward's own binary and this test's tree through
# the host's root file system; limits lowered, which needs no
# CAP_SYS_RESOURCE (podman would raise them); a home of its own.
mkdir -p "$T/chome"
echo "host-secret-$$" >"$T/secret"
read -r nofile nproc <<<"$(podman_limits)"
pod=(podman --runtime runc run --rm --network none
	--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc"
	-e HOME="$T/chome" -e XDG_STATE_HOME="$T/chome/state" -e XDG_CONFIG_HOME="$T/chome/config"
	-w "$WS")
profile="${WARD_SRC:-}/contrib/ward-seccomp.json"
[ -f "$profile" ] || skip_all "contrib/ward-seccomp.json not found (WARD_SRC='${WARD_SRC:-}')"
documented=(--security-opt unmask=ALL --security-opt "seccomp=$profile")
out=$(timeout 120 "${pod[@]}" --rootfs /:O /bin/true 2>&1) ||
	skip_all "podman cannot start a container here: $(tr '\n' ' ' <<<"$out")"

in_pod() { timeout 120 "${pod[@]}" "$@"; }

# --- the default settings: masked /proc, the default seccomp profile ------
out=$(in_pod --rootfs /:O "$WARD" probe --json 2>/dev/null)
tier=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tier"])' <<<"$out" 2>/dev/null)
check_eq "default container: ward probe reports tier 1" 1 "$tier"
check "default container: the probe names the failing step (mount-proc)" \
	grep -q '"step":"mount-proc"' <<<"$out"
err=$(in_pod --rootfs /:O "$WARD" run -- sh -c "echo ran >$T/ran-default" 2>&1)
st=$?
check_eq "default container: ward run refuses (exit 125)" 125 "$st"
names_all() { grep -q "mount-proc" <<<"$1" && grep -q "unmask" <<<"$1" && grep -q -- "--tier 1" <<<"$1"; }
check "default container: the refusal names the step, the fix and --tier 1" names_all "$err"
check "default container: nothing ran (host: no marker)" eval "[ ! -e '$T/ran-default' ]"
out=$(in_pod --rootfs /:O "$WARD" run --tier 1 -- sh -c "echo t1-ran; cat $T/secret || echo unreadable" 2>&1 | tr '\n' ' ')
check "default container: --tier 1 runs and still hides host files ($out)" \
	eval 'grep -q t1-ran <<<"$out" && grep -q unreadable <<<"$out" && ! grep -q host-secret <<<"$out"'

# --- the documented settings: unmasked /proc, ward's seccomp profile --------
out=$(in_pod "${documented[@]}" --rootfs /:O "$WARD" probe --json 2>/dev/null)
tier=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["tier"])' <<<"$out" 2>/dev/null)
check_eq "documented settings: ward probe reports tier 2" 2 "$tier"
out=$(in_pod "${documented[@]}" --rootfs /:O "$WARD" run -- sh -c "echo t2-ran; cat $T/secret || echo hidden" 2>&1 | tr '\n' ' ')
check "documented settings: a tier-2 run works and hides host files ($out)" \
	eval 'grep -q t2-ran <<<"$out" && grep -q hidden <<<"$out" && ! grep -q host-secret <<<"$out"'

done_testing
