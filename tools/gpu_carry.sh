#!/usr/bin/env bash
# Fill .gpu-carry/ (git-ignored) with what tools/gpu_run.sh needs on the lent GPU machine, which
# has no package index: its python3 is CPython 3.12 with torch 2.11.0+cu130, pytest, xdist,
# scipy, pandas, hypothesis, pytest-benchmark and matplotlib (the device tool's KINDS.md).
#
#   bash tools/gpu_carry.sh [PYTHON_WITH_THE_DEVICE_TORCH]
#
# 1. wheels/core: the tested TorchRL and what it needs that the machine lacks. Which TorchRL: the
#    suite's pinned stack (pyproject's `stack` extra: torchrl 0.14.1, tensordict 0.14.3). Its
#    Python code imports next to torch 2.11; its shipped C++ trees are built for torch 2.14 and
#    do not load there, so they are rebuilt from the wheel's own torchrl/csrc, CUDA trees
#    included (step 2, and again from nothing on the device: gpu_run.sh compares the two).
# 2. ext/: given a python that holds the device's torch (3.12 with torch 2.11.0+cu130 from PyPI,
#    in a throw-away venv), the extension builder (python -m conformance.upstream.extension
#    cuda-overlay) compiles that csrc with nvcc for sm_90 (H100/H200) here, so that the device
#    call loads it at once instead of waiting for its own build. Without it the device builds
#    first and the specs wait for it (about 2 minutes more of the device's time).
# 3. wheels/asv: asv and what it needs, installed apart (gpu_run.sh's asv step only), so that its
#    newer `packaging` never shadows the machine's for the specs.
# 4. commit: the commit the tree is sent from (asv records its points under it).
#
# GPU_CARRY_DIR (default .gpu-carry) and GPU_CARRY_PYVER (default 3.12, the device's python):
# the rehearsal (gpu_run.sh --rehearse) fills its own folder for the python it rehearses with.
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY=${GPU_CARRY_DIR:-.gpu-carry}
PYVER=${GPU_CARRY_PYVER:-3.12}
EXTPY=${1:-}
download() {  # folder, requirement...
    local dest=$1; shift
    mkdir -p "$dest"
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$PYVER" \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$dest" "$@"
}
pin() { python3 - "$1" <<'EOF'
import sys, tomllib
stack = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["stack"]
print(next(r for r in stack if r.startswith(sys.argv[1] + "==")))
EOF
}
download "$CARRY/wheels/core" "$(pin torchrl)" "$(pin tensordict)" pyvers==0.2.3 hoptorch==0.1.4 \
    orjson==3.13.0 importlib_metadata==10.2.0 lazy_importer==0.1.0
download "$CARRY/wheels/asv" asv==0.6.6 asv_runner==0.3.2 json5==0.17.3 virtualenv==21.15.11 \
    distlib==0.4.4 platformdirs==4.14.8 python_discovery==1.9.6 Pympler==1.1 packaging==26.4
git rev-parse HEAD >"$CARRY/commit"
if [[ -n "$EXTPY" ]]; then
    site=$(mktemp -d)
    "$EXTPY" -m pip install -q --no-index --no-deps --target "$site" "$CARRY"/wheels/core/*.whl
    source tools/cuda_home.sh
    started=$(date +%s)
    TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} PYTHONPATH="$PWD:$site" \
        "$EXTPY" -m conformance.upstream.extension cuda-overlay "$(cd "$CARRY" && pwd)" >/dev/null
    echo "gpu_carry: CUDA trees built in $(( $(date +%s) - started ))s for $("$EXTPY" -c 'import torch, sys; print(f"torch {torch.__version__}, python {sys.version.split()[0]}")')"
    rm -rf "$site" "$CARRY/overlay"
fi
du -sh "$CARRY" "$CARRY"/* 2>/dev/null
