#!/bin/sh
# Run inside a pod by test-pod.sh (sh, not bash): write a positive tier-2
# probe answer into ward's cache under the key this process's ward would
# compute (src/probe/probe-steps.c, cache_key), to check that a wrong
# cached answer does not open a weaker sandbox. WARD_EXE: the ward to ask
# for its version.
f() { head -1 "$1" 2>/dev/null; }
st() { awk -v k="$1:" '$1 == k {print $2}' /proc/self/status; }
v=$("$WARD_EXE" --version | awk '{print $2}')
key="v2 $v $(f /proc/sys/kernel/random/boot_id) uid=$(id -u) caps=$(st CapEff) seccomp=$(st Seccomp)"
key="$key filters=$(st Seccomp_filters) nnp=$(st NoNewPrivs) $(readlink /proc/self/ns/user)"
key="$key $(readlink /proc/self/ns/pid) max=$(f /proc/sys/user/max_user_namespaces)"
key="$key unpriv=$(f /proc/sys/kernel/unprivileged_userns_clone)"
key="$key aa=$(f /proc/sys/kernel/apparmor_restrict_unprivileged_userns)"
mkdir -p "$HOME/.local/state/ward"
printf '%s\t1\t-\t0\t0\t0\n' "$key" >"$HOME/.local/state/ward/probe-t2"
