"""Upstream bug reports: one standalone reproducer and one issue body per TorchRL defect.

The known failures of the pinned TorchRL (its expectations file) collapse to a few distinct
defects, listed below by hand with the expectation entries each explains. A defect's folder
``reports/upstream-bugs/`` holds ``<slug>.py`` (a reproducer written by hand: torch, torchrl,
tensordict and numpy/scipy only; exit 1 while the defect is present) and ``<slug>.md`` (an issue
body in TorchRL's bug-report shape). The parts of the ``.md`` that come from the matrix are
generated between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``: the
releases that have the defect and the one that fixed it, the git and nightly columns, the specs
that check it, the environment and the reproducer's code; so is the index ``README.md``.

    python -m conformance.upstream.bugs            # rewrite the generated parts from the matrix
    python -m conformance.upstream.bugs --check    # exit 1 if one was edited by hand, or is stale
    python -m conformance.upstream.bugs --verify PATCHED.json BASELINE.json SLUG [SLUG ...]
    python -m conformance.upstream.bugs --reproduce [SLUG ...]   # run the reproducers here

``--reproduce`` runs each reproducer copied alone into an empty folder with this Python and
this PYTHONPATH minus the project (as the upstream runner can do for each source) and prints
"present" (exit code 1), "fixed" (0) or what else happened.
``--verify`` judges a fix: two results files of one source with and without a patch (e.g.
``nox -s upstream -- /tmp/rl-fix --reports-dir /tmp/fix``); exit 0 when every spec of the
named defects fails in the baseline and passes with the patch, and no other verdict moves.

A release "has" a defect when its column holds a known failure carrying one of the defect's
entries (same test-id prefix, reason and link): a defect hidden by an earlier one in the same
spec (the max-slot overwrite behind the double-transformed default before 0.13.3) is not seen.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from conformance import paths
from conformance.files import atomic_write
from conformance.plugin.expectation_file import Entry, ExpectationsError, parse
from conformance.plugin.staleness import first_match
from conformance.upstream import timeline

ROOT = paths.ROOT
RESULTS = ROOT / "reports" / "upstream"
BUGS = ROOT / "reports" / "upstream-bugs"
EXPECTATIONS = ROOT / "conformance" / "expectations"
PINNED = "0.14.1"  # the stack extra of pyproject.toml; a test checks that they agree
NOT_REPORTED = "not reported upstream"
FAILING = {"known failure", "fail", "error"}
COMMAND = "python -m conformance.upstream.bugs"

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
    #: sampler, so no CPU column holds a known failure of it (its specs are untestable there)
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
           kind='documented-limitation',
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
           + tuple(T_SAC + p for p in SAC_MULTI_DONE_ALONE),
           threads=(
               T('https://github.com/pytorch/rl/issues/2612',
                 'closed 2024-11-27: point 1 says exactly this (a done with more dims than the batch breaks multi-agent masking); closed with #2613, which kept the indexing. New here: the per-agent [B, N, 1] RuntimeError and the nested agent-group IndexError on 0.14.1, for SACLoss and DiscreteSACLoss'),
               T('https://github.com/pytorch/rl/pull/2606',
                 'merged 2024-11-25: introduced the masking; a reviewer noted in review that it breaks multi-agent settings'),
               T('https://github.com/pytorch/rl/pull/2613',
                 'merged 2024-11-27: made the masking optional (skip_done_states)'),
           )),
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
    # ---- issue #43: the cause of the CUDA sampler's failures on the H200 (reports/gpu)
    Defect("prb-cuda-device-spelling-resets-trees", "prioritized_replay",
           "PrioritizedSampler on a CUDA device spelled \"cuda\" (sampler or storage) compares "
           "torch.device(\"cuda\") with its trees' cuda:0 at every sample() and "
           "update_priority(): unequal, so it rebuilds empty trees each time", NOT_REPORTED,
           f"{PRB_SOURCE}#L283-L287",
           ("conformance/test_prioritized_replay_devices.py::test_the_devices_spelling_keeps_the_"
            "priorities[torchrl-device=type-only]",),
           seen_on="cuda", releases="0.13.0–0.14.1 and main ae9719f17",
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


class BugsError(Exception):
    """Bad or inconsistent input: one line, exit code 2."""


def pinned_entries() -> list[Entry]:
    """The pinned release's expectation entries (its own lines and the shared ones it includes)."""
    try:
        return parse(EXPECTATIONS / f"torchrl-{PINNED}.txt", frozenset({"torchrl"}))
    except ExpectationsError as exc:
        raise BugsError(str(exc)) from None


