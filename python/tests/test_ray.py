"""Fleet scale on Ray Data: `oomwhy.ray.summarize` on a local Ray instance
gives exactly `oomwhy --summary` on the same tree of a few hundred logs.

Skipped without Ray (an optional extra), unless OOMWHY_REQUIRE_RAY=1 (CI)
makes its absence a failure."""

import json
import os

import pytest

from conftest import fixture_logs, run_oomwhy

if os.environ.get("OOMWHY_REQUIRE_RAY") == "1":
    import ray  # noqa: F401  (a missing Ray fails here, in CI)
ray = pytest.importorskip("ray")

import oomwhy  # noqa: E402
import oomwhy.ray  # noqa: E402

#: Logs in the generated tree.
JOBS = 300


def make_tree(root):
    """JOBS logs in nested folders, built from the repository's fixtures:
    a preamble of ordinary training output, then a fixture's text (or, for
    every seventh job, nothing more: a run that ended well), plus one empty log."""
    logs = fixture_logs()
    paths = []
    for i in range(JOBS):
        folder = root / f"day-{i % 5}" / f"job-{i:04d}"
        folder.mkdir(parents=True)
        path = folder / "rank0.log"
        preamble = "".join(
            f"epoch 0 step {s} loss {1.0 / (s + 1):.4f}\n" for s in range(i % 9)
        )
        body = b"" if i % 7 == 6 else logs[i % len(logs)].read_bytes()
        path.write_bytes(preamble.encode() + body)
        paths.append(path)
    empty = root / "day-0" / "empty.log"
    empty.write_bytes(b"")
    paths.append(empty)
    return sorted(paths)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    ray.data.DataContext.get_current().enable_progress_bars = False
    try:
        yield
    finally:
        ray.shutdown()


def test_ray_summary_is_the_commands_summary(tmp_path, local_ray):
    paths = make_tree(tmp_path)
    summary = oomwhy.ray.summarize(str(tmp_path), batch_size=16)

    command = run_oomwhy("--summary", "--format", "json", *paths)
    assert command.returncode == 0, command.stderr
    assert summary == json.loads(command.stdout)

    # Not a trivial agreement: every input counted, most with findings.
    assert summary["inputs"] == JOBS + 1
    assert JOBS // 2 < summary["inputs_with_findings"] < JOBS
    assert len(summary["by_kind"]) > 10 and summary["largest_shortfalls"]
    assert all(str(tmp_path) in i for g in summary["by_kind"] for i in g["inputs"])

    text = run_oomwhy("--summary", *paths).stdout
    assert oomwhy.render_summary(summary, "text") == text


def test_python_m_oomwhy_ray(tmp_path, local_ray, capsys):
    (tmp_path / "a.log").write_bytes(fixture_logs()[0].read_bytes())
    (tmp_path / "notes.txt").write_text("not a log\n")
    code = oomwhy.ray.main([str(tmp_path), "--extension", "log", "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["inputs"] == 1 and out["findings"] >= 1
