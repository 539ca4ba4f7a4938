"""oomwhy explains why your GPU ran out of memory.

It reads training logs or a pasted error, finds every out-of-memory error
and related CUDA crash (PyTorch's caching allocator in every era, CUDA
runtime errors, TensorFlow, JAX/XLA, CuPy, vLLM, NCCL, ...), decodes each
into a record with exact byte counts, and explains it: what the numbers
mean, why it happened, what to change.

The records are the ones of ``oomwhy --format json`` (same keys, same
``schema_version``), as plain dicts::

    >>> import oomwhy
    >>> findings = oomwhy.decode(
    ...     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB "
    ...     "(GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; "
    ...     "1.56 GiB free; 7.88 GiB reserved in total by PyTorch)")
    >>> findings[0]["kind"], findings[0]["sizes"]["requested_bytes"]
    ('torch_allocator_oom', 2147483648)
    >>> findings[0]["diagnosis"]["verdicts"][0]["code"]
    'inconsistent_numbers'
    >>> print(oomwhy.render(findings, "markdown"))  # doctest: +SKIP
    >>> print(oomwhy.explain("fragmentation"))  # doctest: +SKIP

In a training script::

    with oomwhy.explain_on_oom():
        train()

Over many logs: :func:`summarize` here, or :mod:`oomwhy.ray` on a cluster.

In Jupyter or IPython, ``%load_ext oomwhy`` shows the answer beneath any
out-of-memory traceback (see :mod:`oomwhy.ipython`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
import warnings
from typing import IO, Any, Dict, Iterable, List, Optional, Union

from . import _oomwhy

__all__ = [
    "InputWarning",
    "SCHEMA_VERSION",
    "__version__",
    "codes",
    "decode",
    "digest",
    "explain",
    "explain_on_oom",
    "fold",
    "load_ipython_extension",
    "render",
    "render_summary",
    "scan",
    "schema",
    "summarize",
    "unload_ipython_extension",
]

__version__: str = _oomwhy.__version__
#: Version of the records' JSON contract (``schema_version`` of ``--format json``).
SCHEMA_VERSION: int = _oomwhy.SCHEMA_VERSION

Finding = Dict[str, Any]
PathLike = Union[str, "os.PathLike[str]"]


def decode(text: str) -> List[Finding]:
    """Finds and explains every message in ``text`` (a pasted error or a log).

    Returns the findings as the records of ``oomwhy --format json``; their
    ``source.input`` is ``"<stdin>"``, as for text piped to the command.
    """
    if not isinstance(text, str):
        raise TypeError(f"decode() takes a str, not {type(text).__name__}")
    return json.loads(_oomwhy.decode_json(text))


class InputWarning(UserWarning):
    """An input, or a file in a directory or an archive, that could not be
    read to its end: :func:`scan` warns and returns what it read, as the
    command does (its exit status 2)."""


def scan(path_or_file: Union[PathLike, IO[str], IO[bytes]], name: Optional[str] = None) -> List[Finding]:
    """Reads what the ``oomwhy`` command reads and explains what it found:
    the findings of ``oomwhy --format json PATH``, in the same order with
    the same ids.

    ``path_or_file`` is a path (``str`` or ``os.PathLike``) or an open file
    (text or binary). A path is a log, compressed or not (gzip, zstd, xz,
    bzip2, told by its first bytes, not its name), a tar or zip archive
    (each file in it read as an input of its own, named ``ARCHIVE:PATH``),
    a PyTorch memory snapshot, or a directory (every file under it); the
    copies of one crash in the per-rank files of one job fold into one
    finding. It is read by Rust with the GIL released, in bounded memory; a
    file object is read into memory first and may hold any of the same.

    ``name`` is the ``source.input`` of the findings; by default the path as
    given, or the file object's ``name`` (for a directory, ``name`` stands
    for the directory in the names of the files under it).

    Raises ``FileNotFoundError``, ``PermissionError`` or ``OSError`` when the
    input named cannot be read at all, and ``ValueError`` for a pickle that
    is not a memory snapshot. A file of a directory or an archive that
    cannot be read, or an input cut short, is an :class:`InputWarning`, and
    what was read before it is returned.
    """
    if isinstance(path_or_file, (str, os.PathLike)):
        path = os.fspath(path_or_file)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        reply = _oomwhy.scan_path_json(path, path if name is None else name)
    else:
        read = getattr(path_or_file, "read", None)
        if read is None:
            raise TypeError(
                f"scan() takes a path or an open file, not {type(path_or_file).__name__}"
            )
        data = read()
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        if name is None:
            name = str(getattr(path_or_file, "name", "<file>"))
        reply = _oomwhy.scan_bytes_json(bytes(data), name)
    report = json.loads(reply)
    for message in report["warnings"]:
        warnings.warn(message, InputWarning, stacklevel=2)
    return report["findings"]


def explain(code: str) -> str:
    """The long explanation (Markdown) of a code from a finding's ``explain``
    list or a verdict: what it means, why it happens, how to fix it.

    Case, ``-`` for ``_`` and a unique prefix are fine. Raises ``ValueError``
    for an unknown code, naming the valid ones.
    """
    return _oomwhy.explain(code)


def codes() -> List[tuple]:
    """Every code that :func:`explain` knows, with its title."""
    return list(_oomwhy.codes())


def render(findings: Iterable[Finding], format: str = "text", *, color: bool = False) -> str:
    """Writes findings as the command does: ``"text"``, ``"markdown"``,
    ``"github"`` (Actions annotations), ``"json"`` (the whole document) or
    ``"ndjson"``.

    The command's closing count line needs the number of lines read, which
    records do not carry: text and Markdown leave it out, and the JSON
    document's and NDJSON's ``summary`` count ``lines`` and ``bytes`` as 0.
    Raises ``ValueError`` for an unknown format or a dict that is not a record.
    """
    return _oomwhy.render_json(json.dumps(list(findings)), format, color)


@contextlib.contextmanager
def explain_on_oom(file: Optional[IO[str]] = None, *, color: bool = False):
    """Explains an out-of-memory error (or another GPU crash) that ends the
    block, then lets the exception go on unchanged.

    Works on ``torch.OutOfMemoryError`` and on any exception whose message
    (or traceback) oomwhy recognises; imports no framework. The explanation
    goes to ``file`` (standard error by default). Also a decorator::

        with oomwhy.explain_on_oom():
            train()

        @oomwhy.explain_on_oom()
        def train(): ...

    An exception whose text holds nothing oomwhy knows passes silently.
    ``KeyboardInterrupt`` and ``SystemExit`` are never examined.
    """
    try:
        yield
    except Exception as exc:
        try:
            _report(exc, file if file is not None else sys.stderr, color)
        except Exception:  # the report must never replace the real error
            pass
        raise


def _report(exc: BaseException, out: IO[str], color: bool) -> None:
    # The formatted traceback, as a log would hold it: its frames tell the
    # training phase, and chained exceptions keep the original OOM.
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    findings = decode(text)
    if not findings:
        return
    out.write("\noomwhy: explaining the exception below\n\n")
    out.write(render(findings, "text", color=color))
    out.flush()


def digest(data: Union[bytes, str, PathLike], name: Optional[str] = None) -> Dict[str, Any]:
    """What one input contributes to a fleet summary (the map step).

    ``data`` is the input's content (``bytes``) with its ``name``, or a path
    to read. An unreadable path gives a digest with its ``error``, as in
    ``oomwhy --summary``. Digests are small, JSON-safe dicts: compute them
    where the logs are, fold them anywhere with :func:`fold`.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        if name is None:
            raise TypeError("digest() of bytes needs a name")
        return json.loads(_oomwhy.digest_bytes_json(bytes(data), name))
    if isinstance(data, (str, os.PathLike)):
        path = os.fsdecode(os.fspath(data))
        return json.loads(_oomwhy.digest_path_json(path, path if name is None else name))
    raise TypeError(f"digest() takes bytes or a path, not {type(data).__name__}")


