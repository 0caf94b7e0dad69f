"""The replay-buffer oracle against values worked out by hand."""

import math

import numpy as np
import pytest

from conformance.oracles import prioritized_replay as oracle


def ring(priorities, **kwargs):
    m = oracle.ReplayModel(len(priorities), alpha=0.5, beta=1.0, eps=0.0, **kwargs)
    m.extend(len(priorities))
    m.update(np.arange(len(priorities)), priorities)
    return m


def test_new_items_get_the_max_of_the_items_that_stay():
    m = ring([10.0, 8.0, 3.0, 2.0, 1.0])
    assert m.default_priority() == 10.0
    assert m.extend(1).tolist() == [0]  # the cursor wrapped: slot 0 (10) is evicted first
    assert m.priority.tolist() == [8.0, 8.0, 3.0, 2.0, 1.0]
    assert m.default_priority() == 8.0
    assert m.max_before_last_eviction == 10.0 and m.historical_max == 10.0
    assert m.evicted_a_maximum
    assert m.extend(2).tolist() == [1, 2]  # evicts 8 and 3; slot 0 still holds 8
    assert m.priority.tolist() == [8.0, 8.0, 8.0, 2.0, 1.0]


def test_replacing_everything_falls_back_to_the_initial_value_capped():
    m = ring([10.0, 8.0, 3.0])
    m.extend(3)
    assert m.priority.tolist() == [1.0, 1.0, 1.0]
    capped = ring([10.0, 8.0, 3.0], upper_priority=0.5)
    assert capped.default_priority() == 0.5
    capped.extend(3)
    assert capped.priority.tolist() == [0.5, 0.5, 0.5]


def test_empty_buffer_and_partial_fill():
    m = oracle.ReplayModel(4, alpha=0.5, beta=1.0, initial_priority=2.0)
    assert len(m) == 0 and m.default_priority() == 2.0
    m.extend(2)
    assert m.stored().tolist() == [0, 1] and m.items_at([1, 0]).tolist() == [1, 0]
    with pytest.raises(ValueError):
        m.update([3], [1.0])


def test_lowering_the_max_and_the_historical_shadow():
    m = ring([10.0, 8.0, 3.0])
    m.update([0], [0.5])
    assert m.default_priority() == 8.0 and m.historical_max == 10.0
    assert not m.evicted_a_maximum  # so a default of 1.0 is not blamed on an overwrite
    assert oracle.diagnose_default(m, 1.0) is None


def test_tree_law_and_weights_by_hand():
    m = ring([4.0, 1.0, 9.0])  # alpha 0.5, eps 0: q = [2, 1, 3]
    assert m.tree_values().tolist() == [2.0, 1.0, 3.0]
    assert np.allclose(m.probabilities(), [1 / 3, 1 / 6, 1 / 2], rtol=1e-15)
    assert np.allclose(m.importance_weights([0, 1, 2, 2]), [0.5, 1.0, 1 / 3, 1 / 3], rtol=1e-15)
    m.beta = 0.5
    assert np.allclose(m.importance_weights([0, 2]), [2**-0.5, 3**-0.5], rtol=1e-15)
    m.set_alpha(1.0)
    assert m.tree_values().tolist() == [4.0, 1.0, 9.0]


def test_eps_is_added_before_the_power():
    m = oracle.ReplayModel(2, alpha=0.5, beta=1.0, eps=1.0)
    m.extend(2)
    m.update([0, 1], [3.0, 0.0])
    assert m.tree_values().tolist() == [2.0, 1.0]


def test_two_dimensional_ring_writes_whole_rows():
    m = oracle.ReplayModel(6, alpha=1.0, beta=1.0, row_width=3)
    assert m.shape == (2, 3)
    assert m.extend(1).tolist() == [0, 1, 2]
    assert m.extend(1).tolist() == [3, 4, 5]
    m.update([4], [7.0])
    assert m.extend(1).tolist() == [0, 1, 2]
    assert m.priority.tolist() == [7.0, 7.0, 7.0, 1.0, 7.0, 1.0]
    with pytest.raises(ValueError):
        oracle.ReplayModel(7, alpha=1.0, beta=1.0, row_width=3)


