"""ISA vs Weka 3.6.14's LBR: median time per classified instance, side by side on the same folds.

Also home of the small Weka interop (ARFF writing, running a Weka class) that the ISA
reproduction and the discretization tests share.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess

import numpy as np

__all__ = ["WEKA_JAR", "weka_available", "weka_cut_points", "weka_lbr", "write_arff"]

#: Debian's ``weka`` package installs Weka 3.6.14 here; override with $WEKA_JAR.
WEKA_JAR = os.environ.get("WEKA_JAR", "/usr/share/java/weka.jar")


def weka_available() -> bool:
    """Java on PATH and the Weka jar present."""
    return shutil.which("java") is not None and pathlib.Path(WEKA_JAR).exists()


def _arff_value(v) -> str:
    s = str(v).replace("\\", "\\\\").replace("'", "\\'")
    return f"'{s}'"


def write_arff(X, y, path, numeric=(), relation: str = "data", classes=None, domain=None):
    """Write a pandas frame ``X`` and labels ``y`` as ARFF (class last, ``?`` for missing).

    Columns named in ``numeric`` are numeric; the others are nominal with their values sorted
    as strings, taken from the frame ``domain`` (default ``X``; pass the whole dataset so that
    training and test files share one header). ``classes`` fixes the order of the class values
    (sorted by default).
    """
    import pandas as pd

    path = pathlib.Path(path)
    numeric = set(numeric)
    domain = X if domain is None else domain
    lines = [f"@relation {_arff_value(relation)}"]
    for col in X.columns:
        if col in numeric:
            lines.append(f"@attribute {_arff_value(col)} numeric")
        else:
            values = sorted({str(v) for v in domain[col] if not pd.isna(v)})
            lines.append(f"@attribute {_arff_value(col)} {{{','.join(map(_arff_value, values))}}}")
    classes = sorted({str(v) for v in y}) if classes is None else [str(c) for c in classes]
    lines.append(f"@attribute class {{{','.join(map(_arff_value, classes))}}}")
    lines.append("@data")
    cols = [X[c].tolist() for c in X.columns]
    for i, label in enumerate(list(y)):
        cells = []
        for col_name, col in zip(X.columns, cols):
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


def _java(*args, timeout=3600) -> str:
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
    out = _java("weka.filters.supervised.attribute.Discretize", "-i", str(arff), "-c", "last")
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


# One JVM for all folds: it times Weka's own distributionForInstance call per test instance
# with System.nanoTime, so JVM start-up and file reading are not counted as classification time.
_JAVA_SOURCE = """
import weka.classifiers.lazy.LBR;
import weka.classifiers.meta.FilteredClassifier;
import weka.core.Instances;
import weka.core.Utils;
import weka.core.converters.ConverterUtils.DataSource;
import weka.filters.supervised.attribute.Discretize;

public class TimedLBR {
  public static void main(String[] args) throws Exception {
    for (int f = 0; f + 1 < args.length; f += 2) {
      Instances train = DataSource.read(args[f]);
      train.setClassIndex(train.numAttributes() - 1);
      Instances test = DataSource.read(args[f + 1]);
      test.setClassIndex(test.numAttributes() - 1);
      FilteredClassifier model = new FilteredClassifier();
      model.setFilter(new Discretize());
      model.setClassifier(new LBR());
      long start = System.nanoTime();
      model.buildClassifier(train);
      System.out.println("fit " + (f / 2) + " " + (System.nanoTime() - start));
      for (int i = 0; i < test.numInstances(); i++) {
        start = System.nanoTime();
        double[] dist = model.distributionForInstance(test.instance(i));
        long took = System.nanoTime() - start;
        System.out.println("pred " + (f / 2) + " " + i + " " + Utils.maxIndex(dist) + " " + took);
      }
    }
  }
}
"""


def _compiled_helper() -> pathlib.Path:
    """Compile the timing helper once per session (needs javac, which ships with the JDK)."""
    import tempfile

    folder = pathlib.Path(tempfile.gettempdir()) / "onlinebma-weka-helper"
    if not (folder / "TimedLBR.class").exists():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "TimedLBR.java").write_text(_JAVA_SOURCE)
        done = subprocess.run(
            ["javac", "-cp", WEKA_JAR, "-d", str(folder), str(folder / "TimedLBR.java")],
            capture_output=True, text=True,
        )
        if done.returncode != 0:
            raise RuntimeError(f"cannot compile the Weka timing helper: {done.stderr[-2000:]}")
    return folder


def weka_lbr(pairs) -> list[dict]:
    """Run Weka 3.6.14's LBR behind its supervised Discretize on ``[(train.arff, test.arff)]``.

    Returns one dict per pair: ``fit_seconds``, ``predicted`` (class indices in header order)
    and ``seconds`` (Weka's time for each test instance).
    """
    folder = _compiled_helper()
    args = [str(p) for pair in pairs for p in pair]
    out = subprocess.run(
        ["java", "-Xmx2g", "-cp", f"{WEKA_JAR}{os.pathsep}{folder}", "TimedLBR", *args],
        capture_output=True, text=True,
    )
    if out.returncode != 0:
        raise RuntimeError(f"Weka LBR failed: {out.stderr.strip()[-2000:]}")
    results = [{"fit_seconds": 0.0, "predicted": [], "seconds": []} for _ in pairs]
    for line in out.stdout.splitlines():
        parts = line.split()
        if parts[0] == "fit":
            results[int(parts[1])]["fit_seconds"] = int(parts[2]) / 1e9
        elif parts[0] == "pred":
            r = results[int(parts[1])]
            r["predicted"].append(int(parts[3]))
            r["seconds"].append(int(parts[4]) / 1e9)
    return results
