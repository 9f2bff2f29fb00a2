#!/usr/bin/env python3
"""The measuring scripts that drive `gomoku pbrain` (scripts/bench-defend,
through scripts/lib/pbrain.py as scripts/bench-play does): a defence found
and counted, and a bad positions file refused with one line that says
where; scripts/bench-regret's arithmetic with a stand-in judge and stand-in
engines, and its bad input; scripts/strength's series (bots, and a model
through gomoku pbrain), its pooling, resumption and comparison, and its
bad input. Run by meson with GOMOKU_BIN and GOMOKU_SRC set."""
import json
import os
import re
import subprocess
import sys
import tempfile

BIN = os.environ["GOMOKU_BIN"]
SRC = os.environ["GOMOKU_SRC"]
SCRIPT = os.path.join(SRC, "scripts", "bench-defend")
REGRET = os.path.join(SRC, "scripts", "bench-regret")
STRENGTH = os.path.join(SRC, "scripts", "strength")
PATNET_LOOP = os.path.join(SRC, "scripts", "patnet-loop")
# A stand-in pbrain: as `judge`, it rates a position with one stone 100
# for the side to move, and after a second stone at 7,7 -M3 (the side to
# move is lost), else +M3, and names 7,7 its move; as `engine X,Y`, it
# plays X,Y. Only what bench-regret sends is understood.
STANDIN = """
import sys
judge = sys.argv[1] == "judge"
stones = []
for line in sys.stdin:
    w = line.strip()
    if w in ("START 15", "RESTART"):
        print("OK", flush=True)
    elif w == "BOARD":
        stones = []
    elif w == "DONE":
        if judge:
            ev = "100" if len(stones) == 1 else "-M3" if stones[-1] == "7,7" else "+M3"
            print("MESSAGE Eval %s" % ev)
            print("7,7", flush=True)
        else:
            print(sys.argv[2], flush=True)
    elif w == "END":
        break
    elif w[:1].isdigit():
        stones.append(w.rsplit(",", 1)[0])
"""
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
    regret()
    strength()
    patnet_loop()
    print("ok")


def regret():
    with tempfile.TemporaryDirectory() as d:
        standin = os.path.join(d, "standin.py")
        with open(standin, "w") as f:
            f.write(STANDIN)
        pos = os.path.join(d, "pos.txt")
        with open(pos, "w") as f:
            f.write("# one stone, white to move\na1\n")
        py = sys.executable

        def run(*args):
            return subprocess.run([py, REGRET, "--judge", "%s %s judge" % (py, standin),
                                   "--positions", pos, "--time", "100"] + list(args),
                                  capture_output=True, text=True, timeout=300)
        r = run("center=%s %s engine 7,7" % (py, standin), "corner@50=%s %s engine 0,0" % (py, standin),
                "zero=%s pbrain --model %s --threads 1" % (BIN, MODEL))
        if r.returncode != 0:
            fail("bench-regret exited %d: %s" % (r.returncode, r.stderr))
        out = [json.loads(l) for l in r.stdout.strip().splitlines()]
        # before: 100 (win rate 62.25%); after 7,7 the side to move is lost,
        # after 0,0 it wins: regret 62.25 - 100 and 62.25 - 0 points
        want = [{"engine": "center", "positions": 1, "time_ms": 100, "mean_regret": -37.75,
                 "blunders": 0, "into_loss": 0, "judge_move": 1},
                {"engine": "corner", "positions": 1, "time_ms": 50, "mean_regret": 62.25,
                 "blunders": 1, "into_loss": 1, "judge_move": 0, "vs": "center",
                 "mean_diff": 100.0, "diff_se": None, "moves_differ": 1}]
        for got, w in zip(out, want):
            if any(got.get(k) != v for k, v in w.items()):
                fail("bench-regret: %s, want %s" % (got, w))
        if len(out) != 3 or out[2]["engine"] != "zero" or out[2]["positions"] != 1:
            fail("bench-regret with gomoku pbrain: %s" % out)
        engine = "a=%s %s engine 7,7" % (py, standin)
        bad = [
            (["a"], "not NAME=CMD"),
            ([engine, engine], "two engines have one name"),
            (["a@soon=x"], "NAME@MS takes a time"),
            (["--time", "0", engine], "--time at least 1"),
            (["--judge", os.path.join(d, "none"), engine], "No such file"),
            (["a=%s %s engine 0,14" % (py, standin)], "not a free point"),
        ]
        for args, why in bad:
            r = run(*args)
            err = r.stderr.strip()
            if r.returncode == 0 or why not in err or "\n" in err:
                fail("bench-regret %s: exit %d, stderr %r" % (args, r.returncode, err))
        for text, why in (("a1 zz\n", "line 1: 'zz' is not a move"), ("a1 a1\n", "played twice"),
                          ("# none\n", "holds no position")):
            with open(pos, "w") as f:
                f.write(text)
            r = run(engine)
            err = r.stderr.strip()
            if r.returncode == 0 or why not in err or "\n" in err:
                fail("bench-regret file %r: exit %d, stderr %r" % (text, r.returncode, err))