def entry_defects(entries: list[Entry]) -> dict[str, Defect]:
    """Entry prefix -> its defect; every prefix a defect names must be an entry of the release."""
    prefixes = {e.prefix for e in entries}
    owner: dict[str, Defect] = {}
    for defect in DEFECTS:
        if defect.seen_on != "cpu":  # CUDA-only: no entry (an entry would turn the CPU run's
            continue  # "cannot be tested here" into a known failure)
        for prefix in defect.prefixes:
            if prefix not in prefixes:
                raise BugsError(f"defect {defect.slug} names {prefix}, which is no entry of "
                                f"torchrl-{PINNED}.txt")
            if prefix in owner:
                raise BugsError(f"{prefix} is claimed by {owner[prefix].slug} and {defect.slug}")
            owner[prefix] = defect
    return owner


def defect_of(nodeid: str, message: str, entries: list[Entry], owner: dict[str, Defect]):
    """The defect a known-failure cell shows: its test's entry, with the same reason and link."""
    entry = first_match(entries, nodeid, "torchrl")
    known = timeline.KNOWN.search(message or "")
    if entry is None or known is None or entry.prefix not in owner:
        return None
    if (known["reason"], known["link"]) != (entry.reason, entry.link):
        return None  # the same spec failing for another, older reason
    return owner[entry.prefix]


@functools.cache
def _pinned_owner() -> tuple[list[Entry], dict[str, Defect]] | None:
    try:
        entries = pinned_entries()
        return entries, entry_defects(entries)
    except BugsError:
        return None  # the reports go on without links; --check names the problem


def reproducer_for(nodeid: str, message: str) -> str | None:
    """``<slug>.py`` of the defect a known failure of TorchRL shows, for the reports; or None."""
    pinned = _pinned_owner()
    defect = defect_of(nodeid, message, *pinned) if pinned else None
    return f"{defect.slug}.py" if defect else None


@dataclass
class Matrix:
    columns: list[str]  # every column, in version order
    rows: list[dict]
    stack: dict  # the pinned release's python, torch, tensordict

    @classmethod
    def load(cls, results_dir: Path) -> Matrix:
        import json

        files = sorted(Path(results_dir).glob("*.json"))
        if not files:
            raise BugsError(f"no per-source results in {results_dir}: run nox -s upstream first")
        rows, stack = [], {}
        for path in files:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("partial"):  # a narrowed or interrupted run is no column of the matrix
                raise BugsError(f"{path} is a partial run ({str(doc['partial'])[:200]}): the bug "
                                "reports are not rewritten from it")
            rows += [r for r in doc["rows"] if r["implementation"] == "torchrl"]
            if path.stem == PINNED:
                stack = {"python": doc.get("python", "?"), **doc.get("stack", {})}
        if not stack:
            raise BugsError(f"{results_dir} has no column for the pinned torchrl {PINNED}")
        columns = sorted({r["implementation_version"] for r in rows}, key=timeline.version_key)
        return cls(columns, rows, stack)


def is_release(column: str) -> bool:
    return re.fullmatch(r"\d+(\.\d+)*", column) is not None


def is_nightly(column: str) -> bool:
    return re.search(r"\.dev|nightly", column) is not None


@dataclass
class History:
    releases: str  # "0.7.2–0.14.1"
    fixed_in: str
    others: list[str]  # git and checkout columns: "<column>: has it" / "passes"
    nightly: str
    specs: list[str]  # the pinned release's tests that fail from it
    seen_on: str = "cpu"  # "cuda": specs are the ones that check it on a CUDA run


