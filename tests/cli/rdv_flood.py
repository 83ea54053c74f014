#!/usr/bin/env python3
"""rdv_flood.py - a flood of connections that are not ranks, on topo-exec's rendezvous ports
(tests/cli/test_exec_rendezvous.sh, issue #32 item 5).

    rdv_flood.py READY_FILE IDLE JUNK SLOW PORT...

For each port (waiting until something listens there): IDLE connections that send nothing, JUNK ones
that send bytes that are not a hello, SLOW ones that send a hello's first 8 bytes (magic, version) and
then one byte every 300 ms.  Every connection the other side closes is opened again, so the flood lasts
until this process is killed.  READY_FILE is written once every connection has been opened once.
SIGUSR1: a burst of 50 more idle connections to each port at once (held, not dialled again), then
READY_FILE.burstN (N = 1, 2, ...) is written.
"""
import os
import resource
import signal
import socket
import struct
import sys
import time

ready, idle, junk, slow = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ports = [int(p) for p in sys.argv[5:]]
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = len(ports) * (idle + junk + slow + 2 * 50) + 64
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))

HELLO_HEAD = struct.pack("<II", 0x54544558, 3)  # "TTEX", protocol 3 (exec_bootstrap.c BOOT_VERSION)


def dial(port, kind, deadline):
    while True:
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=2)
            break
        except OSError:
            if time.time() > deadline:
                return None
            time.sleep(0.05)
    s.setblocking(False)
    try:
        if kind == "junk":
            s.send(b"\x00\x01junk that is not a hello\r\n")
        elif kind == "slow":
            s.send(HELLO_HEAD)
    except OSError:
        pass
    return s


conns = []  # [socket, port, kind]
t_end = time.time() + 30
for port in ports:
    for kind, n in (("idle", idle), ("junk", junk), ("slow", slow)):
        for _ in range(n):
            s = dial(port, kind, t_end)
            if s is not None:
                conns.append([s, port, kind])
with open(ready, "w") as f:
    f.write("%d\n" % len(conns))

bursts_asked = 0
bursts_done = 0
held = []


def on_usr1(signum, frame):
    global bursts_asked
    bursts_asked += 1


signal.signal(signal.SIGUSR1, on_usr1)
last_trickle = time.time()
while True:
    time.sleep(0.05)
    while bursts_done < bursts_asked:
        for port in ports:
            for _ in range(50):
                s = dial(port, "idle", time.time() + 1)
                if s is not None:
                    held.append(s)
        bursts_done += 1
        with open("%s.burst%d" % (ready, bursts_done), "w") as f:
            f.write("%d\n" % len(held))
    trickle = time.time() - last_trickle >= 0.3
    if trickle:
        last_trickle = time.time()
    for c in conns:
        s, port, kind = c
        closed = False
        try:
            if s.recv(256, socket.MSG_DONTWAIT) == b"":
                closed = True
        except BlockingIOError:
            pass
        except OSError:
            closed = True
        if not closed and kind == "slow" and trickle:
            try:
                s.send(b"\x00")
            except OSError:
                closed = True
        if closed:
            s.close()
            c[0] = dial(port, kind, time.time() + 1) or socket.socket()
