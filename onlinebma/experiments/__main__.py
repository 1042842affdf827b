"""Command line: ``python -m onlinebma.experiments NAME [--quick] [--out DIR]`` or ``--list``.

Every module of this package whose name does not start with ``_`` and that defines ``run`` is
an experiment; its command-line NAME is the module name with ``_`` replaced by ``-``.
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import pkgutil
import sys
import time

PACKAGE = "onlinebma.experiments"


def module_names() -> list[str]:
    """Names of the candidate experiment modules in this package (without importing them)."""
    import onlinebma.experiments as pkg

    return sorted(
        m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")
    )


def experiments() -> dict[str, str]:
    """``{NAME: first docstring line}`` of every module defining ``run``."""
    out = {}
    for mod_name in module_names():
        try:
            mod = importlib.import_module(f"{PACKAGE}.{mod_name}")
        except Exception as exc:  # a broken module must not hide the others
            out[mod_name.replace("_", "-")] = f"(cannot import: {type(exc).__name__}: {exc})"
            continue
        if callable(getattr(mod, "run", None)):
            doc = (mod.__doc__ or "").strip().splitlines()
            out[mod_name.replace("_", "-")] = doc[0] if doc else ""
    return out


def load(name: str):
    """The experiment module for NAME; ``ValueError`` listing the known names otherwise."""
    mod_name = name.replace("-", "_")
    if mod_name.startswith("_") or mod_name not in module_names():
        known = ", ".join(n.replace("_", "-") for n in module_names())
        raise ValueError(f"unknown experiment {name!r}; known: {known}")
    mod = importlib.import_module(f"{PACKAGE}.{mod_name}")
    if not callable(getattr(mod, "run", None)):
        raise ValueError(f"{PACKAGE}.{mod_name} is a helper module, not an experiment (no run())")
    return mod


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m onlinebma.experiments",
        description="Run one of onlinebma's paper reproductions; writes OUT/results/NAME.md "
        "and OUT/figures/NAME-*.png.",
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="experiment to run (see --list)")
    parser.add_argument("--quick", action="store_true", help="small smoke-test version (< 1 min)")
    parser.add_argument("--out", type=pathlib.Path, default=pathlib.Path("docs"),
                        help="output directory (default: ./docs)")
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    args = parser.parse_args(argv)
    if args.list:
        for name, doc in experiments().items():
            print(f"{name:24s} {doc}")
        return 0
    if not args.name:
        parser.error("give an experiment NAME or --list")
    try:
        mod = load(args.name)
    except ValueError as exc:
        parser.error(str(exc))
    start = time.perf_counter()
    result = mod.run(quick=args.quick, out=args.out)
    tables = (result or {}).get("tables", {})
    print(
        f"{args.name}: {len(tables)} table(s) written under {args.out}/results and "
        f"{args.out}/figures in {time.perf_counter() - start:.1f}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
