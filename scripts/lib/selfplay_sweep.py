#!/usr/bin/env python3
"""Self-play throughput of K worker processes x G games each (scripts/gpu-check sweep).

For every (K, G) it starts K `gomoku bench selfplay --parallel G` processes at
once (each its own process and, on cuda, its own CUDA context, as `gomoku
train` workers are), waits for all of them and prints one JSON line with the
sums: games/hour, moves/s, evals/s, and the mean batch per NN call. Each
process times only its own S seconds of play, after its net is built, so the
K windows overlap but need not coincide exactly; the per-process figures are
kept in the line ("each"). The best configuration (most moves/s, every
process ran) ends the output as a "sweep_best" line.

Usage: selfplay_sweep.py GOMOKU [--device D] [--seconds S] [--workers 1,2,4]
                         [--parallel 64,256] [--tag T] [-- extra bench options]
"""
import argparse
import json
import subprocess
import sys
import time


def ints(text):
    try:
        vals = [int(v) for v in text.split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integers, got %r" % text)
    if not vals or min(vals) < 1:
        raise argparse.ArgumentTypeError("expected positive integers, got %r" % text)
    return vals


def one_config(args, k, g, extra):
    cmd = [args.gomoku, "bench", "selfplay", "--device", args.device, "--parallel", str(g),
           "--seconds", str(args.seconds), "--threads", "1"] + extra
    procs = []
    t0 = time.time()
    for i in range(k):
        procs.append(subprocess.Popen(cmd + ["--seed", str(i + 1)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    each, errors = [], []
    for p in procs:
        out, err = p.communicate()
        line = next((l for l in reversed(out.splitlines()) if l.startswith("{")), None)
        if p.returncode != 0 or line is None:
            last = (err.strip().splitlines() or ["no output"])[-1]
            errors.append("exit %d: %s" % (p.returncode, last))
            continue
        each.append(json.loads(line))
    res = {"sweep": "selfplay", "tag": args.tag, "device": args.device, "workers": k,
           "parallel": g, "seconds": args.seconds, "wall_s": round(time.time() - t0, 1),
           "ok": len(each), "failed": len(errors)}
    for e in each:   # no game finished in the window: no games/hour from that process
        e["games_per_hour"] = e.get("games_per_hour") or 0.0
        e["mean_plies"] = e.get("mean_plies") or 0.0
    if each:
        res["games_per_hour"] = round(sum(e["games_per_hour"] for e in each), 1)
        res["moves_per_s"] = round(sum(e["moves_per_s"] for e in each), 2)
        res["evals_per_s"] = round(sum(e["evals_per_s"] for e in each), 1)
        res["avg_batch"] = round(sum(e["avg_batch"] for e in each) / len(each), 2)
        res["mean_plies"] = round(sum(e["mean_plies"] for e in each) / len(each), 1)
        res["each"] = [{"games_per_hour": e["games_per_hour"], "evals_per_s": e["evals_per_s"]}
                       for e in each]
    if errors:
        res["errors"] = errors[:3]
    return res


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("gomoku")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--workers", type=ints, default=[1, 2, 4, 8, 16])
    ap.add_argument("--parallel", type=ints, default=[64, 256])
    ap.add_argument("--tag", default="")
    args = ap.parse_args(argv)
    if args.seconds <= 0 or args.seconds != args.seconds:
        ap.error("--seconds must be a positive number")
    best = None
    for k in args.workers:
        for g in args.parallel:
            res = one_config(args, k, g, extra)
            print(json.dumps(res), flush=True)
            # moves/s chooses: games/hour also carries the random net's game lengths
            if res["ok"] == k and (best is None or res["moves_per_s"] > best["moves_per_s"]):
                best = res
    if best is None:
        print("sweep: no configuration ran on every worker", file=sys.stderr)
        return 1
    print(json.dumps({"sweep_best": "selfplay", "tag": args.tag, "workers": best["workers"],
                      "parallel": best["parallel"], "games_per_hour": best["games_per_hour"],
                      "moves_per_s": best["moves_per_s"],
                      "evals_per_s": best["evals_per_s"]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
