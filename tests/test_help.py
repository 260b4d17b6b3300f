"""What a reader sees without the docs site: ``deepxde-lnn --help`` (plain text
that names every command) and, for the Python API, ``help()`` and
``inspect.signature`` (every keyword with its type, default and meaning)."""

import ast
import importlib
import inspect
import pydoc
import re
import typing
from pathlib import Path

import pytest

import deepxde_lnn
from deepxde_lnn import api, cli
from deepxde_lnn import case_script as example
from deepxde_lnn.config import Execution, Training, Verdicts, option_fields
from deepxde_lnn.study import registry

ROOT = Path(__file__).resolve().parents[1]

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


# --- the Python API: help() and inspect.signature ----------------------------------

EXPERIMENTS = ("run", "compare", "sweep", "ablate")


def _args(doc: str) -> list[str]:
    """The parameter names of a Google-style docstring's ``Args:`` section, in
    order (``*`` kept), one per entry."""
    lines = inspect.cleandoc(doc or "").splitlines()
    if "Args:" not in lines:
        return []
    names = []
    for line in lines[lines.index("Args:") + 1 :]:
        if line and not line.startswith(" "):  # the next section
            break
        entry = re.match(r" {4}(\**\w+)(?: \(.*\))?: \S", line)
        if entry:
            names.append(entry[1])
    return names


def _parameters(obj) -> list[str]:
    """What a caller passes: the signature's parameters as a docstring names
    them (``**kwargs``)."""
    stars = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [
        stars.get(p.kind, "") + p.name
        for p in inspect.signature(obj).parameters.values()
    ]


def test_args_reads_google_style():
    doc = """Summary.

    Args:
        a: first,
            continued: not an entry.
        b (int): second.
        **rest: the others.

    Returns:
        c: not an argument.
    """
    assert _args(doc) == ["a", "b", "**rest"]


def option_types() -> dict:
    """Every option's type: its field's annotation, evaluated."""
    hints = {}
    for cls in (Training, Execution, Verdicts):
        hints |= typing.get_type_hints(cls)
    return {name: hints[name] for name in option_fields()}


def _options_of(call: str) -> dict:
    if call == "run":  # one run: its training, and how this call writes it
        run = ("overwrite", "progress", "verbose", "threads", "force_threads")
        return {**option_fields(Training), **{n: option_fields()[n] for n in run}}
    return option_fields()


@pytest.mark.parametrize("call", EXPERIMENTS)
def test_signature_has_every_option_with_its_type_and_default(call):
    func = getattr(deepxde_lnn, call)
    params = inspect.signature(func).parameters
    types = option_types()
    for name, f in _options_of(call).items():
        p = params[name]
        assert p.kind is p.KEYWORD_ONLY, name
        assert p.default == f.default and p.annotation == types[name], name
    kinds = {p.kind for p in params.values()}
    assert inspect.Parameter.VAR_KEYWORD not in kinds  # no **options left
    for p in params.values():  # typed, as evaluated types (what IDEs and Sphinx read)
        assert p.annotation is not p.empty and not isinstance(p.annotation, str), p
    hints = typing.get_type_hints(func)
    assert hints == {
        **{p.name: p.annotation for p in params.values()},
        "return": inspect.signature(func).return_annotation,
    }


@pytest.mark.parametrize("call", EXPERIMENTS)
def test_help_shows_every_parameter_with_its_type_and_meaning(call):
    func = getattr(deepxde_lnn, call)
    text = pydoc.render_doc(func, renderer=pydoc.plaintext)
    flat = " ".join(text.split())
    params = inspect.signature(func).parameters
    assert _args(func.__doc__) == list(params)  # each documented, in order
    for p in params.values():
        assert str(p) in flat, p  # name: type = default
    for name, f in _options_of(call).items():
        assert f"{name}: {f.metadata['help']}." in flat, name  # the field's own text


def test_an_option_is_still_checked_as_a_keyword():
    with pytest.raises(ValueError, match=r"^lr must be a finite number > 0"):
        deepxde_lnn.compare("laplace", lr=-1.0)
    with pytest.raises(ValueError, match=r"^iteration: unknown option of compare"):
        deepxde_lnn.compare("laplace", iteration=3)


def test_static_keywords_are_the_options():
    """What static analysis sees (``**options: Unpack[...]``) is generated from the
    fields and current."""
    keywords = importlib.import_module("deepxde_lnn.keywords")
    assert (ROOT / "deepxde_lnn" / "keywords.py").read_text() == api.keywords_source()
    for call, typed in (
        ("run", keywords.RunOptions),
        ("compare", keywords.ManyOptions),
    ):
        assert list(typing.get_type_hints(typed)) == list(_options_of(call))
        assert typing.get_type_hints(typed) == {
            n: t for n, t in option_types().items() if n in _options_of(call)
        }


def _public():
    """Every public callable of ``deepxde_lnn`` (its ``__all__``)."""
    names = [n for n in deepxde_lnn.__all__ if callable(getattr(deepxde_lnn, n))]
    assert {"LNN", "compare", "matched", "LiquidDeepONet", "report", "main"} <= set(
        names
    )
    return names


@pytest.mark.parametrize("name", _public())
def test_every_public_name_documents_each_parameter(name):
    """One style (Google's ``Args:``), one entry per parameter, in order, each
    typed; a class documents its constructor's."""
    obj = getattr(deepxde_lnn, name)
    params = _parameters(obj)
    assert _args(obj.__doc__) == params, name
    # and each typed (but **kwargs), as Sphinx resolves the annotations
    hints = typing.get_type_hints(obj.__init__ if isinstance(obj, type) else obj)
    untyped = [p for p in params if not p.startswith("*") and p not in hints]
    assert untyped == [], name


def test_static_analysis_sees_every_lazy_name():
    """``__init__``'s ``TYPE_CHECKING`` imports (what an IDE reads) are the names
    that its ``__getattr__`` loads, from the same modules."""
    tree = ast.parse((ROOT / "deepxde_lnn" / "__init__.py").read_text())
    (block,) = [
        n
        for n in tree.body
        if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    seen = {}
    for node in block.body:
        module = importlib.import_module("." * node.level + node.module, "deepxde_lnn")
        seen |= {a.name: getattr(module, a.name) for a in node.names}
    assert set(seen) == set(deepxde_lnn.__all__) - {"__version__"}
    for name, obj in seen.items():
        assert getattr(deepxde_lnn, name) is obj, name
