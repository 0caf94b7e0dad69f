#!/usr/bin/env bash
# The GPU call's rehearsal on a CPU machine (`bash tools/gpu_run.sh --rehearse` runs this):
#
# 1. a bare python like the device's: a venv of the stack's interpreter that sees the stack's
#    packages (torch, pytest, xdist, scipy, ...) but NOT torchrl, tensordict, asv or their
#    helpers, which the device lacks too: they come from the carried wheels, on PYTHONPATH only,
#    so a process that loses PYTHONPATH (asv's) fails here as it did on the H200;
# 2. the carried folder, for that python (tools/gpu_carry.sh, its CUDA trees built with nvcc for
#    the stack's torch; kept in $R/carry between rehearsals, REHEARSE_REBUILD=1 builds again);
# 3. a copy of the tree as the device tool sends it (tracked and untracked-not-ignored files,
#    plus the carried folder), its size checked against the tool's 64 MiB;
# 4. tools/gpu_run.sh --stand-in in that copy, with $OUT a fresh folder: every step, `cpu`
#    standing in for cuda and cuda:0;
# 5. what would come back, checked against the tool's limits (8 files, 16 MiB each, 64 MiB in
#    all, 2 folders deep, plain names) and for the members each step must leave: results of the
#    three spec runs, finite asv points, the targets' lines, the trees' comparison;
# 6. tools/gpu_compare.py on those files, into a copy of reports/gpu/README.md.
#
# REHEARSE_DIR (default /tmp/gpu-rehearse), REHEARSE_SPECS_K (a -k subset of the specs; default:
# all of them), REHEARSE_FRESH=0 (skip the fresh build), REHEARSE_SCALE (each cap times this,
# default 3: two busy cores instead of sixteen), REHEARSE_PREPARE_ONLY=1 (steps 1-2 only).
set -uo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
R=${REHEARSE_DIR:-/tmp/gpu-rehearse}
STACK=${REHEARSE_STACK:-$SRC/.nox/_stack-torch2.14.1-torchrl0.14.1-tensordict0.14.3}
T0=$(date +%s)
step() { printf '[rehearse %4ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }
fail() { echo "REHEARSAL FAILED: $*" >&2; exit 1; }
mkdir -p "$R"

# ---------------------------------------------------------------- 1. a bare python
PYV=$("$STACK/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
if [[ ! -x $R/py/bin/python ]]; then
    base=$(sed -n 's/^home = //p' "$STACK/pyvenv.cfg")/python$PYV
    "$base" -m venv --without-pip "$R/py" || fail "no venv from $base"
fi
stack_site=$("$STACK/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -rf "$R/base-site"; mkdir -p "$R/base-site"
# the device lacks these (KINDS.md's package list): they must come from .gpu-carry
carried='^(torchrl|tensordict|asv|asv_runner|hoptorch|pyvers|orjson|importlib_metadata|lazy_importer|virtualenv|distlib|platformdirs|python_discovery|pympler|json5|benchmarks|sota-check|sota-implementations|build|torchrl_conformance)([-_.].*)?$'
for entry in "$stack_site"/*; do
    name=$(basename "$entry")
    [[ ${name,,} =~ $carried || $name == *.pth ]] && continue
    ln -s "$entry" "$R/base-site/$name"
done
bare_site=$("$R/py/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$R/base-site" >"$bare_site/zz-stack-without-torchrl.pth"
PY=$R/py/bin/python
"$PY" -c "import torch, pytest, xdist, scipy" || fail "the bare python lacks torch/pytest/xdist/scipy"
if "$PY" -c "import torchrl" 2>/dev/null || "$PY" -c "import asv" 2>/dev/null; then
    fail "the bare python sees torchrl or asv: it would hide the path problem"
fi
step "bare python: $PY ($("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__)'); no torchrl, no asv)"

# ---------------------------------------------------------------- 2. the carried folder
if [[ ${REHEARSE_REBUILD:-0} == 1 || ! -d $R/carry/ext ]]; then
    rm -rf "$R/carry"
    t=$(date +%s)
    GPU_CARRY_DIR=$R/carry GPU_CARRY_PYVER=$PYV bash tools/gpu_carry.sh "$PY" >"$R/carry.log" 2>&1 \
        || { tail -5 "$R/carry.log"; fail "tools/gpu_carry.sh"; }
    step "carry: filled in $(( $(date +%s) - t ))s: $(grep 'built in' "$R/carry.log")"
else
    GPU_CARRY_DIR=$R/carry GPU_CARRY_PYVER=$PYV bash tools/gpu_carry.sh >"$R/carry.log" 2>&1 \
        || { tail -5 "$R/carry.log"; fail "tools/gpu_carry.sh"; }
    step "carry: wheels again, the CUDA trees' build kept from an earlier rehearsal"
fi
du -sh "$R/carry"/* | sed 's/^/    /'
[[ ${REHEARSE_PREPARE_ONLY:-0} == 1 ]] && { step "prepared (REHEARSE_PREPARE_ONLY=1)"; exit 0; }

# ---------------------------------------------------------------- 3. the tree, as it travels
rm -rf "$R/tree" "$R/out" "$R/work"
mkdir -p "$R/tree" "$R/out"
git ls-files -co --exclude-standard -z | grep -zv '^\.nox$' | tar --null -T - -cf - | tar -xf - -C "$R/tree"
cp -r "$R/carry" "$R/tree/.gpu-carry"
tree_bytes=$(du -sb "$R/tree" | cut -f1)
step "tree: $(( tree_bytes / 1048576 )) MiB with .gpu-carry ($(du -sh "$R/tree/.gpu-carry" | cut -f1)); the device tool's limit is 64 MiB"
(( tree_bytes < 64 * 1048576 )) || fail "the tree and its carry are over 64 MiB"

# ---------------------------------------------------------------- 4. the run, stand-in devices
t=$(date +%s)
( cd "$R/tree" && OUT=$R/out GPU_RUN_PYTHON=$PY GPU_RUN_WORK=$R/work \
    GPU_RUN_SCALE=${REHEARSE_SCALE:-3} GPU_RUN_BUDGET=$(( 540 * ${REHEARSE_SCALE:-3} )) \
    GPU_RUN_SPECS_K=${REHEARSE_SPECS_K:-} \
    bash tools/gpu_run.sh --stand-in $([[ ${REHEARSE_FRESH:-1} == 0 ]] && echo --only setup,trees,specs,targets,asv,bench) ) \
    >"$R/run.log" 2>&1
RC=$?
cat "$R/run.log"
step "gpu_run.sh --stand-in: exit $RC in $(( $(date +%s) - t ))s"
(( RC == 0 )) || fail "gpu_run.sh exited $RC"

# ---------------------------------------------------------------- 5. what would come back
"$PY" - "$R/out" <<'EOF' || fail "the outputs break the device tool's limits or lack a member"
import json, math, pathlib, re, sys, tarfile
out = pathlib.Path(sys.argv[1])
files = [p for p in out.rglob("*") if p.is_file()]
problems = []
if len(files) > 8:
    problems.append(f"{len(files)} files (at most 8 come back)")
for p in files:
    rel = p.relative_to(out)
    if p.stat().st_size > 16 * 2**20:
        problems.append(f"{rel}: {p.stat().st_size} bytes (over 16 MiB)")
    if len(rel.parts) > 3 or not all(re.fullmatch(r"[A-Za-z0-9._-]+", part) for part in rel.parts):
        problems.append(f"{rel}: too deep or an odd name")
if sum(p.stat().st_size for p in files) > 64 * 2**20:
    problems.append("over 64 MiB in all")
need = {"summary.txt", "machine.txt", "specs.tgz", "trees.txt", "bench.tgz", "asv.tgz", "logs.tgz"}
missing = need - {p.name for p in files}
if missing:
    problems.append(f"missing: {sorted(missing)}")
members = {}
for name in ("specs.tgz", "bench.tgz", "asv.tgz"):
    if (out / name).is_file():
        with tarfile.open(out / name) as tar:
            members[name] = {m.name: m for m in tar.getmembers()}
for run in ("cpu", "cuda", "cuda0"):
    if f"reports/gpu/results-{run}.json" not in members.get("specs.tgz", {}):
        problems.append(f"specs.tgz lacks results-{run}.json")
with tarfile.open(out / "specs.tgz") as tar:
    for run in ("cpu", "cuda", "cuda0"):
        doc = json.load(tar.extractfile(f"reports/gpu/results-{run}.json"))
        print(f"  results-{run}.json: {len(doc['rows'])} rows, device {doc['device']}, partial {doc['partial']}")
asv = [m for m in members.get("asv.tgz", {}) if m.endswith(".json") and not m.endswith("machine.json")]
finite = 0
with tarfile.open(out / "asv.tgz") as tar:
    for m in asv:
        doc = json.load(tar.extractfile(m))
        col = doc["result_columns"].index("result")
        for entry in doc["results"].values():
            vals = entry[col] if isinstance(entry[col], list) else [entry[col]]
            finite += sum(isinstance(v, (int, float)) and math.isfinite(v) for v in vals)
print(f"  asv.tgz: {len(asv)} result file(s), {finite} finite points")
if not finite:
    problems.append("asv recorded no finite point (its processes did not import torchrl?)")
bench = [m for m in members.get("bench.tgz", {}) if m.endswith("benchmarks-partial.md")]
if not bench:
    problems.append("bench.tgz lacks the targets' report")
if "sampled indices" not in (out / "trees.txt").read_text() and "no fresh build" not in (out / "trees.txt").read_text():
    problems.append("trees.txt holds no comparison")
for p in sorted(files):
    print(f"  {p.relative_to(out)}: {p.stat().st_size} bytes")
if problems:
    print("\n".join("  PROBLEM: " + x for x in problems))
    sys.exit(1)
print(f"  {len(files)} files, {sum(p.stat().st_size for p in files)} bytes: within the device tool's limits")
EOF
step "outputs: checked"

# ---------------------------------------------------------------- 6. the comparison tool
cp "$SRC/reports/gpu/README.md" "$R/README.md"
"$PY" "$SRC/tools/gpu_compare.py" write "$R/out" --readme "$R/README.md" --unpack "$R/unpacked" \
    --rehearsal >"$R/compare.log" 2>&1 || { cat "$R/compare.log"; fail "tools/gpu_compare.py"; }
cat "$R/compare.log"
step "compare: sections written into $R/README.md"
step "REHEARSAL PASSED ($(( $(date +%s) - T0 ))s); outputs in $R/out, README sections in $R/README.md"
