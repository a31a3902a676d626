"""Every registered pass imports, is named as registered, and round-trips its options."""
import dataclasses
import sys

import pytest

from minisycl.passes import PASSES, PipelineError, get_pass, parse_pipeline, print_pipeline


@pytest.mark.parametrize("name", sorted(PASSES))
def test_registry_entry(name):
    cls = get_pass(name)
    assert cls.name == name
    assert callable(getattr(cls, "run"))
    assert sys.modules[cls.__module__].__doc__, "each pass file opens with a docstring"
    instance = parse_pipeline(name)[0]
    assert print_pipeline([instance]) == name
    if dataclasses.is_dataclass(cls):
        # change every option away from its default and round-trip the text
        changed = {}
        for f in dataclasses.fields(cls):
            choices = f.metadata.get("choices")
            if choices:             # an option with a fixed set of values: another one of them
                changed[f.name] = next(c for c in choices if c != f.default)
                continue
            changed[f.name] = (not f.default) if isinstance(f.default, bool) else \
                (f.default + 1 if isinstance(f.default, int) else "x,y")
        text = print_pipeline([cls(**changed)])
        assert print_pipeline(parse_pipeline(text)) == text
        assert dataclasses.asdict(parse_pipeline(text)[0]) == changed


def test_unknown_pass_lists_known_ones():
    with pytest.raises(PipelineError) as err:
        parse_pipeline("split-if-device,nope")
    assert "unknown pass 'nope'" in str(err.value)
    for name in PASSES:
        assert name in str(err.value)


@pytest.mark.parametrize("text", ["", "propagate-aspects{", "propagate-aspects{validate=2}"])
def test_malformed_pipelines(text):
    with pytest.raises(PipelineError):
        parse_pipeline(text)


def test_opt_help_lists_every_pass_and_option():
    """``minisycl opt --help`` is generated from the registry: every pass with its
    summary, every option with its help (issue 29 point 6)."""
    from click.testing import CliRunner
    from minisycl.passes.support.cli import main
    result = CliRunner().invoke(main, ["opt", "--help"], terminal_width=200)
    assert result.exit_code == 0
    lines = result.output.splitlines()
    for name in PASSES:
        assert any(line.split()[:1] == [name] and len(line.split()) > 1 for line in lines), name
        cls = get_pass(name)
        for f in dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ():
            assert f.metadata.get("help"), f"{name}: option {f.name} has no help"
            option = f.name.replace("_", "-")
            assert any(line.strip().startswith(f"{option}=") and f.metadata["help"] in line for line in lines), \
                (name, option)
