"""Start-up stays light: ``evalkit --help`` and ``import evalkit`` load no heavy dependency.

Issue 25 measured ``evalkit --help`` at 11.9x ``python -c pass`` because every subcommand
module (and with them tqdm, numpy, the journal, the calibrations) was imported to build the
parser. The benchmark times it (``benchmarks/bench_scoring.py``); this test keeps it honest
without timing anything: it lists what a fresh interpreter has loaded afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evalkit.cli.main import SUBCOMMANDS, build_parser

#: What only the commands that use them may load (the SDKs, the numeric stack, the bar).
HEAVY = (
    "anthropic",
    "dask",
    "distributed",
    "numpy",
    "openai",
    "pandas",
    "pyarrow",
    "scipy",
    "statsmodels",
    "tqdm",
)

_PROBE = """
import json, sys
{body}
print(json.dumps(sorted({{m.partition(".")[0] for m in sys.modules}})))
"""


def _probe(body: str) -> str:
    """What a fresh interpreter running ``body`` prints, then the top-level modules it loaded."""
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE.format(body=body)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        env={**os.environ, "COLUMNS": "200"},  # help lines unwrapped
    )
    return proc.stdout


def _loaded(body: str) -> list[str]:
    return json.loads(_probe(body).strip().splitlines()[-1])


def test_import_evalkit_loads_nothing_heavy() -> None:
    loaded = _loaded("import evalkit")
    assert "evalkit" in loaded
    assert [m for m in HEAVY if m in loaded] == []


def test_help_loads_no_subcommand_and_nothing_heavy() -> None:
    body = (
        "from evalkit.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('evalkit.cli.'))))"
    )
    out = _probe(body)
    *_, cli_modules, loaded = out.strip().splitlines()
    assert json.loads(cli_modules) == ["evalkit.cli.main"]
    assert [m for m in HEAVY if m in json.loads(loaded)] == []
    for name, line in SUBCOMMANDS.items():  # the summary still lists every command
        assert name in out and line in out


@pytest.mark.parametrize("command", sorted(SUBCOMMANDS))
def test_each_command_registers_the_help_line_of_the_table(command: str) -> None:
    # one home for the line: the module registering the command takes it from SUBCOMMANDS
    parser = build_parser([command])
    action = next(a for a in parser._actions if a.dest == "command")
    lines = {c.dest: c.help for c in action._choices_actions}  # type: ignore[attr-defined]
    assert lines == SUBCOMMANDS
    real = action.choices[command]  # type: ignore[index]
    assert real.add_help  # the real parser, not a placeholder


def test_the_command_is_the_first_word_that_is_no_option() -> None:
    parser = build_parser(["--version"])  # no command: placeholders only
    action = next(a for a in parser._actions if a.dest == "command")
    assert not any(p.add_help for p in action.choices.values())  # type: ignore[union-attr]
    args = build_parser(["verify", "--all"]).parse_args(["verify", "--all"])
    assert args.command == "verify" and args.all and callable(args.func)
