#!/usr/bin/env bash
# The whole GPU check (issue #34) in one call of the device tool, within about five minutes:
#
#   bash tools/gpu_run.sh               # on the lent machine (refuses, exit 4, without CUDA)
#   bash tools/gpu_run.sh --rehearse    # here, on the CPU: every step, `cpu` standing in for
#                                       # `cuda` where a step needs a GPU to run at all
#
# It needs .gpu-carry/ (git-ignored; filled by tools/gpu_carry.sh and named in the call's
# `carry`): the wheels of the tested TorchRL and, optionally, its CUDA trees prebuilt for the
# machine's torch. Steps, each bounded so that the packing at the end always happens:
#   1. install the carried wheels into a private folder (no package index there);
#   2. TorchRL's trees, CUDA ones included, by the suite's extension builder (nvcc, every core),
#      taken from the carried cache when it was built for this very torch and python;
#   3. the specs on `cpu` and on `cuda`, side by side in two processes (reference and torchrl,
#      every area and family), then their reports and the CPU-vs-CUDA comparison;
#   4. the side-by-side benchmarks on `cuda` with their floors (python -m benchtools);
#   5. asv's cuda points (python -m benchtools.gpu_asv) with what time is left;
#   6. pack reports/gpu/ and the asv results into $OUT (the device tool brings back 8 files).
# The last lines printed are the summary: the tool's reply keeps only the end of the output.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MODE=gpu
case "${1:-}" in
    "") ;;
    --rehearse) MODE=rehearse ;;
    *) echo "usage: bash tools/gpu_run.sh [--rehearse]" >&2; exit 2 ;;
