#!/usr/bin/env bash
# The whole GPU check (issue #42) in ONE call of the device tool, within its 10-minute limit:
#
#   bash tools/gpu_run.sh              # on the lent machine (refuses, exit 4, without CUDA)
#   bash tools/gpu_run.sh --rehearse   # here, on the CPU: the same script, in a copy of the tree
#                                      # as the device tool sends it, `cpu` standing in for cuda
#                                      # and cuda:0; then the outputs are checked (tools/gpu_rehearse.sh)
#   bash tools/gpu_run.sh --only specs,targets   # a rerun of some steps (a second, warm call)
#
# It needs .gpu-carry/ (git-ignored; filled by tools/gpu_carry.sh, named in the call's carry).
# Every step has its own time limit (its cap, or the time left of GPU_RUN_BUDGET), writes its
# results as it goes and packs them into $OUT before the next one starts, so a call stopped at
# its limit still brings back every step that finished. Steps, in the order of what matters:
#   setup   the carried wheels into a private folder (no package index there);
#   trees   TorchRL's trees, CUDA ones included, from the carried build when it was made for
#           this torch and python (else built here first, and the specs wait for it), checked and
#           timed on the device (tools/gpu_trees.py);
#   fresh   (in the background, beside the specs) the same trees built here from nothing, then
#           checked, timed and compared with the carried build;
#   specs   every manifest spec, reference and torchrl, on cpu, on cuda and on cuda:0: three
#           pytest runs side by side (results-{cpu,cuda,cuda0}.json), stopped by SIGINT at their
#           limit so that a partial run still writes its results;
#   targets the three GPU targets' benchmark groups with the launch and copy floors, in one
#           run (python -m benchtools -k ...: reports/gpu/benchmarks-partial.md);
#   asv     asv's cuda points of the targets' classes (python -m benchtools.gpu_asv, its
#           processes' path explicit through ASV_PYTHONPATH), in reports/asv/results/gpu-*;
#   bench   the whole cuda grid (reports/gpu/benchmarks.md), with the time left.
# $OUT gets at most 7 files (the device tool brings back 8): summary.txt, machine.txt,
# specs.tgz, trees.txt, bench.tgz, asv.tgz, logs.tgz. The last lines printed are the summary.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MODE=gpu
ONLY=all
while (( $# )); do
    case $1 in
        --rehearse) exec bash tools/gpu_rehearse.sh ;;
        --stand-in) MODE=stand-in ;;   # what --rehearse runs in its copy: cpu for cuda
        --only) ONLY=${2:?--only needs steps: setup,trees,fresh,specs,targets,asv,bench}; shift ;;
        *) echo "usage: bash tools/gpu_run.sh [--rehearse] [--only STEP,...]" >&2; exit 2 ;;
    esac
    shift
done
want() { [[ $ONLY == all || ,$ONLY, == *,$1,* ]]; }

