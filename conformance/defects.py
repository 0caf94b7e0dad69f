"""The catalogue of TorchRL defects: data, read by the bug reports, the reports and the plug-in.

Each defect is one upstream bug of the pinned TorchRL release (``PINNED``), named by a slug, with
the expectation entries of ``conformance/expectations/torchrl-<PINNED>.txt`` it explains (their
test-id prefixes). A known failure of TorchRL carries its defect's slug as a field of its row
(``conformance.plugin.results``): the entry it matched, with the reason and link the pinned
release's entry has (the same spec failing for another, older reason is not this defect).

A low floor: this module imports nothing of the project, so that the plug-in, the reports, the
dashboard and ``conformance.upstream.bugs`` (the generator and verifier of the bug reports in
``reports/upstream-bugs/``) all read it without importing one another. Adding a defect: a
``Defect`` below and, for its reproducer and issue body, ``reports/upstream-bugs/<slug>.{py,md}``
(``python -m conformance.upstream.bugs`` fills their generated parts).
"""

from __future__ import annotations

from dataclasses import dataclass

PINNED = "0.14.1"  # the stack extra of pyproject.toml; a test checks that they agree
NOT_REPORTED = "not reported upstream"
#: the folder of the reproducers and issue bodies, relative to the project's root
BUGS_FOLDER = "reports/upstream-bugs"


class CatalogueError(ValueError):
    """The catalogue and the pinned release's expectations disagree (one line)."""


T_MODE = "conformance/test_tanh_normal_mode.py::"
T_COMP = "conformance/test_composite_log_prob.py::"
T_SAC = "conformance/test_sac_done_states.py::"
T_PPO = "conformance/test_ppo_value_clipping.py::"
T_PRB = "conformance/test_prioritized_replay.py::"
T_SAC_FAMILY = "conformance/test_sac_done_states_family.py::"
T_COMP_FAMILY = "conformance/test_composite_log_prob_family.py::"
T_PPO_OPTIONS = "conformance/test_ppo_value_clipping_options.py::"
T_PRB_CLASSES = "conformance/test_prioritized_replay_buffer_classes.py::"
T_PRB_CHECKPOINTS = "conformance/test_prioritized_replay_checkpoints.py::"
T_PRB_INDICES = "conformance/test_prioritized_replay_indices.py::"
T_PRB_OPTIONS = "conformance/test_prioritized_replay_options.py::"
T_PRB_SAMPLING = "conformance/test_prioritized_replay_sampling.py::"
T_PRB_TREES = "conformance/test_prioritized_replay_trees.py::"
PRB_SOURCE = ("https://github.com/pytorch/rl/blob/ae9719f17b1517af5c2523a36c4616f003ee55cf/torchrl/"
              "data/replay_buffers/samplers/prioritized.py")
SAC_MULTI = [f"{spec}[torchrl-{kind}-{layout}{skip}]"
             for spec, skip in (("test_losses_and_gradients_match_oracle", "-skip=True"),
                                ("test_no_done_and_all_done_batches", "-skip=True-done=all"),
                                ("test_terminal_next_states_never_reach_the_networks", ""),
                                ("test_truncated_transitions_bootstrap_from_the_next_state",
                                 "-skip=True"))
             for kind, layout in (("continuous", "per_agent"), ("continuous", "nested"),
                                  ("discrete", "nested"))]
#: the specs of issue #31 that stop at the same multi-agent skip_done_states failure
SAC_MULTI_DONE_ALONE = [
    f"{spec}[torchrl-{kind}-{layout}{skip}]"
    for spec, skip in (("test_done_alone_is_the_termination", "-skip=True"),
                       ("test_the_callers_batch_is_left_unchanged", "-skip=True"),
                       ("test_the_networks_are_shown_only_states_of_the_batch", ""))
    for kind, layout in (("continuous", "per_agent"), ("continuous", "nested"),
                         ("discrete", "nested"))]


@dataclass(frozen=True)
class Defect:
    slug: str
    area: str
    summary: str
    upstream: str  # an issue or PR that reports it, or NOT_REPORTED
    related: str  # the link its expectation entries carry, when it does not report the defect
    prefixes: tuple[str, ...]  # the test-id prefixes of its entries in the pinned release's file


