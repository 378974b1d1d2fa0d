"""The dispatcher: every subcommand has --help, and a bad argument is a user error (exit 1)."""

from __future__ import annotations

import pytest

from evalkit.cli.main import SUBCOMMAND_MODULES, build_parser, main


def _subcommands() -> list[str]:
    parser = build_parser()
    action = next(a for a in parser._actions if a.dest == "command")
    return sorted(action.choices)  # type: ignore[arg-type]


def test_every_planned_subcommand_is_wired() -> None:
    assert _subcommands() == sorted(SUBCOMMAND_MODULES)


@pytest.mark.parametrize("command", sorted(SUBCOMMAND_MODULES))
def test_help_on_every_command(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert f"usage: evalkit {command}" in capsys.readouterr().out


@pytest.mark.parametrize("command", sorted(SUBCOMMAND_MODULES))
def test_an_unknown_flag_is_a_user_error_not_an_internal_one(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # SPEC section 3: 1 = bad argument; argparse's own default (2) means internal/I-O here.
    with pytest.raises(SystemExit) as exc:
        main([command, "--no-such-flag-anywhere"])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    # argparse names the first problem: the unknown flag, or a required argument missing
    assert "error:" in err and "usage: evalkit" in err


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 1
    assert "usage: evalkit" in capsys.readouterr().err
