"""Unit tests of the reference ``impls.TanhNormal`` / ``impls.tanh_normal_mode``: the solve itself
(against plain bisection, independent of Newton), dtypes, shapes, devices, and its use as a
drop-in for ``torchrl.modules.TanhNormal``."""

import numpy as np
import pytest
import torch

from conformance.oracles import tanh_normal_mode as oracle
from impls import TanhNormal, tanh_normal_mode
from impls.tanh_normal_mode import NEWTON_STEPS

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def bisection_tanh_root(m, s, steps=110):
    """tanh of the largest root of x - m - 2 s tanh x on [0, m + 2 s], by bisection: the set
    where it is <= 0 is an interval starting at 0 (the function is convex there)."""
    lo, hi = np.zeros_like(m), m + 2 * s
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        le = mid - m - 2 * s * np.tanh(mid) <= 0
        lo, hi = np.where(le, mid, lo), np.where(le, hi, mid)
    return np.tanh(0.5 * (lo + hi))


def test_fixed_newton_steps_reach_float64_rounding():
    """NEWTON_STEPS Newton steps from the start reach float64 rounding over a dense random sweep,
    including the neighbourhood of the cusp (s = 1/2, m = 0) where the root is nearly triple."""
    rng = np.random.default_rng(0)
    n = 100_000
    m = np.concatenate([rng.uniform(0, 3, n), 10 ** rng.uniform(-12, 1.7, n),
                        rng.uniform(0, 0.2, n), 10 ** rng.uniform(-9, -1, n)])
    s = np.concatenate([rng.uniform(0.2, 3, n), 10 ** rng.uniform(-8, 2.5, n),
                        0.5 + rng.uniform(-0.1, 0.1, n), 0.5 + rng.uniform(-1e-4, 1e-4, n)])
    got = tanh_normal_mode(torch.as_tensor(m), torch.as_tensor(np.sqrt(s)), -1.0, 1.0).numpy()
    truth = bisection_tanh_root(m, np.sqrt(s) ** 2)
    near_cusp = (np.abs(s - 0.5) < 1e-3) & (m < 1e-6)  # root determined to ~eps / h'(X) only
    err = np.abs(got - truth)
    assert err[~near_cusp].max() <= 5e-14, (NEWTON_STEPS, err[~near_cusp].max())
    assert err[near_cusp].max() <= 1e-9


def test_matches_scipy_oracle_on_a_random_batch():
    rng = np.random.default_rng(1)
    mu, sigma = 1.5 * rng.standard_normal(3000), rng.uniform(0.05, 2.0, 3000)
    exp = oracle.modes(mu, sigma)
    got = tanh_normal_mode(torch.as_tensor(mu), torch.as_tensor(sigma), -1.0, 1.0).numpy()
    assert np.abs(got - exp.y).max() <= 1e-11


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_dtype_device_and_shape(device, dtype):
    loc = torch.tensor([[0.2, -1.2, 0.0], [3.0, -40.0, 40.0]], dtype=dtype, device=device)
    scale = torch.tensor([1.0, 0.7, 0.3], dtype=dtype, device=device)  # broadcast over rows
    got = tanh_normal_mode(loc, scale, -3.0, 7.0)
    assert got.shape == loc.shape and got.dtype == dtype and got.device == loc.device
    mu, sigma = np.broadcast_arrays(loc.double().cpu().numpy(), scale.double().cpu().numpy())
    exp = oracle.modes(mu, sigma, -3.0, 7.0)
    tol = 5e-7 * 5 if dtype == torch.float32 else 1e-11
    assert np.abs(got.double().cpu().numpy() - exp.y).max() <= tol
    assert bool(((got > -3.0) & (got < 7.0)).all())  # strictly inside, even for |loc| = 40


def test_float32_answer_is_the_rounded_float64_answer():
    rng = np.random.default_rng(2)
    loc = torch.as_tensor(1.5 * rng.standard_normal(1000), dtype=torch.float32)
    scale = torch.as_tensor(rng.uniform(0.05, 2.0, 1000), dtype=torch.float32)
    f32 = tanh_normal_mode(loc, scale, -1.0, 1.0)
    f64 = tanh_normal_mode(loc.double(), scale.double(), -1.0, 1.0)
    inside = float(np.nextafter(np.float32(1), np.float32(0)))  # where rounding hits +-1
    assert torch.equal(f32, f64.float().clamp(-inside, inside))