DEFECTS = (
    Defect("tanh-normal-get-mode-on-the-bound", "tanh_normal_mode",
           "TanhNormal.get_mode() answers exactly low/high (density 0): the seed example gives "
           "1.0 instead of 0.97302", NOT_REPORTED,
           "https://github.com/pytorch/rl/pull/2198",
           tuple(T_MODE + s for s in ("test_seed_example", "test_large_abs_loc_mode_strictly_inside",
                                      "test_bimodal_regime", "test_tie_at_zero_loc",
                                      "test_asymmetric_bounds", "test_largest_finite_locations"))),
    Defect("tanh-normal-get-mode-unconverged", "tanh_normal_mode",
           "TanhNormal.get_mode() stops before the maximum (Adam, lr 1e-2, a batch-coupled "
           "stopping rule): 0.05 off for small scales", NOT_REPORTED,
           "https://github.com/pytorch/rl/pull/2198",
           tuple(T_MODE + s for s in ("test_unimodal_regime", "test_tiny_scale_mode_approaches_tanh_loc",
                                      "test_batch_shapes", "test_tanh_loc_mode_uses_rescaled_location",
                                      "test_log_density_at_mode_beats_dense_grid",
                                      "test_random_batch_matches_scipy", "test_near_the_cusp",
                                      "test_per_dimension_bounds", "test_scale_broadcast_over_loc",
                                      "test_half_precision"))),
    Defect("tanh-normal-get-mode-global-rng", "tanh_normal_mode",
           "TanhNormal.get_mode() draws 1000 samples from the global RNG: its answer depends on "
           "the seed and it moves the caller's random stream", NOT_REPORTED,
           "https://github.com/pytorch/rl/pull/2198",
           (T_MODE + "test_deterministic_whatever_the_global_rng",
            T_MODE + "test_mode_does_not_consume_global_rng")),
    Defect("composite-log-prob-aggregates-over-sample-ndim", "composite_log_prob",
           "CompositeDistribution.log_prob sums over the sample tensordict's batch dims, not the "
           "distribution's: a batch_size=[] sample gives one scalar", NOT_REPORTED,
           "https://github.com/pytorch/rl/issues/2487",
           tuple(f"{T_COMP}test_aggregate_does_not_depend_on_the_sample_tensordict[torchrl-heads={h}-{s}]"
                 for h in ("seed", "mixed") for s in ("sample-batch=[]", "sample-batch=[B]-of-[B,T]"))),
    Defect("composite-categorical-trailing-singleton", "composite_log_prob",
           "a Categorical action stored as [B, 1] is broadcast against [B, n] logits: [B, B] "
           "log-probs, PPO ratio ~1e-13 for an unchanged policy",
           "https://github.com/pytorch/rl/issues/2487", "",
           tuple(f"{T_COMP}{spec}[torchrl-heads={h}-trailing-singleton]"
                 for spec in ("test_aggregate_does_not_depend_on_the_sample_tensordict",
                              "test_ppo_ratio_of_unchanged_policy_is_one") for h in ("seed", "mixed"))
           + tuple(f"{T_COMP}test_aggregate_does_not_depend_on_the_sample_tensordict[torchrl-heads={h}-"
                   "trailing-singleton-batch=[B,2]]" for h in ("seed", "mixed"))),
    Defect("composite-mean-exploration-nan-categorical", "composite_log_prob",
           "under ExplorationType.MEAN a Categorical head's NaN mean reaches log_prob: an "
           "index error instead of one naming the head", NOT_REPORTED,
           "https://github.com/pytorch/rl/issues/2402",
           tuple(f"{T_COMP}test_actor_log_probs_match_oracle[torchrl-heads={h}-exploration=mean]"
                 for h in ("seed", "mixed"))
           + (f"{T_COMP}test_mean_exploration_with_normal_heads[torchrl-heads=normal-first]",)),
    Defect("composite-actor-name-map-not-validated", "composite_log_prob",
           "ProbabilisticActor with a CompositeDistribution accepts nested out_keys without a "
           "name_map, a head missing from name_map or an unknown name_map key, and writes "
           "samples at the wrong keys", NOT_REPORTED, "https://github.com/pytorch/rl/issues/2402",
           tuple(f"{T_COMP}test_misconfigured_actor_names_the_key[torchrl-{case}]"
                 for case in ("no_name_map", "name_map_missing_head", "name_map_unknown_key"))),
    Defect("sac-skip-done-states-multi-agent-done", "sac_done_states",
           "SACLoss/DiscreteSACLoss(skip_done_states=True) fail with per-agent [B, N, 1] done "
           "(RuntimeError) and nested agent-group done keys (IndexError)", NOT_REPORTED,
           "https://github.com/pytorch/rl/issues/2612", tuple(T_SAC + p for p in SAC_MULTI)
           + tuple(f"{T_SAC_FAMILY}test_more_than_two_qvalue_networks[torchrl-continuous-per_agent-"
                   f"qnets={q}-skip=True]" for q in (3, 4))
           + tuple(T_SAC + p for p in SAC_MULTI_DONE_ALONE)),
    Defect("sac-skip-done-states-masks-truncated", "sac_done_states",
           "skip_done_states=True masks next states by done, not terminated: truncated "
           "transitions lose their bootstrap value", NOT_REPORTED,
           "https://github.com/pytorch/rl/pull/2613",
           tuple(f"{T_SAC}test_truncated_transitions_bootstrap_from_the_next_state[torchrl-{c}-skip=True]"
                 for c in ("continuous-single", "discrete-single", "discrete-per_agent"))),
    Defect("sac-skip-done-states-nan-reaches-qvalue", "sac_done_states",
           "skip_done_states=True keeps terminal next observations from the actor but not from "
           "the Q-network: a NaN terminal observation makes loss_qvalue NaN", NOT_REPORTED,
           "https://github.com/pytorch/rl/issues/2590",
           (T_SAC + "test_terminal_next_states_never_reach_the_networks[torchrl-continuous-single]",
            T_SAC + "test_done_alone_is_the_termination[torchrl-continuous-single-skip=True]")),
    Defect("sac-discrete-masked-action-nan", "sac_done_states",
           "DiscreteSACLoss gives NaN losses for an action-masked policy (logit -inf): "
           "actor_loss weights dist.logits by dist.probs (0 * -inf), and the skip_done_states "
           "path scores next_dist.logits", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17b1517af5c2523a36c4616f003ee55cf/torchrl/objectives/sac.py#L1532",
           (T_SAC_FAMILY + "test_discrete_masked_actions_give_finite_losses",)),
    Defect("ppo-composite-entropy-per-head", "composite_log_prob",
           "ClipPPOLoss's per-head entropy_coeff weights each head's entropy as it comes: a "
           "Normal head's [*batch, d] entropy is broadcast against a categorical head's "
           "(wrong value at [B], shape error at [B, T])", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17b1517af5c2523a36c4616f003ee55cf/torchrl/objectives/ppo.py#L1073",
           tuple(f"{T_COMP_FAMILY}test_entropy_bonus_of_a_composite_policy[torchrl-heads=mixed-"
                 f"batch={b}-coeff=per-head]" for b in ("[B]", "[B,T]"))),
    Defect("ppo-negative-clip-value-accepted", "ppo_value_clipping",
           "ClipPPOLoss accepts a negative clip_value and clamps with inverted bounds",
           NOT_REPORTED, "https://github.com/pytorch/rl/pull/2005",
           (T_PPO + "test_negative_clip_value_is_rejected",
            T_PPO_OPTIONS + "test_an_invalid_clip_value_is_refused_naming_it[torchrl-negative-tensor]")),
    Defect("prb-max-slot-overwrite", "prioritized_replay",
           "PrioritizedSampler(max_priority_within_buffer=True): an item written over the slot "
           "of the maximum inherits the evicted maximum, then the default falls back to 1.0",
           NOT_REPORTED, "https://github.com/pytorch/rl/pull/2215",
           tuple(T_PRB + s for s in (
               "test_item_written_over_the_max_slot_gets_the_max_of_what_remains",
               "test_default_after_overwriting_the_max_slot_is_the_max_of_what_remains",
               "test_property_random_programs_agree_with_the_model",
               "test_random_sequences_agree_with_the_model[torchrl-seed=1]",
               "test_random_sequences_agree_with_the_model[torchrl-seed=2]"))),
    Defect("prb-no-upper-bound-on-default-priority", "prioritized_replay",
           "PrioritizedSampler has no upper bound on the default priority of new items (the "
           "proposal of #2210 was not merged)", "https://github.com/pytorch/rl/issues/2210", "",
           (T_PRB + "test_upper_bound_caps_the_default",
            T_PRB_CLASSES + "test_example_buffer_caps_the_default",
            T_PRB_SAMPLING + "test_a_non_positive_upper_bound_is_refused_naming_it",
            *(f"{T_PRB_OPTIONS}test_sync_false_follows_the_same_law[torchrl-{cls}-upper=4.0]"
              for cls in ("PrioritizedReplayBuffer", "TensorDictPrioritizedReplayBuffer")))),
    Defect("prb-alpha-change-from-zero", "prioritized_replay",
           "PrioritizedSampler: changing alpha away from 0 keeps the trees uniform (the raw "
           "priorities are not kept), so sampling ignores the stored priorities",
           "https://github.com/pytorch/rl/pull/4014", "",
           (T_PRB + "test_changing_alpha_keeps_the_tree_and_the_maximum_consistent[torchrl-0.6-0-0.8]",
            T_PRB_CHECKPOINTS + "test_file_checkpoint_at_alpha_zero_keeps_the_priorities")),
    # ---- found by the specs of issue #31 (suite power)
    Defect("tanh-normal-get-mode-integer-parameters", "tanh_normal_mode",
           "TanhNormal.get_mode() starts from 1000 samples, which torch cannot draw for integer "
           "loc/scale: the distribution is built, its mode raises NotImplementedError", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/00b7c2e8f38730747f9484e7fa3b763e509cc914/torchrl/modules/distributions/continuous.py#L499-L528",
           (T_MODE + "test_integer_parameters",)),
    Defect("composite-categorical-action-unchecked", "composite_log_prob",
           "CompositeDistribution.log_prob passes an out-of-range Categorical action to gather "
           "unchecked (torchrl turns validation off): 'index 8 is out of bounds', naming no head", NOT_REPORTED, "https://github.com/pytorch/rl/issues/2402",
           tuple(f"{T_COMP}test_out_of_range_categorical_action_is_refused_naming_the_head[torchrl-"
                 f"action={a}]" for a in ("n", "-1"))),
    Defect("composite-missing-head-action", "composite_log_prob",
           "CompositeDistribution.log_prob reads a missing head's action as None and passes it "
           "to the head's log_prob: a TypeError naming no key", NOT_REPORTED, "https://github.com/pytorch/rl/issues/2402",
           (T_COMP + "test_sample_without_a_head_is_refused_naming_it[torchrl]",)),
    Defect("ppo-nan-clip-value-accepted", "ppo_value_clipping",
           "ClipPPOLoss accepts a NaN clip_value, float or tensor (register_coeff_buffer checks "
           "type and size only): the critic loss and its gradient are NaN", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17/torchrl/objectives/common.py#L764-L797",
           tuple(f"{T_PPO_OPTIONS}test_an_invalid_clip_value_is_refused_naming_it[torchrl-{c}]"
                 for c in ("nan", "nan-tensor"))),
    Defect("ppo-separate-losses-non-functional", "ppo_value_clipping",
           "ClipPPOLoss(separate_losses=True, functional=False): the shared parameters are "
           "detached only in functional copies, so the critic loss trains the policy's trunk", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17/torchrl/objectives/ppo.py#L527-L540",
           (T_PPO_OPTIONS + "test_separate_losses_keeps_the_critic_gradient_off_shared_parameters"
            "[torchrl-separate_losses=True-functional=False]",)),
    Defect("prb-load-ignores-capacity", "prioritized_replay",
           "PrioritizedSampler.load_state_dict takes a state of another capacity without error: "
           "a 16-slot state loaded into a sampler of 8 or 32 slots leaves it with trees of 16 "
           "leaves", NOT_REPORTED, f"{PRB_SOURCE}#L700-L718",
           tuple(f"{T_PRB_CHECKPOINTS}test_checkpoint_of_another_capacity_is_refused[torchrl-{f}"
                 for f in ("state_dict", "torchrl-entries"))),
    Defect("prb-refused-load-changes-sampler", "prioritized_replay",
           "a checkpoint that PrioritizedSampler.loads or load_state_dict refuses (other "
           "capacity, no trees) has already set alpha, beta, eps and the maximum: the default "
           "priority changes", NOT_REPORTED, f"{PRB_SOURCE}#L784-L795",
           (T_PRB_CHECKPOINTS + "test_checkpoint_of_another_capacity_is_refused[torchrl-files",
            T_PRB_CHECKPOINTS + "test_a_state_without_trees_is_refused")),
    Defect("prb-loads-without-tree-file", "prioritized_replay",
           "PrioritizedSampler.loads of a folder without sumtree.memmap raises nothing: the file"
           " is created with zeros, the sum tree loads as 0 and sample() fails (non-positive "
           "p_sum)", NOT_REPORTED, f"{PRB_SOURCE}#L798-L811",
           (T_PRB_CHECKPOINTS + "test_a_folder_without_its_tree_file_is_refused",)),
    Defect("prb-dumps-empty-sampler", "prioritized_replay",
           "PrioritizedSampler.dumps of a sampler with no maximum yet (new, or its buffer "
           "emptied) fails: tree_map(float) on (None, None); ReplayBuffer.dumps of an emptied "
           "buffer fails with it", NOT_REPORTED, f"{PRB_SOURCE}#L755-L764",
           (T_PRB_CHECKPOINTS + "test_checkpoint_of_an_empty_buffer[torchrl-files",
            T_PRB_CHECKPOINTS + "test_example_buffer_checkpoint_of_an_empty_buffer[torchrl-files")),
    Defect("prb-priority-dtype-not-converted", "prioritized_replay",
           "update_priority writes (p + eps)^alpha into the trees in the priorities' dtype: "
           "float64 priorities raise on the default float32 trees, and dtype=torch.float64 trees"
           " raise at the first extend", NOT_REPORTED, f"{PRB_SOURCE}#L659-L661",
           (T_PRB_OPTIONS + "test_float64_buffer_keeps_float64_precision",
            T_PRB_OPTIONS + "test_float64_priorities_in_a_float32_buffer",
            T_PRB_SAMPLING + "test_weights_come_in_the_samplers_dtype[torchrl-dtype=float64]",
            T_PRB_INDICES + "test_update_priority_takes_every_index_form[torchrl-float64-priorities]")),
    Defect("prb-tree-search-weight-zero-leaf", "prioritized_replay",
           "SumSegmentTree.scan_lower_bound (a lower-bound search) returns leaf 0 of weight 0 "
           "for a mass of 0, and an index (0 or size) on a tree of total 0 instead of refusing", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/csrc/segment_tree.h",
           (T_PRB_OPTIONS + "test_a_mass_on_an_item_boundary_finds_a_leaf_of_positive_weight",
            T_PRB_TREES + "test_search_of_an_all_zero_sum_tree_is_refused")),
    Defect("prb-negative-eps-accepted", "prioritized_replay",
           "eps is not validated: a negative eps is accepted, and (p + eps)^alpha is NaN for "
           "every priority below -eps (NaN total, NaN weights)", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/data/replay_buffers/samplers/prioritized.py",
           (T_PRB_SAMPLING + "test_a_negative_keyword_is_refused_naming_it[torchrl-eps=-0.5]",)),
    Defect("prb-no-initial-priority-keyword", "prioritized_replay",
           "no initial_priority argument: the items stored before any priority is given always "
           "get 1.0, whatever the scale of the TD errors (feature gap)", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/data/replay_buffers/samplers/prioritized.py",
           (T_PRB_SAMPLING + "test_initial_priority_is_the_first_default",
            T_PRB_SAMPLING + "test_a_negative_keyword_is_refused_naming_it[torchrl-initial_priority=-1]")),
    Defect("prb-segment-tree-index-unchecked", "prioritized_replay",
           "SumSegmentTreeFp32/MinSegmentTreeFp32 index slot i OR capacity unchecked, and "
           "update_priority passes slots on unchecked: an out-of-range slot writes a padding leaf "
           "counted in the total, another item's leaf, or outside the tree",
           NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17b1517af5c2523a36c4616f003ee55cf/torchrl/csrc/segment_tree.h#L56-L88",
           (T_PRB_TREES + "test_an_index_past_the_last_leaf_is_refused",
            T_PRB_INDICES + "test_an_index_past_the_capacity_is_refused")),
)
BY_SLUG = {d.slug: d for d in DEFECTS}


