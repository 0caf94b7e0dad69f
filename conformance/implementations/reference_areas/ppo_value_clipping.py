from conformance.implementations.torchrl_areas.ppo_value_clipping import (
    PPOLossFamilyCriticValueNorm,
    value_normalisers,
)
from conformance.interface import PPO_LOSS_CLASSES
from conformance.interface.ppo_value_clipping import VALUE_NORM_LOSS_CLASSES


def make(adapter):
    import impls

    return PPOLossFamilyCriticValueNorm(
        impls.ClipPPOLoss, {name: getattr(impls, name) for name in PPO_LOSS_CLASSES},
        {name: getattr(impls, name) for name in VALUE_NORM_LOSS_CLASSES}, value_normalisers())
