"""In a checkout (``PYTHONPATH=. pytest conformance``, nox), where no entry point registers the
suite's plug-in, this registers it; where ``conformance.pytest_entry`` already did, it does
nothing. The plug-in itself is :mod:`conformance.pytest_plugin`."""

from conformance.pytest_entry import register


def pytest_addoption(parser, pluginmanager):
    register(pluginmanager)
