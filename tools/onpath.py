#!/usr/bin/env python3
"""An on-path attacker between one rdtp fetch and a server, on loopback (issue 23 items 6, 7).

usage: onpath.py LISTEN_PORT SERVER_PORT nack CODE [FROM]   forge one Nack (right tag) for the
                                                           first Request past 1 MB, nearer than
                                                           the server (the genuine answer follows)
       onpath.py LISTEN_PORT SERVER_PORT corrupt FRACTION  flip one payload byte in FRACTION of
                                                           the Data packets
Everything else is passed on unchanged. Prints what it did to stderr at exit (SIGTERM).
"""
import random
import select
import signal
import socket
import struct
import sys

listen, server, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(1)
down = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
down.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
down.bind(("127.0.0.1", listen))
up = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
up.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
up.connect(("127.0.0.1", server))
client = None
forged = corrupted = datas = 0


def bye(*_):
    sys.stderr.write(f"onpath: {forged} Nacks forged, {corrupted} of {datas} Data corrupted\n")
    sys.exit(0)


signal.signal(signal.SIGTERM, bye)
while True:
    r, _, _ = select.select([down, up], [], [])
    if down in r:
        d, client = down.recvfrom(65536)
        if mode == "nack" and not forged and d[:4] == b"RD\x03\x01":
            tag, = struct.unpack(">I", d[8:12])
            eid = d[20:52]
            offset, length = struct.unpack(">QI", d[52:64])
            if offset >= 1_000_000:
                code = int(sys.argv[4])
                node = (sys.argv[5] if len(sys.argv) > 5 else "origin").encode().ljust(8, b"\0")
                detail = b"forged by onpath.py"
                nack = b"RD\x03\x03" + struct.pack(">BBHI", code, 0, len(detail), tag) + eid
                nack += struct.pack(">QI", offset, length) + node + detail
                down.sendto(nack, client)
                forged += 1
        up.send(d)
    if up in r:
        d = up.recv(65536)
        if d[:4] == b"RD\x03\x02":
            datas += 1
            n, = struct.unpack(">H", d[6:8])
            if mode == "corrupt" and n and rng.random() < float(sys.argv[4]):
                b = bytearray(d)
                i = len(b) - 1 - rng.randrange(n)
                b[i] ^= 1 << rng.randrange(8)
                d = bytes(b)
                corrupted += 1
        if client:
            down.sendto(d, client)
