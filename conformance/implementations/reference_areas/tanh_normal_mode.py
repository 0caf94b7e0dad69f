from conformance.implementations.torchrl_areas.tanh_normal_mode import TanhNormalAPI


def make(adapter):
    from impls import TanhNormal

    return TanhNormalAPI(TanhNormal)
