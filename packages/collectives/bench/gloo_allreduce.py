"""The peer of the collectives benchmark: torch.distributed with the gloo
backend, on the same sizes and number of ranks, on this machine.

Run by collectives.bench.ts, not by hand (though it can be):

    /usr/bin/python3 gloo_allreduce.py --ranks 2 --sizes 8,1024 --iters 20,20 \
        --warmup 5,5 --op allReduce --redop sum --dtype float32

Each rank is a process (torch.multiprocessing.spawn) joined over TCP on
loopback. Timing mirrors the TS side: barrier, time.perf_counter() around
`iters` calls, and the maximum over ranks of the time per call. Rank 0
prints one JSON line per size: {"bytes", "count", "time_us"}.
"""

import argparse
import json
import socket
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

REDOPS = {"sum": dist.ReduceOp.SUM, "prod": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN, "max": dist.ReduceOp.MAX}
DTYPES = {"float32": torch.float32, "float64": torch.float64}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def inputs(redop: str, rank: int, count: int, offset: int, dtype) -> torch.Tensor:
    """Rank `rank`'s inputs: the same small integers as the TS benchmark."""
    i = torch.arange(offset, offset + count, dtype=torch.int64)
    v = 1 + (i + rank) % 2 if redop == "prod" else (i * 13 + rank * 7) % 101
    return v.to(dtype)


def run_rank(rank: int, args, port: int) -> None:
    torch.set_num_threads(1)  # one core per rank, as the TS ranks have
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=args.ranks)
    n = args.ranks
    dtype = DTYPES[args.dtype]
    elem = torch.tensor([], dtype=dtype).element_size()
    sizes = [int(s) for s in args.sizes.split(",")]
    iters = [int(s) for s in args.iters.split(",")]
    warmup = [int(s) for s in args.warmup.split(",")]
    for size, it, wu in zip(sizes, iters, warmup):
        count = size // elem
        if args.op == "allGather":
            per = count // n
            mine = inputs(args.redop, rank, per, rank * per, dtype)
            outs = [torch.empty(per, dtype=dtype) for _ in range(n)]
            call = lambda: dist.all_gather(outs, mine)  # noqa: E731
            count = per * n
        elif args.op == "broadcast":
            t = inputs(args.redop, rank, count, 0, dtype)
            call = lambda: dist.broadcast(t, src=0)  # noqa: E731
        else:
            t = inputs(args.redop, rank, count, 0, dtype)
            call = lambda: dist.all_reduce(t, op=REDOPS[args.redop])  # noqa: E731
        for _ in range(wu):
            call()
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(it):
            call()
        per_call = torch.tensor([(time.perf_counter() - t0) / it * 1e6], dtype=torch.float64)
        dist.all_reduce(per_call, op=dist.ReduceOp.MAX)
        if rank == 0:
            print(json.dumps({"bytes": count * elem, "count": count, "time_us": per_call.item()}), flush=True)
    dist.destroy_process_group()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, required=True)
    p.add_argument("--sizes", required=True, help="comma-separated buffer sizes in bytes")
    p.add_argument("--iters", required=True, help="timed iterations, one per size")
    p.add_argument("--warmup", required=True, help="untimed iterations, one per size")
    p.add_argument("--op", choices=["allReduce", "allGather", "broadcast"], default="allReduce")
    p.add_argument("--redop", choices=sorted(REDOPS), default="sum")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="float32")
    args = p.parse_args()
    print(json.dumps({"torch": torch.__version__, "gloo": dist.is_gloo_available()}), flush=True)
    mp.spawn(run_rank, args=(args, free_port()), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    sys.exit(main())
