"""The benchmark harness: workloads and the asv classes made from them (``workload``), timing in
turns (``turns``), comparison groups (``groups``), targets, the side-by-side pytest-benchmark run
(``side_by_side``, driven by ``python -m benchtools``), its report, and asv history across TorchRL
releases (``history``). asv discovers only ``benchmarks/``."""
