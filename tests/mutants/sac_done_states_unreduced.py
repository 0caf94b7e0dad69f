"""The reference SAC losses broken where §3's unreduced specs
(``conformance/test_sac_done_states_unreduced.py``) look, each seen through the adapter that
TorchRL and the reference go through:

- ``EMPTY_OUTPUT_BATCH``: the losses come in a TensorDict of batch size [], whatever the
  reduction (TorchRL before pytorch/rl#3426, issue #2338);
- ``ENTROPY_PER_SAMPLE``: the entropy reported beside unreduced losses is the per-sample
  estimate, not its batch mean;
- ``AGENTS_AVERAGED``: per-agent losses averaged over the agents ([B] instead of [B, N]);
- ``ALPHA_LOSS_BROADCAST``: the temperature loss's batch mean copied to every sample (the
  right shape and mean, the wrong values);
- ``MEAN_PER_ROW``: the "mean" reduction divides by the rows, not the agent-steps (the reduced
  loss is no longer the mean of the unreduced one when there are agents).
"""

from __future__ import annotations

from tensordict import TensorDict

from conformance.implementations.torchrl_areas.sac_done_states import TorchRLSACDoneStates
from impls.sac_done_states import DiscreteSACLoss, SACLoss
from tests.mutants import implementation

LOSSES = ("loss_actor", "loss_qvalue", "loss_alpha")


class _EmptyOutputBatch:
    def forward(self, tensordict):
        out = super().forward(tensordict)
        return TensorDict({k: out.get(k) for k in out.keys()}, [])


class _EntropyPerSample:
    def forward(self, tensordict):
        out = super().forward(tensordict)
        if self.reduction == "none":
            # loss_alpha = -log(alpha) (log pi + target): the per-sample log-prob read back
            log_prob = -out.get("loss_alpha") / self.log_alpha - self.target_entropy
            out.set_non_tensor("entropy", -log_prob.detach())
        return out


class _AgentsAveraged:
    def forward(self, tensordict):
        out = super().forward(tensordict)
        if self.reduction != "none":
            return out
        lead = tensordict.ndim
        losses = {k: out.get(k) for k in LOSSES}
        averaged = {k: v.reshape(*v.shape[:lead], -1).mean(-1) if v.ndim > lead else v
                    for k, v in losses.items()}
        return TensorDict(averaged, tensordict.batch_size)


class _AlphaLossBroadcast:
    def _alpha_loss(self, log_prob):
        return super()._alpha_loss(log_prob).mean().expand_as(log_prob)


class _MeanPerRow:
    def _reduce_loss(self, loss, tensordict=None, **kwargs):
        if self.reduction == "mean" and loss.ndim > 1:
            weights = kwargs.get("weights")
            if weights is None and kwargs.get("mask") is None:
                return loss.sum() / loss.shape[0]
        return super()._reduce_loss(loss, tensordict, **kwargs)


def _impl(name: str, mixin):
    sac = type(f"{name}SAC", (mixin, SACLoss), {})
    discrete = type(f"{name}DiscreteSAC", (mixin, DiscreteSACLoss),
                    {"out_keys": list(DiscreteSACLoss.out_keys)})
    area = TorchRLSACDoneStates(sac, discrete, library=f"mutant {name}")
    return implementation(name.lower().replace("_", "-"), sac_done_states=area)


class _Nothing:
    pass


MUTANTS = ["EMPTY_OUTPUT_BATCH", "ENTROPY_PER_SAMPLE", "AGENTS_AVERAGED", "ALPHA_LOSS_BROADCAST",
           "MEAN_PER_ROW"]
EMPTY_OUTPUT_BATCH = _impl("EMPTY_OUTPUT_BATCH", _EmptyOutputBatch)
ENTROPY_PER_SAMPLE = _impl("ENTROPY_PER_SAMPLE", _EntropyPerSample)
AGENTS_AVERAGED = _impl("AGENTS_AVERAGED", _AgentsAveraged)
ALPHA_LOSS_BROADCAST = _impl("ALPHA_LOSS_BROADCAST", _AlphaLossBroadcast)
MEAN_PER_ROW = _impl("MEAN_PER_ROW", _MeanPerRow)
UNMUTATED = _impl("UNMUTATED", _Nothing)
