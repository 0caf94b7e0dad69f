"""conformance.build_trees (torchrl-conformance --build-trees): nothing is built where TorchRL's
trees load; the option is listed, with what it does, in --help."""

import pytest

from conformance.console import build_parser


def test_nothing_is_built_where_the_trees_load():
    pytest.importorskip("torchrl")
    from conformance.build_trees import build_trees

    said = []
    assert build_trees(log=said.append) is None
    assert said and "loads next to torch" in said[0] and "nothing to build" in said[0]


def test_the_option_says_what_it_does():
    text = " ".join(build_parser().format_help().split())
    assert "--build-trees" in text and "torchrl/csrc" in text
