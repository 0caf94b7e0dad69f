from conformance.implementations.torchrl_areas.sac_done_states import TorchRLSACDoneStates


def make(adapter):
    from impls import DiscreteSACLoss, SACLoss

    return TorchRLSACDoneStates(SACLoss, DiscreteSACLoss, library=f"reference {adapter.version}")
