"""Areas of ``reference-fused``: prioritized replay only (see ``reference_fused``)."""
