"""The SAC oracle against values worked out by hand (no library loss code involved)."""

from __future__ import annotations

import math

import pytest
import torch

from conformance.oracles import sac_done_states as oracle

ALPHA, GAMMA = 0.5, 0.5
HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class LinearLocActor(torch.nn.Module):
    """loc = w * s0, scale = 1, noise = s1 (A = 1)."""

    def __init__(self, w=0.5):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(w, dtype=torch.float64))

    def forward(self, s):
        return self.w * s[..., :1], torch.ones_like(s[..., :1]), s[..., 1:2]


class AffineQ(torch.nn.Module):
    """Q(s, a) = c a + d (the state is ignored)."""

    def __init__(self, c, d):
        super().__init__()
        self.c = torch.nn.Parameter(torch.tensor(c, dtype=torch.float64))
        self.d = torch.nn.Parameter(torch.tensor(d, dtype=torch.float64))

    def forward(self, s, a):
        return self.c * a + self.d


def _t(obs, act, nobs, reward, done, terminated, row=None):
    f = lambda x: torch.tensor(x, dtype=torch.float64)  # noqa: E731
    n = len(reward)
    return oracle.Transitions(f(obs), f(act), f(nobs), f(reward), torch.tensor(done),
                              torch.tensor(terminated),
                              torch.tensor(row if row is not None else list(range(n))))


def continuous_case(done1=False):
    """Step 1 continues (or is truncated, done1=True); step 2 is terminal with a NaN s'."""
    actor, qs = LinearLocActor(), [AffineQ(1.0, 0.0), AffineQ(2.0, 1.0)]
    t = _t(obs=[[1.0, 0.0], [-2.0, 0.5]], act=[[0.5], [-1.0]],
           nobs=[[2.0, 1.0], [math.nan, math.nan]], reward=[1.0, -2.0],
           done=[done1, True], terminated=[False, True])
    return actor, qs, t


def test_continuous_losses_and_gradients_by_hand():
    actor, qs, t = continuous_case()
    terms = oracle.sac_losses("continuous", actor, qs, t, alpha=ALPHA, gamma=GAMMA,
                              target_entropy=-1.0)
    # step 1: a' = 0.5 * 2 + 1 * 1 = 2, log pi = -1/2 - log sqrt(2 pi); min(Q1, Q2) = min(2, 5)
    logp1 = -0.5 - HALF_LOG_2PI
    v1 = 2.0 - ALPHA * logp1
    y1 = 1.0 + GAMMA * v1
    y2 = -2.0  # terminal: no bootstrap, s' (NaN) never looked at
    assert terms.target.tolist() == pytest.approx([y1, y2], rel=1e-14)
    assert terms.next_value[0].item() == pytest.approx(v1, rel=1e-14)
    assert math.isnan(terms.next_value[1].item())
    # Q predictions: step 1 a=0.5 -> (0.5, 2.0); step 2 a=-1 -> (-1, -1)
    lq = ((0.5 - y1) ** 2 + (2.0 - y1) ** 2 + 2 * (-1.0 - y2) ** 2) / 2
    assert terms.loss_qvalue.item() == pytest.approx(lq, rel=1e-14)
    # actor: step 1 a~ = 0.5 (noise 0), log pi = -log sqrt(2 pi), min Q = Q1 = 0.5;
    #        step 2 a~ = -1 + 0.5 = -0.5, log pi = -1/8 - log sqrt(2 pi), min Q = Q1 = -0.5
    lp_a, lp_b = -HALF_LOG_2PI, -0.125 - HALF_LOG_2PI
    la = ((ALPHA * lp_a - 0.5) + (ALPHA * lp_b + 0.5)) / 2
    assert terms.loss_actor.item() == pytest.approx(la, rel=1e-14)
    assert terms.loss_alpha.item() == pytest.approx(
        -math.log(ALPHA) * ((lp_a + lp_b) / 2 - 1.0), rel=1e-14)
    # d loss_actor / d w = mean(-c1 * s0) (log pi does not depend on w: scale is fixed)
    (gw,) = torch.autograd.grad(terms.loss_actor, [actor.w])
    assert gw.item() == pytest.approx((-1.0 * 1.0 + -1.0 * -2.0) / 2, rel=1e-14)
    # the actor term does not train the Q-networks; the Q term does: d/d d1 = mean 2 (Q1 - y)
    gq = torch.autograd.grad(terms.loss_qvalue, [qs[0].d, qs[0].c])
    assert gq[0].item() == pytest.approx((2 * (0.5 - y1) + 2 * (-1.0 - y2)) / 2, rel=1e-14)
    assert gq[1].item() == pytest.approx((2 * (0.5 - y1) * 0.5 + 2 * (-1.0 - y2) * -1.0) / 2,
                                         rel=1e-14)
    assert torch.autograd.grad(terms.loss_actor, [qs[0].c], allow_unused=True)[0] is None


