"""Independent oracles. Nothing here imports ``impls`` or the library under test."""
