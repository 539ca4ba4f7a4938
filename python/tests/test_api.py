"""The Python API against the command and the golden documents."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import oomwhy
from conftest import FIXTURES, PATIENCE_S, REPO, fixture_logs, run_oomwhy

#: PyTorch's message before 2.1 (its "reserved" form), without the exception name.
MESSAGE = (
    "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB "
    "total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved "
    "in total by PyTorch)"
)
#: The line a log holds for it.
SEED = "RuntimeError: " + MESSAGE


def golden(log: Path):
    return json.loads(log.with_suffix(".json").read_text(encoding="utf-8"))


def test_the_installed_package_is_tested():
    here = Path(oomwhy.__file__).resolve()
    assert REPO / "python" not in here.parents, f"imported from the source tree: {here}"


def test_version_is_the_crates():
    result = run_oomwhy("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"oomwhy {oomwhy.__version__}"
    cargo = (REPO / "Cargo.toml").read_text(encoding="utf-8")
    assert f'\nversion = "{oomwhy.__version__}"\n' in cargo


@pytest.mark.parametrize("log", fixture_logs(), ids=lambda p: p.stem)
def test_scan_is_the_json_output(log):
    expected = golden(log)
    assert expected["schema_version"] == oomwhy.SCHEMA_VERSION
    assert oomwhy.scan(log, name=log.name) == expected["findings"]
    with open(log, "rb") as f:
        assert oomwhy.scan(f, name=log.name) == expected["findings"]


@pytest.mark.parametrize("log", fixture_logs(), ids=lambda p: p.stem)
def test_decode_is_the_json_output_of_stdin(log):
    data = log.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        pytest.skip("not UTF-8: only scan() takes it as it is")
    expected = golden(log)["findings"]
    for finding in expected:
        finding["source"]["input"] = "<stdin>"
    assert oomwhy.decode(text) == expected


def test_records_have_the_schemas_keys():
    finding_schema = oomwhy.schema("report")["$defs"]["finding"]
    for log in fixture_logs()[:10]:
        for finding in oomwhy.scan(log):
            assert set(finding_schema["required"]) <= set(finding)
            assert set(finding) <= set(finding_schema["properties"])


def test_explain():
    text = oomwhy.explain("fragmentation")
    assert text.startswith("# ") and "## How to fix it" in text
    assert oomwhy.explain("FRAGMENT") == text  # case and a unique prefix
    codes = dict(oomwhy.codes())
    assert "fragmentation" in codes and "torch_allocator_oom" in codes
    with pytest.raises(ValueError, match="unknown code `no-such-code`; valid codes are: "):
        oomwhy.explain("no-such-code")


def test_render_formats():
    findings = oomwhy.decode(SEED)
    document = json.loads(oomwhy.render(findings, "json"))
    assert document["schema_version"] == oomwhy.SCHEMA_VERSION
    assert document["findings"] == findings
    assert document["summary"]["findings"] == 1 and document["summary"]["oom"] == 1
    lines = [json.loads(line) for line in oomwhy.render(findings, "ndjson").splitlines()]
    assert [line["type"] for line in lines] == ["finding", "summary"]
    text = oomwhy.render(findings)
    assert findings[0]["diagnosis"]["verdicts"][0]["title"] in text
    assert "\x1b[" not in text and "\x1b[" in oomwhy.render(findings, color=True)
    assert oomwhy.render(findings, "markdown").lstrip().startswith("#")
    assert oomwhy.render(findings, "github").startswith("::error")
    assert oomwhy.render([], "text") == ""


def test_render_rejects_bad_input():
    with pytest.raises(ValueError, match="unknown format `yaml`"):
        oomwhy.render([], "yaml")
    with pytest.raises(ValueError, match="not oomwhy's JSON"):
        oomwhy.render([{"kind": "torch_allocator_oom"}])


def test_errors_are_python_exceptions(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        oomwhy.scan(tmp_path / "missing.log")
    # A directory is read as the command reads it: every file under it.
    assert oomwhy.scan(tmp_path) == []
    with pytest.raises(TypeError):
        oomwhy.scan(42)
    with pytest.raises(TypeError):
        oomwhy.decode(b"bytes")
    with pytest.raises(ValueError):
        oomwhy.schema("nope")
    assert oomwhy.decode("") == []
    assert oomwhy.decode("\x00\ud7ff" * 1000) == []


def test_text_file_objects_and_names(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("step 1\n" + SEED + "\n", encoding="utf-8")
    with open(log, encoding="utf-8") as f:
        (finding,) = oomwhy.scan(f)
    assert finding["source"] == {"input": str(log), "line": 2}
    (finding,) = oomwhy.scan(io.StringIO(SEED), name="pasted")
    assert finding["source"]["input"] == "pasted"


def test_explain_on_oom_explains_and_reraises():
    out = io.StringIO()
    error = RuntimeError(MESSAGE)
    with pytest.raises(RuntimeError) as raised:
        with oomwhy.explain_on_oom(file=out):
            raise error
    assert raised.value is error
    report = out.getvalue()
    assert "OUT OF MEMORY" in report
    assert oomwhy.decode(SEED)[0]["diagnosis"]["verdicts"][0]["title"] in report


def test_explain_on_oom_as_a_decorator_and_on_a_torch_like_class():
    # The class PyTorch 1.13-2.0 raise with this message, without importing torch.
    OutOfMemoryError = type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch.cuda"})
    out = io.StringIO()

    @oomwhy.explain_on_oom(file=out)
    def train():
        raise OutOfMemoryError(MESSAGE)

    with pytest.raises(OutOfMemoryError):
        train()
    assert "torch.cuda.OutOfMemoryError" in out.getvalue()


def test_explain_on_oom_ignores_other_errors():
    out = io.StringIO()
    with pytest.raises(KeyError):
        with oomwhy.explain_on_oom(file=out):
            raise KeyError("batch")
    with oomwhy.explain_on_oom(file=out):
        pass
    assert out.getvalue() == ""


def test_scanning_a_file_releases_the_gil(tmp_path):
    # The scan below blocks reading a FIFO until this process writes to it.
    # With the GIL held by the scan, the writer thread could never run and
    # the child would hang until the timeout kills it.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    script = f"""
