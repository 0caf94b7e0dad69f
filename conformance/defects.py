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

Each entry also says what it is (``kind``: a defect, a documented limitation quoting its
documentation, a feature gap, or a defect ``elsewhere``, in tensordict's or torch's code), the
repository its report goes to, and the upstream threads the search of
``reports/upstream-bugs/SEARCH.md`` found (``threads``; ``upstream`` names the one that reports
it, if any). A defect seen only on a CUDA device (``seen_on="cuda"``) names its specs, which
pass on the CPU and have no expectation entry (expectations are not per device).
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
T_SAC_UNREDUCED = "conformance/test_sac_done_states_unreduced.py::"
T_SAC_WEIGHTS = "conformance/test_sac_done_states_priority_weights.py::"
T_SAC_ENTROPY = ("conformance/test_sac_done_states_target_entropy.py::"
                 "test_the_automatic_target_entropy_is_minus_the_action_dimensions")
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


#: what a catalogue entry is (its ``kind``): a TorchRL defect; behaviour TorchRL documents
#: (quoted in ``documentation``, with why a user is still hurt); an option TorchRL lacks; or a
#: defect in the code of another repository (tensordict, torch) that TorchRL's users reach
KINDS = {"defect": "defect", "documented-limitation": "documented limitation",
         "feature-gap": "feature gap", "elsewhere": "elsewhere"}
#: the repositories a report may be addressed to (the one that holds the code to change)
REPOSITORIES = ("pytorch/rl", "pytorch/tensordict", "pytorch/pytorch")
#: the recorded search for prior threads, beside the reports (terms, date, what it found)
SEARCH_LOG = "SEARCH.md"


@dataclass(frozen=True)
class Thread:
    """An upstream issue or pull request the report extends: its address, and a note saying
    what it says (state, date) and what the report adds."""

    url: str
    note: str


T = Thread


@dataclass(frozen=True)
class Defect:
    slug: str
    area: str
    summary: str
    upstream: str  # an issue or PR that reports it, or NOT_REPORTED
    related: str  # the link its expectation entries carry, when it does not report the defect
    prefixes: tuple[str, ...]  # the test-id prefixes of its entries in the pinned release's file
    kind: str = "defect"  # one of KINDS
    repository: str = "pytorch/rl"  # one of REPOSITORIES: where the report is filed
    threads: tuple[Thread, ...] = ()  # the prior threads the search found (SEARCH.md)
    #: the documentation of what it does, quoted, and why a user is still hurt (required of a
    #: documented limitation; another kind may quote documentation too)
    documentation: str = ""
    #: "cpu": seen in the (CPU) version matrix; "cuda": only where a CUDA device runs the
    #: sampler, so no CPU column holds a known failure of it (its specs pass there)
    seen_on: str = "cpu"
    #: where seen_on is not "cpu": the releases that have it, as read from their source
    releases: str = ""

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"defect {self.slug}: kind {self.kind!r} is not one of {sorted(KINDS)}")
        if self.repository not in REPOSITORIES:
            raise ValueError(f"defect {self.slug}: repository {self.repository!r} is not one of "
                             f"{', '.join(REPOSITORIES)}")
        if self.kind == "documented-limitation" and not self.documentation:
            raise ValueError(f"defect {self.slug}: a documented limitation quotes its documentation")
        if self.kind == "elsewhere" and self.repository == "pytorch/rl":
            raise ValueError(f"defect {self.slug}: 'elsewhere' names the repository holding the code")
        if self.seen_on not in ("cpu", "cuda"):
            raise ValueError(f"defect {self.slug}: seen_on {self.seen_on!r} is not cpu or cuda")


