"""The PyTorch peer of gomoku's net, for scripts/bench-peer.

The same architecture as nn/nn.h, layer for layer, masks included:
  trunk: conv3x3 P->C + bias, ReLU, x mask; B blocks of
         x = relu(x + conv3x3(relu(conv3x3(x) + b1) * mask) + b2) * mask
  policy: conv1x1 C->Hp, ReLU, x mask, conv1x1 Hp->1; illegal points masked
  value: conv1x1 C->Hv, ReLU, x mask, mean over on-board points,
         FC Hv->Vh, ReLU, FC Vh->3
Loss: policy cross-entropy over legal points + value cross-entropy (+ L2 as
SGD weight decay), Nesterov SGD. Timing only: the weights are PyTorch's own
init, the inputs random positions like `gomoku bench nn` makes.

Forward precision (--precision): fp32, or bf16. CUDA always runs bf16
autocast. CPU bf16 is timed two ways, autocast (fp32 weights, bf16 convs
inside torch.autocast('cpu')) and the whole net cast to bfloat16 (inputs
too), and the faster one is reported: "forward_dtype" says which.

Prints one JSON line per batch size, like `gomoku bench nn`:
  {"bench":"nn_peer","framework":"torch 2.x",...,"forward_evals_per_s":..,
   "train_samples_per_s":..,"gflop_per_eval":..}
"""
import argparse
import copy
import json
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PLANES, OWN, OPP, ONBOARD, BLACK, FORBIDDEN = 5, 0, 1, 2, 3, 4


class Net(nn.Module):
    def __init__(self, blocks, channels, hp=32, hv=32, vh=64):
        super().__init__()
        c = channels
        self.inp = nn.Conv2d(PLANES, c, 3, padding=1)
        self.b1 = nn.ModuleList(nn.Conv2d(c, c, 3, padding=1) for _ in range(blocks))
        self.b2 = nn.ModuleList(nn.Conv2d(c, c, 3, padding=1) for _ in range(blocks))
        self.p1 = nn.Conv2d(c, hp, 1)
        self.p2 = nn.Conv2d(hp, 1, 1)
        self.v1 = nn.Conv2d(c, hv, 1)
        self.fc1 = nn.Linear(hv, vh)
        self.fc2 = nn.Linear(vh, 3)

    def forward(self, x):
        mask = x[:, ONBOARD:ONBOARD + 1]
        legal = (mask > 0.5) & (x[:, OWN:OWN + 1] < 0.5) & (x[:, OPP:OPP + 1] < 0.5) \
            & (x[:, FORBIDDEN:FORBIDDEN + 1] < 0.5)
        h = F.relu(self.inp(x)) * mask
        for c1, c2 in zip(self.b1, self.b2):
            t = F.relu(c1(h)) * mask
            h = F.relu(h + c2(t)) * mask
        p = F.relu(self.p1(h)) * mask
        logits = self.p2(p).flatten(1)
        legal = legal.flatten(1)
        logits = logits.masked_fill(~legal, -1e30)
        v = F.relu(self.v1(h)) * mask
        pooled = v.sum((2, 3)) / mask.sum((2, 3)).clamp(min=1.0)
        v = self.fc2(F.relu(self.fc1(pooled)))
        return logits, legal, v


def flops_per_eval(net, m):
    """2 x multiply-adds of every conv and linear layer, counted from the modules."""
    total = 0
    for mod in net.modules():
        if isinstance(mod, nn.Conv2d):
            k = mod.kernel_size[0] * mod.kernel_size[1]
            total += 2 * mod.in_channels * mod.out_channels * k * m * m
        elif isinstance(mod, nn.Linear):
            total += 2 * mod.in_features * mod.out_features
    return total


def inputs(n, m, device):
    g = torch.Generator().manual_seed(12345)
    r = torch.randint(0, 10, (n, m, m), generator=g)
    x = torch.zeros(n, PLANES, m, m)
    x[:, OWN] = (r == 0).float()
    x[:, OPP] = (r == 1).float()
    x[:, ONBOARD] = 1.0
    x[:, BLACK] = (torch.arange(n) % 2).float().view(n, 1, 1)
    pt = torch.zeros(n, m * m)
    free = (r >= 2).flatten(1)
    first = free.float().argmax(1)
    pt[torch.arange(n), first] = 1.0
    vt = F.one_hot(torch.arange(n) % 3, 3).float()
    return x.to(device), pt.to(device), vt.to(device)


