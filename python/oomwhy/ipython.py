"""oomwhy in Jupyter and IPython: the answer beneath the error, where it happens.

In a notebook::

    %load_ext oomwhy

From then on, when a cell raises an out-of-memory error (PyTorch's
``torch.OutOfMemoryError``, or a ``RuntimeError`` saying "out of memory";
TensorFlow's ``ResourceExhaustedError``; JAX's ``XlaRuntimeError`` with
``RESOURCE_EXHAUSTED``; CuPy's ``OutOfMemoryError``), or any exception whose
message oomwhy recognises (CUDA crashes, NCCL, ...), the traceback stays as
it is and oomwhy's answer appears beneath it: what failed, why, the first
fix, then the details. Exceptions are told by their class's name and module:
no framework is imported.

* ``%oomwhy`` explains the last error again; ``%oomwhy PATH`` explains a log file.
* ``%%oomwhy`` explains the text of the cell (paste a message or a log).
* :class:`Findings` (a list of records) shows itself as that answer in a
  notebook: ``Findings(oomwhy.decode(text))``.

Everything runs in the kernel: nothing is sent anywhere. IPython is needed
only to load the extension; this module imports it when it is loaded.
"""

from __future__ import annotations

import html
import os
import traceback
from typing import Any, Dict, Iterable, List, Optional, Tuple

from . import decode, render, scan

__all__ = [
    "Findings",
    "explain_exception",
    "is_out_of_memory",
    "load_ipython_extension",
    "unload_ipython_extension",
]

#: Out-of-memory exception classes, by (module prefix, class name), and the
#: text their message must hold (``None``: any message). Matched against
#: every class of the exception's MRO, so subclasses count too.
OOM_CLASSES: Tuple[Tuple[str, str, Optional[str]], ...] = (
    ("torch", "OutOfMemoryError", None),  # torch.OutOfMemoryError, torch.cuda.OutOfMemoryError
    ("tensorflow", "ResourceExhaustedError", None),
    ("jax", "XlaRuntimeError", "RESOURCE_EXHAUSTED"),
    ("jaxlib", "XlaRuntimeError", "RESOURCE_EXHAUSTED"),
    ("cupy", "OutOfMemoryError", None),  # cupy.cuda.memory.OutOfMemoryError
    ("cupy_backends", "OutOfMemoryError", None),
)


