"""The reference pages generated from the code are up to date."""

from irc import docgen


def test_generated_docs_are_current() -> None:
    assert docgen.main(["--check"]) == 0, "run `.venv/bin/python -m irc.docgen`"


def test_every_nn_op_is_documented() -> None:
    from irc.dialects.nn import NN

    text = docgen.nn_ops_markdown()
    for op in NN.operations:
        assert f"## `{op.name}`" in text
        assert op.__doc__ and op.__doc__.strip(), f"{op.name} has no docstring"
