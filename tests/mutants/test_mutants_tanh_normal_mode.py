"""Each historical TanhNormal-mode bug, plugged in with --impl, fails the §1 specs, and the failure
message names it. The four mutants run in one suite invocation (one torch import) and are
told apart by the implementation id in the results."""

import pytest

from conformance.oracles import tanh_normal_mode as oracle

#: every test here reads a run of the whole suite on a mutant (a module fixture)
pytestmark = pytest.mark.slow

SPEC = "conformance/test_tanh_normal_mode.py"
MUTANTS = {
    "TANH_OF_LOC": oracle.TANH_LOC,
    "BOUNDARY_CLAMPED": oracle.BOUNDARY,
    "WRONG_BRANCH": oracle.WRONG_BRANCH,
    "FLOAT32_SOLVE": oracle.FLOAT32,
}
# specs that must fail for each mutant, with the bug named in their message
MUST_NAME = {
    "TANH_OF_LOC": ["test_seed_example[TANH_OF_LOC-float64]",
                    "test_seed_example[TANH_OF_LOC-float32]",
                    "test_random_batch_matches_scipy[TANH_OF_LOC-float32]",
                    "test_tanh_loc_mode_uses_rescaled_location[TANH_OF_LOC-5.0-float64]"],
    "BOUNDARY_CLAMPED": ["test_seed_example[BOUNDARY_CLAMPED-float64]",
                         "test_large_abs_loc_mode_strictly_inside[BOUNDARY_CLAMPED-[-1,1]-float32]",
                         "test_random_batch_matches_scipy[BOUNDARY_CLAMPED-float32]"],
    "WRONG_BRANCH": ["test_seed_example[WRONG_BRANCH-float64]",
                     "test_bimodal_regime[WRONG_BRANCH-float64]",
                     "test_random_batch_matches_scipy[WRONG_BRANCH-float64]",
                     "test_asymmetric_bounds[WRONG_BRANCH-[-3,7]-float32]"],
    "FLOAT32_SOLVE": ["test_seed_example[FLOAT32_SOLVE-float64]",
                      "test_random_batch_matches_scipy[FLOAT32_SOLVE-float64]",
                      "test_batch_shapes[FLOAT32_SOLVE-5x3]"],
}
# ... and specs each must pass: the spec is not stricter than the bug it describes
MUST_PASS = {
    "TANH_OF_LOC": ["test_deterministic_whatever_the_global_rng[TANH_OF_LOC]"],
    "WRONG_BRANCH": ["test_unimodal_regime[WRONG_BRANCH-float64]",
                     "test_tie_at_zero_loc[WRONG_BRANCH-1.0-float64]"],
    "FLOAT32_SOLVE": ["test_random_batch_matches_scipy[FLOAT32_SOLVE-float32]",
                      "test_large_abs_loc_mode_strictly_inside[FLOAT32_SOLVE-[-1,1]-float32]"],
}


@pytest.fixture(scope="module")
def mutant_run(tmp_path_factory):
    from tests.conftest import run_suite

    impls = ",".join(f"tests.mutants.tanh_normal_mode:{name}" for name in MUTANTS)
    return run_suite(tmp_path_factory.mktemp("tanh_mutants"), SPEC, "--impl", impls)


@pytest.mark.parametrize("mutant", list(MUTANTS))
def test_mutant_fails_the_tanh_normal_specs_naming_its_bug(mutant_run, mutant):
    assert mutant_run.returncode == 1, mutant_run.output[-3000:]
    rows = {r["nodeid"].split("::", 1)[1]: r for r in mutant_run.rows(implementation=mutant)}
    assert rows, f"no results for {mutant}:\n{mutant_run.output[-3000:]}"
    bug = MUTANTS[mutant]
    for spec in MUST_NAME[mutant]:
        row = rows[spec]
        assert row["outcome"] == "fail", f"{spec} did not fail: {row['outcome']}"
        assert bug in row["message"], (
            f"{spec} fails without naming the bug {bug!r}:\n{row['message']}")
    for spec in MUST_PASS.get(mutant, []):
        assert rows[spec]["outcome"] == "pass", f"{spec}: {rows[spec]['message']}"
    naming = [s for s, r in rows.items() if r["outcome"] == "fail" and bug in r["message"]]
    assert len(naming) >= 3
