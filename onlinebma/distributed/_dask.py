"""What every Dask path shares: importing Dask, and checking the frame it is given."""

from __future__ import annotations


def require_dask():
    """``(dask, dask.dataframe)``, or an ImportError that says which extra to install."""
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            'onlinebma.distributed needs Dask: pip install -e ".[dask]" from a clone of onlinebma'
        ) from exc
    return dask, dd


def check_frame(ddf, name: str = "ddf"):
    """Refuse anything but a dask DataFrame, naming what was given."""
    _, dd = require_dask()
    if not isinstance(ddf, dd.DataFrame):
        raise TypeError(
            f"{name} must be a dask DataFrame, not {type(ddf).__name__}; "
            "wrap a pandas frame with dask.dataframe.from_pandas"
        )


def check_target(ddf, target: str):
    """Refuse a label column that the frame does not have."""
    if target not in ddf.columns:
        raise ValueError(f"target column {target!r} is not among the columns {list(ddf.columns)}")


def check_split_every(split_every):
    """The fan-in of a reduction tree: an integer of at least 2."""
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise ValueError(f"split_every must be an integer ≥ 2, got {split_every!r}")
