#!/usr/bin/env bash
# What the reusable workflow runs (kept here so that it is testable and lintable as a script).
# Inputs come from the environment: TORCHRL_REF, IMPL, EXPECTATIONS_FILE, PYTEST_ARGS;
# the calling repository is checked out at $CALLER_DIR (default ../caller).
#
# One rule: the caller's TorchRL is always what is gated, with the caller's expectations
# (`nox -s upstream`): a release (TORCHRL_REF=0.14.1) from the package index, any other ref as
# the checked-out source. IMPL is a comma-separated list (whitespace trimmed) that must name
# torchrl; whatever else it names runs beside it on the suite's pinned stack
# (`nox -s conformance`). Reports go to $GATE_REPORTS (default reports/gate), emptied first, so
# that what is published is only what this run wrote; it must be a folder of the gate's own.
# Completeness is judged from the rows against conformance/manifest.json, never from arguments.
#
# Exit codes: 0 every run complete and conformant to its expectations; 1 an unexpected result,
# or a source NOT TESTED; 2 bad input (one line); 3 a partial run (PYTEST_ARGS narrowed a run or
# stopped it early: never a verdict, whatever its rows say).
set -euo pipefail
usage() {
  echo "gate.sh: $*" >&2
  exit 2
}
trim() {
  local s="$1"
  s="${s#"${s%%[![:space:]]*}"}"
  printf '%s' "${s%"${s##*[![:space:]]}"}"
}
[[ -n "${TORCHRL_REF:-}" ]] || usage "TORCHRL_REF is not set (a release such as 0.14.1, or a git ref of the caller)"
caller="${CALLER_DIR:-../caller}"
out="${GATE_REPORTS:-reports/gate}"

others=()
gated=0
IFS=',' read -r -a items <<<"${IMPL:-torchrl}"
for raw in "${items[@]}"; do
  item="$(trim "$raw")"
  if [[ -z "$item" ]]; then
    continue
  elif [[ "$item" == "torchrl" ]]; then
    gated=1
  elif [[ " ${others[*]} " != *" $item "* ]]; then
    others+=("$item")
  fi
done
if [[ "$gated" != 1 ]]; then
  usage "IMPL='${IMPL:-}' does not name torchrl: this workflow gates the caller's TorchRL; list what runs beside it, e.g. 'torchrl, reference'"
fi

if [[ "$TORCHRL_REF" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
  source="$TORCHRL_REF" # a release from the package index
else
  [[ -f "$caller/version.txt" ]] || usage "$caller is not a TorchRL checkout (no version.txt); TORCHRL_REF=$TORCHRL_REF"
  source="$caller" # the checked-out ref of the calling repository
fi
upstream=("$source" --only-this-run)
if [[ -n "${EXPECTATIONS_FILE:-}" ]]; then
  [[ -f "$caller/$EXPECTATIONS_FILE" ]] || usage "EXPECTATIONS_FILE=$EXPECTATIONS_FILE: no such file in the calling repository ($caller)"
  upstream+=(--expectations "$caller/$EXPECTATIONS_FILE")
fi
# PYTEST_ARGS is split like a shell would (quotes kept together), without evaluating it
extra=()
if [[ -n "${PYTEST_ARGS:-}" ]]; then
  split="$(mktemp)"
  if ! printf '%s' "$PYTEST_ARGS" | xargs -r printf '%s\0' >"$split" 2>/dev/null; then
    rm -f "$split"
    usage "PYTEST_ARGS has unbalanced quotes: $PYTEST_ARGS"
  fi
  mapfile -d '' -t extra <"$split"
  rm -f "$split"
  # an allow-list (conformance/upstream/passthrough.py: selection, verbosity, workers, timeouts);
  # anything else is refused (one line, exit 2) before anything is installed
  python -m conformance.upstream.passthrough "${extra[@]}" || exit 2
  upstream+=("--pytest-args=$PYTEST_ARGS") # one word: a value starting with - (PYTEST_ARGS=-x) is a value
fi
# GATE_REPORTS is emptied: only a folder of the gate's own (never the checkout, reports/, a
# folder of the project, or a folder holding files the gate did not write)
python -m conformance.reporting.destination --gate-folder "$out" || exit 2
# pytest arguments and plug-ins only from this script, never from the environment
unset PYTEST_ADDOPTS PYTEST_PLUGINS PYTEST_DISABLE_PLUGIN_AUTOLOAD TORCHRL_CONFORMANCE_IMPL

rm -rf "$out"
mkdir -p "$out"
: >"$out/.gate-reports"
out="$(cd "$out" && pwd)"
# every pytest run of this gate that ends partial leaves its reason here (nox turns every
# failing command into exit code 1, so the runs' own exit codes do not reach this script)
export TORCHRL_CONFORMANCE_PARTIAL_FILE="$out/partial.txt"
status=0
python -m nox -s upstream -- "${upstream[@]}" --reports-dir "$out" || status=1
if ((${#others[@]})); then
  beside="$(IFS=,; printf '%s' "${others[*]}")"
  python -m nox -s conformance -- --impl "$beside" --require-complete \
    --results "$out/conformance.json" "${extra[@]}" || status=1
fi
if [[ -s "$TORCHRL_CONFORMANCE_PARTIAL_FILE" ]]; then
  echo "gate.sh: PARTIAL RUN, not a verdict: $(head -c 300 "$TORCHRL_CONFORMANCE_PARTIAL_FILE" | head -n 1)" >&2
  exit 3
fi
# the gate's verdict, last (the verdict blocks above say why, and what the TorchRL's defects are)
if ((status)); then
  echo "gate.sh: gate verdict: NOT CONFORMANT (the verdict blocks above say why; reports: $out)" >&2
else
  echo "gate.sh: gate verdict: conformant to expectations: no unexpected result (reports: $out)"
fi
exit "$status"
