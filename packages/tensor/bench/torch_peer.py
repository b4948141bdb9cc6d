"""torch on one thread as a peer of the tensor benchmark, driven over pipes.

tensor.bench.ts (through torch.ts) starts this process and sends one JSON
object per line on stdin; each gets one JSON line back on stdout. Taking
commands one sample at a time lets the benchmark alternate samples between
dtlab, tfjs and torch, so a machine that gets busier part-way slows all three
alike. Tensors travel as base64 of little-endian float32 (labels: int32).

    {"op": "hello"}                       -> {"torch", "threads", "blas"}
    {"op": "matmul", "n", "a", "b", "c"}  -> {"max_diff"}  (keeps a and b; c is dtlab's product)
    {"op": "mlp", "batch", "inputs", "hidden", "classes", "x", "labels",
     "w1", "b1", "w2", "b2", "lr"}        -> {"losses": [first, second]}  (keeps the model)
    {"op": "time", "what": "matmul" | "mlp", "calls"} -> {"ms"}  (one sample: ms per call)

A command that fails answers {"error"}.

Not meant to be run by hand; `/usr/bin/python3 torch_peer.py` and typing
{"op": "hello"} works, though.
"""

import base64
import json
import sys
import time

import torch
import torch.nn.functional as F

torch.set_num_threads(1)  # one thread, as dtlab and tfjs run here


def tensor_of(b64: str, shape, dtype=torch.float32) -> torch.Tensor:
    raw = bytearray(base64.b64decode(b64))
    return torch.frombuffer(raw, dtype=dtype).reshape(shape).clone()


def loaded_blas() -> str:
    """The BLAS library this process actually mapped, which is what torch's float32 mm calls here."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "blas" in line.lower() or "mkl" in line.lower()}
        return ", ".join(sorted(p for p in paths if p.startswith("/"))) or "none mapped"
    except OSError:
        return "unknown"


class Peer:
    def __init__(self) -> None:
        self.a = self.b = None
        self.step = None

    def hello(self, _cmd):
        torch.ones(4, 4) @ torch.ones(4, 4)  # maps the BLAS library
        return {"torch": torch.__version__, "threads": torch.get_num_threads(), "blas": loaded_blas()}

    def matmul(self, cmd):
        n = cmd["n"]
        self.a = tensor_of(cmd["a"], (n, n))
        self.b = tensor_of(cmd["b"], (n, n))
        mine = tensor_of(cmd["c"], (n, n))
        return {"max_diff": (self.a @ self.b - mine).abs().max().item()}

    def mlp(self, cmd):
        x = tensor_of(cmd["x"], (cmd["batch"], cmd["inputs"]))
        labels = tensor_of(cmd["labels"], (cmd["batch"],), torch.int32).long()
        model = torch.nn.Sequential(
            torch.nn.Linear(cmd["inputs"], cmd["hidden"]), torch.nn.ReLU(), torch.nn.Linear(cmd["hidden"], cmd["classes"])
        )
        with torch.no_grad():
            model[0].weight.copy_(tensor_of(cmd["w1"], (cmd["hidden"], cmd["inputs"])))
            model[0].bias.copy_(tensor_of(cmd["b1"], (cmd["hidden"],)))
            model[2].weight.copy_(tensor_of(cmd["w2"], (cmd["classes"], cmd["hidden"])))
            model[2].bias.copy_(tensor_of(cmd["b2"], (cmd["classes"],)))
        opt = torch.optim.Adam(model.parameters(), lr=cmd["lr"], eps=1e-8)

        def step() -> float:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), labels)
            loss.backward()
            opt.step()
            return loss.item()

        self.step = step
        return {"losses": [step(), step()]}

    def time(self, cmd):
        fn = (lambda: self.a @ self.b) if cmd["what"] == "matmul" else self.step
        calls = cmd["calls"]
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        return {"ms": (time.perf_counter() - t0) / calls * 1e3}


def main() -> None:
    peer = Peer()
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        try:
            reply = getattr(peer, cmd["op"])(cmd)
        except Exception as e:  # reported to the benchmark, which prints it and carries on without torch
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
