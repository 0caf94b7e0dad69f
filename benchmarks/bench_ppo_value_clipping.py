"""PPO critic loss with value clipping: forward + backward over a batch."""

from benchmarks.common import DEVICES, IMPLEMENTATIONS, require, synchronize


class CriticLossClipped:
    params = [IMPLEMENTATIONS, DEVICES, [100, 1_000, 10_000, 100_000]]
    param_names = ["implementation", "device", "size"]

    def setup(self, implementation, device, size):
        dev = require(implementation, device)
        import torch
        from tensordict import TensorDict
        from tensordict.nn import TensorDictModule
        from torchrl.modules import ProbabilisticActor

        if implementation == "reference":
            from impls import ClipPPOLoss
        else:
            from torchrl.objectives import ClipPPOLoss

        class LocScale(torch.nn.Module):
            def forward(self, obs):
                return obs[..., :1] * 0, obs[..., :1] * 0 + 1

        actor = ProbabilisticActor(TensorDictModule(LocScale(), ["observation"], ["loc", "scale"]),
                                   in_keys=["loc", "scale"],
                                   distribution_class=torch.distributions.Normal,
                                   return_log_prob=True).to(dev)
        critic = TensorDictModule(torch.nn.Linear(8, 1), ["observation"], ["state_value"]).to(dev)
        self.loss = ClipPPOLoss(actor, critic, clip_value=0.2, loss_critic_type="l2",
                                entropy_bonus=False)
        g = torch.Generator().manual_seed(0)
        obs = torch.randn(size, 8, generator=g)
        td = TensorDict({"observation": obs, "action": torch.zeros(size, 1),
                         "advantage": torch.randn(size, 1, generator=g),
                         "value_target": torch.randn(size, 1, generator=g),
                         "state_value": torch.randn(size, 1, generator=g)}, [size]).to(dev)
        with torch.no_grad():
            td[self.loss.tensor_keys.sample_log_prob] = actor.get_dist(td).log_prob(td["action"])
        self.td, self.device = td, dev

    def time_forward_backward(self, implementation, device, size):
        out = self.loss(self.td)
        out["loss_critic"].backward()
        synchronize(self.device)
