#!/usr/bin/env bash
# Tier 3 (--tier 3: the command in a QEMU micro-VM, QEMU inside the T2
# sandbox) through the real CLI. Each guarantee docs/tiers.md gives T3 is
# tried here, and confirmed on the host: the guest runs its own kernel, the
# policy's view is what QEMU exports (hidden paths absent, read-only paths
# refused by the host kernel to QEMU itself), no network in "none", exit
# codes, the timeout, and a hostile guest is a failed run, never a success.
# Needs qemu-system-x86_64 and the guest image (`ward setup vm`; CI builds
# it in /var/lib/ward/vm, which every user's ward looks at).
. "$(dirname "$0")/lib.sh"

require_t2
command -v qemu-system-x86_64 >/dev/null ||
	skip_all "qemu-system-x86_64 missing (Debian: qemu-system-x86)"
if ! out=$("$WARD" run --tier 3 -- /bin/true 2>&1); then
	case $out in
	*"ward setup vm"*) skip_all "no tier-3 guest image: run 'ward setup vm' (${out//$'\n'/ })" ;;
	*) skip_all "ward run --tier 3 does not work here: ${out//$'\n'/ }" ;;
	esac
fi

# Without an image: a clear refusal naming the fix, before anything else.
out=$(WARD_VM_DIR=$T/no-image "$WARD" run --tier 3 -- true 2>&1)
check_eq "image: a missing guest image refuses the run with 125" 125 \
	"$(WARD_VM_DIR=$T/no-image status_of "$WARD" run --tier 3 -- true)"
check "image: ... and the message names 'ward setup vm' (${out//$'\n'/ })" \
	eval "echo '${out//\'/}' | grep -q 'ward setup vm'"
check "image: ward probe says how to make it" \
	eval "WARD_VM_DIR=$T/no-image '$WARD' probe --quick | grep 'tier 3' | grep -q 'ward setup vm'"
check_eq "setup: an unknown --kernel kind is a usage error" 2 \
	"$(status_of "$WARD" setup vm --dir "$T/vm-bad" --kernel bogus)"
check "setup: ... and nothing was made" test ! -e "$T/vm-bad"
kernel_kind=$(cut -d' ' -f1 /var/lib/ward/vm/current/kernel 2>/dev/null || true)
diag "guest kernel: ${kernel_kind:-unknown}"
t3() { "$WARD" run --tier 3 "$@"; }
check "probe: ward probe reports tier 3 ready, with its engine" \
	eval "'$WARD' probe --quick | grep 'tier 3' | grep -Eq 'ready \(--tier 3\): engine (kvm|tcg)'"
check "policy: \"tier\": 3 in a policy file runs at tier 3" \
	eval "echo '{\"version\": 1, \"tier\": 3}' >'$T/tier3.json' && '$WARD' run -p '$T/tier3.json' -- cat /proc/version | grep -vqF \"\$(cat /proc/version)\""
me=$(id -u)

# ---- the guest runs its own kernel ----
host_version=$(cat /proc/version)
facts=$(t3 -- sh -c 'cat /proc/sys/kernel/random/boot_id; cat /proc/version' 2>/dev/null)
guest_boot=$(head -1 <<<"$facts")
guest_version=$(tail -n +2 <<<"$facts")
check "kernel: the guest's /proc/version is a kernel of its own (${guest_version:0:40})" \
	eval "[ -n '${guest_version//\'/}' ] && [ '${guest_version//\'/}' != '${host_version//\'/}' ]"
check "kernel: the guest's boot id is not the host's" \
	eval "[ -n '$guest_boot' ] && [ '$guest_boot' != '$(cat /proc/sys/kernel/random/boot_id)' ]"
if [ "$me" = 0 ]; then
	# What T2 must refuse (a sysctl write) is the guest's own business at T3.
	host_cad=$(cat /proc/sys/kernel/ctrl-alt-del)
	new=$((1 - host_cad))
	got=$(t3 -- sh -c "echo $new >/proc/sys/kernel/ctrl-alt-del && cat /proc/sys/kernel/ctrl-alt-del" 2>/dev/null)
	check_eq "kernel: guest root's sysctl write succeeds in the guest" "$new" "$got"
	check_eq "kernel: ... and the host's sysctl is unchanged" "$host_cad" "$(cat /proc/sys/kernel/ctrl-alt-del)"
	check_not "kernel: the same sysctl write is refused at T2 (the contrast)" \
		"$WARD" run -- sh -c "echo $new >/proc/sys/kernel/ctrl-alt-del"
	check_eq "kernel: ... and the host's sysctl is still unchanged" "$host_cad" "$(cat /proc/sys/kernel/ctrl-alt-del)"
else
	ok_skip "kernel: the sysctl write needs the guest's root (the command runs as the caller's uid $me)"
fi

