"""`%load_ext oomwhy` in a real notebook: nbclient runs a notebook on an
IPython kernel (ipykernel) whose cell raises a PyTorch-style OOM, a class
named OutOfMemoryError in a module named torch.cuda, defined in the
notebook (no PyTorch), and the cell's outputs must hold the traceback and
then oomwhy's answer as HTML. Skipped where nbclient or ipykernel is not
installed (CI's notebook step installs them)."""

import importlib.util

import pytest

from conftest import PATIENCE_S

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("nbclient", "nbformat", "ipykernel")),
    reason="nbclient, nbformat and ipykernel are not installed (CI's notebook step installs them)",
)

MESSAGE = (
    "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB "
    "total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved "
    "in total by PyTorch)"
)

RAISING_CELL = f'''\
import types

class OutOfMemoryError(RuntimeError):
    """Stands in for torch.cuda.OutOfMemoryError: same name, same module."""

OutOfMemoryError.__module__ = "torch.cuda"

def backward():
    raise OutOfMemoryError({MESSAGE!r})

backward()
'''


def run_notebook(*sources):
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=PATIENCE_S,
        startup_timeout=PATIENCE_S,
        # The raising cell is the point: run on past it.
        allow_errors=True,
    )
    client.execute()
    return notebook


def html_outputs(cell):
    return [o["data"]["text/html"] for o in cell.outputs if "text/html" in o.get("data", {})]


def test_an_oom_in_a_cell_gets_the_answer_beneath_its_traceback():
    notebook = run_notebook("%load_ext oomwhy", RAISING_CELL, "%oomwhy", "%%oomwhy\nRuntimeError: " + MESSAGE)
    _, raising, again, pasted = notebook.cells
    kinds = [o["output_type"] for o in raising.outputs]
    # The traceback stays, first; the answer comes after it.
    assert kinds[0] == "error", kinds
    assert raising.outputs[0]["ename"] == "OutOfMemoryError"
    pages = html_outputs(raising)
    assert len(pages) == 1, kinds
    page = pages[0]
    assert kinds.index("display_data") > kinds.index("error")
    assert 'data-oomwhy-codes="inconsistent_numbers"' in page
    assert page.index("OUT OF MEMORY") < page.index("<b>Why:</b>") < page.index("<details>")
    assert "PyTorch could not allocate 2.00 GiB on GPU 0" in page
    # %oomwhy explains the last error again; %%oomwhy the cell's text.
    for cell in (again, pasted):
        assert any("inconsistent_numbers" in p for p in html_outputs(cell)), cell.outputs


def test_other_errors_get_no_answer():
    notebook = run_notebook("%load_ext oomwhy", "raise KeyError('epoch')", "print('fine')")
    _, raising, fine = notebook.cells
    assert [o["output_type"] for o in raising.outputs] == ["error"]
    assert not html_outputs(fine)