def strength():
    def run(*args):
        return subprocess.run([sys.executable, STRENGTH, "--build", os.path.dirname(BIN),
                               "--size", "9", "--openings", "2"] + list(args),
                              capture_output=True, text=True)

    def last_json(r, what):
        if r.returncode != 0:
            fail("strength %s: exit %d, %r" % (what, r.returncode, r.stderr))
        return json.loads(r.stdout.strip().splitlines()[-1])

    with tempfile.TemporaryDirectory() as d:
        a, b = os.path.join(d, "a"), os.path.join(d, "b")
        out = last_json(run("bot:greedy", "bot:random", "--games", "4", "--seeds", "1,2",
                            "--out", a), "bots")
        per = [json.load(open(os.path.join(a, "s%d" % k, "result.json"))) for k in (1, 2)]
        for k in ("wins", "losses", "draws"):
            if out[k] != per[0][k] + per[1][k]:
                fail("strength pooled %s %d, seeds %d + %d" % (k, out[k], per[0][k], per[1][k]))
        if out["games"] != 8 or sum(out["black"]) + sum(out["white"]) != 8 or \
                len([f for f in os.listdir(os.path.join(a, "s1")) if f.endswith(".psq")]) != 4:
            fail("strength series: %s" % out)
        if out.get("slowest_ms") != [max(r["slowest_ms"][i] for r in per) for i in range(2)] or \
                out.get("over_time") != [sum(r["over_time"][i] for r in per) for i in range(2)]:
            fail("strength's slowest moves: %s, seeds %s" % (out, per))
        # a seed already played is read, not played again: a result put there counts
        with open(os.path.join(a, "s2", "result.json"), "w") as f:
            json.dump({"wins": 1, "losses": 2, "draws": 1, "a_black": [1, 0, 1],
                       "a_white": [0, 2, 0]}, f)
        again = last_json(run("bot:greedy", "bot:random", "--games", "4", "--seeds", "1,2",
                              "--out", a), "resumed")
        if (again["wins"], again["losses"], again["draws"]) != \
                (per[0]["wins"] + 1, per[0]["losses"] + 2, per[0]["draws"] + 1):
            fail("strength did not read the seed already played: %s" % again)
        if again.get("slowest_ms") != per[0]["slowest_ms"]:   # the seed put there has no times
            fail("strength's slowest moves of the timed seed alone: %s" % again)
        # a model through gomoku pbrain, compared with the series above
        model = os.path.join(d, "m.gzm")
        subprocess.run([BIN, "model", "init", "--blocks", "1", "--channels", "8", "--board-max",
                        "9", "--out", model], check=True, capture_output=True)
        cmp_ = last_json(run(model, "bot:random", "--games", "2", "--seeds", "3", "--time", "30",
                             "--threads", "1", "--out", b, "--against", a), "model")
        s = (cmp_["wins"] + 0.5 * cmp_["draws"]) / 2
        o = (again["wins"] + 0.5 * again["draws"]) / 8
        if cmp_["games"] != 2 or abs(cmp_["against"]["diff"] - (s - o)) > 1e-3 or \
                abs(cmp_["against"]["score"] - o) > 1e-3:
            fail("strength --against: %s (own %.3f, other %.3f)" % (cmp_, s, o))
        if cmp_["slowest_ms"][0] < 10:   # a 30 ms move searches for about 19 ms
            fail("strength: the model's slowest move: %s" % cmp_)
        # the same seeds again: every game pairs with the first series' (the
        # bots play the same games from the same seed), unless its opening
        # differs
        c = os.path.join(d, "c")
        out_c = last_json(run("bot:greedy", "bot:random", "--games", "4", "--seeds", "1,2",
                              "--out", c), "again")
        psq = os.path.join(c, "s2", "game_0003.psq")
        with open(psq) as f:
            lines = f.read().splitlines()
        at = next(i for i, x in enumerate(lines) if re.match(r"^\d+,\d+,\d+$", x))
        x, y, t = lines[at].split(",")
        lines[at] = "%d,%s,%s" % ((int(x) + 1) % 9, y, t)
        with open(psq, "w") as f:
            f.write("\n".join(lines) + "\n")
        pc = last_json(run("bot:greedy", "bot:random", "--games", "4", "--seeds", "1,2",
                           "--out", c, "--against", a), "paired")["against"]
        if pc.get("paired_games") != 7 or pc.get("paired_diff") != 0 or pc.get("paired_se") != 0:
            fail("strength's paired comparison: %s (series %s)" % (pc, out_c))
        if "paired_games" in cmp_["against"]:
            fail("strength paired games of other seeds: %s" % cmp_)
        # two baselines pooled: a game pairs when one of them has it (game 3
        # of seed 2 with a alone); the unpaired baseline is both series' games
        p2 = last_json(run("bot:greedy", "bot:random", "--games", "4", "--seeds", "1,2",
                           "--out", a, "--against", a, "--against", c), "two baselines")["against"]
        sa = (again["wins"] + 0.5 * again["draws"]) / 8
        sc_ = (out_c["wins"] + 0.5 * out_c["draws"]) / 8
        if p2.get("series") != 2 or p2.get("paired_games") != 8 or p2.get("paired_diff") != 0 \
                or abs(p2["score"] - (sa + sc_) / 2) > 1e-3:
            fail("strength against two series: %s" % p2)
        # Elo as gomoku match gives it: 17-20-3 is -26 [-136, +79]
        import importlib.machinery
        import importlib.util
        loader = importlib.machinery.SourceFileLoader("strength", STRENGTH)
        st = importlib.util.module_from_spec(importlib.util.spec_from_loader("strength", loader))
        loader.exec_module(st)
        e, lo, hi = st.elo_interval(17, 20, 3)
        if "%.1f %.1f %.1f" % (e, lo, hi) != "-26.1 -135.8 78.5":
            fail("strength's Elo interval: %.1f [%.1f, %.1f]" % (e, lo, hi))
        with open(os.path.join(b, "s3", "result.json"), "w") as f:
            f.write("{not json")
        os.makedirs(os.path.join(b, "s5"))
        with open(os.path.join(b, "s5", "result.json"), "w") as f:
            json.dump({"wins": 1, "losses": 0, "draws": 0, "a_black": [1, 0, 0],
                       "a_white": [0, 0, 0], "slowest_ms": [3], "over_time": [0, 0]}, f)
        bad = [
            (["bot:greedy", "bot:random", "--games", "3", "--out", a], "an even number"),
            (["bot:greedy", "bot:random", "--seeds", "1,x", "--out", a], "whole numbers"),
            (["bot:greedy", "bot:random", "--seeds", "1,1", "--out", a], "distinct seeds"),
            (["bot:greedy", "nosuch:x", "--seeds", "9", "--games", "2", "--out", a],
             "seed 9: gomoku match exited 2: gomoku match: cannot read model nosuch:x"),
            (["bot:greedy", "bot:random", "--out", a, "--against", os.path.join(d, "none")],
             "no such directory"),
            (["bot:greedy", "bot:random", "--seeds", "3", "--out", b], "not a result of this script"),
            (["bot:greedy", "bot:random", "--seeds", "5", "--out", b], "'slowest_ms' is not two counts"),
            ([os.path.join(d, "none.gzm"), "bot:random", "--seeds", "4", "--out", b], "no model file"),
        ]
        for args, why in bad:
            r = run(*args)
            err = r.stderr.strip()
            if r.returncode != 2 or why not in err or "\n" in err:
                fail("strength %s: exit %d, stderr %r" % (args, r.returncode, err))


