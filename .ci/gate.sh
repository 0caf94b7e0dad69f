#!/usr/bin/env bash
# What the reusable workflow runs (kept here so that it is testable and lintable as a script).
# Inputs come from the environment: TORCHRL_REF, IMPL, EXPECTATIONS_FILE, PYTEST_ARGS;
# the calling repository is checked out at ../caller.
set -euo pipefail
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
# shellcheck disable=SC2086  # PYTEST_ARGS is a list of arguments
exec python -m nox -s conformance -- --impl "$IMPL" ${PYTEST_ARGS:-}
