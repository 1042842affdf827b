"""Command line: ``python -m experiments NAME [--quick] [--out DIR]`` or ``--list``.

Every module of this package whose name does not start with ``_`` and that defines ``run`` is
an experiment; its command-line NAME is the module name with ``_`` replaced by ``-``.

Where results go, wherever the command is started from: a full run writes the checkout's
``docs/results/NAME.md`` and ``docs/figures/``; a ``--quick`` run writes under the checkout's
``build/quick/`` (ignored by git), so a smoke run never overwrites the committed results.
``--out DIR`` overrides both.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import pathlib
import pkgutil
import sys
import time

PACKAGE = "experiments"
#: The checkout this package sits in.
REPO = pathlib.Path(__file__).resolve().parents[1]
#: Default output folders of full and of quick runs.
FULL_OUT = REPO / "docs"
QUICK_OUT = REPO / "build" / "quick"


def module_names() -> list[str]:
    """Names of the modules and subpackages of this package not starting with ``_``, experiments
    and helpers alike (without importing them)."""
    import experiments as pkg

    return sorted(
        m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_")
    )


def _source(mod_name: str) -> pathlib.Path:
    folder = pathlib.Path(__file__).parent
    module = folder / f"{mod_name}.py"
    return module if module.exists() else folder / mod_name / "__init__.py"


def experiments() -> dict[str, str]:
    """``{NAME: first docstring line}`` of every module defining a function ``run`` at its top
    level, read from the source without importing it (helper modules such as
    ``random_networks`` and the ``peers`` and ``scripts`` packages define none)."""
    out = {}
    for mod_name in module_names():
        try:
            tree = ast.parse(_source(mod_name).read_text())
        except (OSError, SyntaxError) as exc:  # a broken module must not hide the others
            out[mod_name.replace("_", "-")] = f"(cannot read: {type(exc).__name__}: {exc})"
            continue
        if any(isinstance(node, ast.FunctionDef) and node.name == "run" for node in tree.body):
            doc = (ast.get_docstring(tree) or "").strip().splitlines()
            out[mod_name.replace("_", "-")] = doc[0] if doc else ""
    return out


def load(name: str):
    """The experiment module for NAME; ``ValueError`` listing the experiments otherwise."""
    mod_name = name.replace("-", "_")
    if not mod_name.startswith("_") and mod_name in module_names() and \
            name.replace("_", "-") not in experiments():
        raise ValueError(f"{PACKAGE}.{mod_name} is a helper module, not an experiment (no run())")
    if mod_name.startswith("_") or name.replace("_", "-") not in experiments():
        raise ValueError(f"unknown experiment {name!r}; the experiments: "
                         f"{', '.join(experiments())} (python -m experiments --list)")
    return importlib.import_module(f"{PACKAGE}.{mod_name}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m experiments",
        description="Run one of onlinebma's paper reproductions; writes OUT/results/NAME.md "
        "and OUT/figures/NAME-*.png.",
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="experiment to run (see --list)")
    parser.add_argument("--quick", action="store_true", help="small smoke-test version (< 1 min)")
    parser.add_argument("--out", type=pathlib.Path, default=None,
                        help=f"output directory (default: {FULL_OUT} for full runs, "
                        f"{QUICK_OUT} for --quick)")
    parser.add_argument("--list", action="store_true", help="list the experiments and exit")
    args, _ = parser.parse_known_args(argv)
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
    # An experiment may take options of its own: a dict ARGUMENTS {flag: argparse kwargs}.
    options = getattr(mod, "ARGUMENTS", {})
    for flag, kwargs in options.items():
        parser.add_argument(flag, **kwargs)
    args = parser.parse_args(argv)
    own = {flag.lstrip("-").replace("-", "_") for flag in options}
    out = args.out or (QUICK_OUT if args.quick else FULL_OUT)
    start = time.perf_counter()
    result = mod.run(quick=args.quick, out=out, **{k: getattr(args, k) for k in own})
    tables = (result or {}).get("tables", {})
    print(
        f"{args.name}: {len(tables)} table(s) written under {out}/results and "
        f"{out}/figures in {time.perf_counter() - start:.1f}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
