"""Tiny study notebooks for the runner's tests: a title, the parameters cell, one code cell."""

from __future__ import annotations

from pathlib import Path


def toy_notebook(path: Path, params: str, body: str, title: str = "# toy") -> Path:
    """Write a notebook at ``path``: ``title`` (Markdown), ``params`` (the cell tagged
    ``parameters``) and ``body`` (a code cell tagged ``hide-input``); returns ``path``."""
    import nbformat  # seconds to import (its schema validators): only the tests that write one

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    cell = nbformat.v4.new_code_cell(params)
    cell.metadata["tags"] = ["parameters"]
    work = nbformat.v4.new_code_cell(body)
    work.metadata["tags"] = ["hide-input"]
    nb.cells = [nbformat.v4.new_markdown_cell(title), cell, work]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path
