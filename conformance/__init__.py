"""TorchRL Conformance: executable specifications for five historically broken TorchRL behaviours."""

__version__ = "0.1.0"
