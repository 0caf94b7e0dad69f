"""The scipy oracle of §1 against values computed by hand (50-digit mpmath: every sign change of
x - mu - 2 s tanh(x) on a 20,000-point scan, refined with findroot, the maxima ranked by g)."""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from conformance.oracles import tanh_normal_mode as oracle

# (mu, sigma): [(y of the global mode, g there), (y of the other local maximum, g there)]
MPMATH = {
    (0.2, 1.0): [(0.97301568665235424, 1.0394173383283916),
                 (-0.93029720271015556, 0.2749350758940973)],
    (-1.2, 0.7): [(-0.97343489504746868, 2.0197571573183125)],
    (0.5, 0.3): [(0.5343246482516219, 0.28478573270157541)],
    (2.0, 2.0): [(0.99999999587769249, 10.613705643002417),
                 (-0.99998770923404121, 2.6137179284753306)],
    (-0.05, 0.8): [(-0.78235626844677996, 0.16349547334258115),
                   (0.66397201525006313, 0.017053998636624763)],
    (1.5, 0.05): [(0.90596347361122926, 1.714980503356905)],
    (0.7, 1e-4): [(0.60436778478948661, 0.45454046602221947)],
    (3.0, 1.2): [(0.99998437706674611, 7.4937212611714434)],
}


@pytest.mark.parametrize(("mu", "sigma"), list(MPMATH))
def test_modes_match_mpmath(mu, sigma):
    ref = MPMATH[(mu, sigma)]
    got = oracle.modes(np.array([mu]), np.array([sigma]))
    assert got.n_maxima[0] == len(ref)
    assert got.y[0] == pytest.approx(ref[0][0], abs=1e-12)
    assert got.g[0] == pytest.approx(ref[0][1], abs=1e-10)
    if len(ref) == 2:
        assert got.y_other[0] == pytest.approx(ref[1][0], abs=1e-12)
        assert got.g_other[0] == pytest.approx(ref[1][1], abs=1e-10)
    else:
        assert np.isnan(got.y_other[0])


def test_seed_example_is_0_97302():
    assert oracle.mode(0.2, 1.0) == pytest.approx(0.97302, abs=5e-6)


def test_tiny_scale_gives_tanh_loc():
    for mu in (-2.0, 0.0, 0.7, 3.0):
        assert oracle.mode(mu, 1e-4) == pytest.approx(math.tanh(mu), abs=2e-8)


@pytest.mark.parametrize("sigma", [0.75, 1.0, 2.0])
def test_tie_at_zero_loc(sigma):
    """mu = 0, sigma^2 > 1/2: two maxima +-y* of equal height, 0 (a minimum) is neither."""
    got = oracle.modes(np.array([0.0]), np.array([sigma]))
    assert got.n_maxima[0] == 2
    assert got.y[0] == pytest.approx(-got.y_other[0], abs=1e-12)
    assert abs(got.y[0]) > 0.5
    assert got.g[0] == pytest.approx(got.g_other[0], abs=1e-12)
    if sigma == 1.0:
        assert abs(got.y[0]) == pytest.approx(0.95750402407726874, abs=1e-12)


def test_unimodal_at_zero_loc():
    got = oracle.modes(np.array([0.0, 0.0]), np.array([0.5, 0.7]))  # sigma^2 <= 1/2
    assert np.all(got.n_maxima == 1)
    assert np.all(np.abs(got.y) < 1e-6)


def test_bounds_map_the_same_preimage():
    """[-3, 7]: c = 2, r = 5; the pre-image of the mode does not depend on the bounds."""
    base = oracle.modes(np.array([0.2]), np.array([1.0]))
    shifted = oracle.modes(np.array([0.2]), np.array([1.0]), -3.0, 7.0)
    assert shifted.x[0] == base.x[0]
    assert shifted.y[0] == pytest.approx(2 + 5 * 0.97301568665235424, abs=1e-11)


def test_large_loc():
    got = oracle.modes(np.array([40.0, -40.0]), np.array([0.1, 1.0]))
    assert got.x == pytest.approx([40.02, -42.0], abs=1e-9)
    assert np.array_equal(got.y, [1.0, -1.0])  # tanh rounds to +-1 in float64


@pytest.mark.parametrize(("mu", "sigma", "low", "high"),
                         [(0.2, 1.0, -1, 1), (-0.5, 0.3, 0, 2), (1.0, 2.0, -3, 7)])
def test_log_density_integrates_to_one(mu, sigma, low, high):
    c, r = (high + low) / 2, (high - low) / 2
    # integrate in x (the density in y is extremely peaked near the bounds for large sigma)
    total, _ = quad(lambda x: math.exp(oracle.log_density_at_x(x, mu, sigma, low, high))
                    * r * (1 - math.tanh(x) ** 2), mu - 12 * sigma, mu + 12 * sigma, limit=400)
    assert total == pytest.approx(1.0, abs=1e-9)
    y = np.linspace(low, high, 7)[1:-1]
    x = np.arctanh((y - c) / r)
    assert oracle.log_density(y, mu, sigma, low, high) == pytest.approx(
        oracle.log_density_at_x(x, mu, sigma, low, high), abs=1e-12)
    assert oracle.log_density([low, high], mu, sigma, low, high).tolist() == [-np.inf, -np.inf]


def test_global_mode_beats_a_dense_grid():
    rng = np.random.default_rng(0)
    mu, sigma = 1.5 * rng.standard_normal(50), rng.uniform(0.05, 2.0, 50)
    got = oracle.modes(mu, sigma)
    y = np.linspace(-1, 1, 200001)[1:-1]
    grid = oracle.log_density(y[None, :], mu[:, None], sigma[:, None]).max(axis=1)
    assert np.all(oracle.log_density_at_x(got.x, mu, sigma) >= grid - 1e-12)


def test_batch_equals_single_calls():
    mu, sigma = np.array([[0.2, -1.2], [0.0, 3.0]]), np.array([[1.0, 0.7], [1.0, 1.2]])
    got = oracle.modes(mu, sigma)
    assert got.y.shape == (2, 2)
    for i in np.ndindex(2, 2):
        assert got.y[i] == oracle.mode(mu[i], sigma[i])


def test_diagnose_names_each_known_wrong_answer():
    exp = oracle.modes(np.array([0.2]), np.array([1.0]))
    cases = {
        oracle.TANH_LOC: math.tanh(0.2),
        oracle.BOUNDARY: 1.0,
        oracle.WRONG_BRANCH: -0.93029720271015556,
        oracle.NOT_CONVERGED: 0.95,
    }
    for cause, answer in cases.items():
        got = oracle.diagnose(np.array([answer]), exp, np.array([0.2]), tol=1e-9)
        assert got is not None and got.startswith(cause), (cause, got)
    f32 = np.array([np.float32(0.97301568665235424)], dtype=np.float64)
    got = oracle.diagnose(f32, exp, np.array([0.2]), tol=1e-9, float64_inputs=True)
    assert got.startswith(oracle.FLOAT32)
    raw = oracle.modes(np.array([0.2]), np.array([1.0])).y  # the mode of loc, not of mu
    tanh_loc_exp = oracle.modes(np.array([5 * math.tanh(0.04)]), np.array([1.0]))
    got = oracle.diagnose(raw, tanh_loc_exp, np.array([5 * math.tanh(0.04)]), tol=1e-9,
                          sigma=np.array([1.0]), raw_loc=np.array([0.2]))
    assert got.startswith(oracle.RAW_LOC)
    assert oracle.diagnose(np.array([0.3]), exp, np.array([0.2]), tol=1e-9) is None
