"""TorchRL's C++ trees (``torchrl._torchrl``) of one build, checked and timed, for
``tools/gpu_run.sh``: the carried build and the fresh one made on the device are each measured
by this script in their own process (each build's overlay first on PYTHONPATH), then compared.

    python tools/gpu_trees.py measure --device cuda --label carried --out carried.json
    python tools/gpu_trees.py compare carried.json fresh.json

``measure`` fills a sum tree and a min tree of ``--capacity`` leaves (float32, the CUDA trees on
cuda, the CPU trees on cpu) with seeded priorities and checks, against float64 arithmetic done
here with torch on the CPU (never by the trees themselves): the total, ten prefix sums, the
minimum, the index of 4096 seeded masses (``scan_lower_bound`` against a float64 cumulative sum;
a mass within float32 rounding of a boundary may land on either side, so agreement is a
fraction, and the sampled indices are also hashed to compare builds), and a 256-leaf update. It
then times, on the device, ``scan_lower_bound`` of 256 masses and a 256-leaf write (median of
``--repeat`` calls, each ended by a synchronisation), beside the launch floor (one in-place add
on one element and its synchronisation) measured in the same process.

``compare`` prints one line per check and exits 1 when the two builds disagree on a check or the
hash of the sampled indices.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time


def _timer(device):
    import torch

    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    return lambda: None


def _median_seconds(call, sync, repeat: int) -> float:
    for _ in range(3):  # warm-up: module load, allocator, first launches
        call()
    sync()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(device_name: str, capacity: int, repeat: int, label: str) -> dict:
    import torch
    import torchrl._torchrl as ext

    device = torch.device(device_name)
    cuda = device.type == "cuda"
    sum_cls = getattr(ext, "CudaSumSegmentTreeFp32" if cuda else "SumSegmentTreeFp32", None)
    min_cls = getattr(ext, "CudaMinSegmentTreeFp32" if cuda else "MinSegmentTreeFp32", None)
    out = {"label": label, "device": str(device), "capacity": capacity, "module": ext.__file__,
           "torch": torch.__version__,
           "classes": sorted(n for n in dir(ext) if "SegmentTree" in n)}
    if sum_cls is None or min_cls is None:
        out["error"] = f"{ext.__file__} has no {'CUDA ' if cuda else ''}trees"
        return out

    def tree(cls):
        return cls(capacity, device) if cuda else cls(capacity)

    gen = torch.Generator().manual_seed(20261207)
    prio = torch.rand(capacity, generator=gen, dtype=torch.float64) + 0.01  # no zero leaf
    leaves = torch.arange(capacity)
    on = (lambda t: t.to(device)) if cuda else (lambda t: t)
    s, m = tree(sum_cls), tree(min_cls)
    s[on(leaves)] = on(prio.float())
    m[on(leaves)] = on(prio.float())
    exact = prio.float().double()  # what the trees hold, summed in float64 here
    checks = {}
    total = float(s.query(0, capacity))
    checks["total_rel_err"] = abs(total - float(exact.sum())) / float(exact.sum())
    cuts = [max(1, capacity * k // 10) for k in range(1, 11)]
    prefix = [float(s.query(0, c)) for c in cuts]
    checks["prefix_max_rel_err"] = max(abs(p - float(exact[:c].sum())) / float(exact[:c].sum())
                                       for p, c in zip(prefix, cuts, strict=True))
    checks["min_equal"] = float(m.query(0, capacity)) == float(exact.min())
    mass = torch.rand(4096, generator=gen, dtype=torch.float64) * float(exact.sum())
    found = s.scan_lower_bound(on(mass.float())).cpu().long()
    want = torch.searchsorted(torch.cumsum(exact, 0), mass, right=True).clamp(max=capacity - 1)
    checks["scan_agreement"] = float((found == want).double().mean())
    checks["scan_off_by_more_than_one"] = int(((found - want).abs() > 1).sum())
    out["scan_sha256"] = hashlib.sha256(found.numpy().tobytes()).hexdigest()[:16]
    idx = torch.randperm(capacity, generator=gen)[:256]
    new = torch.rand(256, generator=gen) + 0.5
    s[on(idx)] = on(new)
    exact[idx] = new.double()
    checks["total_after_update_rel_err"] = (abs(float(s.query(0, capacity)) - float(exact.sum()))
                                            / float(exact.sum()))
    out["checks"] = checks
    out["ok"] = (checks["total_rel_err"] < 1e-4 and checks["prefix_max_rel_err"] < 1e-4
                 and checks["min_equal"] and checks["scan_agreement"] > 0.99
                 and checks["scan_off_by_more_than_one"] == 0
                 and checks["total_after_update_rel_err"] < 1e-4)

    sync = _timer(device)
    mass256 = on((torch.rand(256, generator=gen) * float(exact.sum() * 0.999)).float())
    idx256, val256 = on(idx), on(new)
    one = torch.zeros(1, device=device)
    out["seconds"] = {
        "launch_floor": _median_seconds(lambda: one.add_(1.0), sync, repeat),
        "scan_lower_bound_256": _median_seconds(lambda: s.scan_lower_bound(mass256), sync, repeat),
        "write_256": _median_seconds(lambda: s.__setitem__(idx256, val256), sync, repeat),
    }
    return out


def compare(a: dict, b: dict) -> int:
    bad = 0
    print(f"trees: {a['label']} ({a.get('module')}) vs {b['label']} ({b.get('module')})")
    for side in (a, b):
        if "error" in side:
            print(f"  {side['label']}: {side['error']}")
            bad = 1
    if bad:
        return 1
    for key in a["checks"]:
        x, y = a["checks"][key], b["checks"].get(key)
        print(f"  {key}: {x!r} / {y!r}")
    same = a["scan_sha256"] == b["scan_sha256"]
    print(f"  sampled indices: {'the same' if same else 'DIFFER'} ({a['scan_sha256']} / "
          f"{b['scan_sha256']})")
    print(f"  checks pass: {a['ok']} / {b['ok']}")
    for key, x in a["seconds"].items():
        y = b["seconds"][key]
        print(f"  {key}: {x * 1e6:.1f} us / {y * 1e6:.1f} us (x{y / x:.2f})")
    return 0 if same and a["ok"] and b["ok"] else 1


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python tools/gpu_trees.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--device", default="cuda")
    m.add_argument("--capacity", type=int, default=1_000_000)
    m.add_argument("--repeat", type=int, default=200)
    m.add_argument("--label", required=True)
    m.add_argument("--out", required=True)
    c = sub.add_parser("compare")
    c.add_argument("a")
    c.add_argument("b")
    args = p.parse_args(argv)
    if args.command == "measure":
        result = measure(args.device, args.capacity, args.repeat, args.label)
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=1)
        print(json.dumps({k: result.get(k) for k in ("label", "ok", "checks", "seconds")}))
        return 0 if result.get("ok") else 1
    with open(args.a) as fa, open(args.b) as fb:
        return compare(json.load(fa), json.load(fb))


if __name__ == "__main__":
    sys.exit(main())
