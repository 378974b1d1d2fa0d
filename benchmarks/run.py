"""Run every benchmark module (``benchmarks/bench_*.py``) and print its figures.

Each module exposes ``main() -> None``; it prints its own timings as ratios against a baseline
measured in the same run (never absolute thresholds, which depend on the machine).
Usage: ``python benchmarks/run.py [NAME ...]`` (e.g. ``scoring`` for ``bench_scoring.py``).
A module with ``OPT_IN = True`` (a run of many minutes) runs only when named.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    modules = sorted(HERE.glob("bench_*.py"))
    if argv:
        wanted = {f"bench_{name}.py" for name in argv}
        modules = [m for m in modules if m.name in wanted]
    if not modules:
        print("no benchmark modules found", file=sys.stderr)
        return 1
    for path in modules:
        print(f"== {path.stem} ==", flush=True)
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module  # dataclasses look their module up while it loads
        spec.loader.exec_module(module)
        if getattr(module, "OPT_IN", False) and not argv:
            print(f"skipped: opt-in, run `python benchmarks/run.py {path.stem[6:]}`", flush=True)
            continue
        module.main()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