def histories(matrix: Matrix, entries: list[Entry]) -> dict[str, History]:
    owner = entry_defects(entries)
    cells: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    outcome: dict[str, dict[str, str]] = defaultdict(dict)
    for row in matrix.rows:
        column, test = row["implementation_version"], timeline._test(row)
        outcome[column][test] = row["outcome"]
        if row["outcome"] != "known failure":
            continue
        defect = defect_of(row["nodeid"], row.get("message"), entries, owner)
        if defect is not None:
            cells[defect.slug][column].add(test)
    releases = [c for c in matrix.columns if is_release(c)]
    out = {}
    for defect in DEFECTS:
        having = cells[defect.slug]
        if defect.seen_on != "cpu":  # the matrix runs on the CPU, where its specs are untestable
            out[defect.slug] = History(
                f"{defect.releases or '?'} (read from the source; not in the version matrix, "
                f"which runs on the CPU)", f"not fixed (read from the source of {PINNED})", [],
                f"nightly: not run on {defect.seen_on}", device_specs(defect), defect.seen_on)
            continue
        if PINNED not in having:
            raise BugsError(f"the matrix shows no known failure of {defect.slug} on {PINNED}: "
                            "re-run nox -s upstream, or remove the defect")
        bug = timeline.Bug(defect.slug, defect.area)
        for column in releases:
            if column in having:
                bug.cells[column] = having[column]
        others, nightly = [], "nightly: not yet tested (the matrix has no nightly column)"
        for column in matrix.columns:
            if is_release(column):
                continue
            tests = [outcome[column].get(t) for t in sorted(having[PINNED])]
            verdict = ("has it" if column in having else
                       "passes its specs" if all(t == "pass" for t in tests) else
                       "not tested or failing for another reason")
            if is_nightly(column):
                nightly = f"nightly {column}: {verdict}"
            else:
                others.append(f"{column}: {verdict}")
        out[defect.slug] = History(
            timeline._ranges(releases, [c for c in releases if c in having]),
            timeline.fixed_in(bug, releases, outcome), others, nightly,
            sorted(having[PINNED]))
    return out


def device_specs(defect: Defect) -> list[str]:
    """The manifest's spec ids that a device-only defect names (its prefixes hold torchrl)."""
    from conformance import manifest

    wanted = tuple(manifest.spec_id(p, "torchrl") for p in defect.prefixes)
    return sorted(s for s in manifest.spec_ids() if s.startswith(wanted))


def unexplained(matrix: Matrix, entries: list[Entry]) -> list[str]:
    """Known failures of the pinned release that no defect explains."""
    owner = entry_defects(entries)
    return sorted(timeline._test(r) for r in matrix.rows
                  if r["implementation_version"] == PINNED and r["outcome"] == "known failure"
                  and defect_of(r["nodeid"], r.get("message"), entries, owner) is None)


# ------------------------------------------------------------------ the generated parts


def _upstream(defect: Defect) -> str:
    if defect.upstream != NOT_REPORTED:
        return f"reported: {defect.upstream}"
    if defect.threads:
        return (f"{NOT_REPORTED}: no thread reports this defect; the search ([{SEARCH_LOG}]"
                f"({SEARCH_LOG})) found the related threads below")
    return (f"{NOT_REPORTED}: the search ([{SEARCH_LOG}]({SEARCH_LOG})) found no thread (the "
            f"expectations link {defect.related})")


def block_status(defect: Defect, history: History) -> list[str]:
    where = " (known failures in the matrix)" if history.seen_on == "cpu" else ""
    lines = [f"- **Releases that have it**{where}: {history.releases}",
             f"- **Fixed in**: {history.fixed_in}",
             *[f"- **Source {o.split(': ', 1)[0]}**: {o.split(': ', 1)[1]}"
               for o in history.others],
             f"- **{history.nightly.split(':')[0].capitalize()}**: "
             f"{history.nightly.split(': ', 1)[1]}",
             f"- **Classification**: {KINDS[defect.kind]}",
             f"- **Repository**: {defect.repository} (the code to change is there)",
             f"- **Upstream**: {_upstream(defect)}"]
    lines += [f"  - {t.url}: {t.note}" for t in defect.threads]
    if defect.documentation:
        lines.append(f"- **Documentation**: {defect.documentation}")
    return lines


