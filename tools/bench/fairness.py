#!/usr/bin/env python3
"""Fairness of `neardup serve` under idle and slow-body clients (issue 19, item 7).

Starts `neardup serve` (the binary given) on a loopback port with a fresh database, opens
ATTACKERS connections from --attacker-ip (a loopback address: 127.0.0.2 by default, so that the
per-address limit can be told apart from the rest; 127.0.0.1 puts them on the client's address)
that either send nothing (`--attack idle`) or an authenticated request head promising a
100-byte body and 10 bytes of it (`--attack slow-body`), then sends REQUESTS normal requests
(`POST /v1/check`) from 127.0.0.1, one every --every seconds from a second into the attack,
and prints how long each waited
for its answer (p50, max). Loopback only; every wait is bounded by --timeout.

    python3 tools/bench/fairness.py --neardup target/release/neardup --attack idle --attackers 5000
    python3 tools/bench/fairness.py --neardup target/release/neardup --attack slow-body \
        --attackers 2000 -- --max-connections-per-ip 100000
(arguments after `--` go to `neardup serve`).
"""

import argparse
import http.client
import json
import resource
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

TOKEN = "bench-token"
SLOW_HEAD = (
    "POST /v1/check HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + TOKEN + "\r\n"
    "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"text\": \""
).encode()


def raise_fd_limit():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def start_server(neardup, db, extra):
    proc = subprocess.Popen(
        [neardup, "serve", "--db", db, "--listen", "127.0.0.1:0", "--token", TOKEN, *extra],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=raise_fd_limit, text=True,
    )
    for line in proc.stderr:
        if line.startswith("neardup: listening on http://"):
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            host, port = line.strip().rsplit("/", 1)[1].split(":")
            return proc, int(port)
    raise SystemExit("neardup serve exited before listening")


def attack(port, kind, count, source_ip, deadline):
    """Opens `count` non-blocking connections; a slow body sends its head once connected."""
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind((source_ip, 0))
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", port))
        socks.append(s)
        if kind == "slow-body":
            sel.register(s, selectors.EVENT_WRITE)
    pending = len(socks) if kind == "slow-body" else 0
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=0.2):
            try:
                key.fileobj.send(SLOW_HEAD)
            except OSError:
                pass
            sel.unregister(key.fileobj)
            pending -= 1
    return socks


def timed_request(port, timeout, out):
    started = time.monotonic()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        body = json.dumps({"text": "a legitimate request under attack"})
        conn.request("POST", "/v1/check", body=body, headers={
            "Authorization": "Bearer " + TOKEN, "Content-Type": "application/json"})
        status = conn.getresponse().status
    except OSError as error:
        status = f"error: {error}"
    out.append((time.monotonic() - started, status))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--neardup", required=True)
    parser.add_argument("--attack", choices=["idle", "slow-body"], required=True)
    parser.add_argument("--attackers", type=int, default=5000)
    parser.add_argument("--attacker-ip", default="127.0.0.2")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("serve_args", nargs="*")
    args = parser.parse_args()
    raise_fd_limit()
    with tempfile.TemporaryDirectory() as tmp:
        server, port = start_server(args.neardup, tmp + "/db", args.serve_args)
        try:
            started = time.monotonic()
            socks = []
            attacker = threading.Thread(target=lambda: socks.extend(attack(
                port, args.attack, args.attackers, args.attacker_ip, started + args.timeout)))
            attacker.start()
            # The normal requests start a second into the attack, whether or not every
            # attacker is connected yet (an old server does not accept them all).
            time.sleep(1.0)
            results, threads = [], []
            for _ in range(args.requests):
                t = threading.Thread(target=timed_request, args=(port, args.timeout, results))
                t.start()
                threads.append(t)
                time.sleep(args.every)
            for t in threads:
                t.join(args.timeout + 5)
            attacker.join(args.timeout + 5)
            waits = sorted(w for w, _ in results)
            statuses = sorted({str(s) for _, s in results})
            print(json.dumps({
                "attack": args.attack, "attackers": args.attackers,
                "attacker_ip": args.attacker_ip, "serve_args": args.serve_args,
                "requests": len(results),
                "statuses": statuses,
                "wait_p50_s": round(statistics.median(waits), 3),
                "wait_max_s": round(waits[-1], 3),
            }))
            for s in socks:
                s.close()
        finally:
            server.kill()
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
