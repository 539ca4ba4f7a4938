"""Fleet-scale scanning on Ray Data: the fleet summary of many logs, read
where they are (local folders, or object storage on a real cluster).

``pip install 'oomwhy[ray]'`` brings Ray; the rest of oomwhy never needs it.

    >>> import oomwhy.ray
    >>> summary = oomwhy.ray.summarize(["s3://bucket/jobs/2026-11/"])  # doctest: +SKIP
    >>> print(oomwhy.render_summary(summary))  # doctest: +SKIP

or from a shell, on a machine of the cluster::

    python -m oomwhy.ray s3://bucket/jobs/2026-11/ --format json

The pipeline is ``ray.data.read_binary_files`` → ``map_batches`` (each
worker digests its files with the Rust library, the GIL released) → the
digests folded into the summary. The digest and the fold are the very
functions behind ``oomwhy --summary``, so on the same files (under the same
names) both give the same summary, whatever order the workers finish in.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _oomwhy

__all__ = ["digest_batch", "summarize", "main"]


def digest_batch(batch: Dict[str, Any]) -> Dict[str, Any]:
    """The map step: a batch of ``read_binary_files(..., include_paths=True)``
    rows (``bytes``, ``path``) → one ``digest`` (JSON text) per file."""
    import numpy as np

    digests = [
        _oomwhy.digest_bytes_json(bytes(data), str(path))
        for data, path in zip(batch["bytes"], batch["path"])
    ]
    return {"digest": np.array(digests, dtype=object)}


def summarize(
    paths: Union[str, Sequence[str]],
    *,
    batch_size: int = 64,
    **read_args: Any,
) -> Dict[str, Any]:
    """The fleet summary of every file under ``paths`` (files, folders, or
    object-storage URIs that Ray can read), as ``oomwhy --summary --format
    json`` writes it. Inputs are named by the path Ray reports for them (for
    local files, the absolute path). ``read_args`` go to
    ``ray.data.read_binary_files`` (e.g. ``file_extensions=["log"]``,
    ``filesystem=...``). Uses the running Ray cluster, or starts a local one.
    """
    try:
        import ray
    except ImportError as err:  # an optional extra
        raise ImportError(
            "oomwhy.ray needs Ray: pip install 'oomwhy[ray]'"
        ) from err

    dataset = ray.data.read_binary_files(paths, include_paths=True, **read_args)
    digests = dataset.map_batches(
        digest_batch, batch_format="numpy", batch_size=batch_size
    )
    texts: List[str] = [row["digest"] for row in digests.iter_rows()]
    return json.loads(_oomwhy.summarize_json(texts))


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m oomwhy.ray PATH... [--format text|json]``."""
    parser = argparse.ArgumentParser(
        prog="python -m oomwhy.ray",
        description="The fleet summary of many logs, scanned on Ray Data.",
    )
    parser.add_argument("paths", nargs="+", help="files, folders or object-storage URIs")
    parser.add_argument("--format", choices=["text", "json"], default="text")
    parser.add_argument(
        "--extension",
        action="append",
        dest="extensions",
        help="read only files with this extension (repeatable), e.g. --extension log",
    )
    args = parser.parse_args(argv)
    read_args: Dict[str, Any] = {}
    if args.extensions:
        read_args["file_extensions"] = args.extensions
    summary = summarize(args.paths, **read_args)
    sys.stdout.write(_oomwhy.render_summary_json(json.dumps(summary), args.format))
    if summary["input_errors"]:
        return 2
    return 0 if summary["findings"] else 1


if __name__ == "__main__":
    sys.exit(main())
