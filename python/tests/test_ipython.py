"""The notebook extension (`%load_ext oomwhy`): which exceptions it answers,
the HTML it shows, and the extension in a real IPython shell (skipped where
IPython is not installed; CI's notebook step installs it)."""

import importlib.util
import json
import subprocess
import sys
import types

import pytest

import oomwhy
from conftest import FIXTURES, PATIENCE_S
from oomwhy import ipython as nb

MESSAGE = (
    "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB "
    "total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved "
    "in total by PyTorch)"
)


def exception_class(module, name, base=Exception):
    """A class that looks like a framework's own: its name in its module."""
    cls = type(name, (base,), {})
    cls.__module__ = module
    return cls


def raised(exc):
    """`exc` with a traceback, as a cell would raise it."""
    try:
        raise exc
    except BaseException as caught:  # noqa: B902 - any exception is data here
        return caught


@pytest.mark.parametrize(
    "module, name, base, message",
    [
        ("torch", "OutOfMemoryError", RuntimeError, "CUDA out of memory."),
        ("torch.cuda", "OutOfMemoryError", RuntimeError, "CUDA out of memory."),
        ("tensorflow.python.framework.errors_impl", "ResourceExhaustedError", Exception, "OOM when allocating"),
        ("jaxlib.xla_extension", "XlaRuntimeError", RuntimeError, "RESOURCE_EXHAUSTED: Out of memory"),
        ("jax.errors", "XlaRuntimeError", RuntimeError, "RESOURCE_EXHAUSTED: while allocating"),
        ("cupy.cuda.memory", "OutOfMemoryError", MemoryError, "Out of memory allocating 1,024 bytes"),
        ("builtins", "RuntimeError", RuntimeError, "CUDA error: out of memory"),
    ],
)
def test_framework_oom_classes_are_told_by_name_and_module(module, name, base, message):
    cls = RuntimeError if name == "RuntimeError" else exception_class(module, name, base)
    assert nb.is_out_of_memory(cls(message))


def test_look_alikes_are_not_out_of_memory():
    # Same name, another module; JAX's error without the status; an OOM
    # only in the chain counts, one elsewhere does not.
    assert not nb.is_out_of_memory(exception_class("mylib", "OutOfMemoryError")("x"))
    assert not nb.is_out_of_memory(exception_class("jaxlib.xla_extension", "XlaRuntimeError")("INTERNAL: bad"))
    assert not nb.is_out_of_memory(ValueError("out of memory"))
    torch_oom = exception_class("torch", "OutOfMemoryError", RuntimeError)
    try:
        try:
            raise torch_oom("CUDA out of memory.")
        except RuntimeError as inner:
            raise ValueError("the training step failed") from inner
    except ValueError as outer:
        assert nb.is_out_of_memory(outer)
    # A subclass of a framework's class is one too.
    assert nb.is_out_of_memory(type("Mine", (torch_oom,), {})("x"))


