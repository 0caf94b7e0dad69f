"""The device a run checks implementations on (``--device``, ``$TORCHRL_CONFORMANCE_DEVICE``).

A run has one device, chosen before anything is collected: the default ``cpu``, or ``cuda`` /
``cuda:N`` where torch sees that CUDA device (asking for one it does not see is a one-line
usage error, never a run of skips). The specs build their inputs on the CPU, seeded, as they
always did, so that every device is checked on the same numbers; then

- :func:`put` hands an input to the implementation on the run's device (tensors, the modules
  of value and SAC networks, and the dataclasses of ``conformance.interface`` holding them);
- :func:`host` brings what the implementation returned back to the CPU for the oracles (which
  never leave the CPU), after checking that each tensor is on the run's device: an adapter that
  quietly computes elsewhere fails there, with a message naming both devices;
- :func:`generator` is the seeded random generator handed to ``sample`` calls.

The plugin sets the device once per process (:func:`use`); the specs read it through these
helpers, so no spec names a device itself.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import re

import torch

from conformance import _assertions

ENV_VAR = "TORCHRL_CONFORMANCE_DEVICE"
OPTION = "--device"
DEFAULT = "cpu"
TYPES = ("cpu", "cuda")  #: the device types a run may use
_FORM = re.compile(r"(cpu|cuda)(?::(0|[1-9][0-9]{0,3}))?", re.ASCII)  # an index torch can parse

_current = torch.device(DEFAULT)


class DeviceError(ValueError):
    """Why a device cannot be used for this run, in one line."""


def _given(where: str, text: str) -> str:
    """How the user wrote it: ``--device gpu`` or ``$TORCHRL_CONFORMANCE_DEVICE=gpu``."""
    shown = text if text.strip() else repr(text)
    return f"{where}={shown}" if where.startswith("$") else f"{where} {shown}"


def parse(text: str, where: str = OPTION) -> torch.device:
    """``cpu``, ``cuda`` or ``cuda:N`` as a torch device; anything else is a DeviceError."""
    value = (text or "").strip().lower()
    match = _FORM.fullmatch(value)
    if match is None or (match.group(1) == "cpu" and match.group(2) is not None):
        raise DeviceError(f"{_given(where, text)}: not a device; give cpu, cuda or cuda:N "
                          "(N a CUDA device index)")
    try:
        return torch.device(value)
    except (RuntimeError, ValueError):  # whatever torch refuses: one line, never INTERNALERROR
        raise DeviceError(f"{_given(where, text)}: not a device; give cpu, cuda or cuda:N "
                          "(N a CUDA device index)") from None


def check_available(device: torch.device, where: str = OPTION) -> None:
    """A DeviceError unless torch can run on ``device`` here."""
    if device.type != "cuda":
        return
    given = _given(where, label(device))
    if not torch.cuda.is_available():
        raise DeviceError(f"{given}: torch {torch.__version__} sees no CUDA device on this "
                          "machine (torch.cuda.is_available() is False); run with --device cpu, "
                          "or on a machine with an NVIDIA GPU")
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise DeviceError(f"{given}: this machine has {count} CUDA device(s), cuda:0 to "
                          f"cuda:{count - 1}")


def choose(option: str | None, environ) -> torch.device:
    """The run's device: the option, else the environment variable, else the CPU; checked."""
    if option is not None:
        where, text = OPTION, option
    elif environ.get(ENV_VAR, "").strip():
        where, text = f"${ENV_VAR}", environ[ENV_VAR]
    else:
        return torch.device(DEFAULT)
    device = parse(text, where)
    check_available(device, where)
    return device


def label(device: torch.device) -> str:
    """How reports and messages name a device: ``cpu``, ``cuda``, ``cuda:1``."""
    return str(device)


def describe(device: torch.device) -> str:
    """The device with its hardware, for the run's header and results (GPU name, CUDA)."""
    if device.type != "cuda":
        return label(device)
    index = device.index if device.index is not None else torch.cuda.current_device()
    return (f"{label(device)} ({torch.cuda.get_device_name(index)}, CUDA "
            f"{torch.version.cuda})")


def use(device: torch.device) -> None:
    """Make ``device`` this process's run device (the plugin calls it once, at configure)."""
    global _current
    _current = torch.device(device)
    _assertions.DEVICE = label(_current)  # every failure message names it


def current() -> torch.device:
    """The run's device (what reports and messages name)."""
    return _current


def target() -> torch.device:
    """Where inputs are placed and outputs are expected: the run's device. (A self-test that
    fakes CUDA on a machine without one replaces this, and only this, to keep tensors on the
    CPU while everything else says cuda.)"""
    return _current