import threading, oomwhy
def write():
    with open({str(fifo)!r}, "w") as f:
        f.write({SEED!r} + "\\n")
found = []
reader = threading.Thread(target=lambda: found.extend(oomwhy.scan({str(fifo)!r})))
reader.start()
write()
reader.join()
print(found[0]["kind"])
"""
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=PATIENCE_S
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "torch_allocator_oom"


def test_summarize_is_the_commands_summary(tmp_path):
    logs = fixture_logs()
    names = [log.name for log in logs] + ["missing.log"]
    result = run_oomwhy("--summary", "--format", "json", *names, cwd=FIXTURES)
    assert result.returncode == 2, "an unreadable input"
    cwd = os.getcwd()
    os.chdir(FIXTURES)
    try:
        summary = oomwhy.summarize(names)
    finally:
        os.chdir(cwd)
    assert summary == json.loads(result.stdout)
    assert summary["inputs"] == len(names) and summary["findings"] > 0
    text = run_oomwhy("--summary", *names, cwd=FIXTURES).stdout
    assert oomwhy.render_summary(summary) == text
    # Digests of bytes, folded in any order, give the same summary.
    digests = [oomwhy.digest(log.read_bytes(), log.name) for log in reversed(logs)]
    digests.append(oomwhy.digest(tmp_path / "missing.log", "missing.log"))
    assert oomwhy.fold(digests) == summary
    with pytest.raises(TypeError, match="needs a name"):
        oomwhy.digest(b"bytes")


def test_command_summary_and_schema():
    result = run_oomwhy("schema", "--summary")
    assert json.loads(result.stdout) == oomwhy.schema("summary")
    result = run_oomwhy("--summary", "--format", "markdown", "x.log")
    assert result.returncode == 2 and "--summary writes text or json" in result.stderr
