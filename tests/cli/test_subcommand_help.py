"""Each `batsim-py NAME --help` names itself as users type it and explains every option."""

from __future__ import annotations

import argparse
import importlib

import pytest

from batsim_py.cli import SUBCOMMANDS, main


def _parser(name: str, monkeypatch) -> argparse.ArgumentParser:
    """The parser a subcommand builds (caught as it parses `--help`)."""
    caught: list[argparse.ArgumentParser] = []

    def parse(self, args=None, namespace=None):  # noqa: ANN001, ANN202
        caught.append(self)
        raise SystemExit(0)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse)
    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args",
                        lambda self, *a, **k: parse(self))
    importlib.import_module(SUBCOMMANDS[name]).main(["--help"])
    return caught[0]


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_subcommand_help_names_it_and_documents_each_option(name: str, monkeypatch) -> None:
    parser = _parser(name, monkeypatch)
    assert parser.prog == f"batsim-py {name}"
    assert parser.description
    undocumented = [a.option_strings or a.dest for a in parser._actions
                    if not (a.help and a.help.strip())]
    assert undocumented == []


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_subcommand_help_is_printed(name: str, capsys) -> None:
    assert main([name, "--help"]) == 0
    assert capsys.readouterr().out.startswith(f"usage: batsim-py {name} ")
