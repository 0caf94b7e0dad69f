"""ProbabilisticActor with a CompositeDistribution does not check its name_map and out_keys
against the heads: a misconfigured actor runs and writes its samples somewhere other than
declared, instead of raising an error that names the offending key.
  - nested out_keys without a name_map: samples at the root keys 'action1', 'action2';
  - a head missing from name_map: that head written at its own root key;
  - a name_map entry for a key that is not a head: silently ignored.
"""
import sys

import torch
from tensordict import TensorDict
from tensordict.nn import CompositeDistribution, TensorDictModule
from torchrl.modules import ProbabilisticActor

B = 4
HEADS = ("action1", "action2")
torch.manual_seed(0)
td = TensorDict({"obs": {"action1": {"logits": torch.randn(B, 3)},
                         "action2": {"logits": torch.randn(B, 5)}}}, [B])


def actor(name_map, out_keys=None):
    params = [("obs", h, "logits") for h in HEADS]
    kwargs = {"distribution_map": {h: torch.distributions.Categorical for h in HEADS}}
    if name_map is not None:
        kwargs["name_map"] = name_map
    return ProbabilisticActor(
        TensorDictModule(lambda a, b: (a, b), in_keys=params,
                         out_keys=[("params", *k[1:]) for k in params]),
        in_keys=["params"], out_keys=out_keys, distribution_class=CompositeDistribution,
        distribution_kwargs=kwargs)


CASES = {  # fault -> (name_map, out_keys, the key an error should name)
    "nested out_keys, no name_map": (None, [("action", h) for h in HEADS], "action1"),
    "head 'action2' missing from name_map": ({"action1": ("action", "action1")}, None, "action2"),
    "name_map key 'actionX' is not a head": ({"action1": ("action", "action1"),
                                              "actionX": ("action", "action2")}, None, "actionX"),
}
print(f"parameters: ProbabilisticActor(CompositeDistribution of Categorical heads {HEADS}), "
      f"batch [{B}]")
bugs = 0
for fault, (name_map, out_keys, key) in CASES.items():
    try:
        out = actor(name_map, out_keys)(td.clone())
    except Exception as exc:  # noqa: BLE001 - the error is what is judged
        named = key in str(exc) and not isinstance(exc, IndexError)
        print(f"{fault}: expected an error naming {key!r}; actual {type(exc).__name__}: "
              f"{str(exc).splitlines()[0][:120] if str(exc) else ''}")
        bugs += not named
        continue
    written = sorted(str(k) for k in out.keys(True, True) if k[0] not in ("obs", "params"))
    print(f"{fault}: expected an error naming {key!r}; actual: it ran and wrote {written}")
    bugs += 1
if bugs:
    print(f"BUG: {bugs} of {len(CASES)} misconfigured actors accepted or refused without naming the key")
    sys.exit(1)
print("ok: every misconfigured actor is refused with an error naming the key")
