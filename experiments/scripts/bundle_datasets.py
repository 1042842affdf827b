"""Copy the UCI CSVs and BIF networks from ../shared into the package, gzipped, with a catalog.

Run from the repository root: ``python -m experiments.scripts.bundle_datasets [SHARED_DIR]``.
The manifest counts each file's numeric columns (as the source package typed them) but does
not name them; integer-coded nominal columns (votes, ratings) also parse as numbers. So a
column is numeric when every non-empty cell parses as a float and it is among the manifest's
count of such columns with the most distinct values. The class column is always nominal. The
catalog keeps each file's provenance from shared/datasets/manifest.json.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT = ROOT / "onlinebma" / "datasets" / "data"


def _is_float(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def main(shared: pathlib.Path) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    manifest = json.loads((shared / "datasets" / "manifest.json").read_text())
    catalog = {}
    for entry in manifest:
        text = (shared / "datasets" / entry["file"]).read_text()
        rows = list(csv.reader(io.StringIO(text)))
        header, body = rows[0], rows[1:]
        parses = [
            j
            for j, col in enumerate(header)
            if col != "class" and all(_is_float(r[j]) for r in body if r[j] != "")
        ]
        distinct = {j: len({r[j] for r in body if r[j] != ""}) for j in parses}
        keep = sorted(parses, key=lambda j: -distinct[j])[: entry["numeric_features"]]
        numeric = [header[j] for j in sorted(keep)]
        name = entry["name"]
        with gzip.GzipFile(OUT / f"{name}.csv.gz", "wb", mtime=0) as f:
            f.write(text.encode())
        catalog[name] = {
            "rows": len(body),
            "features": len(header) - 1,
            "classes": len({r[header.index("class")] for r in body}),
            "numeric": numeric,
            "source": entry["source"],
            "used_in": entry["used_in"],
        }
    for bif in sorted((shared / "networks").glob("*.bif.gz")):
        shutil.copyfile(bif, OUT / bif.name)
    (OUT / "catalog.json").write_text(json.dumps(catalog, indent=1, sort_keys=True) + "\n")
    print(f"bundled {len(catalog)} datasets into {OUT}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared")
