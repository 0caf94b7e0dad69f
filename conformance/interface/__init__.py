"""What an implementation must provide for the suite to check it, area by area.

An *implementation* is any object with one attribute per area (``AREAS``, defined once in
``conformance/areas.py``, in the SPECS order §1 to §5). An attribute that is missing or
``None`` declares the area unsupported: its specs are reported as "not applicable", never as
passed. An area attribute may also raise ``Untestable`` when it is looked up (e.g. a C++
extension that does not load next to the installed torch): its specs are then reported as
"cannot be tested here: <reason>".

One module per area (``conformance/interface/<area>.py``) holds that area's protocol, the data
its calls exchange, and its *optional capabilities*: what the family specs
(``conformance/test_<area>_family.py``) need beyond the protocol. A capability is a method an
area object *may* have; an area without it has those specs reported "not applicable: <impl>
does not provide <capability>" (``conformance/capabilities.py``), one that has it is held to
its protocol. An implementation that has the method but cannot express one case raises
``NotImplementedError("<why>")`` as usual.

Devices. A run checks implementations on one device (``--device cpu`` by default, or
``cuda`` / ``cuda:N``); the oracles stay on the CPU in float64 whatever it is.

- Every tensor a spec hands an area arrives on the run's device, and so do the modules it hands
  in (value networks, ``SACNetworks``). Every tensor the area returns must be on that device
  too: a tensor found elsewhere fails the spec, naming both devices. Numbers and numpy arrays
  are host values, as before. A ``generator`` handed to ``sample`` is on the run's device.
- A call that receives no tensor (``PrioritizedReplay.buffer``, ``PrioritizedSlices.
  slice_buffer``) receives the device as the keyword ``device=`` (a ``torch.device``), and the
  buffer it returns says where its priorities live with an optional ``.device`` attribute
  (none: host memory, the CPU).
- An area declares the devices it runs on with an optional attribute ``devices``, a tuple of
  device types (``("cpu", "cuda")``), and may say why it runs on no other with ``devices_why``.
  On a device whose type is not declared its specs are reported "not applicable: <impl> <area>
  does not run on <device>: <why>", never passed. Only an area that declares ``devices``
  receives ``device=``; one that declares nothing runs on the CPU only and is called exactly as
  before devices existed (plug-ins written earlier keep working unchanged).
- A call that cannot run on the run's device on this machine (say, a library built without its
  CUDA kernels) raises ``Untestable("<why>")``: its spec is reported "cannot be tested here".

Adapters for real libraries live in ``conformance/implementations/``; ``--impl pkg.mod:obj``
plugs in anything else that satisfies these protocols. Everything is importable from
``conformance.interface`` itself.
"""

from __future__ import annotations

from conformance.areas import AREAS
from conformance.interface.base import Implementation, Untestable
from conformance.interface.composite_log_prob import (
    COMPOSITE_EXPLORATION_TYPES,
    COMPOSITE_MISCONFIGURATIONS,
    CompositeDeclaredKeys,
    CompositeEntropy,
    CompositeHead,
    CompositeLogProb,
    CompositeLogProbs,
    CompositeLogProbWithSum,
    CompositePPOChanged,
    CompositePPOStep,
)
from conformance.interface.ppo_value_clipping import (
    PPO_LOSS_CLASSES,
    CompositeCriticReport,
    CriticLoss,
    CriticReport,
    PolicyObjective,
    PPOClipRange,
    PPOCriticComposite,
    PPOCriticMasks,
    PPOCriticOptions,
    PPOCriticValueNorm,
    PPOEffectiveSampleSize,
    PPOLossFamily,
    PPOValueClipping,
)
from conformance.interface.prioritized_replay import (
    EXAMPLE_BUFFER_KINDS,
    SAMPLER_BUFFER_KINDS,
    PrioritizedBuffer,
    PrioritizedBufferClasses,
    PrioritizedBufferOptions,
    PrioritizedCheckpoints,
    PrioritizedDraw,
    PrioritizedHistorical,
    PrioritizedIndexForms,
    PrioritizedReplay,
    PrioritizedSamplerKeywords,
    PrioritizedSamplerTree,
    PrioritizedSlices,
    PrioritizedTrees,
    SegmentTreeHandle,
)
from conformance.interface.sac_done_states import (
    SAC_LAYOUTS,
    WEIGHT_NORMALISATIONS,
    SACActionSpace,
    SACAutoTargetEntropy,
    SACBatch,
    SACCallerBatch,
    SACDoneStates,
    SACHeldBatch,
    SACNetworks,
    SACOutcome,
    SACUnreduced,
    SACUnreducedLosses,
    SACWeighted,
    SACWeightedLosses,
)
from conformance.interface.tanh_normal_mode import (
    TanhNormalCallableScale,
    TanhNormalMode,
    TanhNormalScore,
)

