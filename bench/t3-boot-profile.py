#!/usr/bin/env python3
"""Where a tier-3 guest kernel's boot spends its time, under TCG.

A poor man's sampling profiler: QEMU boots the image's kernel with the
devices of a cold `ward run --tier 3` (five virtio-serial ports, the
request share and eight 9p shares of /usr), while this script asks QEMU's
monitor for the vCPU's registers every couple of milliseconds and maps each
RIP to the kernel function that holds it (`nm` of the uncompressed
vmlinux). The init is missing on purpose (rdinit=/ward-profile-none): the
boot ends at the kernel's panic, which ends the VM (panic=-1, -no-reboot).

  python3 bench/t3-boot-profile.py [IMAGE_DIR] [KERNEL ARG...]

IMAGE_DIR defaults to /var/lib/ward/vm/current; extra kernel arguments are
appended to the image's own line. Prints the functions with the most
samples, then each stretch of 8 ms or more spent in one function, in boot
order: long stretches are waits (calibrations, a poll) or work done once.
Sampling slows the guest a little; compare runs of this script, not its
times against bench/startup.sh's.
"""
import bisect
import atexit
import collections
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

image = sys.argv[1] if len(sys.argv) > 1 else "/var/lib/ward/vm/current"
extra = sys.argv[2:]
vmlinux = os.path.join(image, "vmlinux")
with open(os.path.join(image, "cmdline")) as f:
    cmdline = [a for a in f.read().split() if not a.startswith("rdinit=")]
cmdline += ["rdinit=/ward-profile-none"] + extra

syms = []
for line in subprocess.run(["nm", "-n", vmlinux], capture_output=True, text=True,
                           check=True).stdout.splitlines():
    p = line.split()
    if len(p) == 3 and p[1] in "tTwW":
        syms.append((int(p[0], 16), p[2]))
starts = [a for a, _ in syms]
if not syms:
    sys.exit(f"{vmlinux} has no symbol table")


def where(pc):
    if pc < 0xffff800000000000:
        return "(not the kernel's text: the PVH entry, or user space)"
    i = bisect.bisect_right(starts, pc) - 1
    return syms[i][1] if i >= 0 else hex(pc)


tmp = tempfile.mkdtemp(prefix="ward-boot-profile.")
atexit.register(shutil.rmtree, tmp, ignore_errors=True)
mon = os.path.join(tmp, "monitor.sock")
devices = ["-device", "virtio-serial-device,max_ports=6"]
for i in range(5):
    devices += ["-chardev", f"null,id=p{i}", "-device", f"virtserialport,chardev=p{i},name=p{i}"]
for i in range(9):
    devices += ["-fsdev", f"local,id=s{i},path=/usr,security_model=none,readonly=on",
                "-device", f"virtio-9p-device,fsdev=s{i},mount_tag=s{i}"]
qemu = subprocess.Popen(
    ["qemu-system-x86_64", "-M", "microvm,rtc=on,pit=on,pic=on,isa-serial=on", "-cpu", "qemu64",
     "-m", "128", "-smp", "1", "-accel", "tcg,tb-size=48", "-nodefaults", "-no-user-config",
     "-display", "none", "-no-reboot", "-kernel", vmlinux, "-initrd",
     os.path.join(image, "initrd.img"), "-append", " ".join(cmdline),
     "-serial", "file:" + os.path.join(tmp, "console"),
     "-monitor", f"unix:{mon},server=on,wait=off"] + devices)
t_start = time.monotonic()
while not os.path.exists(mon):
    if qemu.poll() is not None:
        sys.exit("QEMU did not start")
    time.sleep(0.001)
s = socket.socket(socket.AF_UNIX)
s.connect(mon)
s.setblocking(False)
stream, sent = b"", []
while qemu.poll() is None:
    sent.append(time.monotonic())
    try:
        s.sendall(b"info registers\n")
    except OSError:
        break
    time.sleep(0.002)
    try:
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            stream += d
    except BlockingIOError:
        pass
    except OSError:
        break
qemu.wait()
total = time.monotonic() - t_start
seq = [where(int(m.group(1), 16)) for m in re.finditer(rb"RIP=([0-9a-f]+)", stream)]
if not seq:
    sys.exit("no samples (QEMU's monitor did not answer)")
print(f"{len(seq)} samples over {total * 1000:.0f} ms, QEMU's start to its exit")
for name, n in collections.Counter(seq).most_common(15):
    print(f"  {n:5d} {100 * n / len(seq):5.1f}%  {name}")
print("stretches of 8 ms or more in one function (ms from the first sample):")
first, start = sent[0], 0
for i in range(1, len(seq) + 1):
    if i == len(seq) or seq[i] != seq[start]:
        end = sent[min(i, len(sent) - 1)]
        if end - sent[start] >= 0.008:
            print(f"  {(sent[start] - first) * 1000:7.1f}  +{(end - sent[start]) * 1000:6.1f}  {seq[start]}")
        start = i