def block_specs(history: History) -> list[str]:
    if history.seen_on != "cpu":
        return [f"{len(history.specs)} spec(s) of [torchrl-conformance](../../README.md) check it "
                f"on a {history.seen_on} run (they cannot be tested on the CPU, and no "
                f"expectation entry lists them: expectations are not per device):", "",
                *[f"- `{test}`" for test in history.specs]]
    return [f"{len(history.specs)} known failure(s) of torchrl {PINNED} in "
            "[torchrl-conformance](../../README.md):", "",
            *[f"- `{test}`" for test in history.specs]]


def block_environment(matrix: Matrix) -> list[str]:
    s = matrix.stack
    return ["```", f"torchrl {PINNED}", f"torch {s.get('torch', '?')}",
            f"tensordict {s.get('tensordict', '?')}", f"python {s.get('python', '?')}", "```",
            f"(from the results of the torchrl {PINNED} column of the matrix, which do not record "
            "the OS; seen on Linux x86_64, CPU)"]


def block_reproducer(defect: Defect, bugs_dir: Path) -> list[str]:
    code = (bugs_dir / f"{defect.slug}.py").read_text(encoding="utf-8").rstrip("\n")
    return [f"Save as `{defect.slug}.py` and run `python {defect.slug}.py` (exit code 1 while the "
            "bug is present, 0 once fixed):", "", "```python", code, "```"]


def block_index(histories_: dict[str, History]) -> list[str]:
    lines = ["| defect | area | kind | repository | releases that have it | fixed in | upstream | "
             f"known failures of {PINNED} it explains |", "|---|---|---|---|---|---|---|---|"]
    for d in DEFECTS:
        h = histories_[d.slug]
        up = ("not reported" if d.upstream == NOT_REPORTED else f"[reported]({d.upstream})")
        if d.upstream == NOT_REPORTED and d.threads:
            up += f" ({len(d.threads)} related)"
        count = (str(len(h.specs)) if d.seen_on == "cpu" else
                 f"0 on the CPU ({len(h.specs)} specs on {d.seen_on})")
        lines.append(f"| [{d.slug}]({d.slug}.md) ([reproducer]({d.slug}.py)): {d.summary} | "
                     f"{d.area} | {KINDS[d.kind]} | {d.repository} | {h.releases} | "
                     f"{h.fixed_in} | {up} | {count} |")
    total = sum(len(histories_[d.slug].specs) for d in DEFECTS if d.seen_on == "cpu")
    kinds = ", ".join(f"{sum(d.kind == k for d in DEFECTS)} {KINDS[k]}" for k in KINDS)
    reported = sum(d.upstream != NOT_REPORTED for d in DEFECTS)
    return [*lines, f"| **all** | | | | | | | **{total}** |", "",
            f"{len(DEFECTS)} entries: {kinds}; {reported} reported upstream before this "
            f"record, {len(DEFECTS) - reported} not (the search: [{SEARCH_LOG}]({SEARCH_LOG}))."]


MARK = re.compile(r"<!-- generated: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- end generated: "
                  r"(?P=name) -->", re.S)


def fill(text: str, blocks: dict[str, list[str]], where: str) -> str:
    """``text`` with each generated block replaced; every block must be marked in it."""
    missing = set(blocks) - {m["name"] for m in MARK.finditer(text)}
    if missing:
        raise BugsError(f"{where}: no '<!-- generated: {sorted(missing)[0]} -->' ... "
                        f"'<!-- end generated: {sorted(missing)[0]} -->' part")
    return MARK.sub(lambda m: (f"<!-- generated: {m['name']} -->\n"
                               + "\n".join(blocks.get(m["name"], m["body"].splitlines()))
                               + f"\n<!-- end generated: {m['name']} -->"), text)


