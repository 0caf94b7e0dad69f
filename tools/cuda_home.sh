# Sourced by tools/gpu_*.sh: export CUDA_HOME, the CUDA toolkit folder the extension builder
# compiles with. A wrapper script named nvcc (as /usr/local/bin/nvcc on these machines) is not
# the toolkit's folder, so the usual places come first, nvcc's own folder last.
if [[ -z "${CUDA_HOME:-}" ]]; then
    for candidate in /usr/local/cuda /usr/local/cuda-13.0; do
        if [[ -x $candidate/bin/nvcc ]]; then CUDA_HOME=$candidate; break; fi
    done
fi
if [[ -z "${CUDA_HOME:-}" ]] && command -v nvcc >/dev/null; then
    CUDA_HOME=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
fi
export CUDA_HOME=${CUDA_HOME:-}
