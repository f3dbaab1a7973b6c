#!/usr/bin/env bash
# Run one integration script as an unprivileged user. As root: create the
# user "ward-test" where missing, copy ward, the helpers and the scripts to a
# directory that user can reach (the CI clone may sit where it cannot), and
# drop to it. As a non-root user: just run the script.
set -eu
script=$1
if [ "$(id -u)" -ne 0 ]; then
	exec bash "$script"
fi
user=${WARD_TEST_USER:-ward-test}
if ! id -u "$user" >/dev/null 2>&1; then
	useradd --create-home --shell /bin/bash "$user" >/dev/null 2>&1 ||
		useradd -m "$user"
fi
stage=$(mktemp -d /tmp/ward-unpriv.XXXXXX)
trap 'rm -rf "$stage"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
chmod 755 "$stage"
mkdir -p "$stage/helpers" "$stage/integration"
cp "$WARD" "$stage/ward"
# Tier 3's guest init: ward uses only a guest image made with its own
# (src/vm/vm-image.c), which it finds beside itself.
[ ! -f "$(dirname "$WARD")/ward-guest-init" ] || cp "$(dirname "$WARD")/ward-guest-init" "$stage/"
if [ -n "${WARD_HELPERS:-}" ] && [ -d "$WARD_HELPERS" ]; then
	find "$WARD_HELPERS" -maxdepth 1 -type f -perm -u+x -exec cp {} "$stage/helpers/" \;
fi
cp -r "$(dirname "$script")"/. "$stage/integration/"
if [ -n "${WARD_SRC:-}" ]; then
	mkdir -p "$stage/src"
	cp -r "$WARD_SRC/tests" "$stage/src/" 2>/dev/null || true
	cp -r "$WARD_SRC/examples" "$stage/src/" 2>/dev/null || true
	chmod -R a+rX "$stage/src"
fi
# A script that needs more than ward (libward's installed tree: the
# build dir may be out of reach) stages it as root: `SCRIPT --stage DIR`.
if grep -q '^# ward-test: stage' "$script"; then
	bash "$script" --stage "$stage/extra"
fi
chmod -R a+rX "$stage"
uid=$(id -u "$user")
gid=$(id -g "$user")
home=$(getent passwd "$user" | cut -d: -f6)
# A clean environment, as a harness started by that user would have.
# WARD_VM_DIR_UNPRIV: that user's tier-3 image dir (a guest init under
# test, kept out of the shared /var/lib/ward/vm); empty: ward's default.
# Not exec: the EXIT trap removes the stage when the script ends (each
# stage is ~60 MB; exec left one behind per run).
status=0
setpriv --reuid="$uid" --regid="$gid" --init-groups --reset-env \
	env HOME="$home" USER="$user" LOGNAME="$user" PATH=/usr/local/bin:/usr/bin:/bin \
	WARD="$stage/ward" WARD_HELPERS="$stage/helpers" WARD_SRC="$stage/src" WARD_STAGE_DIR="$stage/extra" \
	WARD_MUST_WORK="${WARD_MUST_WORK:-}" WARD_UNPRIV=1 ${WARD_VM_DIR_UNPRIV:+WARD_VM_DIR="$WARD_VM_DIR_UNPRIV"} \
	bash "$stage/integration/$(basename "$script")" || status=$?
exit "$status"
