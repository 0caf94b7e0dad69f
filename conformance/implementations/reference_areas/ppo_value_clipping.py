from conformance.implementations.torchrl_areas.ppo_value_clipping import PPOLossFamilyCritic
from conformance.interface import PPO_LOSS_CLASSES


def make(adapter):
    import impls

    return PPOLossFamilyCritic(impls.ClipPPOLoss,
                               {name: getattr(impls, name) for name in PPO_LOSS_CLASSES})
