"""TorchRL adapters, one module per area (``make(adapter)`` returns the area object)."""