def generate(results_dir: Path = RESULTS, bugs_dir: Path = BUGS) -> dict[Path, str]:
    """Every file of the folder whose generated parts changed or not: path -> new text."""
    entries = pinned_entries()
    matrix = Matrix.load(results_dir)
    left = unexplained(matrix, entries)
    if left:
        raise BugsError(f"{len(left)} known failure(s) of {PINNED} explained by no defect, "
                        f"e.g. {left[0]}: add them to a defect in {__name__}")
    hist = histories(matrix, entries)
    out = {}
    for defect in DEFECTS:
        for suffix in (".py", ".md"):
            if not (bugs_dir / f"{defect.slug}{suffix}").is_file():
                raise BugsError(f"{bugs_dir / defect.slug}{suffix} is missing (written by hand)")
        md = bugs_dir / f"{defect.slug}.md"
        out[md] = fill(md.read_text(encoding="utf-8"),
                       {"status": block_status(defect, hist[defect.slug]),
                        "specs": block_specs(hist[defect.slug]),
                        "environment": block_environment(matrix),
                        "reproducer": block_reproducer(defect, bugs_dir)}, str(md))
    index = bugs_dir / "README.md"
    out[index] = fill(index.read_text(encoding="utf-8"), {"index": block_index(hist)}, str(index))
    return out


def run(check: bool, results_dir: Path = RESULTS, bugs_dir: Path = BUGS) -> int:
    """Write (or, with ``check``, compare) the generated parts; the exit code."""
    stale = []
    for path, text in generate(results_dir, bugs_dir).items():
        if path.read_text(encoding="utf-8") == text:
            continue
        if check:
            old = MARK.finditer(path.read_text(encoding="utf-8"))
            names = [m["name"] for m, n in zip(old, MARK.finditer(text), strict=True)
                     if m["body"] != n["body"]]
            stale.append(f"{path}: generated part {', '.join(names)} differs from the matrix")
        else:
            atomic_write(path, text)
            print(f"updated {path}")
    for line in stale:
        print(line, file=sys.stderr)
    if stale:
        print(f"edited by hand or stale: run {COMMAND} (it rewrites these parts from the "
              "matrix; edit the text outside them)", file=sys.stderr)
    return 1 if stale else 0


PASSING = {"pass", "unexpected pass"}  # an unexpected pass is a known failure that passed


def _verdicts(path: Path) -> dict[str, str]:
    import json

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise BugsError(f"cannot read {path}: {exc.strerror}") from None
    try:
        rows = json.loads(text)["rows"]
    except (ValueError, KeyError, TypeError):
        raise BugsError(f"{path}: not a results file of this suite") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise BugsError(f"{path}: not a results file of this suite")
    # a narrowed run (-k, a node id, an ini file that collects less) is no judge of a patch:
    # completeness from the rows, against the committed manifest, as the gate decides it
    from conformance.plugin.completeness import rows_reason

    devices = {r.get("device", "cpu") for r in rows}
    short = rows_reason(rows, ["torchrl"], next(iter(devices)) if len(devices) == 1 else "cpu")
    if short:
        raise BugsError(f"{path}: a partial run cannot verify a fix ({short})")
    return {r["nodeid"]: "pass" if r["outcome"] in PASSING else
            "fail" if r["outcome"] in FAILING else r["outcome"]
            for r in rows if r.get("implementation") == "torchrl"}


