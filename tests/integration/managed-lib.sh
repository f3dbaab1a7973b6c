#!/usr/bin/env bash
# The managed ceilings the integration tests use (docs/policy.md, "The
# managed ceiling"), sourced by test-managed.sh and test-libward.sh. A
# ceiling is refused unless root alone could have written it and every
# directory above it, so the fixtures live under /run, made by root:
#  - as root, managed_dir makes a fresh directory (removed at exit);
#  - for the unprivileged run, `SCRIPT --stage DIR` (run-unpriv.sh, as
#    root) calls managed_stage, which writes them to $MANAGED_FIXED (the
#    same content every time, each file replaced atomically), and the
#    unprivileged run finds them there.
# Test builds (-Dtest_hooks) read the ceiling from $WARD_TEST_MANAGED_FILE.

MANAGED_FIXED=/run/ward-test-managed

# _managed_put FILE MODE TEXT [OWNER]: write atomically (a concurrent
# test run reading FILE sees the old or the new one, mode and owner set).
_managed_put() {
	local tmp
	tmp=$(mktemp "$1.XXXXXX") || return 1
	printf '%s\n' "$3" >"$tmp" && chmod "$2" "$tmp" && chown "${4:-0}" "$tmp" && mv -f "$tmp" "$1"
}

# managed_fixtures DIR: write the ceilings into DIR (as root).
managed_fixtures() {
	local d=$1
	mkdir -p "$d/groupdir" || return 1
	chmod 755 "$d" || return 1
	# Every workspace and home of the tests is under /tmp.
	_managed_put "$d/main.json" 644 '{
  "fs": { "read_write": ["/tmp"], "deny": ["/etc/hostname"] },
  "network": { "mode": "proxy", "allow": ["*.example.com"] },
  "limits": { "timeout_s": 600, "pids": 2048 },
  "allowed_tiers": [1, 2],
  "allowed_presets": ["git"],
  "git": "read-only"
}' || return 1
	# Readable paths bounded too.
	_managed_put "$d/reads.json" 644 '{
  "fs": { "read": ["/etc", "/tmp"], "read_exec": ["/usr", "/bin", "/sbin", "/lib", "/lib64"],
          "read_write": ["/tmp"] }
}' || return 1
	_managed_put "$d/audit.json" 644 '{ "audit": { "stream": "stderr" }, "allowed_tiers": [1, 2] }' || return 1
	_managed_put "$d/cow.json" 644 '{ "require_cow": true }' || return 1
	_managed_put "$d/tier1.json" 644 '{ "allowed_tiers": [1] }' || return 1
	_managed_put "$d/netnone.json" 644 '{ "network": { "mode": "none" } }' || return 1
	# Writable by a group: refused.
	_managed_put "$d/groupw.json" 664 '{}' || return 1
	# Owned by another user: refused.
	_managed_put "$d/other.json" 644 '{}' 65534 || return 1
	# In a directory a group may write: refused.
	chown 0:65534 "$d/groupdir" && chmod 775 "$d/groupdir" || return 1
	_managed_put "$d/groupdir/main.json" 644 '{}' || return 1
}

# managed_stage: for run-unpriv.sh's stage step (as root).
managed_stage() {
	[ "$(id -u)" -eq 0 ] || return 0
	managed_fixtures "$MANAGED_FIXED"
}

# managed_dir: set MANAGED to the fixtures' directory, or fail (the caller
# skips). Not in a subshell: it registers its cleanup with lib.sh.
managed_dir() {
	MANAGED=
	if [ "$(id -u)" -eq 0 ]; then
		MANAGED=$(mktemp -d /run/ward-managed.XXXXXX) || return 1
		at_exit "rm -rf '$MANAGED'"
		managed_fixtures "$MANAGED" || return 1
		return 0
	fi
	[ -f "$MANAGED_FIXED/main.json" ] || return 1
	MANAGED=$MANAGED_FIXED
}
