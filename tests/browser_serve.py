#!/usr/bin/env python3
"""Browser test of `gomoku serve`: headless Chromium driven over WebDriver
(chromedriver) with nothing but the Python standard library.

It starts `gomoku serve` on a small run directory it writes (status.json,
metrics.csv, a games shard from `gomoku selfplay`) with the shipped 9x9
model, loads the page, checks the watch view shows the run, plays three
moves by clicking and checks the model answers each with its win rate,
checks a renju double-three is refused with the reason, and saves a
screenshot of each view (SERVE_SCREENSHOT_DIR, default the working
directory: serve_watch.png, serve_play.png). Exits 77 (skip) when chromium or chromedriver is missing.

Environment: GOMOKU_BIN (the program), GOMOKU_SRC (the source tree)."""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

TIMEOUT = 30


def skip(msg):
    print("SKIP: " + msg)
    sys.exit(77)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Driver:
    """The few WebDriver commands the test needs."""

    def __init__(self, port):
        self.base = "http://127.0.0.1:%d" % port
        self.sid = None

    def call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
                return json.loads(r.read())["value"]
        except urllib.error.HTTPError as e:
            raise RuntimeError("webdriver %s %s: %s" % (method, path, e.read()[:300]))

    def s(self, method, path, body=None):
        return self.call(method, "/session/%s%s" % (self.sid, path), body)

    def start(self, profile):
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": {
            "binary": shutil.which("chromium"),
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                     "--no-first-run", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--window-size=1280,1000",
                     "--user-data-dir=" + profile]}}}}
        self.sid = self.call("POST", "/session", caps)["sessionId"]

    def find(self, css):
        v = self.s("POST", "/elements", {"using": "css selector", "value": css})
        return [list(e.values())[0] for e in v]

    def wait(self, what, fn, timeout=TIMEOUT, debug=None):
        end = time.time() + timeout
        while time.time() < end:
            v = fn()
            if v:
                return v
            time.sleep(0.1)
        fail("timed out waiting for " + what + (" (" + debug() + ")" if debug else ""))

    def text(self, css):
        els = self.find(css)
        return self.s("GET", "/element/%s/text" % els[0]) if els else ""

    def click(self, css):
        els = self.wait(css, lambda: self.find(css))
        self.s("POST", "/element/%s/click" % els[0], {})

    def select(self, css, value):
        self.wait(css, lambda: self.find(css))
        self.script("const e = document.querySelector(%s); e.value = %s; "
                    "e.dispatchEvent(new Event('change'))" % (json.dumps(css), json.dumps(value)))

    def script(self, js):
        return self.s("POST", "/execute/sync", {"script": js, "args": []})


def screenshot(d, path):
    with open(path, "wb") as f:
        f.write(base64.b64decode(d.s("GET", "/screenshot")))