DEFECTS = (
    Defect("tanh-normal-get-mode-on-the-bound", "tanh_normal_mode",
           "TanhNormal.get_mode() answers exactly low/high (density 0): the seed example gives "
           "1.0 instead of 0.97302", NOT_REPORTED,
           "https://github.com/pytorch/rl/pull/2198",
           tuple(T_MODE + s for s in ("test_seed_example", "test_large_abs_loc_mode_strictly_inside",
                                      "test_bimodal_regime", "test_tie_at_zero_loc",
                                      "test_asymmetric_bounds", "test_largest_finite_locations")),
           threads=(
               T('https://github.com/pytorch/rl/issues/2186',
                 'closed 2024-05-31: the old mode (tanh of loc) was wrong; its fix is the Adam search this report is about. New here: the search stops on the bound, where the density is 0'),
               T('https://github.com/pytorch/rl/pull/2198',
                 'merged 2024-06-03: introduced the clamped Adam search (a reviewer doubted the sampled mean); nothing on answers at the bound'),
           )),
    Defect("tanh-normal-get-mode-unconverged", "tanh_normal_mode",
           "TanhNormal.get_mode() stops before the maximum (Adam, lr 1e-2, a batch-coupled "
           "stopping rule): 0.05 off for small scales", NOT_REPORTED,
           "https://github.com/pytorch/rl/pull/2198",
           tuple(T_MODE + s for s in ("test_unimodal_regime", "test_tiny_scale_mode_approaches_tanh_loc",
                                      "test_batch_shapes", "test_tanh_loc_mode_uses_rescaled_location",
                                      "test_log_density_at_mode_beats_dense_grid",
                                      "test_random_batch_matches_scipy", "test_near_the_cusp",
                                      "test_per_dimension_bounds", "test_scale_broadcast_over_loc",
                                      "test_half_precision")),
           threads=(
               T('https://github.com/pytorch/rl/pull/2198',
                 "merged 2024-06-03: the search logs 'Failed to find the mode' at info level when its step rule is not met; nothing on the batch-coupled rule or the size of the error"),
           ),
           documentation=(
               'TanhNormal.get_mode docstring (torchrl 0.14.1, continuous.py): "Computes an estimation of the mode using the Adam optimizer." It calls the answer an estimate but not how far off: 200 Adam steps at lr 1e-2 with one stopping rule for the whole batch leave small-scale elements 0.05 from a mode that a 1-D root finder gets to 1e-6; get_mode is what ExplorationType.MODE hands a user as the deterministic action, so the docstring\'s word does not protect them')),
    Defect("tanh-normal-get-mode-global-rng", "tanh_normal_mode",
           "TanhNormal.get_mode() draws 1000 samples from the global RNG: its answer depends on "
           "the seed and it moves the caller's random stream", NOT_REPORTED,
           "https://github.com/pytorch/rl/pull/2198",
           (T_MODE + "test_deterministic_whatever_the_global_rng",
            T_MODE + "test_mode_does_not_consume_global_rng"),
           threads=(
               T('https://github.com/pytorch/rl/pull/2198',
                 'merged 2024-06-03: the starting point is the mean of 1000 samples drawn from the global RNG; nobody raised the RNG side effect'),
           )),
    Defect("composite-log-prob-aggregates-over-sample-ndim", "composite_log_prob",
           "CompositeDistribution.log_prob sums over the sample tensordict's batch dims, not the "
           "distribution's: a batch_size=[] sample gives one scalar", 'https://github.com/pytorch/tensordict/pull/1065',
           "https://github.com/pytorch/rl/issues/2487",
           tuple(f"{T_COMP}test_aggregate_does_not_depend_on_the_sample_tensordict[torchrl-heads={h}-{s}]"
                 for h in ("seed", "mixed") for s in ("sample-batch=[]", "sample-batch=[B]-of-[B,T]")),
           kind='elsewhere',
           repository='pytorch/tensordict',
           threads=(
               T('https://github.com/pytorch/tensordict/pull/1054',
                 "closed 2024-10-22 (not merged): the same flattening by sample.ndim in a multi-agent batch; the maintainer argued the aggregate must have the root tensordict's shape"),
               T('https://github.com/pytorch/tensordict/pull/1065',
                 "open since 2024-10-30: the same defect for a TensorDict without batch size (global done keys). New here: the PPO consequence through torchrl's ClipPPOLoss, and a [B]-of-[B,T] case"),
               T('https://github.com/pytorch/rl/issues/2487',
                 'the link the expectation entries carry (reported there for the trailing-singleton case)'),
           ),
           documentation=(
               'CompositeDistribution.log_prob docstring (tensordict 0.14.3): "In both cases, the output shape will be the shape of the input tensordict." The behaviour is documented, in tensordict: a user is still hurt because torchrl\'s losses hand it tensordicts whose batch size is not the distribution\'s (a [] sample tensordict gives one scalar for B elements)')),
    Defect("composite-categorical-trailing-singleton", "composite_log_prob",
           "a Categorical action stored as [B, 1] is broadcast against [B, n] logits: [B, B] "
           "log-probs, PPO ratio ~1e-13 for an unchanged policy",
           "https://github.com/pytorch/rl/issues/2487", "",
           tuple(f"{T_COMP}{spec}[torchrl-heads={h}-trailing-singleton]"
                 for spec in ("test_aggregate_does_not_depend_on_the_sample_tensordict",
                              "test_ppo_ratio_of_unchanged_policy_is_one") for h in ("seed", "mixed"))
           + tuple(f"{T_COMP}test_aggregate_does_not_depend_on_the_sample_tensordict[torchrl-heads={h}-"
                   "trailing-singleton-batch=[B,2]]" for h in ("seed", "mixed")),
           threads=(
               T('https://github.com/pytorch/rl/issues/2487',
                 'the thread the expectation entries link, counted as reporting it (not re-read: the search index does not hold it)'),
               T('https://github.com/pytorch/pytorch/issues/43878',
                 "closed 2020: torch's Categorical.log_prob broadcasts a [B, 1] value against [B, n] logits to [B, B], by design; the composite passes the stored action on unchecked"),
           )),
    Defect("composite-mean-exploration-nan-categorical", "composite_log_prob",
           "under ExplorationType.MEAN a Categorical head's NaN mean reaches log_prob: an "
           "index error instead of one naming the head", 'https://github.com/pytorch/rl/issues/2402',
           "https://github.com/pytorch/rl/issues/2402",
           tuple(f"{T_COMP}test_actor_log_probs_match_oracle[torchrl-heads={h}-exploration=mean]"
                 for h in ("seed", "mixed"))
           + (f"{T_COMP}test_mean_exploration_with_normal_heads[torchrl-heads=normal-first]",),
           kind='elsewhere',
           repository='pytorch/tensordict',
           threads=(
               T('https://github.com/pytorch/rl/issues/2402',
                 "closed: 'RuntimeError: index -9223372036854775808 is out of bounds', the NaN mean of a categorical head cast to an index under ExplorationType.MEAN, the same defect; still in 0.14.1. New here: the minimal reproducer, the Normal-first order that turns it into an IndexError, and the CUDA device-side assert (reports/gpu)"),
               T('https://github.com/pytorch/pytorch/pull/4923',
                 'merged 2018: torch defines Categorical.mean as NaN; CompositeDistribution.deterministic_sample (tensordict) takes it as the action'),
           )),
    Defect("composite-actor-name-map-not-validated", "composite_log_prob",
           "ProbabilisticActor with a CompositeDistribution accepts nested out_keys without a "
           "name_map, a head missing from name_map or an unknown name_map key, and writes "
           "samples at the wrong keys", NOT_REPORTED, "https://github.com/pytorch/rl/issues/2402",
           tuple(f"{T_COMP}test_misconfigured_actor_names_the_key[torchrl-{case}]"
                 for case in ("no_name_map", "name_map_missing_head", "name_map_unknown_key")),
           threads=(
               T('https://github.com/pytorch/rl/issues/2167',
                 'closed 2024-05: a composite actor wrote no action; solved by tensordict#809 (map_names) and rl#2220; nothing validates name_map since'),
               T('https://github.com/pytorch/tensordict/pull/810',
                 'merged: probabilistic modules aware of composite out_keys; no check of the keys'),
           )),
    Defect("sac-skip-done-states-multi-agent-done", "sac_done_states",
           "SACLoss/DiscreteSACLoss(skip_done_states=True) fail with per-agent [B, N, 1] done "
           "(RuntimeError) and nested agent-group done keys (IndexError)", 'https://github.com/pytorch/rl/issues/2612',
           "https://github.com/pytorch/rl/issues/2612", tuple(T_SAC + p for p in SAC_MULTI)
           + tuple(f"{T_SAC_FAMILY}test_more_than_two_qvalue_networks[torchrl-continuous-per_agent-"
                   f"qnets={q}-skip=True]" for q in (3, 4))
           + tuple(T_SAC + p for p in SAC_MULTI_DONE_ALONE)
           # issue #43: the same failure without reduction (pytorch/rl#3426)
           + tuple(f"{T_SAC_UNREDUCED}test_unreduced_losses_are_the_per_agent_step_terms[torchrl-"
                   f"{c}-skip=True]" for c in ("continuous-per_agent", "continuous-nested",
                                               "discrete-nested")),
           threads=(
               T('https://github.com/pytorch/rl/issues/2612',
                 'closed 2024-11-27: point 1 says exactly this (a done with more dims than the batch breaks multi-agent masking); closed with #2613, which kept the indexing. New here: the per-agent [B, N, 1] RuntimeError and the nested agent-group IndexError on 0.14.1, for SACLoss and DiscreteSACLoss'),
               T('https://github.com/pytorch/rl/pull/2606',
                 'merged 2024-11-25: introduced the masking; a reviewer noted in review that it breaks multi-agent settings'),
               T('https://github.com/pytorch/rl/pull/2613',
                 'merged 2024-11-27: made the masking optional (skip_done_states)'),
           ),
           kind='documented-limitation',
           documentation=(
               'SACLoss/DiscreteSACLoss docstring of skip_done_states (torchrl 0.14.1): "If '
               '``True``, it is assumed that the done state can be broadcast to the shape of the '
               'data and that masking the data results in a valid data structure. Among other '
               'things, this may not be true in MARL settings or when using RNNs." A user is '
               'still hurt: the per-agent [B, N, 1] done and the agent-group done keys are '
               "TorchRL's own multi-agent layout (its MARL environments write them), the flag "
               'accepts them and the loss then fails with a RuntimeError or an IndexError naming '
               'no key at the first batch holding a done; the caveat says "may not be true", '
               'not that these layouts are unsupported. Masking per agent (#2612, point 1) or a '
               'refusal naming the done key would serve')),
    Defect("sac-skip-done-states-masks-truncated", "sac_done_states",
           "skip_done_states=True masks next states by done, not terminated: truncated "
           "transitions lose their bootstrap value", NOT_REPORTED,
           "https://github.com/pytorch/rl/pull/2613",
           tuple(f"{T_SAC}test_truncated_transitions_bootstrap_from_the_next_state[torchrl-{c}-skip=True]"
                 for c in ("continuous-single", "discrete-single", "discrete-per_agent")),
           threads=(
               T('https://github.com/pytorch/rl/pull/2613',
                 'merged 2024-11-27: skip_done_states masks by done; no thread on truncated transitions, which lose their bootstrap value'),
               T('https://github.com/pytorch/rl/issues/2612',
                 'closed: point 4 argued the masking was unneeded because value_estimate already reads done; not about truncation'),
           )),
    Defect("sac-skip-done-states-nan-reaches-qvalue", "sac_done_states",
           "skip_done_states=True keeps terminal next observations from the actor but not from "
           "the Q-network: a NaN terminal observation makes loss_qvalue NaN", 'https://github.com/pytorch/rl/issues/2590',
           "https://github.com/pytorch/rl/issues/2590",
           (T_SAC + "test_terminal_next_states_never_reach_the_networks[torchrl-continuous-single]",
            T_SAC + "test_done_alone_is_the_termination[torchrl-continuous-single-skip=True]"),
           threads=(
               T('https://github.com/pytorch/rl/issues/2590',
                 'open since 2024-11-20: terminal next observations (NaN) reach the networks in _compute_target_v2, the very thread the expectation entries link. #2613 keeps them from the actor; new here: the Q-network still sees them, so loss_qvalue is NaN with skip_done_states=True'),
           )),
    Defect("sac-discrete-masked-action-nan", "sac_done_states",
           "DiscreteSACLoss gives NaN losses for an action-masked policy (logit -inf): "
           "actor_loss weights dist.logits by dist.probs (0 * -inf), and the skip_done_states "
           "path scores next_dist.logits", 'https://github.com/pytorch/rl/pull/1750',
           "https://github.com/pytorch/rl/blob/ae9719f17b1517af5c2523a36c4616f003ee55cf/torchrl/objectives/sac.py#L1532",
           (T_SAC_FAMILY + "test_discrete_masked_actions_give_finite_losses",),
           threads=(
               T('https://github.com/pytorch/rl/pull/1750',
                 "merged 2023-12-16: switched the actor loss to dist.logits; a reviewer's comment of 2023-12-20 reports that MaskedCategorical's -inf logits then break discrete SAC (BenchMARL CI). New here: still NaN in 0.14.1 (0 * -inf), and the skip_done_states path has the same product on next_dist.logits"),
           )),
    Defect("ppo-composite-entropy-per-head", "composite_log_prob",
           "ClipPPOLoss's per-head entropy_coeff weights each head's entropy as it comes: a "
           "Normal head's [*batch, d] entropy is broadcast against a categorical head's "
           "(wrong value at [B], shape error at [B, T])", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17b1517af5c2523a36c4616f003ee55cf/torchrl/objectives/ppo.py#L1073",
           tuple(f"{T_COMP_FAMILY}test_entropy_bonus_of_a_composite_policy[torchrl-heads=mixed-"
                 f"batch={b}-coeff=per-head]" for b in ("[B]", "[B,T]")),
           threads=(
               T('https://github.com/pytorch/rl/pull/2972',
                 "merged 2025-05-22: introduced per-head entropy coefficients (_weighted_loss_entropy); its tests use heads of equal entropy shape. New here: a Normal head's [*batch, d] entropy broadcast against a categorical head's [*batch]"),
               T('https://github.com/pytorch/rl/pull/2707',
                 "merged 2025-01: logs each head's entropy; no reduction over the event dims"),
           )),
    Defect("ppo-negative-clip-value-accepted", "ppo_value_clipping",
           "ClipPPOLoss accepts a negative clip_value and clamps with inverted bounds",
           NOT_REPORTED, "https://github.com/pytorch/rl/pull/2005",
           (T_PPO + "test_negative_clip_value_is_rejected",
            T_PPO_OPTIONS + "test_an_invalid_clip_value_is_refused_naming_it[torchrl-negative-tensor]"),
           threads=(
               T('https://github.com/pytorch/rl/pull/2005',
                 'merged 2024-03-09: added clip_value (from #1977); no validation discussed'),
               T('https://github.com/pytorch/rl/issues/1977',
                 'closed: the value-clipping request'),
           )),
    Defect("prb-max-slot-overwrite", "prioritized_replay",
           "PrioritizedSampler(max_priority_within_buffer=True): an item written over the slot "
           "of the maximum inherits the evicted maximum, then the default falls back to 1.0",
           NOT_REPORTED, "https://github.com/pytorch/rl/pull/2215",
           tuple(T_PRB + s for s in (
               "test_item_written_over_the_max_slot_gets_the_max_of_what_remains",
               "test_default_after_overwriting_the_max_slot_is_the_max_of_what_remains",
               "test_evicting_a_maximum_deep_in_a_multi_level_tree",
               "test_property_random_programs_agree_with_the_model",
               "test_random_sequences_agree_with_the_model[torchrl-seed=1]",
               "test_random_sequences_agree_with_the_model[torchrl-seed=2]")),
           threads=(
               T('https://github.com/pytorch/rl/pull/2215',
                 "merged 2024-06-07: added max_priority_within_buffer after wertyuilife2's request; nothing on the slot of the maximum being overwritten"),
               T('https://github.com/pytorch/rl/issues/2205',
                 "open since 2024-06: wertyuilife2's list of sampler issues (item 5: the default priority); not this case"),
               T('https://github.com/pytorch/rl/pull/3925',
                 'merged 2026-07-01: the double-alpha fix that made the overwrite visible from 0.13.3 on'),
           )),
    Defect("prb-no-upper-bound-on-default-priority", "prioritized_replay",
           "PrioritizedSampler has no upper bound on the default priority of new items (the "
           "proposal of #2210 was not merged)", "https://github.com/pytorch/rl/issues/2210", "",
           (T_PRB + "test_upper_bound_caps_the_default",
            T_PRB_CLASSES + "test_example_buffer_caps_the_default",
            T_PRB_SAMPLING + "test_a_non_positive_upper_bound_is_refused_naming_it",
            *(f"{T_PRB_OPTIONS}test_sync_false_follows_the_same_law[torchrl-{cls}-upper=4.0]"
              for cls in ("PrioritizedReplayBuffer", "TensorDictPrioritizedReplayBuffer"))),
           kind='feature-gap',
           threads=(
               T('https://github.com/pytorch/rl/issues/2210',
                 'the proposal of an upper bound (_upper_priority), not merged'),
               T('https://github.com/pytorch/rl/issues/2205',
                 'open: item 5, where the upper-priority idea came from'),
           )),
    Defect("prb-alpha-change-from-zero", "prioritized_replay",
           "PrioritizedSampler: changing alpha away from 0 keeps the trees uniform (the raw "
           "priorities are not kept), so sampling ignores the stored priorities",
           "https://github.com/pytorch/rl/pull/4014", "",
           (T_PRB + "test_changing_alpha_keeps_the_tree_and_the_maximum_consistent[torchrl-0.6-0-0.8]",
            T_PRB_CHECKPOINTS + "test_file_checkpoint_at_alpha_zero_keeps_the_priorities"),
           kind='documented-limitation',
           threads=(
               T('https://github.com/pytorch/rl/pull/4014',
                 'merged 2026-07-15: made alpha changes exact except from exactly 0, documented as such and warned'),
               T('https://github.com/pytorch/rl/pull/3925',
                 'merged 2026-07-01: moved the maximum to the raw domain'),
           ),
           documentation=(
               'PrioritizedSampler.alpha docstring (torchrl 0.14.1): "The one exception is changing ``alpha`` away from exactly ``0``: the raw priorities cannot be recovered from the trees in that regime, so the stored (uniform) values are kept -- and a warning is emitted -- until each entry\'s priority is next updated." and the warning "... Sampling stays uniform for those entries until their priority is next updated, so annealing away from exactly 0 is approximate." A user is still hurt: a warm-up that starts at alpha = 0 (uniform first, then prioritized; annealing alpha with a ParameterScheduler is documented) loses every priority given during the warm-up, and entries never drawn again stay uniform for good; keeping the raw priorities (one float per slot) would make it exact. The reproducer silenced the warning; it now lets it print')),
    # ---- found by the specs of issue #31 (suite power)
    Defect("tanh-normal-get-mode-integer-parameters", "tanh_normal_mode",
           "TanhNormal.get_mode() starts from 1000 samples, which torch cannot draw for integer "
           "loc/scale: the distribution is built, its mode raises NotImplementedError", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/00b7c2e8f38730747f9484e7fa3b763e509cc914/torchrl/modules/distributions/continuous.py#L499-L528",
           (T_MODE + "test_integer_parameters",),
           threads=(
               T('https://github.com/pytorch/rl/issues/1643',
                 "closed 2023-10: 'Problems with TanhNormal', whose script builds loc from integers (about log_prob, before get_mode existed)"),
               T('https://github.com/pytorch/rl/pull/2198',
                 'merged 2024-06-03: the sampled starting point that torch cannot draw for integer parameters'),
           )),
    Defect("composite-categorical-action-unchecked", "composite_log_prob",
           "CompositeDistribution.log_prob passes an out-of-range Categorical action to gather "
           "unchecked (torchrl turns validation off): 'index 8 is out of bounds', naming no head", NOT_REPORTED, "https://github.com/pytorch/rl/issues/2402",
           tuple(f"{T_COMP}test_out_of_range_categorical_action_is_refused_naming_the_head[torchrl-"
                 f"action={a}]" for a in ("n", "-1")),
           kind='elsewhere',
           repository='pytorch/tensordict',
           threads=(
               T('https://github.com/pytorch/rl/issues/2402',
                 'closed: the same unchecked gather, for a NaN action under ExplorationType.MEAN; not an out-of-range integer action'),
               T('https://github.com/pytorch/tensordict/pull/871',
                 "asked tensordict to drop torch's global validation switch, which torchrl still flips off at import"),
               T('https://github.com/pytorch/pytorch/issues/5248',
                 'closed 2018: torch does not validate distribution arguments unless asked'),
           )),
    Defect("composite-missing-head-action", "composite_log_prob",
           "CompositeDistribution.log_prob reads a missing head's action as None and passes it "
           "to the head's log_prob: a TypeError naming no key", NOT_REPORTED, "https://github.com/pytorch/rl/issues/2402",
           (T_COMP + "test_sample_without_a_head_is_refused_naming_it[torchrl]",),
           kind='elsewhere',
           repository='pytorch/tensordict',
           threads=(
               T('https://github.com/pytorch/tensordict/pull/1112',
                 'merged 2024-11: made CompositeDistribution tensordict-to-tensordict; sample.get(name) still returns None for a missing head'),
               T('https://github.com/pytorch/rl/issues/2402',
                 'the link the expectation entries carry (a different composite failure)'),
           )),
    Defect("ppo-nan-clip-value-accepted", "ppo_value_clipping",
           "ClipPPOLoss accepts a NaN clip_value, float or tensor (register_coeff_buffer checks "
           "type and size only): the critic loss and its gradient are NaN", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17/torchrl/objectives/common.py#L764-L797",
           tuple(f"{T_PPO_OPTIONS}test_an_invalid_clip_value_is_refused_naming_it[torchrl-{c}]"
                 for c in ("nan", "nan-tensor")),
           threads=(
               T('https://github.com/pytorch/rl/pull/2005',
                 'merged 2024-03-09: added clip_value; register_coeff_buffer checks type and size only'),
           )),
    Defect("ppo-separate-losses-non-functional", "ppo_value_clipping",
           "ClipPPOLoss(separate_losses=True, functional=False): the shared parameters are "
           "detached only in functional copies, so the critic loss trains the policy's trunk", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17/torchrl/objectives/ppo.py#L527-L540",
           (T_PPO_OPTIONS + "test_separate_losses_keeps_the_critic_gradient_off_shared_parameters"
            "[torchrl-separate_losses=True-functional=False]",),
           threads=(
               T('https://github.com/pytorch/rl/pull/1034',
                 'closed 2023-04 (not merged): convert_to_functional and shared policy-value networks; about the value loss not reaching the trunk, the opposite of this defect'),
           )),
    Defect("prb-load-ignores-capacity", "prioritized_replay",
           "PrioritizedSampler.load_state_dict takes a state of another capacity without error: "
           "a 16-slot state loaded into a sampler of 8 or 32 slots leaves it with trees of 16 "
           "leaves", NOT_REPORTED, f"{PRB_SOURCE}#L700-L718",
           tuple(f"{T_PRB_CHECKPOINTS}test_checkpoint_of_another_capacity_is_refused[torchrl-{f}"
                 for f in ("state_dict", "torchrl-entries")),
           threads=(
               T('https://github.com/pytorch/rl/pull/4014',
                 'merged 2026-07-15: versioned sampler checkpoints; no capacity check'),
           )),
    Defect("prb-refused-load-changes-sampler", "prioritized_replay",
           "a checkpoint that PrioritizedSampler.loads or load_state_dict refuses (other "
           "capacity, no trees) has already set alpha, beta, eps and the maximum: the default "
           "priority changes", NOT_REPORTED, f"{PRB_SOURCE}#L784-L795",
           (T_PRB_CHECKPOINTS + "test_checkpoint_of_another_capacity_is_refused[torchrl-files",
            T_PRB_CHECKPOINTS + "test_a_state_without_trees_is_refused"),
           threads=(
               T('https://github.com/pytorch/rl/pull/4014',
                 'merged 2026-07-15: versioned sampler checkpoints; the refusal comes after the state is copied in'),
           )),
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
            T_PRB_CHECKPOINTS + "test_example_buffer_checkpoint_of_an_empty_buffer[torchrl-files"),
           threads=(
               T('https://github.com/pytorch/rl/issues/2205',
                 'open: item 5 discusses a maximum of None/0 before the first update; not dumps'),
           )),
    Defect("prb-priority-dtype-not-converted", "prioritized_replay",
           "update_priority writes (p + eps)^alpha into the trees in the priorities' dtype: "
           "float64 priorities raise on the default float32 trees, and dtype=torch.float64 trees"
           " raise at the first extend", NOT_REPORTED, f"{PRB_SOURCE}#L659-L661",
           (T_PRB_OPTIONS + "test_float64_buffer_keeps_float64_precision",
            T_PRB_OPTIONS + "test_float64_priorities_in_a_float32_buffer",
            T_PRB_SAMPLING + "test_weights_come_in_the_samplers_dtype[torchrl-dtype=float64]",
            T_PRB_INDICES + "test_update_priority_takes_every_index_form[torchrl-float64-priorities]"),
           threads=(
               T('https://github.com/pytorch/rl/pull/2252',
                 "open: update_priority's signature across samplers; not its dtype"),
           )),
    Defect("prb-tree-search-weight-zero-leaf", "prioritized_replay",
           "SumSegmentTree.scan_lower_bound (a lower-bound search) returns leaf 0 of weight 0 "
           "for a mass of 0, and an index (0 or size) on a tree of total 0 instead of refusing", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/csrc/segment_tree.h",
           (T_PRB_OPTIONS + "test_a_mass_on_an_item_boundary_finds_a_leaf_of_positive_weight",
            T_PRB_TREES + "test_search_of_an_all_zero_sum_tree_is_refused"),
           threads=(
               T('https://github.com/thu-ml/tianshou/issues/625',
                 "closed 2022: the same lower-bound question in tianshou's tree (a 0 mass lands on a leaf of weight 0); nothing in pytorch/rl"),
           )),
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
            T_PRB_SAMPLING + "test_a_negative_keyword_is_refused_naming_it[torchrl-initial_priority=-1]"),
           kind='feature-gap',
           threads=(
               T('https://github.com/pytorch/rl/pull/2215',
                 'merged 2024-06-07: wertyuilife2 explains that new items get weight ~eps early in training because the default is 1.0 and the TD errors are 0'),
               T('https://github.com/pytorch/rl/issues/2205',
                 'open: item 5, the default priority of the first items (a maintainer: 0 would make the first sample fail)'),
           )),
    Defect("prb-segment-tree-index-unchecked", "prioritized_replay",
           "SumSegmentTreeFp32/MinSegmentTreeFp32 index slot i OR capacity unchecked, and "
           "update_priority passes slots on unchecked: an out-of-range slot writes a padding leaf "
           "counted in the total, another item's leaf, or outside the tree",
           NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/ae9719f17b1517af5c2523a36c4616f003ee55cf/torchrl/csrc/segment_tree.h#L56-L88",
           (T_PRB_TREES + "test_an_index_past_the_last_leaf_is_refused",
            T_PRB_INDICES + "test_an_index_past_the_capacity_is_refused")),
    Defect("ppo-value-clip-fraction-ignores-mask", "ppo_value_clipping",
           "ClipPPOLoss(clip_value=c) under a validity mask ((\"collector\", \"mask\"), padding): "
           "the loss leaves the padding out (#4057), value_clip_fraction still counts it",
           NOT_REPORTED, "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/objectives/utils.py",
           (*(f"conformance/test_ppo_value_clipping_masks.py::test_padding_is_left_out_of_the_"
              f"value_clip_fraction[torchrl-{p}]" for p in ("padded-tail", "scattered")),
            # issue #43's mask edges: one valid step, both of TorchRL's masks, a uint8 mask
            *(f"conformance/test_ppo_value_clipping_masks.py::{s}" for s in (
                "test_a_single_valid_step[torchrl]", "test_both_of_torchrls_masks_are_anded[torchrl]",
                "test_a_numeric_mask_is_read_as_its_truth_value[torchrl-uint8]"))),
           threads=(
               T("https://github.com/pytorch/rl/pull/4057",
                 "merged 2026-08-07: the losses' reductions honour (\"collector\", \"mask\") and "
                 "\"shifted_valid\"; the diagnostics computed beside them (value_clip_fraction, "
                 "and from the source clip_fraction and explained_variance) still average over "
                 "every position. New here: the value clip fraction's numbers"),
               T("https://github.com/pytorch/rl/pull/2021",
                 "merged 2024-03-18: fixed clip_fraction in the PO losses; before masks existed"),
           )),
    # ---- issue #43: SAC's automatic target entropy (pytorch/rl#3291/#3292, #3312)
    Defect("sac-auto-target-entropy-counts-agents", "sac_done_states",
           "SACLoss(target_entropy=\"auto\") with the action spec on a multi-agent actor only: "
           "the agents count as action dimensions (-N * dim(A)), the actor's merged spec having "
           "lost the agent group's shape", NOT_REPORTED, "https://github.com/pytorch/rl/pull/1494",
           (f"{T_SAC_ENTROPY}[torchrl-agents=3-A=2-spec-on-actor]",),
           threads=(
               T("https://github.com/pytorch/rl/pull/1494",
                 "merged 2023-09-07: subtracts the agent group's shape from the action's; it "
                 "relies on the spec keeping that shape, which the spec given to the loss does "
                 "and the actor's merged spec (ProbabilisticActor) does not. New here: -6 "
                 "instead of -2 for 3 agents of dim 2 when no action_spec is given"),
               T("https://github.com/pytorch/rl/issues/3291",
                 "closed 2026-01-07 (#3292): the -1 of a plain action; not about agents"),
           )),
    Defect("sac-composite-actor-several-heads", "sac_done_states",
           "SACLoss with a composite actor of several heads: not built (per-head log-probs: "
           "TypeError, the action key is a list) or target_entropy=\"auto\" counts the first "
           "head only (summed log-probs)", NOT_REPORTED, "https://github.com/pytorch/rl/pull/3312",
           tuple(f"{T_SAC_ENTROPY}[torchrl-composite-two-heads{s}]"
                 for s in ("", "-spec-on-actor", "-summed-log-prob")),
           threads=(
               T("https://github.com/pytorch/rl/pull/3312",
                 "merged 2026-01-08: sums the leaves of a composite action spec, reached only "
                 "when the loss's action key names the composite; its tests use one head. New "
                 "here: with two heads the key is the list of the heads' keys (the constructor "
                 "raises) or the first head's (one head counted)"),
               T("https://github.com/pytorch/rl/pull/2447",
                 "merged 2024-10-11: SAC with composite distributions; the description leaves "
                 "discrete SAC aside, nothing on several continuous heads"),
           )),
    # ---- issue #43: SAC losses with a prioritized sampler's weights (pytorch/rl#3235)
    Defect("sac-priority-weights-multi-agent", "sac_done_states",
           "SACLoss/DiscreteSACLoss on a multi-agent batch with the prioritized sampler's "
           "weights (one per row, [B]): the losses of one term per agent ([B, N]) raise "
           "(ValueError for mean, RuntimeError for none) instead of weighting each row's agents",
           NOT_REPORTED, "https://github.com/pytorch/rl/pull/3235",
           tuple(f"{T_SAC_WEIGHTS}{spec}[torchrl-{kind}-{layout}]"
                 for spec in ("test_unreduced_losses_carry_their_rows_weight",
                              "test_the_reduced_loss_is_the_weighted_mean")
                 for kind in ("continuous", "discrete") for layout in ("per_agent", "nested")),
           threads=(
               T("https://github.com/pytorch/rl/pull/3235",
                 "merged 2025-11-15: the losses read \"priority_weight\" and reduce with it "
                 "(_reduce: sum(w * loss) / sum(w)); its tests are single-agent. New here: "
                 "per-agent losses [B, N] and the sampler's [B] weights do not meet"),
               T("https://github.com/pytorch/rl/issues/3316",
                 "open since 2026-01-11: a multi-agent shape mismatch in ClipPPOLoss (log_weight "
                 "against advantage); another loss, another tensor, the same kind of [B, N] "
                 "against [B] meeting"),
           )),
    Defect("loss-mask-of-another-dtype-refused", "ppo_value_clipping",
           "a 0/1 validity mask of dtype int64 or float32 at (\"collector\", \"mask\") (or "
           "loss_mask_key's entry) reaches torch.where in LossModule._reduce_loss unconverted: "
           "\"where expected condition to be a boolean tensor\", naming neither the mask nor "
           "its key", NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/objectives/common.py",
           tuple(f"conformance/test_ppo_value_clipping_masks.py::test_a_numeric_mask_is_read_as_"
                 f"its_truth_value[torchrl-{d}]" for d in ("int64", "float32")),
           kind="feature-gap",
           documentation=(
               "AUTO_LOSS_MASK_KEYS (torchrl/objectives/common.py): (False \"marks duplicated "
               "padding steps\"); loss_mask_key: \"Which input entry marks the positions that "
               "contribute to the loss\" (no dtype named). The masks TorchRL writes are bool; a "
               "mask a user writes "
               "under loss_mask_key, or stores as 0/1 numbers, is refused by torch's message, "
               "which names neither the mask nor its key (uint8 passes, with torch's deprecation "
               "warning)"),
           threads=(
               T("https://github.com/pytorch/rl/pull/4057",
                 "merged 2026-08-07: the reductions read the masks (and expand a trailing "
                 "singleton); nothing on their dtype. New here: a 0/1 mask of int64 or float32"),
               T("https://github.com/pytorch/rl/issues/3866",
                 "closed 2026-08-07 (RFC, mask-aware reduction): calls ('collector', 'mask') "
                 "\"a boolean key\"; nothing on other dtypes"),
           )),
    Defect("mappo-value-norm-counts-padding", "ppo_value_clipping",
           "MAPPOLoss/IPPOLoss(value_norm=...) under a validity mask ((\"collector\", \"mask\"), "
           "padding): _critic_loss_inputs folds every target into the normaliser, the padding's "
           "included, so the valid positions are normalised by statistics of arbitrary values",
           NOT_REPORTED,
           "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/objectives/multiagent/mappo.py",
           tuple(f"conformance/test_ppo_value_clipping_value_norm.py::test_padding_is_left_out_"
                 f"of_the_normaliser[torchrl-{c}-{n}-" for c in ("MAPPOLoss", "IPPOLoss")
                 for n in ("running", "popart")),
           threads=(
               T("https://github.com/pytorch/rl/pull/3748",
                 "merged 2026-05-19: MAPPOLoss/IPPOLoss and ValueNorm; value_norm.update(target_"
                 "return) on every row. New here: under a mask the padding's targets reach the "
                 "statistics"),
               T("https://github.com/pytorch/rl/pull/4127",
                 "merged 2026-08-18: advantage_norm, whose update drops the rows the masks mark "
                 "invalid (_valid_value_target_rows: \"Padding or boundary-crossing rows would "
                 "otherwise pollute running value statistics\"); value_norm was left as it was"),
               T("https://github.com/pytorch/rl/pull/4057",
                 "merged 2026-08-07: the losses' reductions honour (\"collector\", \"mask\"); "
                 "the normaliser's update is no reduction"),
           )),
    Defect("ppo-composite-critic-clips-against-its-own-prediction", "ppo_value_clipping",
           "ClipPPOLoss(clip_value=c) with a composite value network (#3031): loss_critic reads "
           "the stored predictions (a sub-tensordict of the batch), then the critic writes its "
           "new predictions into that same sub-tensordict, so the new prediction is clipped "
           "around itself: no clipping, value_clip_fraction 0",
           NOT_REPORTED, "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/objectives/ppo.py",
           tuple(f"conformance/test_ppo_value_clipping_composite.py::test_each_head_is_clipped_against_its_stored_prediction[torchrl-heads={h}]"
                 for h in ("reward", "reward,cost", "a,b,c")),
           threads=(
               T("https://github.com/pytorch/rl/pull/3031",
                 "merged 2025-07-02 (torchrl 0.9.2 and 0.10; the stored copy of the thread still says "
                 "open): composite value networks in ClipPPOLoss; its test calls loss_critic "
                 "with a critic that returns the stored values (zeros), so the overwrite cannot "
                 "show. New here: the stored predictions are overwritten before the clip"),
               T("https://github.com/pytorch/rl/pull/2005",
                 "merged 2024-03: value clipping; plain tensors, where reading then writing "
                 "the entry keeps the stored tensor"),
           )),
    Defect("ppo-composite-critic-loss-not-reduced", "ppo_value_clipping",
           "ClipPPOLoss with a composite value network (#3031): forward reduces the outputs whose "
           "own name starts with 'loss_' (named_apply on leaf names), so the heads nested under "
           "loss_critic come back as one loss per sample, and a training loop's sum of the "
           "losses is a tensordict, not a scalar to backpropagate",
           NOT_REPORTED, "https://github.com/pytorch/rl/blob/v0.14.1/torchrl/objectives/ppo.py",
           tuple(f"conformance/test_ppo_value_clipping_composite.py::test_each_heads_loss_is_reduced[torchrl-heads={h}]"
                 for h in ("reward", "reward,cost", "a,b,c")),
           threads=(
               T("https://github.com/pytorch/rl/pull/3031",
                 "merged 2025-07-02: its test reads loss_critic(td) (per sample by design), not "
                 "forward's output. New here: forward leaves the composite critic loss unreduced"),
               T("https://github.com/pytorch/rl/pull/1890",
                 "open since 2024-02: the reduction parameter of the on-policy losses (td_out."
                 "apply(_reduce) over every entry); before composite critics"),
               T("https://github.com/pytorch/tensordict/pull/641",
                 "merged: named_apply(nested_keys=True), which would give the nested names"),
           )),
    # ---- issue #43: the cause of the CUDA sampler's failures on the H200 (reports/gpu)
    Defect("prb-cuda-device-spelling-resets-trees", "prioritized_replay",
           "PrioritizedSampler on a CUDA device spelled \"cuda\" (sampler or storage) compares "
           "torch.device(\"cuda\") with its trees' cuda:0 at every sample() and "
           "update_priority(): unequal, so it rebuilds empty trees each time", NOT_REPORTED,
           f"{PRB_SOURCE}#L283-L287",
           ("conformance/test_prioritized_replay_devices.py::test_the_devices_spelling_keeps_the_"
            "priorities[torchrl-device=type-only]",),
           seen_on="cuda", releases="0.13.0–0.14.1, main ae9719f17 and nightly 2026.10.27",
           threads=(
               T("https://github.com/pytorch/rl/pull/3677",
                 "merged 2026-04-27: added the CUDA trees and _maybe_init_from_storage; its tests "
                 "build every CUDA buffer on \"cuda:0\", the one spelling that works"),
               T("https://github.com/pytorch/rl/pull/3685",
                 "merged 2026-04-28: sampler_device and mixed-device buffers, tested with "
                 "\"cuda:0\" too; nothing on \"cuda\""),
           )),
)
BY_SLUG = {d.slug: d for d in DEFECTS}


def owners(entries) -> dict:
    """Entry prefix -> its defect, for the pinned release's expectation ``entries`` (objects with
    ``prefix``); every prefix a defect names must be one of them, and claimed once."""
    prefixes = {e.prefix for e in entries}
    owner: dict[str, Defect] = {}
    for defect in DEFECTS:
        if defect.seen_on != "cpu":  # CUDA-only: no entry (its specs pass on the CPU, and
            continue  # expectations are not per device)
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
