"""``oomwhy.scan()`` reads what the command reads: every input gives the
findings of ``oomwhy --format json PATH`` (the wheel's own command), for
plain logs, compressed copies, archives, memory snapshots and directories.

Each comparison also checks that something was found, so that two empty
lists never pass for agreement."""

import bz2
import gzip
import io
import json
import lzma
import shutil
import struct
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

import oomwhy
from conftest import FIXTURES, REPO, fixture_logs, run_oomwhy

SNAPSHOTS = REPO / "tests" / "snapshots"
#: Fixtures bundled into the archives and the directory: per-rank files of
#: one job among them are folded by the command, and must be by scan() too.
BUNDLED = 6


def command_findings(path: Path, cwd: Path, statuses=(0, 1)):
    """The findings of `oomwhy --format json PATH`, run from `cwd`."""
    result = run_oomwhy("--format", "json", str(path), cwd=cwd)
    assert result.returncode in statuses, result.stderr
    return json.loads(result.stdout)["findings"]


def scanned_in(cwd: Path, path) -> list:
    """`oomwhy.scan(path)` with `cwd` as the working directory (names as
    the command, run there, gives them)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        return oomwhy.scan(path)


def renamed(findings, old: str, new: str):
    out = json.loads(json.dumps(findings))
    for finding in out:
        assert finding["source"]["input"] == old
        finding["source"]["input"] = new
    return out


def zstd_frame(data: bytes) -> bytes:
    """`data` as a Zstandard frame (RFC 8878): by the `zstd` command when it
    is installed, else as raw (stored) blocks, which every decoder reads."""
    if shutil.which("zstd"):
        return subprocess.run(
            ["zstd", "-q", "-c", "-3"], input=data, capture_output=True, check=True, timeout=60
        ).stdout
    block = 128 * 1024
    # Magic, then a header with a window descriptor (2^17 bytes) and no size.
    out = bytearray(b"\x28\xb5\x2f\xfd" + bytes([0x00, 7 << 3]))
    chunks = [data[i : i + block] for i in range(0, len(data), block)] or [b""]
    for i, chunk in enumerate(chunks):
        last = i == len(chunks) - 1
        header = (len(chunk) << 3) | (0 << 1) | int(last)  # a raw block
        out += struct.pack("<I", header)[:3] + chunk
    return bytes(out)


COMPRESSORS = {
    "gz": gzip.compress,
    "xz": lzma.compress,
    "zst": zstd_frame,
    "bz2": bz2.compress,
}


def bundled_fixtures():
    """A few fixtures, per-rank ones of one job first when there are some."""
    logs = fixture_logs()
    ranked = [log for log in logs if "rank" in log.name]
    rest = [log for log in logs if log not in ranked]
    return (ranked + rest)[:BUNDLED]


@pytest.mark.parametrize("log", fixture_logs(), ids=lambda p: p.stem)
def test_a_plain_log_gives_the_commands_findings(log):
    expected = command_findings(Path(log.name), FIXTURES)
    assert scanned_in(FIXTURES, log.name) == expected
    assert oomwhy.scan(log, name=log.name) == expected


def test_compressed_copies_give_the_commands_findings(tmp_path):
    found = 0
    for log in fixture_logs():
        plain = command_findings(Path(log.name), FIXTURES)
        found += len(plain)
        for suffix, compress in COMPRESSORS.items():
            name = f"{log.name}.{suffix}"
            (tmp_path / name).write_bytes(compress(log.read_bytes()))
            expected = command_findings(Path(name), tmp_path)
            # The command reads the copy as it reads the log...
            assert expected == renamed(plain, log.name, name), name
            # ...and so does scan(), from the path and from an open file.
            assert scanned_in(tmp_path, name) == expected, name
            with open(tmp_path / name, "rb") as f:
                assert oomwhy.scan(f, name=name) == expected, name
    assert found > 0


def test_archives_give_the_commands_findings(tmp_path):
    logs = bundled_fixtures()
    with tarfile.open(tmp_path / "job.tar.gz", "w:gz") as tar:
        for log in logs:
            tar.add(log, arcname=f"job/{log.name}")
    with zipfile.ZipFile(tmp_path / "job.zip", "w", zipfile.ZIP_DEFLATED) as zf:
        for log in logs:
            zf.write(log, arcname=f"job/{log.name}")
    for archive in ["job.tar.gz", "job.zip"]:
        expected = command_findings(Path(archive), tmp_path)
        inputs = {f["source"]["input"] for f in expected}
        assert inputs and all(i.startswith(f"{archive}:job/") for i in inputs), inputs
        assert scanned_in(tmp_path, archive) == expected, archive
        data = (tmp_path / archive).read_bytes()
        assert oomwhy.scan(io.BytesIO(data), name=archive) == expected, archive


@pytest.mark.parametrize("pickle", sorted(SNAPSHOTS.glob("*.pickle")), ids=lambda p: p.stem)
def test_a_memory_snapshot_gives_the_commands_findings(pickle):
    expected = command_findings(Path(pickle.name), SNAPSHOTS)
    assert expected, "a snapshot always gives a finding"
    assert scanned_in(SNAPSHOTS, pickle.name) == expected


def test_a_directory_gives_the_commands_findings(tmp_path):
    logs = tmp_path / "logs"
    (logs / "nested").mkdir(parents=True)
    for i, log in enumerate(bundled_fixtures()):
        target = logs / ("nested" if i % 2 else ".") / log.name
        target.write_bytes(log.read_bytes())
    first = fixture_logs()[0]
    (logs / f"{first.name}.gz").write_bytes(gzip.compress(first.read_bytes()))
    shutil.copy(sorted(SNAPSHOTS.glob("*.pickle"))[0], logs / "memory.pickle")
    (logs / "model.bin").write_bytes(b"\x00\x01binary\x00" * 100)
    # Two ranks of one job with the same crash: the command folds them.
    seed = (FIXTURES / "torch_capacity_2_2_kaggle_container.log").read_bytes()
    (logs / "rank0.log").write_bytes(seed)
    (logs / "rank1.log").write_bytes(seed)
    expected = command_findings(Path("logs"), tmp_path)
    inputs = {f["source"]["input"] for f in expected}
    assert "logs/memory.pickle" in inputs and f"logs/{first.name}.gz" in inputs, inputs
    assert "logs/rank1.log" not in inputs, "the ranks' copies fold into one"
    assert scanned_in(tmp_path, "logs") == expected
    # Named otherwise, the directory's files keep their paths inside it.
    named = oomwhy.scan(logs, name="run-7")
    assert [f["source"]["input"] for f in named] == [
        i.replace("logs", "run-7", 1) for i in (f["source"]["input"] for f in expected)
    ]


def test_an_input_cut_short_warns_and_keeps_what_was_read(tmp_path):
    log = FIXTURES / "torch_capacity_2_2_kaggle_container.log"
    text = log.read_bytes() + b"".join(b"step %d loss %x\n" % (i, i * 7919) for i in range(50_000))
    whole = gzip.compress(text)
    (tmp_path / "cut.log.gz").write_bytes(whole[: len(whole) // 2])
    # The command reports what it read, and exits 2 for the damage.
    expected = command_findings(Path("cut.log.gz"), tmp_path, statuses=(2,))
    assert expected
    with pytest.warns(oomwhy.InputWarning, match="cut.log.gz: the gzip data ends early"):
        assert scanned_in(tmp_path, "cut.log.gz") == expected
    with pytest.raises(FileNotFoundError, match="no such file"):
        oomwhy.scan(tmp_path / "missing.log.gz")


def test_summarize_reads_directories_and_archives_as_the_command(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    for log in bundled_fixtures():
        shutil.copy(log, logs / log.name)
    with tarfile.open(tmp_path / "more.tar", "w") as tar:
        tar.add(fixture_logs()[-1], arcname="more.log")
    names = ["logs", "more.tar"]
    result = run_oomwhy("--summary", "--format", "json", *names, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp_path)
        summary = oomwhy.summarize(names)
    assert summary == json.loads(result.stdout)
    assert summary["inputs"] == BUNDLED + 1 and summary["findings"] > 0
