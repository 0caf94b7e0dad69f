"""TorchRL's own tests as the drop-in check for ``impls``.

``python -m conformance.dropin PATH`` (``nox -s dropin -- PATH``) runs TorchRL's tests for the
replaced classes twice, as shipped and with the ``impls`` classes bound in place of TorchRL's
names (``swap``), and reports the tests the swap breaks, grouped by reason (``compare``); the
ones that break on purpose are listed in ``differences`` with the reason and the spec behind it.
"""
