#!/usr/bin/env python3
"""The measuring scripts that drive `gomoku pbrain` (scripts/bench-defend,
through scripts/lib/pbrain.py as scripts/bench-play does): a defence found
and counted, and a bad positions file refused with one line that says
where. Run by meson with GOMOKU_BIN and GOMOKU_SRC set."""
import json
import os
import subprocess
import sys
import tempfile

BIN = os.environ["GOMOKU_BIN"]
SRC = os.environ["GOMOKU_SRC"]
SCRIPT = os.path.join(SRC, "scripts", "bench-defend")
MODEL = os.path.join(SRC, "models", "freestyle15.gzm")
# white's open three on row 7 (5,7 6,7 7,7), black to move
MOVES = "7,0 5,7 0,14 6,7 14,14 7,7"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def bench(path, *extra):
    return subprocess.run([sys.executable, SCRIPT, "--file", path, "--bin", BIN, "--model", MODEL,
                           "--time", "100", "--threads", "1", "--runs", "1"] + list(extra),
                          capture_output=True, text=True, timeout=300)


def main():
    rules = subprocess.run([BIN, "rules", "--moves", MOVES, "--vct"], capture_output=True,
                           text=True, timeout=120).stdout
    found = dict(l.partition(": ")[::2] for l in rules.splitlines())
    defences = found.get("vct_defences", "").split()
    if sorted(defences) != ["4,7", "8,7"]:
        fail("rules --vct: defences of an open three %s (%s)" % (defences, rules))
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "good.txt")
        with open(good, "w") as f:
            f.write("gomoku-defend 1\n# an open three\n\nfreestyle 15 | %s | %s | test\n"
                    % (MOVES, " ".join(defences)))
        r = bench(good)
        if r.returncode != 0:
            fail("bench-defend exited %d: %s" % (r.returncode, r.stderr))
        out = json.loads(r.stdout.strip().splitlines()[-1])
        if (out["bench"], out["tries"], out["hits"], out["positions"]) != ("defend", 1, 1, 1):
            fail("bench-defend: %s" % out)
        if "hit" not in r.stderr:
            fail("no line a position on stderr: %s" % r.stderr)
        bad = {
            "gomoku-defend 2\n": "expected 'gomoku-defend 1'",
            "gomoku-defend 1\nfreestyle 15 | 7,7 | 8,8\n": "line 2: want 'RULE SIZE",
            "gomoku-defend 1\nfreestyle 15 | 7,7 | 7,7 | x\n": "line 2: a defence is an occupied",
            "gomoku-defend 1\nfreestyle 15 | 7,7 99,1 | 8,8 | x\n": "line 2: 99,1 is off",
            "gomoku-defend 1\ngo 15 | 7,7 | 8,8 | x\n": "line 2: 'go 15' is not RULE SIZE",
            "gomoku-defend 1\n# nothing\n": "no positions",
        }
        for text, why in bad.items():
            path = os.path.join(d, "bad.txt")
            with open(path, "w") as f:
                f.write(text)
            r = bench(path)
            err = r.stderr.strip()
            if r.returncode == 0 or why not in err or "\n" in err or r.stdout:
                fail("bad file %r: exit %d, stderr %r" % (text, r.returncode, err))
        for args, why in ((["--time", "soon"], "--time"), (["--runs", "0"], "at least 1")):
            r = bench(good, *args)
            err = r.stderr.strip()
            if r.returncode == 0 or why not in err or "\n" in err:
                fail("%s: exit %d, stderr %r" % (args, r.returncode, err))
        r = bench(good, "--bin", "/bin/true")   # an engine that exits at once
        if r.returncode == 0 or "pbrain exited (status 0)" not in r.stderr or \
                "Traceback" in r.stderr:
            fail("an engine that exits: exit %d, %r" % (r.returncode, r.stderr))
        # the same engine seen by a write rather than a read: its pipe is closed
        sys.path.insert(0, os.path.join(SRC, "scripts", "lib"))
        from pbrain import Brain
        b = Brain(["/bin/sh", "-c", "echo gone >&2; exit 3"])
        b.p.wait()
        try:
            b.send("START 15")
            b.send("INFO timeout_turn 1000")   # a pipe's buffer may take the first line
            fail("a write to an engine that exited raised nothing")
        except RuntimeError as e:
            if str(e) != "pbrain exited (status 3): gone":
                fail("a write to an engine that exited: %r" % str(e))
        b.close()
        if b.note != "gone":
            fail("close after the engine died lost its stderr: %r" % b.note)
        r = bench(good, "--bin", os.path.join(d, "none"))
        if r.returncode == 0 or "no program" not in r.stderr:
            fail("a missing --bin program: exit %d, %r" % (r.returncode, r.stderr))
    print("ok")


if __name__ == "__main__":
    main()