def patnet_loop():
    def gomoku(*args):
        r = subprocess.run([BIN] + list(args), capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            fail("gomoku %s: exit %d, %r" % (" ".join(args), r.returncode, r.stderr))
        return r.stdout

    def loop(run, *args):
        return subprocess.run([PATNET_LOOP, run, "--bin", BIN, "--size", "9", "--games", "4",
                               "--visits", "8", "--parallel", "4"] + list(args),
                              capture_output=True, text=True, timeout=240)

    def rows(run):
        with open(os.path.join(run, "log.csv")) as f:
            lines = f.read().splitlines()
        if lines[0] != "generation,games,selfplay_s,train_s,heldout_policy,heldout_value":
            fail("patnet-loop: log.csv header %r" % lines[0])
        return [l.split(",") for l in lines[1:]]

    def plays(net):
        """gomoku pbrain with net opens a 9x9 game with a move on the board."""
        r = subprocess.run([BIN, "pbrain", "--model", "patnet:" + net],
                           input="START 9\nINFO timeout_turn 100\nBEGIN\n",
                           capture_output=True, text=True, timeout=60)
        moves = [l for l in r.stdout.splitlines()
                 if re.fullmatch(r"[0-8],[0-8]", l.strip())]
        if r.returncode != 0 or len(moves) != 1:
            fail("pbrain with %s: exit %d, %r" % (net, r.returncode, r.stdout))

    with tempfile.TemporaryDirectory() as d:
        m = os.path.join(d, "m.gzm")
        gomoku("model", "init", "--blocks", "1", "--channels", "8", "--board-max", "9",
               "--out", m)
        seed = os.path.join(d, "seed")
        gomoku("selfplay", "--random-net", "--blocks", "1", "--channels", "8", "--size", "9",
               "--games", "8", "--parallel", "4", "--visits", "16", "--cheap-visits", "0",
               "--device", "cpu", "--out", seed)
        run = os.path.join(d, "run")
        r = loop(run, "--model", m, "--seed-games", seed, "--generations", "2", "--window", "2",
                 "--workers", "2", "--strong-frac", "1", "--strong-visits", "32",
                 "--cheap-visits", "8", "--full-frac", "0.5")
        if r.returncode != 0:
            fail("patnet-loop: exit %d, %r" % (r.returncode, r.stderr))
        for w in range(2):   # every game had a strong side; cheap searches as asked
            with open(os.path.join(run, "selfplay-%d.json" % w)) as f:
                sp = json.loads(f.read().strip().splitlines()[-1])
            if sp["strong_black"] + sp["strong_white"] != sp["games"]:
                fail("patnet-loop: --strong-frac 1 played %r" % sp)
            if sp["vct_checks"] == 0:
                fail("patnet-loop: no root VCT at the default budget %r" % sp)
            if sp["cheap_visits"] != 8 or sp["full_frac"] != 0.5:
                fail("patnet-loop: --cheap-visits 8 --full-frac 0.5 played %r" % sp)
        log = rows(run)
        if [row[0] for row in log] != ["1", "2"] or any(row[1] != "4" for row in log):
            fail("patnet-loop: log.csv %r" % log)
        for k in range(3):
            plays(os.path.join(run, "gen-%04d.gzp" % k))
        for k in range(2):
            g = os.path.join(run, "games-%04d" % k)
            if not os.path.exists(os.path.join(g, "done")):
                fail("patnet-loop: %s not marked done" % g)
            shards = [f for f in os.listdir(g) if f.endswith(".gzr")]
            if len(shards) != 2:   # a worker's each
                fail("patnet-loop: games in %s: %r" % (g, shards))
        # generation 2 was trained from generation 1's net, not from 0's
        with open(os.path.join(run, "gen-0002.gzp"), "rb") as f2, \
                open(os.path.join(run, "gen-0001.gzp"), "rb") as f1:
            if f1.read() == f2.read():
                fail("patnet-loop: generation 2 is generation 1")
        # stopped while generation 2 played: its games are played again, the run goes on
        g2 = os.path.join(run, "games-0002")
        os.makedirs(g2)
        with open(os.path.join(g2, "selfplay-1-0000.gzr.tmp"), "w") as f:
            f.write("half a shard")
        # (with league games: each worker's against an earlier generation)
        # and no root VCT in self-play: --vct-root-nodes reaches the workers)
        r = loop(run, "--model", m, "--generations", "1", "--workers", "2", "--league-frac", "1",
                 "--vct-root-nodes", "0")
        if r.returncode != 0 or "goes on" in r.stderr:
            fail("patnet-loop resumed: exit %d, %r" % (r.returncode, r.stderr))
        met = re.findall(r"generation 2, worker (\d): league games against generation (\d+)",
                         r.stderr)
        if sorted(w for w, _ in met) != ["0", "1"] or any(int(k) > 1 for _, k in met):
            fail("patnet-loop --league-frac: %r" % r.stderr)
        for w in range(2):
            with open(os.path.join(run, "selfplay-%d.json" % w)) as f:
                sp = json.loads(f.read().strip().splitlines()[-1])
            if sp["opponent_black"] + sp["opponent_white"] != sp["games"]:
                fail("patnet-loop: --league-frac 1 played %r" % sp)
            if sp["vct_checks"] != 0:
                fail("patnet-loop: --vct-root-nodes 0 played %r" % sp)
        if [row[0] for row in rows(run)] != ["1", "2", "3"]:
            fail("patnet-loop resumed: log.csv %r" % rows(run))
        if any(f.endswith(".tmp") for f in os.listdir(g2)):
            fail("patnet-loop resumed: the half shard is still in %s" % g2)
        plays(os.path.join(run, "gen-0003.gzp"))
        # --init starts another run from a given net
        run2 = os.path.join(d, "run2")
        r = loop(run2, "--model", m, "--init", os.path.join(run, "gen-0003.gzp"),
                 "--generations", "1", "--epochs", "2")
        if r.returncode != 0 or not os.path.exists(os.path.join(run2, "gen-0001.gzp")):
            fail("patnet-loop --init: exit %d, %r" % (r.returncode, r.stderr))
        with open(os.path.join(run2, "distill.log")) as f:   # --epochs passes a generation
            passes = re.findall(r"^epoch (\d+): ", f.read(), re.M)
        if passes != ["1", "2"]:
            fail("patnet-loop --epochs 2 trained %r" % passes)
        r = subprocess.run([PATNET_LOOP, "--help"], capture_output=True, text=True)
        if r.returncode != 0 or "--open-frac F" not in r.stdout or "set -euo" in r.stdout:
            fail("patnet-loop --help: exit %d, %r" % (r.returncode, r.stdout))
        # bad input: one line that says what was wrong, nothing written
        trunc = os.path.join(d, "trunc.gzp")
        with open(trunc, "wb") as f:
            f.write(b"GZPN")
        bad = [
            ([], "--model M is required"),
            (["--model", os.path.join(d, "none.gzm")], "cannot read the model"),
            (["--model", m], "needs --init P.gzp or --seed-games DIR"),
            (["--model", m, "--init", os.path.join(d, "none.gzp")], "cannot read --init"),
            (["--model", m, "--init", m], "is not a pattern net (.gzp)"),
            (["--model", m, "--init", trunc], "--init: %s: truncated (4 bytes" % trunc),
            (["--model", m, "--seed-games", d], "no games (.gzr) under"),
            (["--model", m, "--init", m, "--seed-games", seed], "not both"),
            (["--model", m, "--games", "0"], "a positive integer, got '0'"),
            (["--model", m, "--workers", "5"], "--workers 5 is more than --games 4"),
            (["--model", m, "--lr", "x"], "a number, got 'x'"),
            (["--model", m, "--epochs", "0"], "a positive integer, got '0'"),
            (["--model", m, "--open-frac", "-1"], "a number, got '-1'"),
            (["--model", m, "--strong-frac", "1.5"], "--strong-frac 1.5 is more than 1"),
            (["--model", m, "--league-frac", "1.5"], "--league-frac 1.5 is more than 1"),
            (["--model", m, "--full-frac", "x"], "a number, got 'x'"),
            (["--model", m, "--strong-visits", "4"], "--strong-visits 4 is less than --visits 8"),
            (["--model", m, "--strong-visits", "0"], "a positive integer, got '0'"),
            (["--model", m, "--cheap-visits", "-1"], "a whole number, got '-1'"),
            (["--model", m, "--vct-root-nodes", "2k"], "a whole number, got '2k'"),
            (["--model", m, "--cheap-visits", "9"], "--cheap-visits 9 is more than --visits 8"),
            (["--model", m, "--generations", "1", "--hours", "1"], "not both"),
            (["--model", m, "--frobnicate", "1"], "unknown option --frobnicate"),
            (["--model"], "--model needs a value"),
        ]
        for args, why in bad:
            fresh = os.path.join(d, "fresh")
            r = loop(fresh, *args)
            err = r.stderr.strip()
            if r.returncode == 0 or why not in err or "\n" in err:
                fail("patnet-loop %s: exit %d, stderr %r" % (args, r.returncode, err))
            if os.path.exists(fresh) and os.listdir(fresh):
                fail("patnet-loop %s: wrote %r" % (args, os.listdir(fresh)))
        # model info reads a pattern net
        info = gomoku("model", "info", os.path.join(run, "gen-0003.gzp"))
        if not re.search(r"^format +GZPN version 4", info, re.M) or \
                not re.search(r"^table rows +7381$", info, re.M):
            fail("model info of a pattern net: %r" % info)


if __name__ == "__main__":
    main()
