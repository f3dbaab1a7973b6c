#!/usr/bin/env bash
# Rootful Podman on this kind of host, shared by test-containers.sh and
# tests/cluster/ (sourced after lib.sh): the checks that skip when it cannot
# work, and the settings it needs here.
#  - runc: crun refuses hybrid cgroup hosts;
#  - the default nofile and nproc limits exceed some hosts' hard limits
#    (podman raises them, which fails): CONTAINERS_CONF with
#    default_ulimits within them.

# podman_require: skip unless root with podman and runc.
podman_require() {
	[ "$(id -u)" -eq 0 ] || skip_all "rootful Podman needs root (this run is uid $(id -u))"
	command -v podman >/dev/null || skip_all "podman not installed (apt-get install podman runc)"
	command -v runc >/dev/null || skip_all "runc not installed (crun refuses hybrid cgroup hosts)"
}

# podman_limits: print nofile and nproc limits within this shell's hard
# limits (at most 1024 and 4096).
podman_limits() {
	local nofile nproc
	nofile=$(ulimit -Hn)
	nproc=$(ulimit -Hu)
	[ "$nofile" = unlimited ] || [ "$nofile" -gt 1024 ] && nofile=1024
	[ "$nproc" = unlimited ] || [ "$nproc" -gt 4096 ] && nproc=4096
	echo "$nofile $nproc"
}

# podman_conf FILE: write a containers.conf with those limits and export
# CONTAINERS_CONF (kube play has no --ulimit).
podman_conf() {
	local l
	read -r -a l <<<"$(podman_limits)"
	printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n' \
		"${l[0]}" "${l[0]}" "${l[1]}" "${l[1]}" >"$1"
	export CONTAINERS_CONF="$1"
}