def _in_module(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from or during, is an
    out-of-memory error of PyTorch, TensorFlow, JAX or CuPy, or a
    ``RuntimeError`` that says "out of memory". Told by class name and
    module; nothing is imported."""
    seen = set()
    current: Optional[BaseException] = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        message = str(current)
        for cls in type(current).__mro__:
            module = getattr(cls, "__module__", "") or ""
            for prefix, name, needle in OOM_CLASSES:
                if cls.__name__ == name and _in_module(module, prefix):
                    if needle is None or needle in message:
                        return True
            if cls is RuntimeError and "out of memory" in message.lower():
                return True
        current = current.__cause__ or current.__context__
    return False


def _exception_text(exc: BaseException) -> str:
    # The formatted traceback, as a log would hold it: its frames tell the
    # training phase, chained exceptions keep the original OOM, and the last
    # line names the class with its module (`torch.cuda.OutOfMemoryError`).
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


def explain_exception(exc: BaseException) -> Optional["Findings"]:
    """The findings in an exception (its traceback and message), or ``None``
    when it is not an out-of-memory error and oomwhy recognises nothing in it.

    An out-of-memory error whose message oomwhy cannot decode gives an empty
    :class:`Findings` that says so, rather than ``None``.
    """
    findings = decode(_exception_text(exc))
    if findings:
        return Findings(findings)
    if is_out_of_memory(exc):
        cls = type(exc)
        return Findings([], note=f"{cls.__module__}.{cls.__qualname__} is an out-of-memory "
                        "error, but its message holds nothing oomwhy can decode.")
    return None


class Finding(dict):
    """One record of ``oomwhy --format json`` (a dict) that shows itself, in
    a notebook, as oomwhy's answer."""

    def _repr_html_(self) -> str:
        return Findings([self])._repr_html_()


class Findings(list):
    """Records of ``oomwhy --format json`` (a list of dicts, as
    :func:`oomwhy.decode` returns them) that show themselves in a notebook
    as oomwhy's answer: for each finding what failed, why and the first fix,
    then the details (the text view of the ``oomwhy`` command). In a
    terminal, their text view."""

    def __init__(self, findings: Iterable[Dict[str, Any]] = (), note: Optional[str] = None):
        super().__init__(Finding(f) for f in findings)
        self.note = note

    def text(self) -> str:
        """The text view, as the ``oomwhy`` command writes it."""
        return render(self, "text") if self else (self.note or "")

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text("Findings([...])" if cycle else self.text().rstrip("\n"))

    def _repr_html_(self) -> str:
        parts = [_STYLE, '<div class="oomwhy-report">']
        if self.note:
            parts.append(f'<div class="oomwhy-note">oomwhy: {html.escape(self.note)}</div>')
        for finding in self:
            parts.append(_finding_html(finding))
        parts.append(
            '<div class="oomwhy-foot">oomwhy · explained in this kernel, nothing sent anywhere'
            " · <code>oomwhy.explain(CODE)</code> for the long explanation of a code</div></div>"
        )
        return "".join(parts)


# Colours that read on a light and on a dark notebook theme alike: mid tones
# for the category, everything else inherits the theme's own colours.
_STYLE = """<style>
.oomwhy-report{font-family:inherit;line-height:1.45;margin:.4em 0}
.oomwhy-finding{border-left:4px solid var(--oomwhy-cat,#5b8def);padding:.35em .8em;margin:.5em 0}
.oomwhy-finding.oomwhy-oom{--oomwhy-cat:#e0443e}
.oomwhy-finding.oomwhy-likely_oom,.oomwhy-finding.oomwhy-warning{--oomwhy-cat:#d98e04}
.oomwhy-finding.oomwhy-crash{--oomwhy-cat:#b45bd6}
.oomwhy-finding.oomwhy-memory_state{--oomwhy-cat:#1a9e8f}
.oomwhy-tag{color:var(--oomwhy-cat);font-weight:700;font-size:.85em;letter-spacing:.04em}
.oomwhy-headline{font-weight:700;font-size:1.12em;margin:.1em 0 .3em}
.oomwhy-finding p{margin:.2em 0}
.oomwhy-how{display:block;white-space:pre-wrap;padding:.3em .5em;margin:.2em 0 .3em;border-radius:4px;background:rgba(127,127,127,.14)}
.oomwhy-codes code{padding:0 .35em;border-radius:3px;background:rgba(127,127,127,.14)}
.oomwhy-finding details pre{white-space:pre;overflow-x:auto;font-size:.86em;background:rgba(127,127,127,.1);padding:.5em;border-radius:4px}
.oomwhy-note,.oomwhy-foot{opacity:.75;font-size:.85em}
</style>"""

# The words that open the text view's answer lines (English: the package's
# renderer writes English).
_WHY = "Why:"
_FIRST_FIX = "First fix:"
_LABELS = (
    "PROBABLY OUT OF MEMORY",
    "OUT OF MEMORY",
    "MEMORY STATE",
    "GPU CRASH",
    "CRASH",
    "WARNING",
)


def _answer(text: str, finding_id: Any) -> Dict[str, str]:
    """The text view's opening lines of a finding (tag, headline, "Why:",
    "First fix:"), each unwrapped to one line."""
    head = text.split("\n\n", 1)[0]
    parts: List[str] = []
    for line in head.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        starts = not parts or (
            line.startswith("    ")
            and not line.startswith("     ")
            and (stripped.startswith(_WHY) or stripped.startswith(_FIRST_FIX))
        )
        if starts:
            parts.append(stripped)
        else:
            parts[-1] += " " + stripped
    answer = {"label": "", "headline": "", "why": "", "first_fix": ""}
    if parts:
        first = parts[0]
        tag = f"[{finding_id}] "
        if first.startswith(tag):
            first = first[len(tag):]
        label = next((lb for lb in _LABELS if first.startswith(lb)), "")
        answer["label"] = label
        answer["headline"] = first[len(label):].strip()
    for part in parts[1:]:
        if part.startswith(_WHY):
            answer["why"] = part[len(_WHY):].strip()
        elif part.startswith(_FIRST_FIX):
            answer["first_fix"] = part[len(_FIRST_FIX):].strip()
    return answer


def _finding_html(finding: Dict[str, Any]) -> str:
    esc = html.escape
    text = render([finding], "text").rstrip("\n")
    answer = _answer(text, finding.get("id"))
    category = str(finding.get("category", ""))
    diagnosis = finding.get("diagnosis") or {}
    fixes = diagnosis.get("fixes") or []
    codes = [v.get("code", "") for v in diagnosis.get("verdicts") or []]
    explain = [c for c in finding.get("explain") or [] if c not in codes]
    out = [
        f'<div class="oomwhy-finding oomwhy-{esc(category)}" data-oomwhy-category="{esc(category)}"'
        f' data-oomwhy-codes="{esc(" ".join(codes))}">',
        f'<div class="oomwhy-tag">[{esc(str(finding.get("id", "")))}] {esc(answer["label"])}</div>',
        f'<div class="oomwhy-headline">{esc(answer["headline"])}</div>',
    ]
    if answer["why"]:
        out.append(f'<p class="oomwhy-why"><b>{_WHY}</b> {esc(answer["why"])}</p>')
    if answer["first_fix"]:
        out.append(f'<p class="oomwhy-first-fix"><b>{_FIRST_FIX}</b> {esc(answer["first_fix"])}</p>')
        if fixes and fixes[0].get("title") == answer["first_fix"]:
            out.append(f'<code class="oomwhy-how">{esc(str(fixes[0].get("how", "")))}</code>')
    if codes or explain:
        chips = " ".join(f"<code>{esc(c)}</code>" for c in codes + explain)
        out.append(f'<p class="oomwhy-codes">{chips}</p>')
    out.append(f"<details><summary>Details</summary><pre>{esc(text)}</pre></details></div>")
    return "".join(out)


class _Extension:
    """The state of the loaded extension: the shell, and the last error."""

    def __init__(self, shell: Any):
        self.shell = shell
        self.last_error: Optional[BaseException] = None

    def after_cell(self, result: Any = None) -> None:
        """IPython's ``post_run_cell`` event: after a cell that raised, the
        answer is displayed beneath its traceback."""
        exc = getattr(result, "error_in_exec", None)
        if exc is None:
            return
        self.last_error = exc
        try:
            findings = explain_exception(exc)
        except Exception:  # the answer must never add an error of its own
            return
        if findings is not None:
            _display(findings)


_extension: Optional[_Extension] = None


def _display(obj: Any) -> None:
    from IPython.display import display  # only with IPython present

    display(obj)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext oomwhy``: the hook after each cell and the magics."""
    global _extension
    if _extension is not None:
        unload_ipython_extension(ipython)
    extension = _Extension(ipython)
    ipython.events.register("post_run_cell", extension.after_cell)

    def oomwhy_line(line: str) -> Optional[Findings]:
        """%oomwhy: explains the last error; %oomwhy PATH: explains a log file."""
        path = line.strip()
        if path:
            path = os.path.expanduser(path)
            return Findings(scan(path))
        exc = extension.last_error
        if exc is None:
            import sys

            exc = getattr(sys, "last_value", None)
        if exc is None:
            print("oomwhy: no error yet in this session")
            return None
        findings = explain_exception(exc)
        if findings is None:
            cls = type(exc)
            print(f"oomwhy: the last error ({cls.__module__}.{cls.__qualname__}) holds nothing oomwhy recognises")
        return findings

    def oomwhy_cell(line: str, cell: str) -> Findings:
        """%%oomwhy: explains the cell's text (a pasted message or log)."""
        findings = Findings(decode(cell))
        if not findings:
            findings.note = "no out-of-memory error or GPU crash found in this text"
        return findings

    ipython.register_magic_function(oomwhy_line, "line", "oomwhy")
    ipython.register_magic_function(oomwhy_cell, "cell", "oomwhy")
    _extension = extension


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext oomwhy``: the hook is removed (the magics stay until restart)."""
    global _extension
    if _extension is None:
        return
    try:
        ipython.events.unregister("post_run_cell", _extension.after_cell)
    except ValueError:
        pass
    _extension = None