def make_run(gomoku, src, d):
    """A small run directory: status.json, metrics.csv with a garbled line, games."""
    os.makedirs(os.path.join(d, "models"))
    shutil.copy(os.path.join(src, "models", "freestyle9-2x32.gzm"),
                os.path.join(d, "models", "000100.gzm"))
    status = {"state": "training", "pid": 1, "step": 120, "target_step": 0, "generation": 1,
              "model": "x", "device": "cpu",
              "losses": {"policy": 2.1, "value": 0.5, "l2": 0.04, "total": 2.64},
              "lr": 0.02, "games": 42, "positions": 900, "window_positions": 900,
              "window_games": 42, "games_per_s": 0.5, "positions_per_s": 9.5,
              "samples_per_s": 40, "ratio": 4, "rejected_frames": 3,
              "partial_frames_dropped": 0, "bad_frames_on_load": 0, "elapsed_s": 80,
              "updated": int(time.time()), "workers": [
                  {"id": 0, "pid": 2, "state": "running", "restarts": 1, "games": 42,
                   "bad_frames": 3, "partial_frames": 0}]}
    with open(os.path.join(d, "status.json"), "w") as f:
        json.dump(status, f, indent=2)
    with open(os.path.join(d, "metrics.csv"), "w") as f:
        f.write("unix_time,step,generation,lr,loss_policy,loss_value,loss_l2,loss_total,"
                "games,positions,games_per_s,samples_per_s,rejected_frames\n")
        for k in range(1, 13):
            f.write("%d,%d,0,0.02,%.3f,%.3f,0.04,%.3f,%d,%d,0.5,40,0\n"
                    % (1700000000 + k, k * 10, 4 - k * 0.15, 0.9 - k * 0.03,
                       4.94 - k * 0.18, k * 3, k * 60))
            if k == 6:
                f.write("garbled,,line\n")
    with open(os.path.join(d, "elo.csv"), "w") as f:
        f.write("unix_time,round,step,model,elo,opponent,elo_vs_prev,wld_vs_prev,"
                "elo_vs_greedy,wld_vs_greedy\n1,0,0,m0,0,,,,,\n2,1,60,m1,85.5,m0,85.5,,,\n"
                "3,2,120,m2,140.2,m1,54.7,13-7-0,210.0,19-1-0\n")
    r = subprocess.run([gomoku, "selfplay", "--model", os.path.join(src, "models",
                        "freestyle9-2x32.gzm"), "--games", "2", "--parallel", "2",
                        "--visits", "16", "--size", "9", "--device", "cpu",
                        "--out", os.path.join(d, "games")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    if r.returncode != 0:
        fail("gomoku selfplay: " + r.stderr.decode()[-300:])
    shards = [n for n in os.listdir(os.path.join(d, "games")) if n.endswith(".gzr")]
    for i, n in enumerate(sorted(shards)):   # the trainer's shard names
        os.rename(os.path.join(d, "games", n), os.path.join(d, "games", "shard-%06d.gzr" % i))


def main():
    gomoku = os.environ.get("GOMOKU_BIN", "build/gomoku")
    src = os.environ.get("GOMOKU_SRC", ".")
    if not shutil.which("chromium"):
        skip("chromium is not installed (apt-get install chromium chromium-driver)")
    if not shutil.which("chromedriver"):
        skip("chromedriver is not installed (apt-get install chromium-driver)")
    r = subprocess.run([gomoku, "serve", "--help"], capture_output=True)
    if r.returncode != 0:
        skip("this gomoku has no HTTP server: " + r.stderr.decode().strip())
    shots = os.path.abspath(os.environ.get("SERVE_SCREENSHOT_DIR", "."))
    tmp = tempfile.mkdtemp(prefix="gz-browser-")
    procs = []
    try:
        run = os.path.join(tmp, "run")
        make_run(gomoku, src, run)
        before = sorted(os.listdir(run))
        server = subprocess.Popen([gomoku, "serve", "--run", run, "--model",
                                   os.path.join(src, "models", "freestyle9-2x32.gzm"),
                                   "--listen", "127.0.0.1:0", "--visits", "64",
                                   "--device", "cpu"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(server)
        line = server.stdout.readline()
        m = re.search(r"http://\S+", line)
        if not m:
            fail("gomoku serve printed no address: %r %s" % (line, server.stderr.read()[-300:]))
        url = m.group(0)
        dport = free_port()
        procs.append(subprocess.Popen(["chromedriver", "--port=%d" % dport],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        d = Driver(dport)
        end = time.time() + TIMEOUT
        while True:
            try:
                if d.call("GET", "/status").get("ready"):
                    break
            except (OSError, RuntimeError):
                pass
            if time.time() > end:
                fail("chromedriver did not start")
            time.sleep(0.1)
        d.start(os.path.join(tmp, "profile"))
        try:
            d.s("POST", "/url", {"url": url})
            # watch: the run's state, curves, games and checkpoints arrive over SSE
            d.wait("the run's step", lambda: "120" in d.text("#status"))
            d.wait("the rejected frames", lambda: "rejected frames" in d.text("#status"))
            d.wait("the self-play games", lambda: len(d.find("#games-list tr[data-i]")) == 2)
            d.wait("a game on the board", lambda: len(d.find("#board-game circle.stone")) > 0)
            d.wait("the checkpoint list", lambda: "000100.gzm" in d.text("#ckpts"))
            d.wait("the unreadable metrics line noted",
                   lambda: "unreadable lines" in d.text("#notes"))
            n_metrics = d.script("return run.metrics.rows.length")
            if n_metrics != 12:
                fail("the page holds %s metrics rows, expected 12" % n_metrics)
            d.wait("the loss curves drawn", lambda: d.script(
                "return document.getElementById('loss-chart').width > 0"))
            d.click("#games-list tr[data-i]")
            screenshot(d, os.path.join(shots, "serve_watch.png"))
            d.click("#g-first")
            if d.find("#board-game circle.stone"):
                fail("|< should show the empty board")
            d.click("#g-next")
            d.wait("ply 1", lambda: "ply 1/" in d.text("#g-info") and "search value" in d.text("#g-info"))
            for r in d.script("return [...document.querySelectorAll('#games-list tr[data-i] td:nth-child(3)')].map(e => e.textContent)"):
                if not re.match(r"^(black won|white won|draw)( \(resignation\))?$", r):
                    fail("result %r is not worded as a result" % r)
            if d.script("return resultText('white', true)") != "white won (resignation)":
                fail("a resignation reads %r" % d.script("return resultText('white', true)"))
            elo = d.script("return eloSeries(run.elo).map(s => [s.pts.length, s.bars.filter(b => b).length])")
            if elo != [[3, 1], [1, 1]]:
                fail("the Elo chart's series (points, bars): %s, expected ladder 3/1 (one round "
                     "with a W-L-D), greedy 1/1" % elo)

            # play: three moves by clicking, each answered by the model
            d.click("#tab-play")
            d.select("#size", "9")
            d.click("#new-game")
            d.wait("an empty 9x9 board", lambda: len(d.find("#board-play rect.pt")) == 81)
            for k, (x, y) in enumerate([(4, 4), (3, 3), (5, 3)]):
                css = "#board-play rect.pt[data-x='%d'][data-y='%d']" % (x, y)
                if d.find("#board-play circle.stone") and k == 0:
                    fail("a stone on the board before the first move")
                d.click(css)
                d.wait("the model's reply to move %d" % (k + 1),
                       lambda: len(d.find("#board-play circle.stone")) >= 2 * (k + 1)
                       or "error" in d.script("return document.getElementById('msg').className"))
                if "error" in d.script("return document.getElementById('msg').className"):
                    if k < 2:
                        fail("move %d refused: %s" % (k + 1, d.text("#msg")))
                    break   # the model may have taken the third point first: fine
                d.wait("the win rate", lambda: "%" in d.text("#winrate"))
            if not re.match(r"^[a-i][1-9]( [a-i][1-9])*$", d.text("#pv")):
                fail("best line %r is not a list of points" % d.text("#pv"))
            if not re.match(r"^model \(white\) \d+\.\d%", d.text("#winrate")):
                fail("the win rate %r does not say whose it is" % d.text("#winrate"))
            cands = d.find("#cands tr.cand")
            if not 1 <= len(cands) <= 5 or not re.match(r"^[a-i][1-9] \d+ \d+\.\d%$", d.text("#cands tr.cand")):
                fail("the candidates: %d rows, first %r" % (len(cands), d.text("#cands tr.cand")))
            if not d.script("return game.black_winrates.filter(v => v !== null).length >= 2"):
                fail("no win rates for the graph: %s" % d.script("return game.black_winrates"))
            screenshot(d, os.path.join(shots, "serve_play.png"))
            # a click on an occupied point is refused with the reason
            d.script("document.querySelector(\"#board-play rect.pt[data-x='4'][data-y='4']\").dispatchEvent(new Event('click'))")
            d.wait("occupied refused", lambda: "occupied" in d.text("#msg"))
            d.click("#undo")
            d.wait("undo", lambda: len(d.find("#board-play circle.stone")) in (2, 4)
                   and d.text("#msg") == "",
                   debug=lambda: "stones %d, message %r" % (len(d.find("#board-play circle.stone")), d.text("#msg")))

            # renju: black's double-three at e5 is refused with the reason
            d.select("#rule", "renju")
            d.script("document.getElementById('opening').value = '4,2 0,0 4,3 8,0 2,4 0,8 3,4 8,8'")
            d.click("#new-game")
            d.wait("the renju opening", lambda: len(d.find("#board-play circle.stone")) == 8)
            d.wait("the forbidden mark", lambda: len(d.find("#board-play .forbidden")) == 1)
            d.wait("the rule note", lambda: "trained for freestyle" in d.text("#rule-note"))
            # the corner stones leave the coordinates readable
            hits = d.script("""const b = (e) => e.getBBox(), over = (p, q) => p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height;
              const ts = [...document.querySelectorAll('#board-play text.coord')].map(b), ss = [...document.querySelectorAll('#board-play circle.stone')].map(b);
              return ts.filter(t => ss.some(s => over(t, s))).length""")
            if hits:
                fail("%d coordinates under edge stones" % hits)
            d.click("#board-play rect.pt[data-x='4'][data-y='4']")
            d.wait("the double-three refusal", lambda: "double-three" in d.text("#msg"))
            if len(d.find("#board-play circle.stone")) != 8:
                fail("the forbidden stone stayed on the board")
            # Load .psq: the file's game, the person to move
            psq = os.path.join(tmp, "three.psq")
            with open(psq, "w") as f:
                f.write("Piskvork 9x9, 11:11, 0\n5,5,0\n4,4,0\n6,6,0\n")
            d.select("#rule", "freestyle")
            el = d.find("#load")[0]
            d.s("POST", "/element/%s/value" % el, {"text": psq})
            d.wait("the loaded game", lambda: len(d.find("#board-play circle.stone")) == 3,
                   debug=lambda: d.text("#msg"))
            if d.script("return [game.human, game.to_move]") != ["white", "white"]:
                fail("after loading, the person is not the side to move")
            with open(psq, "w") as f:
                f.write("Piskvork 9x9, 11:11, 0\n5,5,0\n5,5,0\n")
            d.s("POST", "/element/%s/value" % el, {"text": psq})
            d.wait("the bad file refused", lambda: "line 3" in d.text("#msg"))
        finally:
            try:
                d.s("DELETE", "")
            except (OSError, RuntimeError):
                pass
        # play only, --load: the page opens on Play with the file's game
        psq = os.path.join(tmp, "start.psq")
        with open(psq, "w") as f:
            f.write("Piskvork 9x9, 11:11, 0\n5,5,0\n4,4,0\n")
        solo = subprocess.Popen([gomoku, "serve", "--model",
                                 os.path.join(src, "models", "freestyle9-2x32.gzm"), "--load", psq,
                                 "--listen", "127.0.0.1:0", "--visits", "16", "--device", "cpu"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(solo)
        m = re.search(r"http://\S+", solo.stdout.readline())
        if not m:
            fail("gomoku serve --load printed no address: " + solo.stderr.read()[-300:])
        d.start(os.path.join(tmp, "profile2"))
        try:
            d.s("POST", "/url", {"url": m.group(0)})
            d.wait("the Play tab", lambda: d.script(
                "return !document.getElementById('play').classList.contains('hidden') && "
                "document.getElementById('watch').classList.contains('hidden')"))
            d.wait("the --load game", lambda: len(d.find("#board-play circle.stone")) == 2,
                   debug=lambda: d.text("#msg"))
            if d.script("return [game.human, game.to_move]") != ["black", "black"]:
                fail("the --load game: the person is not the side to move")
            screenshot(d, os.path.join(shots, "serve_load.png"))
        finally:
            try:
                d.s("DELETE", "")
            except (OSError, RuntimeError):
                pass
        if sorted(os.listdir(run)) != before:
            fail("gomoku serve changed the run directory: %s -> %s" % (before, sorted(os.listdir(run))))
        if server.poll() is not None:
            fail("gomoku serve died: " + server.stderr.read()[-300:])
        print("ok: watched the run, played 3 moves, renju refusal shown, .psq loaded, --load "
              "opened on Play; screenshots in " + shots)
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
