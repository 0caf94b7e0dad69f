#!/usr/bin/env bash
# What the reusable workflow runs (kept here so that it is testable and lintable as a script).
# Inputs come from the environment: TORCHRL_REF, IMPL, EXPECTATIONS_FILE, PYTEST_ARGS;
# the calling repository is checked out at ../caller.
# Exit code: non-zero unless every source is conformant to its expectations; a source that cannot
# be resolved, installed or imported is "NOT TESTED: <reason>" and fails the gate.
set -euo pipefail
if [[ -z "${TORCHRL_REF:-}" ]]; then
  echo "gate.sh: TORCHRL_REF is not set (a release such as 0.14.1, or a git ref of the caller)" >&2
  exit 2
fi
caller="${CALLER_DIR:-../caller}"
if [[ "$TORCHRL_REF" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  source="$TORCHRL_REF"          # a release from the package index
else
  source="$caller"               # the checked-out ref of the calling repository
fi
args=("$source")
if [[ -n "${EXPECTATIONS_FILE:-}" ]]; then
  args+=(--expectations "$caller/$EXPECTATIONS_FILE")
fi
if [[ -n "${PYTEST_ARGS:-}" ]]; then
  args+=(--pytest-args "$PYTEST_ARGS")
fi
if [[ "${IMPL:-torchrl}" == "torchrl" ]]; then
  exec python -m nox -s upstream -- "${args[@]}"
fi
# PYTEST_ARGS is split like a shell would (quotes kept together), without evaluating it
extra=()
if [[ -n "${PYTEST_ARGS:-}" ]]; then
  split="$(mktemp)"
  if ! printf '%s' "$PYTEST_ARGS" | xargs -r printf '%s\0' >"$split" 2>/dev/null; then
    rm -f "$split"
    echo "gate.sh: PYTEST_ARGS has unbalanced quotes: $PYTEST_ARGS" >&2
    exit 2
  fi
  mapfile -d '' -t extra <"$split"
  rm -f "$split"
fi
exec python -m nox -s conformance -- --impl "$IMPL" "${extra[@]}"