def test_bound_is_never_returned():
    loc = torch.tensor([20.0, -20.0, 400.0], dtype=torch.float64)
    got = tanh_normal_mode(loc, torch.full_like(loc, 0.1), -1.0, 1.0)
    assert got.tolist() == [np.nextafter(1.0, 0.0), -np.nextafter(1.0, 0.0),
                            np.nextafter(1.0, 0.0)]
    got32 = tanh_normal_mode(loc.float(), torch.full((3,), 0.1), 0.0, 2.0)
    assert got32[1].item() == float(np.nextafter(np.float32(0), np.float32(1)))
    assert got32[0].item() == float(np.nextafter(np.float32(2), np.float32(0)))


@pytest.mark.parametrize("n", [2, 20])  # the small-batch float path, the batched solve
def test_largest_finite_locations_are_next_to_the_bound(n):
    """|loc| whose 3 |loc| / (2 sigma^2) overflows float64: the start of the solve is inf and its
    first step inf - inf; the solve restarts from |loc| + 2 sigma^2 instead of returning NaN."""
    big = np.finfo(np.float64).max
    loc = torch.tensor([big, -big] * (n // 2), dtype=torch.float64)
    got = tanh_normal_mode(loc, torch.full_like(loc, 0.01), -1.0, 1.0)
    assert got.tolist() == [np.nextafter(1.0, 0.0), -np.nextafter(1.0, 0.0)] * (n // 2)


def test_tie_and_sign_of_zero():
    plus = tanh_normal_mode(torch.tensor([0.0]), torch.tensor([1.0]), -1.0, 1.0)
    minus = tanh_normal_mode(torch.tensor([-0.0]), torch.tensor([1.0]), -1.0, 1.0)
    assert plus.item() == pytest.approx(0.9575040240772687, abs=1e-7)
    assert minus.item() == -plus.item()
    assert tanh_normal_mode(torch.tensor([0.0]), torch.tensor([0.5]), -1.0, 1.0).item() == 0.0


def test_tensor_bounds_and_nan():
    loc = torch.tensor([0.2, float("nan")], dtype=torch.float64)
    got = tanh_normal_mode(loc, torch.ones(2, dtype=torch.float64),
                           torch.tensor([-1.0, 0.0]), torch.tensor([1.0, 2.0]))
    assert got[0].item() == pytest.approx(0.97301568665235424, abs=1e-13)
    assert torch.isnan(got[1])


def test_deterministic_no_rng_no_grad():
    loc = torch.tensor([0.2, -0.7], requires_grad=True)
    state = torch.random.get_rng_state()
    a = tanh_normal_mode(loc, torch.tensor([1.0, 0.4]), -1.0, 1.0)
    assert torch.equal(state, torch.random.get_rng_state())
    torch.manual_seed(123)
    b = tanh_normal_mode(loc, torch.tensor([1.0, 0.4]), -1.0, 1.0)
    assert torch.equal(a, b) and not a.requires_grad


# ---------------------------------------------------------------- drop-in for TorchRL


def test_is_a_torchrl_tanh_normal_with_the_same_density():
    import torchrl.modules

    loc, scale = torch.tensor([[0.2, -1.0]]), torch.tensor([[1.0, 0.5]])
    ours = TanhNormal(loc, scale, low=-3.0, high=7.0)
    theirs = torchrl.modules.TanhNormal(loc, scale, low=-3.0, high=7.0)
    assert isinstance(ours, torchrl.modules.TanhNormal)
    y = torch.tensor([[6.5, -1.0]])
    assert torch.equal(ours.log_prob(y), theirs.log_prob(y))
    assert torch.equal(ours.deterministic_sample, theirs.deterministic_sample)


def test_mode_property_equals_get_mode_and_the_oracle():
    loc, scale = torch.tensor([0.2, -0.05, 2.0]), torch.tensor([1.0, 0.8, 0.3])
    dist = TanhNormal(loc, scale)
    assert torch.equal(dist.mode, dist.get_mode())
    exp = oracle.modes(loc.double().numpy(), scale.double().numpy())
    assert np.abs(dist.mode.double().numpy() - exp.y).max() <= 1e-7


def test_deterministic_sample_is_the_transformed_location():
    """TorchRL documents deterministic_sample as the base location pushed through the
    transforms: c + r tanh(mu). It is not the mode (kept for compatibility)."""
    dist = TanhNormal(torch.tensor([0.2]), torch.tensor([1.0]), low=0.0, high=2.0)
    assert dist.deterministic_sample.item() == pytest.approx(1 + np.tanh(0.2), abs=1e-7)


def test_tanh_loc_uses_the_distributions_own_location():
    """With tanh_loc=True TorchRL moves the location to upscale * tanh(loc / upscale) (plus
    (low + high) / 2 for non-default bounds); the mode follows self.loc, whatever it is."""
    loc = torch.tensor([0.5, -3.0], dtype=torch.float64)
    for low, high in ((-1.0, 1.0), (-2.0, 3.0)):
        dist = TanhNormal(loc, torch.ones_like(loc), low=low, high=high, tanh_loc=True,
                          upscale=2.0)
        exp = oracle.modes(dist.loc.numpy(), np.ones(2), low, high)
        assert np.abs(dist.get_mode().numpy() - exp.y).max() <= 1e-11
        # the density really peaks there
        y = dist.get_mode()
        for shift in (1e-4, -1e-4):
            assert bool((dist.log_prob(y) >= dist.log_prob(y + shift * (high - low))).all())


def test_probabilistic_actor_mode_exploration_returns_the_exact_mode():
    from tensordict import TensorDict
    from tensordict.nn import TensorDictModule
    from torchrl.envs.utils import ExplorationType, set_exploration_type
    from torchrl.modules import ProbabilisticActor

    net = TensorDictModule(lambda obs: (obs * 0 + 0.2, obs * 0 + 1.0), in_keys=["obs"],
                           out_keys=["loc", "scale"])
    actor = ProbabilisticActor(net, in_keys=["loc", "scale"], distribution_class=TanhNormal,
                               distribution_kwargs={"low": -1.0, "high": 1.0})
    td = TensorDict({"obs": torch.zeros(4, 1)}, [4])
    with set_exploration_type(ExplorationType.MODE):
        action = actor(td.clone())["action"]
    assert action.shape == (4, 1)
    assert torch.allclose(action, torch.full((4, 1), 0.97301568665235424), atol=1e-6)
    with set_exploration_type(ExplorationType.DETERMINISTIC):
        action = actor(td.clone())["action"]
    assert torch.allclose(action, torch.full((4, 1), float(np.tanh(0.2))), atol=1e-6)


def test_small_batch_float_path_agrees_with_the_vectorised_solve():
    """Small CPU batches are solved in Python floats (impls.tanh_normal_mode._small_batch_mode):
    the same formulas as the vectorised solve, equal to it up to float64 rounding, over the
    sweep's ranges and at the cusp."""
    from impls.tanh_normal_mode import SMALL_BATCH, _small_batch_mode

    rng = np.random.default_rng(3)
    m = np.concatenate([rng.uniform(-50, 50, 3000), rng.normal(0, 1e-3, 1000), [0.0, -0.0]])
    s = np.concatenate([np.exp(rng.uniform(np.log(1e-8), np.log(300), 3000)),
                        0.5 + rng.normal(0, 1e-3, 1000), [0.7, 0.7]])
    loc, scale = torch.tensor(m), torch.tensor(np.sqrt(s))
    vectorised = tanh_normal_mode(loc, scale, -1.0, 1.0)  # > SMALL_BATCH: the tensor path
    small = torch.cat([_small_batch_mode(loc[i:i + SMALL_BATCH], scale[i:i + SMALL_BATCH],
                                         -1.0, 1.0, torch.float64)
                       for i in range(0, len(m), SMALL_BATCH)])
    assert (small - vectorised).abs().max().item() <= 5e-14
    assert torch.equal(torch.signbit(small), torch.signbit(vectorised))
    for dtype in (torch.float32, torch.float64):  # the public entry takes the small path
        one = tanh_normal_mode(loc[:1].to(dtype).reshape(1, 1), scale[:1].to(dtype), 2.0, 5.0)
        ref = tanh_normal_mode(loc[:64].to(dtype).reshape(64, 1), scale[:64].to(dtype), 2.0, 5.0)
        assert one.dtype == dtype and one.shape == (1, 1) and not one.requires_grad
        assert abs(one.item() - ref[0, 0].item()) <= (4e-7 if dtype == torch.float32 else 2e-13)


@pytest.mark.parametrize(("loc", "scale"), [(0.5, 0.0), (float("nan"), 1.0), (1.0, float("inf")),
                                            (1e120, 1.0), (1.0, 1e-60)])
def test_small_batch_path_leaves_extreme_inputs_to_the_vectorised_solve(loc, scale):
    from impls.tanh_normal_mode import _small_batch_mode

    args = (torch.tensor([loc]), torch.tensor([scale]), -1.0, 1.0, torch.float64)
    assert _small_batch_mode(*args) is None
    tanh_normal_mode(*args[:4])  # and the public call does not raise


# ---------------------------------------------------------------- deferred construction


def test_constructor_defaults_are_torchrls():
    import inspect

    import torchrl.modules

    ours = inspect.signature(TanhNormal.__init__).parameters
    theirs = inspect.signature(torchrl.modules.TanhNormal.__init__).parameters
    assert {k: p.default for k, p in ours.items()} == {k: p.default for k, p in theirs.items()}


@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (0.1, 2.3), (-3, 7)])
def test_deferred_distribution_is_torchrls_once_built(bounds):
    """CPU tensors and number bounds: TorchRL's constructor waits. The mode (number bounds held
    as TorchRL holds them: float32 0-d tensors) equals the built one's bit for bit, and the first
    access to anything else builds the same distribution TorchRL builds."""
    import torchrl.modules

    low, high = bounds
    rng = np.random.default_rng(4)
    loc = torch.as_tensor(1.5 * rng.standard_normal((40, 3)))
    scale = torch.as_tensor(rng.uniform(0.05, 2.0, (40, 3)))
    lazy = TanhNormal(loc, scale, low=low, high=high)
    assert "_deferred" in lazy.__dict__ and "base_dist" not in lazy.__dict__
    mode = lazy.mode
    assert "_deferred" in lazy.__dict__  # the mode needed nothing more
    theirs = torchrl.modules.TanhNormal(loc, scale, low=low, high=high)
    assert lazy.batch_shape == theirs.batch_shape and "_deferred" not in lazy.__dict__
    assert torch.equal(mode, lazy.get_mode())  # now from TorchRL's own bound tensors
    y = theirs.sample((2,))
    assert torch.equal(lazy.log_prob(y), theirs.log_prob(y))
    assert torch.equal(lazy.low, theirs.low) and torch.equal(lazy.high, theirs.high)


def test_refused_bounds_raise_at_construction():
    with pytest.raises(RuntimeError, match="strictly greater"):
        TanhNormal(torch.zeros(3), torch.ones(3), low=1.0, high=1.0)


def test_deferred_distribution_copies_and_pickles():
    import copy
    import pickle

    dist = TanhNormal(torch.tensor([0.2, -1.0]), torch.tensor([1.0, 0.5]), low=-3.0, high=7.0)
    for other in (copy.deepcopy(dist), pickle.loads(pickle.dumps(dist))):
        assert torch.equal(other.mode, dist.mode)
        assert other.sample().shape == (2,)


def test_an_error_inside_mode_is_not_retried_on_a_built_distribution(monkeypatch):
    """A property that raises AttributeError sends Python to __getattr__: the deferred
    distribution must raise it, not build itself and call the property again."""
    dist = TanhNormal(torch.tensor([0.2]), torch.tensor([1.0]))

    def broken(self):
        raise AttributeError("broken get_mode")

    monkeypatch.setattr(TanhNormal, "get_mode", broken)
    with pytest.raises(AttributeError):
        dist.mode  # noqa: B018
    assert "_deferred" in dist.__dict__