class LogitsActor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.theta = torch.nn.Parameter(torch.tensor(math.log(3.0), dtype=torch.float64))

    def forward(self, s):
        return torch.stack([torch.zeros_like(self.theta), self.theta]) + 0 * s[..., :1]


class TableQ(torch.nn.Module):
    def __init__(self, values):
        super().__init__()
        self.q = torch.nn.Parameter(torch.tensor(values, dtype=torch.float64))

    def forward(self, s):
        return self.q + 0 * s[..., :1]


def test_discrete_losses_by_hand():
    actor, qs = LogitsActor(), [TableQ([1.0, 2.0]), TableQ([3.0, 0.0])]
    t = _t(obs=[[0.3], [0.1]], act=[[0.0, 1.0], [1.0, 0.0]], nobs=[[0.7], [math.nan]],
           reward=[0.5, 1.0], done=[False, True], terminated=[False, True])
    terms = oracle.sac_losses("discrete", actor, qs, t, alpha=ALPHA, gamma=GAMMA,
                              target_entropy=0.25)
    p = [0.25, 0.75]  # softmax(0, log 3)
    minq = [1.0, 0.0]
    v = sum(pi * (q - ALPHA * math.log(pi)) for pi, q in zip(p, minq, strict=True))
    y1, y2 = 0.5 + GAMMA * v, 1.0
    assert terms.target.tolist() == pytest.approx([y1, y2], rel=1e-14)
    lq = ((2.0 - y1) ** 2 + (0.0 - y1) ** 2 + (1.0 - y2) ** 2 + (3.0 - y2) ** 2) / 2
    assert terms.loss_qvalue.item() == pytest.approx(lq, rel=1e-14)
    per_state = sum(pi * (ALPHA * math.log(pi) - q) for pi, q in zip(p, minq, strict=True))
    assert terms.loss_actor.item() == pytest.approx(per_state, rel=1e-14)
    neg_h = sum(pi * math.log(pi) for pi in p)
    assert terms.loss_alpha.item() == pytest.approx(-math.log(ALPHA) * (neg_h + 0.25), rel=1e-14)


def test_wrong_variants_by_hand():
    actor, _, t = continuous_case(done1=True)  # step 1 truncated, step 2 terminated
    qs = [AffineQ(1.0, 0.5), AffineQ(2.0, 1.0)]  # Q(s', 0) = (0.5, 1): zero action != zero value
    kw = dict(alpha=ALPHA, gamma=GAMMA, target_entropy=-1.0)
    right = oracle.sac_losses("continuous", actor, qs, t, **kw)
    v_right = 2.5 - ALPHA * (-0.5 - HALF_LOG_2PI)  # min(Q1, Q2)(s', a'=2) = 2.5
    assert right.target[0].item() == pytest.approx(1.0 + GAMMA * v_right)
    as_term = oracle.sac_losses("continuous", actor, qs, t,
                                variant="truncation_as_termination", **kw)
    assert as_term.target[0].item() == 1.0
    zero = oracle.sac_losses("continuous", actor, qs, t, variant="zero_action_at_truncation", **kw)
    assert zero.target[0].item() == pytest.approx(1.0 + GAMMA * 0.5)  # min Q(s', 0), log-prob 0
    for variant, loss in (("truncation_as_termination", as_term),
                          ("zero_action_at_truncation", zero)):
        cause = oracle.diagnose("continuous", float(loss.loss_qvalue.detach()), actor, qs, t, **kw)
        assert cause == oracle.WRONG_VARIANTS[variant]
    off = float(right.loss_qvalue.detach()) + 1.0
    assert oracle.diagnose("continuous", off, actor, qs, t, **kw) is None


def test_row_broadcast_variant_zeroes_the_other_agents_of_the_row():
    actor, qs = LinearLocActor(), [AffineQ(1.0, 0.0), AffineQ(2.0, 1.0)]
    # one row, two agents: agent 0 terminated, agent 1 continues
    t = _t(obs=[[1.0, 0.0], [1.0, 0.0]], act=[[0.5], [0.5]],
           nobs=[[math.nan, math.nan], [2.0, 1.0]],
           reward=[0.0, 1.0], done=[True, False], terminated=[True, False], row=[0, 0])
    wrong = oracle.sac_losses("continuous", actor, qs, t, alpha=ALPHA, gamma=GAMMA,
                              target_entropy=-1.0, variant="mask_broadcast_over_agents")
    assert wrong.target.tolist() == [0.0, 1.0]
    right = oracle.sac_losses("continuous", actor, qs, t, alpha=ALPHA, gamma=GAMMA,
                              target_entropy=-1.0)
    assert right.target[1].item() > 1.0


