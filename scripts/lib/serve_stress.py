#!/usr/bin/env python3
"""`gomoku serve` under the load of issue 26 item 1 (scripts/gpu-check serve).

Two games are played against the model move by move while a third client
keeps starting new games. Each new game makes a player (a net: on cuda a
context whose first calls capture CUDA graphs), and once the table is full
each one evicts the least recently used idle game (its net is freed), so
nets are created and freed in some threads while others search and capture.
Before issue 26 a free during another thread's capture could leave
cudaErrorStreamCaptureUnsupported on the freeing thread and stop the server
at its next launch check.

Passes when the server is alive at the end and answers /api/info, no
request got a 5xx or no answer, both games made progress, and the server's
log has no failed capture or stop. Prints one line: PASS or FAIL and why,
and exits 0 or 1.

Usage: serve_stress.py GOMOKU --model M [--device D] [--seconds S] [--visits V]
"""
import argparse
import json
import random
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request


def request(base, method, path, body=None, timeout=120):
    """(status, decoded JSON or text); status 0 when nothing came back."""
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
            status = r.status
    except urllib.error.HTTPError as e:
        text = e.read().decode(errors="replace")
        status = e.code
    except Exception as e:  # refused, reset, timed out: the server did not answer
        return 0, str(e)
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


class Tally:
    def __init__(self):
        self.lock = threading.Lock()
        self.status = {}
        self.moves = [0, 0]
        self.new_games = 0
        self.bad = []   # (what, status, body) of answers that fail the stage

    def add(self, what, status, body):
        with self.lock:
            self.status[status] = self.status.get(status, 0) + 1
            if status == 0 or status >= 500:
                self.bad.append("%s: %s %s" % (what, status or "no answer", str(body)[:200]))


def player(base, k, size, stop, tally):
    """Game k: the model is black and moves first; we answer near the centre."""
    rng = random.Random(k)
    game = None
    while not stop.is_set():
        if game is None or game.get("result", "none") != "none":
            st, body = request(base, "POST", "/api/game", {"size": size, "color": "white"})
            tally.add("new game %d" % k, st, body)
            if st != 200:
                time.sleep(0.2)
                continue
            game = body
        taken = set(game["moves"])
        free = [p for p in range(size * size) if p not in taken]
        c = (size - 1) / 2.0
        free.sort(key=lambda p: (p % size - c) ** 2 + (p // size - c) ** 2 + rng.random() * 6)
        p = free[0]
        st, body = request(base, "POST", "/api/game/%s/move" % game["id"],
                           {"x": p % size, "y": p // size})
        tally.add("game %d move" % k, st, body)
        if st == 200:
            game = body
            with tally.lock:
                tally.moves[k] += 1
        elif st == 404:   # evicted by the churn (idle too long): start another
            game = None
        else:
            time.sleep(0.1)


def churn(base, size, stop, tally):
    """New games as fast as the server takes them (each makes a net, evicts one)."""
    while not stop.is_set():
        st, body = request(base, "POST", "/api/game", {"size": size, "color": "black"})
        tally.add("churn new game", st, body)
        if st == 200:
            with tally.lock:
                tally.new_games += 1
        else:
            time.sleep(0.1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gomoku")
    ap.add_argument("--model", required=True)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--visits", type=int, default=200)
    ap.add_argument("--size", type=int, default=15)
    ap.add_argument("--log", default=None, help="write the server's output here")
    a = ap.parse_args()

    cmd = [a.gomoku, "serve", "--model", a.model, "--device", a.device, "--listen",
           "127.0.0.1:0", "--visits", str(a.visits), "--games", "4", "--searches", "3"]
    log = open(a.log, "w") if a.log else subprocess.DEVNULL
    srv = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    line = srv.stdout.readline()
    m = re.search(r"(http://[0-9.]+:[0-9]+)/", line)
    if not m:
        srv.kill()
        print("FAIL serve: no address from `gomoku serve` (%r; exit %s)" % (line.strip(),
                                                                            srv.poll()))
        return 1
    base = m.group(1)
    tally = Tally()
    stop = threading.Event()
    threads = [threading.Thread(target=player, args=(base, k, a.size, stop, tally))
               for k in range(2)]
    threads.append(threading.Thread(target=churn, args=(base, a.size, stop, tally)))
    t0 = time.time()
    for t in threads:
        t.start()
    while time.time() - t0 < a.seconds and srv.poll() is None:
        time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join(timeout=300)
    alive = srv.poll() is None
    st, info = request(base, "GET", "/api/info") if alive else (0, "")
    srv.terminate()
    try:
        srv.wait(timeout=60)
    except subprocess.TimeoutExpired:
        srv.kill()
    if a.log:
        log.close()
    text = open(a.log).read() if a.log else ""
    why = []
    if not alive:
        why.append("the server died (exit %s)" % srv.returncode)
    elif st != 200:
        why.append("/api/info answered %s at the end" % (st or "nothing"))
    if tally.bad:
        why.append("%d failed requests, first: %s" % (len(tally.bad), tally.bad[0]))
    if min(tally.moves) == 0:
        why.append("a game made no move (moves %s)" % tally.moves)
    if tally.new_games == 0:
        why.append("no new game was started")
    for pat in ("graph capture failed", "failed:", "Aborted", "nn_cuda: forward"):
        if pat in text:
            why.append("the server's log says %r" % text[text.index(pat) - 80:][:240].strip())
            break
    summary = "%.0f s on %s: moves %d + %d in the two games, %d new games, statuses %s" % (
        time.time() - t0, a.device, tally.moves[0], tally.moves[1], tally.new_games,
        json.dumps(tally.status, sort_keys=True))
    if why:
        print("FAIL serve: %s (%s)" % ("; ".join(why), summary))
        return 1
    print("PASS serve: %s" % summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