esac
PY=${GPU_RUN_PYTHON:-python3}
CARRY=$ROOT/.gpu-carry
OUTDIR=${OUT:-$ROOT/.gpu-out}
WORK=${GPU_RUN_WORK:-/tmp/gpu-run}
BUDGET=${GPU_RUN_BUDGET:-300}   # seconds for steps 1-5; packing and the summary come after
# every core, counted before OMP_NUM_THREADS=1 is exported below: nproc obeys that variable
CORES=$(getconf _NPROCESSORS_ONLN)
# each step's own limit is its cap times SCALE: 1 on the GPU machine (16 cores), more for a
# rehearsal on a small CPU machine, which is slower at everything
SCALE=${GPU_RUN_SCALE:-1}
REPORTS=reports/gpu
mkdir -p "$OUTDIR" "$WORK/logs" "$REPORTS"
T0=$(date +%s)
say() { printf '[gpu-run %3ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
bounded() {  # CAP LOGNAME CMD...: run with a limit of min(CAP, time left), output to a log
    local cap=$1 name=$2; shift 2
    cap=$(( cap * SCALE ))
    local limit; limit=$(left); (( limit > cap )) && limit=$cap
    if (( limit < 10 )); then say "$name: skipped, no time left"; echo "skipped: no time left" >"$WORK/logs/$name.log"; return 124; fi
    timeout --kill-after=5 "$limit" "$@" >"$WORK/logs/$name.log" 2>&1
    local rc=$?
    (( rc == 124 || rc == 137 )) && say "$name: stopped at its limit of ${limit}s"
    return $rc
}

# ---------------------------------------------------------------- 0. what this machine is
if ! "$PY" -c "import torch" 2>/dev/null; then
    echo "gpu_run: $PY has no torch; set GPU_RUN_PYTHON to a python that has it" >&2; exit 2
fi
if [[ $MODE == gpu ]] && ! "$PY" -c "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "gpu_run: torch sees no CUDA device here; on a CPU machine run 'bash tools/gpu_run.sh --rehearse'" >&2
    exit 4
fi
if [[ ! -d $CARRY/wheels/core ]]; then
    echo "gpu_run: $CARRY/wheels/core is missing: run 'bash tools/gpu_carry.sh' and name .gpu-carry in the call's carry" >&2
    exit 2
fi
DEVICE=cuda
[[ $MODE == rehearse ]] && DEVICE=cpu   # the stand-in: the `cuda` run's specs run on the CPU
say "mode $MODE: specs on cpu and on $DEVICE, budget ${BUDGET}s, $CORES cores"

# ---------------------------------------------------------------- 1. the carried wheels
SITE=$WORK/site
rm -rf "$SITE"
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" \
    "$CARRY"/wheels/core/*.whl || { echo "gpu_run: the carried wheels do not install" >&2; exit 3; }
export PYTHONPATH=$ROOT:$SITE PYTHONHASHSEED=0 OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
"$PY" -c "import torchrl, tensordict" 2>"$WORK/logs/import.log" \
    || { tail -3 "$WORK/logs/import.log"; echo "gpu_run: torchrl does not import next to this torch" >&2; exit 3; }
say "installed: $("$PY" -c 'import torch, torchrl, tensordict; print(f"torch {torch.__version__}, torchrl {torchrl.__version__}, tensordict {tensordict.__version__}")')"

# ---------------------------------------------------------------- 2. TorchRL's trees
source tools/cuda_home.sh
if [[ -z ${TORCH_CUDA_ARCH_LIST:-} ]]; then
    if [[ $MODE == gpu ]]; then
        TORCH_CUDA_ARCH_LIST=$("$PY" -c "import torch; print('%d.%d' % torch.cuda.get_device_capability(0))")
    else
        TORCH_CUDA_ARCH_LIST=9.0   # H100/H200, as the device will
    fi
fi
export TORCH_CUDA_ARCH_LIST MAX_JOBS=${MAX_JOBS:-$CORES}
# a cache carried from where it was built: its stamp names the .so by absolute path, so point it
# at where the copy now lies (the builder trusts a stamp only when that file exists)
if compgen -G "$CARRY/ext/*/build.json" >/dev/null; then
    for stamp in "$CARRY"/ext/*/build.json; do
        dest=$WORK/ext/$(basename "$(dirname "$stamp")")
        rm -rf "$dest"; mkdir -p "$dest"; cp -r "$(dirname "$stamp")"/. "$dest"/
        "$PY" - "$dest/build.json" <<'EOF'
import json, pathlib, sys
stamp = pathlib.Path(sys.argv[1])
data = json.loads(stamp.read_text())
data["so"] = str(stamp.parent / pathlib.Path(data["so"]).name)
data["carried"] = True
stamp.write_text(json.dumps(data))
EOF
    done
fi
TREES="none"
if OVERLAY=$(bounded 240 build "$PY" -m conformance.upstream.extension cuda-overlay "$WORK"; cat "$WORK/logs/build.log" | tail -1) \
        && [[ -f $OVERLAY/sitecustomize.py ]]; then
    export PYTHONPATH=$OVERLAY:$PYTHONPATH
    TREES=$(grep -h "torchrl._torchrl with CUDA trees" "$WORK/logs/build.log" | tail -1)
    # what loads, and (on a GPU) one CUDA tree used for real: a sum over a few leaves
    "$PY" - "$MODE" >"$WORK/logs/trees.log" 2>&1 <<'EOF'
import sys
import torch
import torchrl._torchrl as ext
print("CUDA trees in the module:", sorted(n for n in dir(ext) if n.startswith("Cuda")))
if sys.argv[1] == "gpu":
    tree = ext.CudaSumSegmentTreeFp32(1024)
    idx = torch.arange(8, device="cuda")
    tree[idx] = torch.arange(1, 9, dtype=torch.float32, device="cuda")
    print("CudaSumSegmentTreeFp32(1024) on cuda: sum of 1..8 =", float(tree.query(0, 1024)), "(expected 36)")
EOF
    say "trees: ${TREES:-?}; $(tail -1 "$WORK/logs/trees.log")"
else
    OVERLAY=""
    say "trees: the CUDA build failed: $(tail -2 "$WORK/logs/build.log" | head -1)"
fi

# ---------------------------------------------------------------- the machine, for machine.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "mode: $MODE"
    if command -v nvidia-smi >/dev/null; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv,noheader | sed 's/^/gpu: /'
    else
        echo "gpu: none (rehearsal on the CPU)"
    fi
    "$PY" - <<'EOF'
import platform, torch, torchrl, tensordict
print(f"python: {platform.python_version()} ({platform.machine()})")
print(f"torch: {torch.__version__} (cuda {torch.version.cuda})")
print(f"torchrl: {torchrl.__version__}  tensordict: {tensordict.__version__}")
if torch.cuda.is_available():
    p = torch.cuda.get_device_properties(0)
    print(f"device: {p.name}, {p.multi_processor_count} SMs, {p.total_memory / 2**30:.0f} GiB")
EOF
    echo "cpu cores: $CORES"
    echo "nvcc: $("$CUDA_HOME/bin/nvcc" --version 2>/dev/null | tail -2 | head -1)"
    echo "TORCH_CUDA_ARCH_LIST: $TORCH_CUDA_ARCH_LIST"
    echo "torchrl._torchrl: $TREES"
    cat "$WORK/logs/trees.log" 2>/dev/null | sed 's/^/  /'
} >"$REPORTS/machine.txt" 2>&1

# ---------------------------------------------------------------- 3. the specs, cpu and cuda
CPU_WORKERS=${GPU_RUN_CPU_WORKERS:-$(( CORES > 4 ? CORES / 2 : 1 ))}
CUDA_WORKERS=${GPU_RUN_CUDA_WORKERS:-$(( CORES > 4 ? CORES / 4 : 1 ))}
spec_run() {  # DEVICE NAME WORKERS
    bounded 200 "specs-$2" "$PY" -m pytest conformance -p no:cacheprovider --device "$1" \
        --numprocesses "$3" --results "$REPORTS/results-$2.json" --no-report -q -rN
}
spec_run cpu cpu "$CPU_WORKERS" & CPU_PID=$!
spec_run "$DEVICE" cuda "$CUDA_WORKERS" & CUDA_PID=$!
wait $CPU_PID; CPU_RC=$?
wait $CUDA_PID; CUDA_RC=$?
say "specs: cpu exit $CPU_RC ($(tail -1 "$WORK/logs/specs-cpu.log")); $DEVICE exit $CUDA_RC ($(tail -1 "$WORK/logs/specs-cuda.log"))"
for name in cpu cuda; do
    [[ -f $REPORTS/results-$name.json ]] && "$PY" -m conformance.reporting "$REPORTS/results-$name.json" \
        -o "$REPORTS" --stem "results-$name" >>"$WORK/logs/reports.log" 2>&1
done
if [[ -f $REPORTS/results-cpu.json && -f $REPORTS/results-cuda.json ]]; then
    "$PY" -m conformance.reporting "$REPORTS/results-cpu.json" "$REPORTS/results-cuda.json" \
        -o "$REPORTS" --stem conformance-cpu-vs-cuda >>"$WORK/logs/reports.log" 2>&1
fi
rm -f "$REPORTS"/results-cpu.{md,html,csv}   # the README keeps the cpu run as results only

# ---------------------------------------------------------------- 4. the benchmarks on cuda
if [[ $MODE == gpu ]]; then
    # one pass of 0.1 s a point: the whole cuda grid (84 points, two implementations) in about
    # two minutes; the first call's 2 passes of 0.25 s covered a quarter of it in 65 s
    bounded 170 bench "$PY" -m benchtools --device cuda --passes 1 --max-time 0.1; BENCH_RC=$?
else  # no cuda run without CUDA (exit 4): the same driver on a small CPU slice instead
    bounded 150 bench "$PY" -m benchtools --device cpu -k "sample_256" --passes 1; BENCH_RC=$?
fi
say "benchmarks: exit $BENCH_RC ($(tail -1 "$WORK/logs/bench.log"))"

# ---------------------------------------------------------------- 5. asv, with the time left
ASVSITE=$WORK/asvsite
rm -rf "$ASVSITE"
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$ASVSITE" \
    "$CARRY"/wheels/asv/*.whl >"$WORK/logs/asv-install.log" 2>&1
COMMIT=$(cat "$CARRY/commit" 2>/dev/null || echo 0000000000000000000000000000000000000000)
# asv starts its benchmark processes without our PYTHONPATH (seen on the H200: "No module named
# 'torchrl'"), so the folders go into a .pth file of the interpreter's own site-packages, read
# by every process it starts; the overlay first, whose sitecustomize loads the CUDA trees (a
# .pth is read before sitecustomize is imported). Removed again after the step.
PTH=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")/zz-gpu-run.pth
printf '%s\n' ${OVERLAY:+"$OVERLAY"} "$ROOT" "$SITE" "$ASVSITE" >"$PTH" 2>/dev/null || PTH=""
if [[ $MODE == gpu ]]; then
    bounded 120 asv "$PY" -m benchtools.gpu_asv --commit "$COMMIT" \
        --quick --bench 'Sample|Update|TanhNormalMode'; ASV_RC=$?
else  # what asv's processes would see: no PYTHONPATH, the .pth alone
    bounded 60 asv env -u PYTHONPATH "$PY" -c "import asv, virtualenv, torchrl, torchrl._torchrl as t, conformance; print('asv', asv.__version__, 'and torchrl import without PYTHONPATH; CUDA trees:', hasattr(t, 'CudaSumSegmentTreeFp32'))"; ASV_RC=$?
fi
[[ -n $PTH ]] && rm -f "$PTH"
say "asv: exit $ASV_RC ($(tail -1 "$WORK/logs/asv.log"))"

# ------------------------------------------- 5b. the same build on this machine, if time is left
# Step 2 took the trees from the carried cache when it could (this machine's minutes are few);
# with the time left, the extension builder compiles them here too, from nothing, on every core.
if [[ $MODE == gpu ]]; then
    rm -rf "$WORK/fresh"
    BUILD_T0=$(date +%s)
    bounded 150 fresh-build "$PY" -m conformance.upstream.extension cuda-overlay "$WORK/fresh"; FRESH_RC=$?
    FRESH="exit $FRESH_RC after $(( $(date +%s) - BUILD_T0 ))s: $(grep -h "torchrl._torchrl with CUDA trees\|cuda-overlay:" "$WORK/logs/fresh-build.log" | tail -1)"
    echo "fresh build on this machine (MAX_JOBS=$MAX_JOBS): $FRESH" >>"$REPORTS/machine.txt"
    say "fresh build: $FRESH"
fi

# ---------------------------------------------------------------- 6. pack what comes back
cp "$REPORTS/machine.txt" "$OUTDIR/machine.txt"
tar -czf "$OUTDIR/gpu-reports.tgz" "$REPORTS" $(ls -d reports/asv/results/gpu-* 2>/dev/null)
tar -czf "$OUTDIR/gpu-logs.tgz" -C "$WORK" logs
say "packed: $(ls "$OUTDIR" | tr '\n' ' ')"

# ---------------------------------------------------------------- summary (the reply's tail)
echo "=================== summary ($MODE) ==================="
cat "$REPORTS/machine.txt"
for name in cpu cuda; do
    echo "--- specs on $name: $(tail -1 "$WORK/logs/specs-$name.log")"
done
"$PY" - "$REPORTS" <<'EOF'
import collections, json, pathlib, sys
folder = pathlib.Path(sys.argv[1])
runs = {}
for name in ("cpu", "cuda"):
    path = folder / f"results-{name}.json"
    if path.is_file():
        data = json.loads(path.read_text())
        rows = data["rows"] if isinstance(data, dict) else data
        runs[name] = {(r.get("nodeid") or r.get("test"), r.get("implementation")): r for r in rows}
        count = collections.Counter((r.get("implementation"), r.get("outcome"), bool(r.get("expected")))
                                    for r in rows)
        print(f"{name}: " + "; ".join(f"{i} {o}{'' if e else ' (unexpected)'}: {n}"
                                       for (i, o, e), n in sorted(count.items(), key=str)))
if len(runs) == 2:
    a, b = runs["cpu"], runs["cuda"]
    differ = [(k, a[k].get("outcome"), b[k].get("outcome")) for k in a.keys() & b.keys()
              if a[k].get("outcome") != b[k].get("outcome")]
    print(f"cpu vs cuda: {len(a.keys() & b.keys())} rows in both, {len(differ)} differ")
    for (node, impl), x, y in sorted(differ, key=str)[:15]:
        print(f"  {impl} {node}: cpu {x} / cuda {y}")
EOF
grep -E "^\| .*(Sample|sample|floor|×)" "$REPORTS/benchmarks.md" 2>/dev/null | head -12
exit 0