def test_flatten_keeps_rows_per_agent():
    b, n = 2, 3
    obs = torch.arange(b * n * 2, dtype=torch.float64).reshape(b, n, 2)
    flag = torch.zeros(b, n, 1, dtype=torch.bool)
    flag[1, 2] = True
    t = oracle.flatten(obs, obs, obs, torch.zeros(b, n, 1), flag, flag)
    assert t.row.tolist() == [0, 0, 0, 1, 1, 1]
    assert t.terminated.tolist() == [False] * 5 + [True]
    assert t.observation[4].tolist() == obs[1, 1].tolist()


def test_normal_log_prob_matches_torch():
    loc, scale, x = torch.tensor([0.3, -1.0]), torch.tensor([0.5, 2.0]), torch.tensor([0.1, 0.4])
    want = torch.distributions.Normal(loc.double(), scale.double()).log_prob(x.double()).sum()
    assert oracle.normal_log_prob(x.double(), loc.double(), scale.double()).item() == pytest.approx(
        want.item(), rel=1e-14)


def test_continuous_terms_per_agent_step_by_hand():
    """The per-agent-step terms (what reduction "none" reports) of continuous_case, and the
    batch's entropy: each loss is their mean."""
    actor, qs, t = continuous_case()
    terms = oracle.sac_losses("continuous", actor, qs, t, alpha=ALPHA, gamma=GAMMA,
                              target_entropy=-1.0)
    logp1 = -0.5 - HALF_LOG_2PI
    y1, y2 = 1.0 + GAMMA * (2.0 - ALPHA * logp1), -2.0
    lp_a, lp_b = -HALF_LOG_2PI, -0.125 - HALF_LOG_2PI
    per_step = {k: v.detach().tolist() for k, v in terms.per_step.items()}
    assert per_step["loss_qvalue"] == pytest.approx(
        [(0.5 - y1) ** 2 + (2.0 - y1) ** 2, 2 * (-1.0 - y2) ** 2], rel=1e-14)
    assert per_step["loss_actor"] == pytest.approx(
        [ALPHA * lp_a - 0.5, ALPHA * lp_b + 0.5], rel=1e-14)
    assert per_step["loss_alpha"] == pytest.approx(
        [-math.log(ALPHA) * (lp_a - 1.0), -math.log(ALPHA) * (lp_b - 1.0)], rel=1e-14)
    assert terms.entropy == pytest.approx(-(lp_a + lp_b) / 2, rel=1e-14)
    for name in ("loss_actor", "loss_qvalue", "loss_alpha"):
        assert terms.per_step[name].mean().item() == pytest.approx(
            getattr(terms, name).item(), rel=1e-14)


def test_discrete_entropy_is_the_exact_expectation():
    actor, qs = LogitsActor(), [TableQ([1.0, 2.0]), TableQ([3.0, 0.0])]
    t = _t(obs=[[0.3], [0.1]], act=[[0.0, 1.0], [1.0, 0.0]], nobs=[[0.7], [math.nan]],
           reward=[0.5, 1.0], done=[False, True], terminated=[False, True])
    terms = oracle.sac_losses("discrete", actor, qs, t, alpha=ALPHA, gamma=GAMMA,
                              target_entropy=0.25)
    p = [0.25, 0.75]
    assert terms.entropy == pytest.approx(-sum(pi * math.log(pi) for pi in p), rel=1e-14)
    assert terms.per_step["loss_alpha"].shape == (2,)


def test_weighted_terms_and_means_by_hand():
    """One weight per row, given to every agent-step of the row; the mean normalised by the
    weights or by the count."""
    actor, qs, t = continuous_case()
    t = oracle.Transitions(t.observation, t.action, t.next_observation, t.reward, t.done,
                           t.terminated, torch.tensor([0, 0]))  # two agents of one row
    terms = oracle.sac_losses("continuous", actor, qs, t, alpha=ALPHA, gamma=GAMMA,
                              target_entropy=-1.0)
    w = torch.tensor([0.5, 1.0])  # row 1 has no agent-step here
    per_step, by_weights = oracle.weighted(terms, w, t.row, "weights")
    _, by_count = oracle.weighted(terms, w, t.row, "count")
    q = terms.per_step["loss_qvalue"].detach()
    assert per_step["loss_qvalue"].tolist() == pytest.approx((0.5 * q).tolist(), rel=1e-14)
    assert by_weights["loss_qvalue"] == pytest.approx(float(q.mean()), rel=1e-14)
    assert by_count["loss_qvalue"] == pytest.approx(0.5 * float(q.mean()), rel=1e-14)
    with pytest.raises(ValueError, match="normalisation"):
        oracle.weighted(terms, w, t.row, "max")
