"""The Weka bridge the reproductions and the tests use: ARFF writing, running Weka 3.6.14.

Not in the library: it needs Java and Weka, which only a checkout's experiments and tests use.
"""

from __future__ import annotations

import atexit
import os
import pathlib
import re
import shutil
import subprocess
import tempfile

import numpy as np

__all__ = ["WEKA_JAR", "compiled_java", "java", "javac_available", "weka_available",
           "weka_cut_points", "write_arff"]

#: Debian's ``weka`` package installs Weka 3.6.14 here; override with $WEKA_JAR.
WEKA_JAR = os.environ.get("WEKA_JAR", "/usr/share/java/weka.jar")


def weka_available() -> bool:
    """Java on PATH and the Weka jar present."""
    return shutil.which("java") is not None and pathlib.Path(WEKA_JAR).exists()


def javac_available() -> bool:
    """Java, ``javac`` and Weka's jar present (what :func:`compiled_java` needs)."""
    return weka_available() and shutil.which("javac") is not None


_compiled: dict = {}  # class name -> the private folder holding its compiled class


def compiled_java(class_name: str, source: str) -> pathlib.Path:
    """The folder of ``class_name`` compiled from ``source`` against Weka's jar, once per process.

    The folder is private (``tempfile.mkdtemp``: readable by this user only, removed at exit):
    a Java class is never run from a shared, predictable path. Run it with the classpath
    ``WEKA_JAR + os.pathsep + folder``.
    """
    if class_name not in _compiled:
        folder = pathlib.Path(tempfile.mkdtemp(prefix=f"onlinebma-weka-{class_name}-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        (folder / f"{class_name}.java").write_text(source)
        done = subprocess.run(
            ["javac", "-nowarn", "-cp", WEKA_JAR, "-d", str(folder),
             str(folder / f"{class_name}.java")],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"cannot compile the Weka helper {class_name}: "
                               f"{done.stderr[-2000:]}")
        _compiled[class_name] = folder
    return _compiled[class_name]


def _arff_value(v) -> str:
    s = str(v).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{s}'"


def write_arff(X, y, path, numeric=(), relation: str = "data", classes=None, domain=None):
    """Write a pandas frame ``X`` and labels ``y`` as ARFF (class last, ``?`` for missing).

    Columns named in ``numeric`` are numeric; the others are nominal with their values sorted
    as strings, taken from the frame ``domain`` (default ``X``; pass the whole dataset so that
    training and test files share one header); columns without any value in ``domain`` are
    left out. ``classes`` fixes the order of the class values (sorted by default).
    """
    import pandas as pd

    path = pathlib.Path(path)
    numeric = set(numeric)
    domain = X if domain is None else domain
    lines = [f"@relation {_arff_value(relation)}"]
    # A column with no observed value carries no information, and Weka's LBR fails on an empty
    # nominal attribute: such columns are left out.
    columns = [c for c in X.columns if domain[c].notna().any()]
    for col in columns:
        if col in numeric:
            lines.append(f"@attribute {_arff_value(col)} numeric")
        else:
            values = sorted({str(v) for v in domain[col] if not pd.isna(v)})
            lines.append(f"@attribute {_arff_value(col)} {{{','.join(map(_arff_value, values))}}}")
    classes = sorted({str(v) for v in y}) if classes is None else [str(c) for c in classes]
    lines.append(f"@attribute class {{{','.join(map(_arff_value, classes))}}}")
    lines.append("@data")
    cols = [X[c].tolist() for c in columns]
    for i, label in enumerate(list(y)):
        cells = []
        for col_name, col in zip(columns, cols):
            v = col[i]
            if v is None or (isinstance(v, float) and v != v):
                cells.append("?")
            elif col_name in numeric:
                cells.append(repr(float(v)))
            else:
                cells.append(_arff_value(v))
        cells.append(_arff_value(label))
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


def java(*args, timeout=3600) -> str:
    done = subprocess.run(
        ["java", "-Xmx2g", "-cp", WEKA_JAR, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"Weka failed ({' '.join(args[:1])}): {done.stderr.strip()[-2000:]}")
    return done.stdout


_NUM = r"-?[0-9.]+(?:E-?[0-9]+)?"
_INTERVAL = re.compile(rf"^\((-inf|{_NUM})-(inf|{_NUM})[\])]$")


def weka_cut_points(arff) -> dict[str, np.ndarray]:
    """Cut points of every numeric attribute by Weka's supervised ``Discretize`` (defaults).

    Read from the labels of the filtered header, so they carry Weka's 6 printed decimals.
    """
    out = java("weka.filters.supervised.attribute.Discretize", "-i", str(arff), "-c", "last")
    cuts = {}
    for line in out.splitlines():
        if line.lower().startswith("@data"):
            break
        m = re.match(r"@attribute\s+('(?:[^'\\]|\\.)*'|\S+)\s+\{(.*)\}\s*$", line)
        if not m:
            continue
        name = m.group(1)
        if name.startswith("'"):
            name = name[1:-1].replace("\\'", "'").replace("\\\\", "\\")
        labels = re.findall(r"'((?:[^'\\]|\\.)*)'", m.group(2))
        labels = [lab.replace("\\'", "") for lab in labels]
        if labels == ["All"]:
            cuts[name] = np.array([])
        elif labels and labels[0].startswith("(-inf-"):
            uppers = [_INTERVAL.match(lab).group(2) for lab in labels[:-1]]
            cuts[name] = np.array([float(u) for u in uppers])
    return cuts