def verify(patched: Path, baseline: Path, slugs: list[str]) -> int:
    """Print what a patch changed; 0 when exactly the named defects' specs turned to pass."""
    unknown = [s for s in slugs if s not in BY_SLUG]
    if unknown:
        raise BugsError(f"unknown defect {unknown[0]!r}; one of: {', '.join(BY_SLUG)}")
    before, after = _verdicts(baseline), _verdicts(patched)
    prefixes = tuple(p for s in slugs for p in BY_SLUG[s].prefixes)
    targets = sorted(n for n in before if n.startswith(prefixes))
    problems = [f"{n}: {before[n]} -> {after.get(n, 'absent')} (a spec of the defect)"
                for n in targets if before[n] != "fail" or after.get(n) != "pass"]
    problems += [f"{n}: {before[n]} -> {after.get(n, 'absent')} (moved, not a spec of the defect)"
                 for n in sorted(before) if n not in targets and after.get(n) != before[n]]
    problems += [f"{n}: only in the patched run" for n in sorted(set(after) - set(before))]
    print(f"{len(targets)} spec(s) of {', '.join(slugs)}: "
          f"{sum(after.get(n) == 'pass' for n in targets)} pass with the patch "
          f"(all failed before: {all(before[n] == 'fail' for n in targets)}); "
          f"{len(before) - len(targets)} other verdict(s) compared")
    for line in problems:
        print(f"  {line}")
    print("verified: the defect's specs turn pass, no other verdict moves" if not problems
          else f"NOT verified: {len(problems)} problem(s)")
    return 1 if problems or not targets else 0


def reproduce(slugs=None, python: str = sys.executable, workers: int = 2,
              timeout: float = 300) -> dict[str, subprocess.CompletedProcess]:
    """Each reproducer run alone in an empty temporary folder, nothing of the project on the
    path; slug -> the finished process (a timeout is returncode None)."""
    from concurrent.futures import ThreadPoolExecutor

    unknown = [s for s in slugs or () if s not in BY_SLUG]
    if unknown:
        raise BugsError(f"unknown defect {unknown[0]!r}; one of: {', '.join(BY_SLUG)}")
    path = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
            if p and Path(p).resolve() != ROOT]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}

    def one(slug: str) -> subprocess.CompletedProcess:
        with tempfile.TemporaryDirectory(prefix=f"{slug}-") as folder:
            shutil.copy(BUGS / f"{slug}.py", folder)
            try:
                return subprocess.run([python, f"{slug}.py"], cwd=folder, env=env, text=True,
                                      capture_output=True, timeout=timeout)
            except subprocess.TimeoutExpired as exc:
                return subprocess.CompletedProcess(exc.cmd, None, exc.stdout or "",
                                                   f"timed out after {timeout:g} s")

    with ThreadPoolExecutor(workers) as pool:
        return dict(zip(slugs or BY_SLUG, pool.map(one, slugs or BY_SLUG), strict=True))


def reproduce_verdict(run: subprocess.CompletedProcess) -> str:
    if run.returncode in (0, 1):
        return ("fixed", "present")[run.returncode]
    last = (run.stderr or run.stdout or "").strip().splitlines()
    return f"error (exit code {run.returncode}): {last[-1][:200] if last else ''}"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=COMMAND, description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="only compare: exit 1 if a generated part differs")
    parser.add_argument("--results", type=Path, default=RESULTS,
                        help="the per-source results of the matrix (default: reports/upstream)")
    parser.add_argument("--bugs", type=Path, default=BUGS,
                        help="the reports folder (default: reports/upstream-bugs)")
    parser.add_argument("--reproduce", nargs="*", metavar="SLUG",
                        help="run the reproducers (all, or these) alone with this Python")
    parser.add_argument("--verify", nargs="+", metavar="PATCHED.json BASELINE.json SLUG",
                        help="judge a fix (see above) instead of writing")
    args = parser.parse_args(argv)
    try:
        if args.reproduce is not None:
            runs = reproduce(args.reproduce)
            for slug, process in runs.items():
                print(f"{slug}: {reproduce_verdict(process)}")
            return 0 if all(r.returncode in (0, 1) for r in runs.values()) else 1
        if args.verify:
            if len(args.verify) < 3:
                parser.error("--verify needs PATCHED.json BASELINE.json and at least one SLUG")
            return verify(Path(args.verify[0]), Path(args.verify[1]), args.verify[2:])
        return run(args.check, args.results, args.bugs)
    except BugsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
