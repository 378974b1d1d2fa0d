"""One architecture, written once: the contract, docs/ARCHITECTURE.md and the README agree.

The layers are the import contract's (``pyproject.toml``); the architecture page's table and
the README's layout must name the same layers, in the same order, each with the same packages.
"""

from __future__ import annotations

import re
import tomllib

from conftest import REPO_ROOT


def _layer(text: str) -> tuple[str, ...]:
    return tuple(sorted(part.strip().strip("`") for part in text.replace("\\|", "|").split("|")))


def _contract() -> list[tuple[str, ...]]:
    with open(REPO_ROOT / "pyproject.toml", "rb") as fh:
        config = tomllib.load(fh)["tool"]["importlinter"]
    [layers] = [c for c in config["contracts"] if c["type"] == "layers"]
    return [_layer(entry) for entry in layers["layers"]]


def _architecture_table() -> list[tuple[str, ...]]:
    text = (REPO_ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    section = text.split("## The layers", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [_layer(re.split(r"(?<!\\)\|", row)[1]) for row in rows]


def _readme_chain() -> list[tuple[str, ...]]:
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("## Layout", 1)[1].split("```", 2)[1]
    lines = block.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("evalkit/"))
    end = next(i for i, line in enumerate(lines) if i > start and not line.startswith(" "))
    chain = " ".join(line.strip() for line in lines[start:end]).split(":", 1)[1]
    return [_layer(part) for part in chain.split(">")]


def test_the_architecture_page_lists_the_contracts_layers() -> None:
    assert _architecture_table() == _contract()


def test_the_readme_layout_names_the_same_layers() -> None:
    assert _readme_chain() == _contract()[1:]  # the README starts below __main__