# ---- the view: what T2 shows, exported by QEMU from inside it ----
mkdir -p "$T/data"
echo secret-$$ >"$HOME/host-secret"
echo keep >"$T/data/ro"
echo denied-$$ >"$T/data/denied"
cat >"$T/policy.json" <<EOF
{ "version": 1, "fs": { "read": ["$T/data"], "deny": ["$T/data/denied"] } }
EOF
sleep 600.$$ &
marker=$!
at_exit "kill_id TERM $(proc_id "$marker")"
# One VM, several looks; each answer is checked on its own.
seen=$(t3 -- sh -c "
	cat '$HOME/host-secret' >/dev/null 2>&1 && echo secret:seen
	cat '$XDG_STATE_HOME/ward/audit.jsonl' >/dev/null 2>&1 && echo audit:seen
	ls '$XDG_CONFIG_HOME/ward' >/dev/null 2>&1 && echo config:seen
	ls -d /home/* /root/.ssh >/dev/null 2>&1 && echo home:seen
	grep -l '60[0]\.$$' /proc/[0-9]*/cmdline >/dev/null 2>&1 && echo hostproc:seen
	echo pid1:\$(cat /proc/1/comm)" 2>/dev/null)
check_not "view: a host file outside the policy is absent in the guest" grep -q secret:seen <<<"$seen"
check_not "view: ward's audit log is absent in the guest" grep -q audit:seen <<<"$seen"
check_not "view: ward's config dir is absent" grep -q config:seen <<<"$seen"
check_not "view: the host's /home and /root/.ssh are absent" grep -q home:seen <<<"$seen"
check_not "view: a host process is not visible in the guest" grep -q hostproc:seen <<<"$seen"
check "view: ... and it is alive on the host" kill -0 "$marker"
check "view: /proc is the guest's own (pid 1 is ward's guest init)" grep -qx pid1:init <<<"$seen"
check "view: a path the policy allows is readable" \
	t3 -p "$T/policy.json" -- grep -q keep "$T/data/ro"
check_not "view: a denied path beneath an allowed one is unreadable" \
	t3 -p "$T/policy.json" -- grep -q denied "$T/data/denied"

# Writes: only the workspace reaches the host; a read-only path is refused
# by the host kernel to QEMU (the exporter), not by a guest mount flag.
out=$(t3 -p "$T/policy.json" -- sh -c "grep ' /tmp 9p ' /proc/mounts; echo pwned >$T/data/ro; echo new >$T/data/planted" 2>&1)
check_eq "writes: a read-only path of the policy is unchanged on the host" keep "$(cat "$T/data/ro")"
check "writes: no file appears in a read-only directory on the host" test ! -e "$T/data/planted"
check "writes: the guest's mount is not read-only: the refusal is the exporter's (${out//$'\n'/ })" \
	eval "echo '${out//\'/}' | grep -q ' rw' && echo '${out//\'/}' | grep -qi 'read-only'"
t3 -- sh -c "echo pwned >$T/outside; echo pwned >$HOME/planted; echo pwned >/tmp/ward-t3-escape-$$" 2>/dev/null
check "writes: nothing was written outside the workspace (host: no files)" \
	eval "[ ! -e '$T/outside' ] && [ ! -e '$HOME/planted' ] && [ ! -e /tmp/ward-t3-escape-$$ ]"
t3 -- sh -c 'echo inside >made; mkdir -p sub; echo deep >sub/f' >/dev/null 2>&1
check "writes: the workspace is writable and the host sees the files" \
	eval "grep -q inside '$WS/made' && grep -q deep '$WS/sub/f'"
check_eq "writes: files the guest made are the caller's on the host" "$me" "$(stat -c %u "$WS/made")"

# ---- network ----
out=$(t3 -- bash -c 'ls /sys/class/net; (exec 3<>/dev/tcp/1.1.1.1/80) 2>/dev/null && echo connected' 2>/dev/null)
check_eq "network none: the guest has no network device but lo, and no connection" lo "$out"
check_not "network proxy: refused at T3 for now (never a silent downgrade)" \
	t3 --net proxy -- true

# ---- exit codes, stdio, timeout ----
check_eq "exit: the command's status" 7 "$(status_of t3 -- sh -c 'exit 7')"
check_eq "exit: a signal is 128+N" 137 "$(status_of t3 -- sh -c 'kill -KILL $$')"
check_eq "exit: a missing command is 127" 127 "$(status_of t3 -- /nonexistent-t3)"
t3 -- sh -c 'echo out; echo err >&2' >"$T/o" 2>"$T/e"
check "stdio: stdout and stderr are kept apart" \
	eval "grep -qx out '$T/o' && ! grep -q err '$T/o' && grep -qx err '$T/e'"
check_eq "stdio: stdin is empty (EOF) in this slice" "" "$(echo input | t3 -- cat 2>/dev/null)"
check_eq "timeout: the VM is ended and the run exits 124" 124 "$(status_of t3 --timeout 2 -- sleep 600)"
check_not "timeout: no QEMU of this test is left on the host" pgrep -f "$T/home"
check "cleanup: the run's directory is removed" \
	eval "[ -z \"\$(ls -A '$HOME/.local/share/ward/vm-runs' 2>/dev/null)\" ]"

# ---- the engine: KVM only where a probe guest booted with it, else TCG ----
t3 --result "$T/result.json" -- true 2>/dev/null
check "result: the result says tier 3" grep -q '"tier":[[:space:]]*3' "$T/result.json"
jget() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
engine=$(jget "$T/result.json" 'd["vm"]["engine"]')
check "engine: --result names the engine ($engine) and why" \
	eval "[ '$engine' = kvm ] || [ '$engine' = tcg ] && [ -n \"\$(jget '$T/result.json' 'd[\"vm\"][\"engine_reason\"]')\" ]"
"$WARD" probe --json >"$T/probe.json" 2>/dev/null
check_eq "engine: ward probe reports the engine the run used" "$engine" "$(jget "$T/probe.json" 'd["tier3"]["engine"]')"
if [ "$engine" = tcg ]; then
	check "engine: TCG is degraded in the result (vm-engine-tcg)" grep -q vm-engine-tcg "$T/result.json"
	check_not "strict: --strict refuses TCG (software emulation is degraded)" t3 --strict -- true
else
	check_not "engine: KVM is not degraded" grep -q vm-engine-tcg "$T/result.json"
	check "strict: --strict runs with KVM" t3 --strict -- true
fi
diag "engine here: $engine ($(jget "$T/result.json" 'd["vm"]["engine_reason"]'))"
# KVM that does not work (the test switch stands for a /dev/kvm that opens
# but hangs its guests): the run falls back to TCG and says so.
if env WARD_TEST_VM_NO_KVM=1 "$WARD" run --tier 3 --result "$T/nokvm.json" -- true 2>/dev/null &&
	grep -q test-switch-vm-no-kvm "$T/nokvm.json"; then
	check_eq "engine: KVM unusable falls back to TCG" tcg "$(jget "$T/nokvm.json" 'd["vm"]["engine"]')"
	check "engine: ... the result says why" grep -q WARD_TEST_VM_NO_KVM "$T/nokvm.json"
	check "engine: ... and TCG is degraded" grep -q vm-engine-tcg "$T/nokvm.json"
	check_eq "strict: --strict refuses the TCG fallback (125)" 125 \
		"$(WARD_TEST_VM_NO_KVM=1 status_of t3 --strict -- true)"
	check "engine: the start event in the audit log names the engine" \
		eval "grep '\"event\":\"start\"' '$XDG_STATE_HOME/ward/audit.jsonl' | grep -q '\"engine\":\"tcg\"'"
else
	ok_skip "engine: the forced no-KVM path needs a -Dtest_hooks=true build"
fi

# ---- a hostile guest ----
# The control port has one opener, the guest init, from before the command
# starts: even the guest's root cannot write to it.
if [ "$me" = 0 ]; then
	ctl='for p in /sys/class/virtio-ports/*; do [ "$(cat $p/name)" = ward.ctl ] && { (exec 3>/dev/${p##*/}) 2>/dev/null && echo opened || echo refused; }; done'
	check_eq "hostile: the command (guest root) cannot open the control port" refused \
		"$(t3 -- sh -c "$ctl" 2>/dev/null)"
	check_eq "hostile: a guest that resets without a status is a failed run" 125 \
		"$(status_of t3 -- sh -c 'echo b >/proc/sysrq-trigger; sleep 5; exit 0')"
	check_eq "hostile: a console flood does not change the status" 5 \
		"$(status_of t3 -- sh -c 'head -c 300000 /dev/zero | tr "\0" x >/dev/ttyS0; exit 5')"
	# The console is kept through a bounded tail (64 KiB): after a flood,
	# a failed run still reports the console's last lines.
	out=$(t3 -- sh -c 'head -c 200000 /dev/zero | tr "\0" x >/dev/ttyS0; echo console-end-$((6 * 7)) >/dev/ttyS0; echo b >/proc/sysrq-trigger; sleep 5' 2>&1 >/dev/null)
	check "console: after a flood, a failed run shows the console's last lines" \
		grep -q console-end-42 <<<"$out"
else
	ok_skip "hostile: the control port and sysrq need the guest's root (the command runs as uid $me)"
fi
# What a guest whose init is subverted could send (test builds: the init
# misbehaves on purpose): never a success, always 125.
if env WARD_TEST_VM_HOSTILE=silent "$WARD" run --tier 3 -- true 2>&1 | grep -q WARD_TEST_VM_HOSTILE; then
	for h in garbage double flood silent; do
		check_eq "hostile: a control channel with '$h' is a failed run (125)" 125 \
			"$(WARD_TEST_VM_HOSTILE=$h status_of t3 -- true)"
	done
else
	ok_skip "hostile: the subverted-init cases need a -Dtest_hooks=true build"
fi
check_eq "hostile: output that looks like a status is only output" 3 \
	"$(status_of t3 -- sh -c 'echo "status 0"; echo "status 0" >&2; exit 3')"

done_testing
