#!/usr/bin/env bash
# Fill .gpu-carry/ (git-ignored) with what tools/gpu_run.sh needs on the lent GPU machine, which
# has no package index: its python3 is CPython 3.12 with torch 2.11.0+cu130, pytest, scipy,
# pandas, hypothesis, pytest-benchmark and matplotlib (the device tool's KINDS.md).
#
#   bash tools/gpu_carry.sh [PYTHON312_WITH_TORCH_2.11]
#
# 1. wheels/core: the tested TorchRL and what it needs that the machine lacks. Which TorchRL: the
#    suite's pinned stack (pyproject's `stack` extra: torchrl 0.14.1, tensordict 0.14.3, paired by
#    minor as conformance/upstream/sources.py does). Its Python code imports next to torch 2.11;
#    its shipped C++ trees are built for torch 2.14 and do not load there (the same rule the
#    upstream runner applies), so they are rebuilt from the wheel's own torchrl/csrc, CUDA trees
#    included (step 2).
# 2. ext/: with a python 3.12 that holds torch 2.11.0+cu130 (the machine's torch, from PyPI),
#    the extension builder (python -m conformance.upstream.extension cuda-overlay) compiles that
#    csrc with nvcc for sm_90 (H100/H200) here, so that the device call finds it in its cache
#    instead of spending its minutes compiling. Without that python the device builds it itself.
# 3. wheels/asv: asv and what it needs, installed apart (gpu_run.sh's asv step only), so that its
#    newer `packaging` never shadows the machine's for the specs.
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY=.gpu-carry
PY312=${1:-}
download() {  # folder, requirement...
    local dest=$1; shift
    mkdir -p "$dest"
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
        --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
        --platform manylinux2014_x86_64 -d "$dest" "$@"
}
pin() { python3 - "$1" <<'EOF'
import sys, tomllib
stack = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["stack"]
print(next(r for r in stack if r.startswith(sys.argv[1] + "==")))
EOF
}
download $CARRY/wheels/core "$(pin torchrl)" "$(pin tensordict)" pyvers==0.2.3 hoptorch==0.1.4 \
    orjson==3.13.0 importlib_metadata==10.2.0 lazy_importer==0.1.0
download $CARRY/wheels/asv asv==0.6.6 asv_runner==0.3.2 json5==0.17.3 virtualenv==21.15.11 \
    distlib==0.4.4 platformdirs==4.14.8 python_discovery==1.9.6 Pympler==1.1 packaging==26.4
if [[ -n "$PY312" ]]; then
    site=$(mktemp -d)
    "$PY312" -m pip install -q --no-index --no-deps --target "$site" $CARRY/wheels/core/*.whl
    source tools/cuda_home.sh
    TORCH_CUDA_ARCH_LIST=9.0 PYTHONPATH="$PWD:$site" \
        "$PY312" -m conformance.upstream.extension cuda-overlay "$PWD/$CARRY" >/dev/null
    rm -rf "$site" "$CARRY/overlay"
fi
du -sh $CARRY