def test_diagnosis_names_the_known_wrong_values():
    m = ring([10.0, 8.0, 20.0, 2.0, 1.0])
    m.update([2], [3.0])
    slots = m.extend(1)  # right: 8; evicted 10; historical 20
    tf = m.transform
    assert oracle.diagnose_new_item(m, float(tf(8.0)), slots) is None
    assert oracle.diagnose_new_item(m, float(tf(10.0)), slots) == oracle.INHERITED_FROM_EVICTED
    assert oracle.diagnose_new_item(m, float(tf(20.0)), slots) == oracle.HISTORICAL_MAX
    assert oracle.diagnose_new_item(m, float(tf(1.0)), slots) == oracle.FALLBACK_AFTER_OVERWRITE
    assert oracle.diagnose_new_item(m, float(tf(tf(8.0))), slots) == oracle.DOUBLE_TRANSFORM
    assert oracle.diagnose_default(m, 8.0) is None
    assert oracle.diagnose_default(m, 20.0) == oracle.HISTORICAL_MAX
    assert oracle.diagnose_default(m, 1.0) == oracle.FALLBACK_AFTER_OVERWRITE
    assert oracle.diagnose_default(m, math.sqrt(8.0)) == oracle.TRANSFORMED_DEFAULT
    assert oracle.diagnose_default(m, 5.0) is None


def test_ambiguous_diagnosis_names_both_candidates():
    m = ring([10.0, 8.0, 3.0])  # historical max == evicted max == 10
    slots = m.extend(1)
    cause = oracle.diagnose_new_item(m, float(m.transform(10.0)), slots)
    assert oracle.HISTORICAL_MAX in cause and oracle.INHERITED_FROM_EVICTED in cause


def test_diagnose_tree_and_weights():
    m = ring([4.0, 1.0, 9.0])
    tf = m.transform
    assert oracle.diagnose_tree(m, tf(tf(np.array([4.0, 1.0, 9.0])))) == oracle.DOUBLE_TRANSFORM
    m.set_alpha(1.0)
    assert oracle.diagnose_tree(m, np.array([2.0, 1.0, 3.0]), previous_alpha=0.5) == oracle.STALE_ALPHA
    m = ring([4.0, 1.0, 9.0, 16.0])  # q = [2, 1, 3, 4]: N P = [0.8, 0.4, 1.2, 1.6]
    assert oracle.diagnose_weights(m, [0, 2], [1.25, 1 / 1.2]) == oracle.UNNORMALISED_WEIGHTS
    assert oracle.diagnose_weights(m, [0, 2], [1.0, 2 / 3]) == oracle.BATCH_NORMALISED_WEIGHTS
    assert oracle.diagnose_weights(m, [0, 2], [0.5, 1 / 3]) is None


def test_off_by_one_law_and_chi_square():
    law = np.array([0.2, 0.3, 0.5, 0.0])
    assert np.allclose(oracle.off_by_one_law(law), [0.4, 0.6, 0.0, 0.0])
    fit = oracle.chi_square(np.array([20.0, 30.0, 50.0, 0.0]), law, size=1e-3)
    assert fit.statistic == 0.0 and fit.dof == 2 and not fit.rejected
    assert oracle.chi_square(np.array([20.0, 30.0, 49.0, 1.0]), law, size=1e-3).rejected
    # power: equal laws give the size; the off-by-one against 1e4 draws is certain
    assert oracle.chi_square_power(law, law, 10_000, size=1e-3) == pytest.approx(1e-3, rel=1e-6)
    assert oracle.chi_square_power(law, oracle.off_by_one_law(law), 10_000, size=1e-3) > 0.999999
    # lambda = n * sum (a - p)^2 / p for two cells: n (0.01^2 / 0.5) * 2 = 4e-4 n
    p, a = np.array([0.5, 0.5]), np.array([0.51, 0.49])
    lam = 10_000 * 4e-4
    crit = 10.827566170662733  # chi2(1).ppf(0.999)
    from scipy import stats

    assert oracle.chi_square_power(p, a, 10_000, size=1e-3) == pytest.approx(
        stats.ncx2.sf(crit, 1, lam), rel=1e-9)


def test_diagnose_law_names_the_off_by_one():
    m = ring([4.0, 1.0, 9.0])
    exact = 6000 * m.probabilities()
    shifted = 6000 * oracle.off_by_one_law(m.probabilities())
    assert oracle.diagnose_law(np.round(shifted), m) == oracle.OFF_BY_ONE
    assert oracle.diagnose_law(np.round(exact), m) is None