def put(value):
    """``value`` on the run's device: tensors (gradients still flow back to a CPU leaf), modules
    (a copy: the spec keeps its CPU original for the oracle), and lists, tuples, dicts and
    dataclasses of them. What is already there is returned as it is (the same object), so a
    CPU run hands the implementation exactly what it handed it before devices existed."""
    device = target()
    if isinstance(value, torch.Tensor):
        return value if _same(value.device, device) else value.to(device)
    if isinstance(value, torch.nn.Module):
        here = _module_device(value)
        return value if here is None or _same(here, device) else copy.deepcopy(value).to(device)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value) if f.init}
        moved = {k: put(v) for k, v in fields.items()}
        same = all(moved[k] is fields[k] for k in fields)
        return value if same else dataclasses.replace(value, **moved)
    if isinstance(value, dict):
        moved = {k: put(v) for k, v in value.items()}
        return value if all(moved[k] is value[k] for k in value) else moved
    if isinstance(value, (list, tuple)):
        moved = [put(v) for v in value]
        return value if all(a is b for a, b in zip(moved, value, strict=True)) else type(value)(moved)
    return value


def _module_device(module: torch.nn.Module) -> torch.device | None:
    tensor = next(itertools.chain(module.parameters(), module.buffers()), None)
    return None if tensor is None else tensor.device


class WrongDevice(AssertionError):
    """An implementation returned a tensor that is not on the run's device."""


def host(value, what: str = "the implementation's output"):
    """What the implementation returned, on the CPU for the oracles: every tensor is first
    checked to be on the run's device (WrongDevice names both devices), then moved with
    ``.cpu()`` (still attached to its graph). Lists, tuples and dicts are walked; anything that
    is not a tensor (numbers, numpy arrays) is returned as it is."""
    if isinstance(value, torch.Tensor):
        expected = target()
        if not _same(value.device, expected):
            raise WrongDevice(_assertions.message(
                f"{what} is not on the run's device", params={}, expected=f"a tensor on "
                f"{label(expected)}", actual=f"a tensor on {value.device}",
                cause="the implementation ignores the device of its inputs (it moves them, or "
                      "builds what it returns on a fixed device)"))
        return value.cpu()
    if isinstance(value, dict):
        return {k: host(v, f"{what}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(host(v, f"{what}[{i}]") for i, v in enumerate(value))
    return value


def _same(actual: torch.device, expected: torch.device) -> bool:
    # cuda and cuda:0 are the same device when 0 is the current one
    if actual.type != expected.type:
        return False
    if actual.index is None or expected.index is None:
        return True
    return actual.index == expected.index


def generator(seed: int) -> torch.Generator:
    """A generator on the run's device, seeded with ``seed``."""
    return torch.Generator(device=target()).manual_seed(seed)


def rng_state() -> tuple:
    """The global RNG states that a computation on the run's device could advance."""
    states = [torch.random.get_rng_state()]
    if target().type == "cuda":
        states.append(torch.cuda.get_rng_state(target()))
    return tuple(states)


# ------------------------------------------------------------------ what an area declares
#: the optional area attribute naming the device types it runs on (conformance.interface)
DEVICES = "devices"
#: the optional area attribute saying why it runs on no other device
DEVICES_WHY = "devices_why"
#: the calls that receive no tensor, hence ``device=`` (from an area that declares its devices)
KEYWORD_CALLS = ("buffer", "slice_buffer")


def declares(area) -> bool:
    """Whether the area declares its devices (then its tensor-less calls receive ``device=``)."""
    return getattr(area, DEVICES, None) is not None


def not_supported(area, impl_id: str, area_name: str) -> str | None:
    """Why ``area`` does not run on the run's device ("<impl> <area> does not run on cuda: <why>"),
    or None when it does. An area that declares nothing runs on the CPU only."""
    run = current()
    types = tuple(getattr(area, DEVICES, None) or (DEFAULT,))
    if run.type in types:
        return None
    why = getattr(area, DEVICES_WHY, None)
    return (f"{impl_id} {area_name} does not run on {label(run)}"
            + (f": {why}" if why else f" (it declares the devices {', '.join(types)})"))


def keyword(area) -> dict:
    """The ``device=`` keyword for a call that receives no tensor: given to an area that
    declares its devices, never to one that does not (plug-ins older than devices run as
    before, on the CPU)."""
    return {"device": target()} if declares(area) else {}


def check_placed(obj, what: str) -> None:
    """A buffer of an area that declares its devices says where its priorities live with an
    optional ``.device`` (none: host memory, the CPU); WrongDevice unless it is the run's."""
    found = getattr(obj, "device", None) or DEFAULT
    if not _same(torch.device(found), target()):
        raise WrongDevice(_assertions.message(
            f"{what} is not on the run's device", params={}, expected=label(target()),
            actual=str(found), cause="the implementation ignores device="))