#: area -> capability method -> its protocol (checked by conformance/test_interface.py)
CAPABILITIES: dict[str, dict[str, type]] = {
    "tanh_normal_mode": {"sample_and_score": TanhNormalScore,
                         # a scale given as a callable of loc (pytorch/rl#3296)
                         "make_with_scale_fn": TanhNormalCallableScale},
    "composite_log_prob": {"ppo_step_changed": CompositePPOChanged,
                           "entropy_loss": CompositeEntropy,
                           "log_prob_with_sum": CompositeLogProbWithSum,
                           "actor_out_keys": CompositeDeclaredKeys},
    "ppo_value_clipping": {"critic_loss_of": PPOLossFamily,
                           "critic_loss_with": PPOCriticOptions,
                           "critic_loss_masked": PPOCriticMasks,
                           "objective_with": PPOClipRange,
                           "ess_of": PPOEffectiveSampleSize,
                           "critic_loss_value_norm": PPOCriticValueNorm,
                           "critic_loss_composite": PPOCriticComposite},
    "prioritized_replay": {"slice_buffer": PrioritizedSlices,
                           # issue #31: the trees and the historical maximum
                           "segment_tree": PrioritizedTrees,
                           "sampler_sum_tree": PrioritizedSamplerTree,
                           "historical_buffer": PrioritizedHistorical,
                           # checkpoints in TorchRL's formats; the buffer classes as TorchRL's
                           # examples build them
                           "dump_sampler": PrioritizedCheckpoints,
                           "example_buffer": PrioritizedBufferClasses,
                           # the sampler's own keywords and the buffer's own generator
                           "sampler_buffer": PrioritizedSamplerKeywords,
                           # the classes with TorchRL's other options (storage, dtype, sync)
                           "option_buffer": PrioritizedBufferOptions,
                           # update_priority / mark_update with the inputs as given
                           "update_as_given": PrioritizedIndexForms},
    "sac_done_states": {"batch_around_loss": SACCallerBatch,
                        # issue #43: losses per agent-step (pytorch/rl#3426), and the
                        # automatic target entropy (pytorch/rl#3292, #3312)
                        "losses_unreduced": SACUnreducedLosses,
                        "auto_target_entropy": SACAutoTargetEntropy,
                        # issue #43: a batch with importance weights (pytorch/rl#3235)
                        "losses_weighted": SACWeightedLosses},
}

#: area name -> the protocol its attribute must satisfy (checked by conformance/test_interface.py)
PROTOCOLS: dict[str, type] = {
    "tanh_normal_mode": TanhNormalMode,
    "composite_log_prob": CompositeLogProb,
    "sac_done_states": SACDoneStates,
    "ppo_value_clipping": PPOValueClipping,
    "prioritized_replay": PrioritizedReplay,
}
assert list(PROTOCOLS) == list(AREAS), "PROTOCOLS must follow conformance/areas.py"
assert set(CAPABILITIES) <= set(AREAS), "CAPABILITIES must name areas of conformance/areas.py"

__all__ = [
    "AREAS", "CAPABILITIES", "COMPOSITE_EXPLORATION_TYPES", "COMPOSITE_MISCONFIGURATIONS",
    "CompositeDeclaredKeys", "CompositeEntropy", "CompositeHead", "CompositeLogProb",
    "CompositeLogProbWithSum", "CompositeLogProbs", "CompositePPOChanged", "CompositePPOStep",
    "CompositeCriticReport", "CriticLoss", "CriticReport", "Implementation", "PPOClipRange", "PPOCriticComposite", "PPOCriticMasks", "PPOCriticValueNorm", "PPOEffectiveSampleSize", "PolicyObjective", "PPOCriticOptions", "PPOLossFamily",
    "PPOValueClipping", "PPO_LOSS_CLASSES", "PROTOCOLS", "PrioritizedBuffer", "PrioritizedDraw",
    "PrioritizedHistorical", "PrioritizedIndexForms", "PrioritizedReplay",
    "PrioritizedSamplerKeywords", "PrioritizedSamplerTree", "PrioritizedSlices",
    "PrioritizedTrees", "SACBatch", "SACCallerBatch", "SACDoneStates", "SACHeldBatch",
    "SAC_LAYOUTS", "SegmentTreeHandle",
    "SACNetworks", "SACOutcome", "TanhNormalMode", "TanhNormalScore", "Untestable",
]
__all__ += ["EXAMPLE_BUFFER_KINDS", "PrioritizedBufferClasses", "PrioritizedCheckpoints",
            "SAMPLER_BUFFER_KINDS"]
__all__ += ["PrioritizedBufferOptions"]
__all__ += ["SACActionSpace", "SACAutoTargetEntropy", "SACUnreduced", "SACUnreducedLosses",
            "SACWeighted", "SACWeightedLosses", "WEIGHT_NORMALISATIONS"]
__all__ += ["TanhNormalCallableScale"]
