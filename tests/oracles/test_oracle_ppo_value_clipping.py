"""The Baselines oracle against values computed by hand."""

import numpy as np
import pytest

from conformance.oracles import ppo_value_clipping as oracle


def test_counterexample_from_openai_baselines_765():
    # R=10, old=5, v=1, c=0.2: unclipped (1-10)^2 = 81 > clipped (4.8-10)^2 = 27.04
    ref = oracle.vf_loss([1.0], [5.0], [10.0], 0.2)
    assert ref.loss == 40.5
    assert ref.dloss_dv.tolist() == [-9.0]
    assert ref.clip_fraction == 1.0
    # stable-baselines3's clipped-only loss: 0.5 * 27.04 = 13.52
    assert oracle.WRONG_VARIANTS[next(k for k in oracle.WRONG_VARIANTS if "stable-baselines3" in k)](
        [1.0], [5.0], [10.0], 0.2) == pytest.approx(13.52)


def test_clipped_branch_wins_when_it_is_farther():
    # old=0, v=1, c=0.5, R=2: unclipped (1-2)^2 = 1 < clipped (0.5-2)^2 = 2.25; d/dv = 0 (saturated)
    ref = oracle.vf_loss([1.0], [0.0], [2.0], 0.5)
    assert ref.loss == 0.5 * 2.25 and ref.dloss_dv.tolist() == [0.0]


def test_mean_over_batch_and_strict_clip_fraction():
    v, old, R = [1.0, 0.5, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]
    ref = oracle.vf_loss(v, old, R, 0.5)
    # losses: max(1, .25)=1, max(.25,.25)=.25, 0 -> mean .41667 * .5
    assert ref.loss == pytest.approx(0.5 * (1.25 / 3))
    assert ref.clip_fraction == pytest.approx(1 / 3)  # the tie at exactly 0.5 is not clipped
    assert ref.kink.tolist() == [False, True, False]  # only the tie at +c is a kink


def test_unclipped_and_negative_threshold():
    assert oracle.unclipped_vf_loss([3.0, 1.0], [1.0, 1.0]).loss == 0.5 * 2.0
    with pytest.raises(ValueError):
        oracle.vf_loss([1.0], [0.0], [0.0], -0.1)


def test_diagnosis_names_each_wrong_variant_and_nothing_for_the_right_one():
    rng = np.random.default_rng(0)
    v, old, R = rng.normal(size=32), rng.normal(size=32), rng.normal(size=32) * 3
    for name, f in oracle.WRONG_VARIANTS.items():
        if "no clipping" in name:
            continue
        assert oracle.diagnose(f(v, old, R, 0.2), v, old, R, 0.2) == name
    assert oracle.diagnose(oracle.vf_loss(v, old, R, 0.2).loss, v, old, R, 0.2) is None
