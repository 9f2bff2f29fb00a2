#!/usr/bin/env python3
"""Interleaved A/B of the bench figures: base build vs new build, R rounds,
median per figure and median of per-round ratios new/base."""
import json, subprocess, statistics, sys
base, new, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3
benches = [
    ("rules freestyle", ["bench", "rules", "--runs", "3", "--seconds", "0.5"], lambda ls: ls[0]["moves_per_s"]),
    ("rules renju", ["bench", "rules", "--runs", "3", "--seconds", "0.5"], lambda ls: ls[2]["moves_per_s"]),
    ("mcts playouts/s (uniform eval, no VCF)", ["bench", "mcts", "--runs", "5", "--visits", "20000"], lambda ls: ls[0]["playouts_per_s"]),
    ("nn 6x64 b64 fwd evals/s", ["bench", "nn", "--device", "cpu", "--batch", "64", "--runs", "3"], lambda ls: ls[0]["forward_evals_per_s"]),
    ("nn 6x64 b256 fwd evals/s", ["bench", "nn", "--device", "cpu", "--batch", "256", "--runs", "3"], lambda ls: ls[0]["forward_evals_per_s"]),
    ("selfplay 2x32 moves/s", ["bench", "selfplay", "--device", "cpu", "--blocks", "2", "--channels", "32", "--seconds", "20"], lambda ls: ls[-1]["moves_per_s"]),
    ("train 6x64 b256 samples/s", ["bench", "train", "--device", "cpu", "--steps", "10", "--threads", "0"], lambda ls: ls[-1]["train_samples_per_s"]),
]
def run(binary, args, name):
    extra = ["--vcf-nodes", "0"] if (args[1] == "mcts" and binary == new) else []
    out = subprocess.run([binary] + args + extra, capture_output=True, text=True).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]
res = {n: {"base": [], "new": []} for n, _, _ in benches}
for r in range(rounds):
    for n, args, f in benches:
        for side, b in (("base", base), ("new", new)) if r % 2 == 0 else (("new", new), ("base", base)):
            res[n][side].append(f(run(b, args, n)))
        print(r, n, res[n]["base"][-1], res[n]["new"][-1], file=sys.stderr, flush=True)
for n, _, _ in benches:
    b, w = res[n]["base"], res[n]["new"]
    ratios = [y / x for x, y in zip(b, w)]
    print(json.dumps({"figure": n, "base_median": statistics.median(b), "new_median": statistics.median(w),
                      "ratio_new_over_base": round(statistics.median(ratios), 3), "base": b, "new": w}))