def timed(fn, seconds, sync):
    fn()
    sync()
    calls, t0 = 0, time.perf_counter()
    while True:   # synchronised every call, as ours is (each call returns its results)
        fn()
        sync()
        calls += 1
        t = time.perf_counter() - t0
        if t >= seconds:
            return calls / t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--blocks", type=int, default=6)
    ap.add_argument("--channels", type=int, default=64)
    ap.add_argument("--size", type=int, default=15)
    ap.add_argument("--batch", default="64,256")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--precision", choices=("fp32", "bf16"), default="fp32")
    a = ap.parse_args()
    dev = torch.device("cuda" if a.device.startswith("cuda") else "cpu")
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    cuda = dev.type == "cuda"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    torch.manual_seed(1)
    net = Net(a.blocks, a.channels).to(dev)
    if cuda:
        net = net.to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(net.parameters(), lr=1e-4, momentum=0.9, nesterov=True,
                          weight_decay=2e-4)
    fl = flops_per_eval(net, a.size)
    for batch in [int(b) for b in a.batch.split(",")]:
        x, pt, vt = inputs(batch, a.size, dev)
        if cuda:
            x = x.contiguous(memory_format=torch.channels_last)

        bf16 = cuda or a.precision == "bf16"

        def fwd():
            with torch.inference_mode(), torch.autocast(dev.type, dtype=torch.bfloat16,
                                                        enabled=bf16):
                logits, legal, v = net(x)
                torch.softmax(logits.float(), 1)
                torch.softmax(v.float(), 1)

        net16 = copy.deepcopy(net).to(torch.bfloat16) if bf16 and not cuda else None
        x16 = x.to(torch.bfloat16)

        def fwd_cast():
            with torch.inference_mode():
                logits, legal, v = net16(x16)
                torch.softmax(logits.float(), 1)
                torch.softmax(v.float(), 1)

        def step(autocast=False):
            with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=autocast):
                logits, legal, v = net(x)
            logits, v = logits.float(), v.float()
            lp = torch.log_softmax(logits, 1).masked_fill(~legal, 0.0)
            loss = -(pt * lp).sum(1).mean() - (vt * torch.log_softmax(v, 1)).sum(1).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        f = [timed(fwd, a.seconds, sync) * batch for _ in range(a.runs)]
        dtype, other = ("bf16 autocast" if bf16 else "fp32"), {}
        if net16 is not None:
            fc = [timed(fwd_cast, a.seconds, sync) * batch for _ in range(a.runs)]
            other = {"forward_evals_per_s_autocast": round(statistics.median(f), 1),
                     "forward_evals_per_s_cast": round(statistics.median(fc), 1)}
            if statistics.median(fc) > statistics.median(f):
                f, dtype = fc, "bf16 weights"
        t = [timed(step, a.seconds, sync) * batch for _ in range(a.runs)]
        tdtype = "fp32 (TF32 convs)" if cuda else "fp32"
        if bf16:
            # the peer's fastest training: bf16 autocast where it wins
            tb = [timed(lambda: step(True), a.seconds, sync) * batch for _ in range(a.runs)]
            other["train_samples_per_s_fp32"] = round(statistics.median(t), 1)
            other["train_samples_per_s_autocast"] = round(statistics.median(tb), 1)
            if statistics.median(tb) > statistics.median(t):
                t, tdtype = tb, "bf16 autocast"
        name = torch.cuda.get_device_name(dev) if cuda else "cpu"
        print(json.dumps({
            "bench": "nn_peer", "framework": "torch " + torch.__version__, "device": name,
            "forward_dtype": dtype, "train_dtype": tdtype, **other, "blocks": a.blocks,
            "channels": a.channels, "size": a.size, "batch": batch,
            "threads": torch.get_num_threads(), "gflop_per_eval": fl / 1e9,
            "forward_evals_per_s": round(statistics.median(f), 1),
            "train_samples_per_s": round(statistics.median(t), 1), "runs": a.runs}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
