"""Running the suite on other RL libraries: one install layer each over the shared stack."""