def test_the_frameworks_are_never_imported():
    code = (
        "import sys, oomwhy, oomwhy.ipython as nb\n"
        "exc = type('OutOfMemoryError', (RuntimeError,), {'__module__': 'torch.cuda'})('CUDA out of memory.')\n"
        "assert nb.is_out_of_memory(exc)\n"
        "nb.explain_exception(exc)\n"
        "loaded = [m for m in ('IPython', 'torch', 'tensorflow', 'jax', 'cupy') if m in sys.modules]\n"
        "print(loaded)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=PATIENCE_S)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_a_torch_oom_gives_the_answer_first_then_the_details():
    torch_oom = exception_class("torch.cuda", "OutOfMemoryError", RuntimeError)
    findings = nb.explain_exception(raised(torch_oom(MESSAGE)))
    assert findings is not None and len(findings) == 1
    assert findings[0]["diagnosis"]["verdicts"][0]["code"] == "inconsistent_numbers"
    page = findings._repr_html_()
    order = [
        page.index("[1] OUT OF MEMORY"),
        page.index("PyTorch could not allocate 2.00 GiB on GPU 0"),
        page.index("<b>Why:</b> The numbers in this message cannot all be true"),
        page.index("<b>First fix:</b>"),
        page.index("<details>"),
    ]
    assert order == sorted(order)
    assert 'data-oomwhy-codes="inconsistent_numbers"' in page
    # The details are the command's own text view.
    assert "What to do (most effective first)" in page
    # A single record shows itself the same way.
    assert "PyTorch could not allocate" in findings[0]._repr_html_()


def test_text_from_the_log_is_escaped():
    log = (
        "Traceback (most recent call last):\n"
        '  File "/tmp/<script>alert(1)</script>.py", line 3, in <module>\n'
        "    train()\n"
        "RuntimeError: " + MESSAGE + "\n"
    )
    page = nb.Findings(oomwhy.decode(log))._repr_html_()
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.py" in page


def test_an_oom_oomwhy_cannot_decode_still_says_what_it_is():
    cupy_oom = exception_class("cupy.cuda.memory", "OutOfMemoryError", MemoryError)
    findings = nb.explain_exception(raised(cupy_oom("?")))
    if findings:  # the decoder knows CuPy's class name in a traceback
        assert findings[0]["category"] in ("oom", "likely_oom")
    else:
        assert findings is not None and "out-of-memory error" in findings.note
        assert "out-of-memory error" in findings._repr_html_()


def test_an_unrelated_exception_gives_nothing():
    assert nb.explain_exception(raised(KeyError("epoch"))) is None


def test_findings_stay_records():
    decoded = oomwhy.decode("RuntimeError: " + MESSAGE)
    findings = nb.Findings(decoded)
    assert findings == decoded
    assert json.loads(json.dumps(findings)) == decoded
    assert findings.text() == oomwhy.render(decoded, "text")


def test_every_fixture_renders_as_html():
    for log in sorted(FIXTURES.glob("*.log")):
        findings = nb.Findings(oomwhy.scan(log))
        page = findings._repr_html_()
        for finding in findings:
            label = f"[{finding['id']}] "
            assert label in page, log.name
            for verdict in finding["diagnosis"]["verdicts"]:
                assert verdict["code"] in page, log.name


# ---- a real IPython shell -------------------------------------------------

needs_ipython = pytest.mark.skipif(
    importlib.util.find_spec("IPython") is None,
    reason="IPython is not installed (CI's notebook step installs it)",
)


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "oomwhy")
    yield ip
    ip.run_line_magic("unload_ext", "oomwhy")


def outputs(ip, cell):
    from IPython.utils.capture import capture_output

    with capture_output() as captured:
        ip.run_cell(cell)
    return captured


@needs_ipython
def test_the_shell_shows_the_answer_beneath_an_oom(shell):
    cell = (
        "class OutOfMemoryError(RuntimeError):\n"
        "    pass\n"
        "OutOfMemoryError.__module__ = 'torch.cuda'\n"
        f"raise OutOfMemoryError({MESSAGE!r})\n"
    )
    captured = outputs(shell, cell)
    # The traceback stays.
    assert "OutOfMemoryError" in captured.stdout + captured.stderr
    pages = [o.data.get("text/html", "") for o in captured.outputs]
    assert any("inconsistent_numbers" in p and "OUT OF MEMORY" in p for p in pages), pages


@needs_ipython
def test_the_shell_says_nothing_after_other_errors(shell):
    captured = outputs(shell, "raise KeyError('epoch')")
    assert not [o for o in captured.outputs if "text/html" in o.data]
    captured = outputs(shell, "1 + 1")
    assert not [o for o in captured.outputs if "oomwhy" in o.data.get("text/html", "")]


@needs_ipython
def test_magics(shell):
    outputs(shell, f"raise RuntimeError({MESSAGE!r})")
    last = shell.run_line_magic("oomwhy", "")
    assert isinstance(last, nb.Findings) and last[0]["kind"] == "torch_allocator_oom"
    pasted = shell.run_cell_magic("oomwhy", "", "RuntimeError: " + MESSAGE + "\n")
    assert pasted[0]["diagnosis"]["verdicts"][0]["code"] == "inconsistent_numbers"
    log = FIXTURES / "torch_reserved_era_seed.log"
    assert shell.run_line_magic("oomwhy", str(log)) == oomwhy.scan(log)


@needs_ipython
def test_unloading_removes_the_hook():
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "oomwhy")
    ip.run_line_magic("unload_ext", "oomwhy")
    captured = outputs(ip, f"raise RuntimeError({MESSAGE!r})")
    assert not [o for o in captured.outputs if "oomwhy" in o.data.get("text/html", "")]


def test_a_module_namespace_is_not_needed():
    # The extension works on whatever the shell hands it, also a bare object
    # without `error_in_exec` (older event signatures).
    extension = nb._Extension(types.SimpleNamespace())
    extension.after_cell(None)
    extension.after_cell(types.SimpleNamespace(error_in_exec=None))
    assert extension.last_error is None
