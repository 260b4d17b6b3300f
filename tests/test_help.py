"""What a reader sees without the docs site: ``deepxde-lnn --help`` (plain text
that names every command) and, for the Python API, ``help()`` and
``inspect.signature`` (every keyword with its type, default and meaning)."""

import re

import pytest

from deepxde_lnn import cli, example
from deepxde_lnn.study import registry

# reST markup that a terminal would print as it is: literals, roles, emphasis
MARKUP = re.compile(r"`|\*\*|:(?:func|mod|class|meth|data|attr|obj|ref|doc):")


def _subparsers(parser):
    return parser._subparsers._group_actions[0].choices


def test_markup_pattern_finds_rest():
    for text in ("``deepxde-lnn``", ":func:`run`", "see `x`", "**bold**"):
        assert MARKUP.search(text), text
    assert not MARKUP.search("tcp://HOST:PORT, e.g. 'inverse time,1000,0.5'")


def test_help_names_every_command(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    text = capsys.readouterr().out
    assert exit_.value.code == 0
    _, rest = text.split("\n\n", 1)  # the usage line lists the subparsers
    description = rest.split("positional arguments", 1)[0]
    assert set(_subparsers(cli.build_parser())) == set(cli.COMMANDS)
    for command in cli.COMMANDS:  # in the description itself, not only the usage
        assert re.search(rf"\b{command}\b", description), command


def test_help_texts_are_plain_text(capsys):
    parser = cli.build_parser()
    texts = {"deepxde-lnn": parser.format_help()}
    texts |= {
        f"deepxde-lnn {n}": p.format_help() for n, p in _subparsers(parser).items()
    }
    with pytest.raises(SystemExit):  # a case script's flags: the same fields' help
        example.parse_args(registry.get("laplace"), ["--help"])
    texts["case script"] = capsys.readouterr().out
    assert len(texts) == len(cli.COMMANDS) + 2
    found = {k: MARKUP.findall(v) for k, v in texts.items() if MARKUP.search(v)}
    assert found == {}