def fold(digests: Iterable[Dict[str, Any]]) -> Dict[str, Any]:
    """Folds digests into the fleet summary (the reduce step): the document
    of ``oomwhy --summary --format json``. The order of the digests does not
    matter."""
    return json.loads(_oomwhy.summarize_json([json.dumps(d) for d in digests]))


def summarize(paths: Iterable[PathLike]) -> Dict[str, Any]:
    """The fleet summary of these paths on this machine: the same document
    as ``oomwhy --summary --format json PATH...`` (every file under a
    directory and in an archive is one input). For a cluster, see
    :func:`oomwhy.ray.summarize`."""
    names = [os.fsdecode(os.fspath(p)) for p in paths]
    return json.loads(_oomwhy.summarize_json(_oomwhy.digest_paths_json(names)))


def render_summary(summary: Dict[str, Any], format: str = "text") -> str:
    """Writes a fleet summary as ``oomwhy --summary`` does (``"text"`` or ``"json"``)."""
    return _oomwhy.render_summary_json(json.dumps(summary), format)


def schema(which: str = "report") -> Dict[str, Any]:
    """A shipped JSON Schema: ``"report"`` (``--format json``), ``"ndjson"``
    (one ``--format ndjson`` line) or ``"summary"`` (``--summary --format json``)."""
    return json.loads(_oomwhy.schema(which))


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext oomwhy`` in Jupyter or IPython (see :mod:`oomwhy.ipython`).
    IPython is imported only here, never by ``import oomwhy``."""
    from . import ipython as extension

    extension.load_ipython_extension(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext oomwhy``."""
    from . import ipython as extension

    extension.unload_ipython_extension(ipython)