PY=${GPU_RUN_PYTHON:-python3}
CARRY=$ROOT/.gpu-carry
OUTDIR=${OUT:-$ROOT/.gpu-out}
WORK=${GPU_RUN_WORK:-/tmp/gpu-run}
BUDGET=${GPU_RUN_BUDGET:-520}   # seconds for the steps; a call's timeout_s of 590 leaves 70 s more
SCALE=${GPU_RUN_SCALE:-1}       # each cap times this (a rehearsal on 2 busy cores: more)
CORES=$(getconf _NPROCESSORS_ONLN)   # counted before OMP_NUM_THREADS=1 below (nproc obeys it)
REPORTS=reports/gpu
LOGS=$WORK/logs
T0=$(date +%s)
SUMMARY=$OUTDIR/summary.txt
say() {  # one line of progress: printed, and kept in summary.txt (which comes back)
    local line; line=$(printf '[gpu-run %3ss] %s' "$(( $(date +%s) - T0 ))" "$*")
    echo "$line"; echo "$line" >>"$SUMMARY"
}
left() { echo $(( BUDGET - ($(date +%s) - T0) )); }
limit_for() {  # CAP: min(CAP x SCALE, time left)
    local cap=$(( $1 * SCALE )) rest; rest=$(left)
    (( rest < cap )) && cap=$rest
    echo "$cap"
}
bounded() {  # CAP NAME CMD...: run with a limit of min(CAP, time left); SIGINT at the limit
    local limit name=$2; limit=$(limit_for "$1"); shift 2
    if (( limit < 10 )); then say "$name: skipped, no time left"; echo "skipped: no time left" >"$LOGS/$name.log"; return 124; fi
    local t=$(date +%s)
    timeout -s INT --kill-after=30 "$limit" "$@" >"$LOGS/$name.log" 2>&1
    local rc=$?
    (( rc == 124 || rc == 137 )) && say "$name: stopped at its limit of ${limit}s"
    echo "$(( $(date +%s) - t ))" >"$LOGS/$name.seconds"
    return $rc
}
pack() {  # NAME PATH...: $OUT/NAME.tgz of the paths that exist (relative to the tree)
    local name=$1; shift
    local paths=(); for p in "$@"; do [[ -e $p ]] && paths+=("$p"); done
    (( ${#paths[@]} )) && tar -czf "$OUTDIR/$name.tgz" "${paths[@]}" 2>/dev/null
    tar -czf "$OUTDIR/logs.tgz" -C "$WORK" logs 2>/dev/null
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
if [[ $MODE == gpu ]]; then DEV_A=cuda; DEV_B=cuda:0; else DEV_A=cpu; DEV_B=cpu; fi
mkdir -p "$OUTDIR" "$LOGS" "$REPORTS"
[[ $ONLY == all ]] && : >"$SUMMARY"
say "mode $MODE: specs on cpu, $DEV_A and $DEV_B (as results-cpu, -cuda, -cuda0), budget ${BUDGET}s x scale $SCALE, $CORES cores, steps $ONLY"

# ---------------------------------------------------------------- 1. setup: the carried wheels
SITE=$WORK/site
if want setup || [[ ! -d $SITE ]]; then
    rm -rf "$SITE"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$SITE" \
        "$CARRY"/wheels/core/*.whl >"$LOGS/setup.log" 2>&1 \
        || { tail -3 "$LOGS/setup.log"; echo "gpu_run: the carried wheels do not install" >&2; exit 3; }
fi
export PYTHONPATH=$ROOT:$SITE PYTHONHASHSEED=0 OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1
"$PY" -c "import torchrl, tensordict" 2>"$LOGS/import.log" \
    || { tail -3 "$LOGS/import.log"; echo "gpu_run: torchrl does not import next to this torch" >&2; exit 3; }
say "setup: $("$PY" -c 'import sys, torch, torchrl, tensordict; print(f"python {sys.version.split()[0]}, torch {torch.__version__}, torchrl {torchrl.__version__}, tensordict {tensordict.__version__}")')"

# ---------------------------------------------------------------- 2. trees: the carried build
source tools/cuda_home.sh
if [[ -z ${TORCH_CUDA_ARCH_LIST:-} ]]; then
    if [[ $MODE == gpu ]]; then
        TORCH_CUDA_ARCH_LIST=$("$PY" -c "import torch; print('%d.%d' % torch.cuda.get_device_capability(0))")
    else
        TORCH_CUDA_ARCH_LIST=9.0   # H100/H200, as the device will
    fi
fi
export TORCH_CUDA_ARCH_LIST
# the carried cache's stamp names its .so by absolute path: point it at where the copy now lies
# (the builder trusts a stamp only when that file exists)
if compgen -G "$CARRY/ext/*/build.json" >/dev/null; then
    for stamp in "$CARRY"/ext/*/build.json; do
        dest=$WORK/carried/ext/$(basename "$(dirname "$stamp")")
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
overlay_of() { tail -1 "$LOGS/$1.log" | grep -E '^/.*/overlay/cuda$'; }
OVERLAY=""
TREES_FROM=none
if want trees || [[ $ONLY == all ]]; then
    # a carried build for this torch and python is found at once; else this builds (cap 300 s)
    MAX_JOBS=$CORES bounded 300 trees-build "$PY" -m conformance.upstream.extension cuda-overlay "$WORK/carried"
    OVERLAY=$(overlay_of trees-build)
    if grep -q "from the cache" "$LOGS/trees-build.log"; then TREES_FROM=carried; elif [[ -n $OVERLAY ]]; then TREES_FROM="built here (no carried build for this torch)"; fi
fi
[[ -z $OVERLAY && -f $WORK/carried/overlay/cuda/sitecustomize.py ]] && OVERLAY=$WORK/carried/overlay/cuda
if [[ -n $OVERLAY ]]; then
    export PYTHONPATH=$OVERLAY:$PYTHONPATH
    CAPACITY=1000000; [[ $MODE != gpu ]] && CAPACITY=65536
    bounded 60 trees-carried "$PY" tools/gpu_trees.py measure --device "$DEV_A" --capacity $CAPACITY \
        --label "$TREES_FROM" --out "$LOGS/trees-carried.json"
    rc=$?
    say "trees: $TREES_FROM, in $(cat "$LOGS/trees-build.seconds")s; checked on $DEV_A at $CAPACITY leaves: exit $rc ($(tail -1 "$LOGS/trees-carried.log" | cut -c1-160))"
else
    say "trees: NO CUDA trees: $(tail -2 "$LOGS/trees-build.log" 2>/dev/null | head -1)"
fi

# ---------------------------------------------------------------- the machine, machine.txt
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "mode: $MODE"
    if command -v nvidia-smi >/dev/null && [[ $MODE == gpu ]]; then
        nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap,clocks.sm,clocks.max.sm --format=csv,noheader | sed 's/^/gpu: /'
    else
        echo "gpu: none (a rehearsal on the CPU: nothing here ran on a GPU)"
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
    echo "torchrl._torchrl: $TREES_FROM"
} >"$REPORTS/machine.txt" 2>&1
cp "$REPORTS/machine.txt" "$OUTDIR/machine.txt"

# ---------------------------------------------------------------- 3. fresh build, in the background
FRESH_PID=""
if want fresh && [[ $TREES_FROM == carried ]]; then
    rm -rf "$WORK/fresh"
    # three jobs: torchrl/csrc has three sources to compile (the .cu, pybind.cpp, utils.cpp);
    # the specs take the other cores
    ( MAX_JOBS=3 bounded 300 fresh-build "$PY" -m conformance.upstream.extension cuda-overlay "$WORK/fresh" ) &
    FRESH_PID=$!
elif want fresh; then
    echo "no carried build to compare with: the trees step built them here ($(cat "$LOGS/trees-build.seconds" 2>/dev/null)s)" >"$LOGS/fresh-build.log"
fi

# ---------------------------------------------------------------- 4. specs: cpu, cuda, cuda:0
if want specs; then
    W=${GPU_RUN_WORKERS:-$(( CORES >= 12 ? (CORES - 3) / 3 : 1 ))}   # 3 runs x W workers + the build's 3
    SPECS_K=()
    [[ -n ${GPU_RUN_SPECS_K:-} ]] && SPECS_K=(-k "$GPU_RUN_SPECS_K")
    spec_run() {  # DEVICE NAME
        rm -f "$REPORTS/results-$2.json"
        bounded 240 "specs-$2" "$PY" -m pytest conformance -p no:cacheprovider --device "$1" \
            --numprocesses "$W" --results "$REPORTS/results-$2.json" --no-report -q -rN "${SPECS_K[@]}"
    }
    declare -A PIDS RCS
    spec_run cpu cpu & PIDS[cpu]=$!
    spec_run "$DEV_A" cuda & PIDS[cuda]=$!
    spec_run "$DEV_B" cuda0 & PIDS[cuda0]=$!
    for n in cpu cuda cuda0; do wait "${PIDS[$n]}"; RCS[$n]=$?; done
    for n in cpu cuda cuda0; do
        say "specs $n: exit ${RCS[$n]} in $(cat "$LOGS/specs-$n.seconds")s, $W workers: $(tail -1 "$LOGS/specs-$n.log")"
    done
    pack specs "$REPORTS"/results-cpu.json "$REPORTS"/results-cuda.json "$REPORTS"/results-cuda0.json "$REPORTS/machine.txt"
fi

# ---------------------------------------------------------------- fresh build: compare
if [[ -n $FRESH_PID ]]; then
    wait "$FRESH_PID"
    FRESH_OVERLAY=$(overlay_of fresh-build)
    if [[ -n $FRESH_OVERLAY ]]; then
        PYTHONPATH=$FRESH_OVERLAY:${PYTHONPATH#"$OVERLAY:"} bounded 60 trees-fresh "$PY" tools/gpu_trees.py measure \
            --device "$DEV_A" --capacity $CAPACITY --label "fresh build ($(cat "$LOGS/fresh-build.seconds")s, MAX_JOBS=3)" \
            --out "$LOGS/trees-fresh.json"
        "$PY" tools/gpu_trees.py compare "$LOGS/trees-carried.json" "$LOGS/trees-fresh.json" >"$OUTDIR/trees.txt" 2>&1
        rc=$?
        say "fresh build: $(cat "$LOGS/fresh-build.seconds")s; vs carried: exit $rc ($(grep 'sampled indices' "$OUTDIR/trees.txt" | sed 's/^ *//'))"
    else
        say "fresh build: FAILED or stopped after $(cat "$LOGS/fresh-build.seconds" 2>/dev/null)s: $(grep -v '^ *$' "$LOGS/fresh-build.log" | tail -1)"
        { echo "fresh build failed:"; tail -20 "$LOGS/fresh-build.log"; } >"$OUTDIR/trees.txt"
    fi
elif [[ -f $LOGS/trees-carried.json ]]; then
    { echo "no fresh build compared: $(cat "$LOGS/fresh-build.log" 2>/dev/null)"; cat "$LOGS/trees-carried.json"; } >"$OUTDIR/trees.txt"
fi

# ---------------------------------------------------------------- 5. targets, with their floors
# the three GPU targets: TanhNormal batch-1 mode vs deterministic_sample, mode at 1e6 vs one
# tanh, PER sample/update(256) up to 1e6 vs TorchRL's trees; the floors in the same run
TARGETS_K="mode_batch1 or (mode and 1000000) or sample_256 or update_256 or floor"
BENCH_DEV=cuda; [[ $MODE != gpu ]] && BENCH_DEV=cpu
BENCH_FILES=(reports/gpu/benchmarks-partial.md reports/gpu/benchmarks-partial reports/gpu/benchmarks.md reports/gpu/benchmarks)
[[ $MODE != gpu ]] && BENCH_FILES=(reports/benchmarks-partial.md reports/benchmarks-partial reports/benchmarks.md reports/benchmarks)
if want targets; then
    PASSES=2 MAXT=0.2; [[ $MODE != gpu ]] && PASSES=1 MAXT=0.02
    bounded 150 targets "$PY" -m benchtools --device "$BENCH_DEV" -k "$TARGETS_K" --passes $PASSES --max-time $MAXT
    rc=$?
    say "targets: exit $rc in $(cat "$LOGS/targets.seconds")s"
    grep -hE "^- .*(batch 1|at 1e6|sample_256|update_256)" "${BENCH_FILES[0]}" 2>/dev/null | grep -v "no CUDA device" | sed 's/^/    /' | tee -a "$SUMMARY"
    pack bench "${BENCH_FILES[@]}"
fi

# ---------------------------------------------------------------- 6. asv's cuda points
if want asv; then
    ASVSITE=$WORK/asvsite
    rm -rf "$ASVSITE"
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$ASVSITE" \
        "$CARRY"/wheels/asv/*.whl >"$LOGS/asv-install.log" 2>&1
    COMMIT=$(cat "$CARRY/commit" 2>/dev/null || echo 0000000000000000000000000000000000000000)
    REHEARSE=(); [[ $MODE != gpu ]] && REHEARSE=(--rehearse)
    # asv starts a process per point and saves a run only when it ends: one asv run per group,
    # the targets' ratios first, then their raw times, then the rest of their classes
    ASV_GROUPS=('(TanhNormalModeBatch1OverDeterministic|Sample256VersusTorchrl|Update256VersusTorchrl)\.'
                '(TanhNormalModeBatch1|TanhNormalDeterministicBatch1|Sample256|Update256)\.'
                '(TanhNormalModeOverTanh|TanhNormalMode|TanhBaseline)\.')
    [[ -n ${GPU_RUN_ASV_BENCH:-} ]] && ASV_GROUPS=("$GPU_RUN_ASV_BENCH")
    ASV_ARGS=(); for g in "${ASV_GROUPS[@]}"; do ASV_ARGS+=(--bench "$g"); done
    ASV_LIMIT=$(limit_for 170)
    PYTHONPATH=$PYTHONPATH:$ASVSITE bounded 170 asv "$PY" -m benchtools.gpu_asv --commit "$COMMIT" \
        --quick "${ASV_ARGS[@]}" --seconds $(( ASV_LIMIT * 2 / 3 )) "${REHEARSE[@]}"
    ASV_RC=$?
    say "asv: exit $ASV_RC in $(cat "$LOGS/asv.seconds")s: $(grep -h 'points with a finite result' "$LOGS/asv.log" | tail -1) $(grep -h 'no time left for' "$LOGS/asv.log" | tail -1)"
    pack asv reports/asv/results/gpu-* reports/asv/results/rehearse-cpu
fi

# ---------------------------------------------------------------- 7. the whole cuda grid
if want bench; then
    if [[ $MODE == gpu ]]; then
        bounded 200 bench "$PY" -m benchtools --device cuda --passes 1 --max-time 0.1
    else  # the whole CPU grid, as short as it gets (in the rehearsal's copy of the tree)
        bounded 150 bench "$PY" -m benchtools --device cpu --passes 1 --max-time 0.01
    fi
    rc=$?
    say "bench: exit $rc in $(cat "$LOGS/bench.seconds")s: $(tail -1 "$LOGS/bench.log")"
    pack bench "${BENCH_FILES[@]}"
fi

# ---------------------------------------------------------------- summary (the reply's tail)
pack logs   # logs.tgz again, with the last step's log
echo "=================== summary ($MODE, $(( $(date +%s) - T0 ))s) ==================="
cat "$OUTDIR/machine.txt"
"$PY" tools/gpu_compare.py counts "$REPORTS" 2>&1 | tee -a "$SUMMARY"
[[ -f $OUTDIR/trees.txt ]] && head -12 "$OUTDIR/trees.txt"
ls -l "$OUTDIR" | tail -n +2
exit 0