def owners(entries) -> dict:
    """Entry prefix -> its defect, for the pinned release's expectation ``entries`` (objects with
    ``prefix``); every prefix a defect names must be one of them, and claimed once."""
    prefixes = {e.prefix for e in entries}
    owner: dict[str, Defect] = {}
    for defect in DEFECTS:
        for prefix in defect.prefixes:
            if prefix not in prefixes:
                raise CatalogueError(f"defect {defect.slug} names {prefix}, which is no entry of "
                                     f"torchrl-{PINNED}.txt")
            if prefix in owner:
                raise CatalogueError(f"{prefix} is claimed by {owner[prefix].slug} and "
                                     f"{defect.slug}")
            owner[prefix] = defect
    return owner


def defect_for(nodeid: str, reason: str | None, link: str | None, entries, owner: dict):
    """The defect a TorchRL known failure shows (None: none): the pinned release's entry of its
    test (the first whose prefix it starts with), when that entry has the same reason and link
    (the same spec failing for another, older reason is not this defect)."""
    entry = next((e for e in entries if "torchrl" in e.impls and nodeid.startswith(e.prefix)),
                 None)
    if entry is None or entry.prefix not in owner or reason is None:
        return None
    if (reason, link) != (entry.reason, entry.link):
        return None
    return owner[entry.prefix]
