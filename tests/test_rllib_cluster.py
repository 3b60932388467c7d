"""``allfives train-rllib`` leaves nothing behind and scales out: a tiny run as a command ends with a quiet
stderr (no Ray error line), its final table printed and written as ``allfives train`` writes it, and no Ray
process left, and a tiny run trains through ``address`` on a two-node Ray cluster
(``ray.cluster_utils.Cluster``, both nodes on one machine) with one env runner on each node (skipped when
the [rllib] extra is not installed)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from rllib_requirements import require_rllib  # noqa: E402

require_rllib()

ROOT = Path(__file__).resolve().parents[1]
TINY = ["iterations=1", "ppo.train_batch_size=256", "ppo.minibatch_size=128", "ppo.num_epochs=1",
        "env_runners.num_envs_per_env_runner=8", "network.hidden=[16]", "network.action_scorer=[4]",
        "evaluation.final_games=8", "evaluation.baselines=[greedy]", "evaluation.replays=0"]
MARK = "ALLFIVES_RLLIB_TEST_MARK"


def _marked(mark: str) -> list[int]:
    """Live processes (not zombies) whose environment carries ``MARK=mark``: everything the run started,
    Ray's raylet, GCS and workers included, since they inherit the driver's environment."""
    found = []
    needle = f"{MARK}={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads processes' environments in /proc")
def test_a_run_as_a_command_shuts_ray_down_quietly(tmp_path: Path) -> None:
    mark = uuid.uuid4().hex
    env = {**os.environ, MARK: mark}
    probe = subprocess.Popen(["sleep", "30"], env=env)  # the search finds a marked process, so an empty one counts
    try:
        # until the child has exec'd, /proc shows the environment it forked with (no mark): wait for the exec
        deadline = time.monotonic() + 10.0
        while not _marked(mark) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _marked(mark) == [probe.pid]
    finally:
        probe.kill()
        probe.wait()
    run = tmp_path / "run"
    args = [sys.executable, "-m", "allfives_env.cli", "train-rllib", "--run-dir", str(run)]
    for override in [*TINY, "env_runners.num_env_runners=2", "evaluation.processes=2"]:
        args += ["--set", override]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "iteration 1/1" in done.stdout and (run / "policy_default_policy.npz").exists()
    # RLlib's restartable env runners made Ray log an 'E ... core_worker.cc ... max_restarts' line at start
    for noise in ("SIGTERM", "Traceback", "sem_post", "*** ", "max_restarts", "core_worker.cc"):
        assert noise not in done.stderr, done.stderr[-3000:]
    # it ends as `allfives train` does: the final table printed as evaluation.md/.csv/.json write it
    report = (run / "evaluation.md").read_text()
    assert report.startswith(f"Evaluation of {run / 'policy_default_policy.npz'} after ")
    assert report.strip() in done.stdout, done.stdout
    summary, table = (json.loads((run / name).read_text()) for name in ("summary.json", "evaluation.json"))
    assert [r["baseline"] for r in table["results"]] == ["greedy"] and table["results"] == summary["final"]
    assert table["games"] == 8 and table["steps"] == summary["env_steps"] and table["iterations"] == 1
    with open(run / "evaluation.csv", newline="") as f:
        assert [r["baseline"] for r in csv.DictReader(f)] == ["greedy"]
    assert f"allfives evaluate ppo:path={run / 'policy_default_policy.npz'} greedy" in done.stdout
    deadline = time.monotonic() + 20
    while _marked(mark) and time.monotonic() < deadline:  # Ray's processes may take a moment to exit
        time.sleep(0.5)
    assert _marked(mark) == [], "Ray processes of the run outlive it"


def test_a_tiny_run_trains_through_the_address_of_a_two_node_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    import ray
    from ray.cluster_utils import Cluster

    from allfives_training.rllib.train import RLlibRun, train_rllib

    nodes: list[str] = []
    alive: set[str] = set()
    original = RLlibRun.evaluate

    def evaluate_and_look(self: RLlibRun, final: bool = False) -> list[dict]:
        nodes.extend(self.algo.env_runner_group.foreach_env_runner(
            lambda runner: ray.get_runtime_context().get_node_id(), local_env_runner=False))
        alive.update(n["NodeID"] for n in ray.nodes() if n["Alive"])
        return original(self, final)

    monkeypatch.setattr(RLlibRun, "evaluate", evaluate_and_look)
    node = {"num_cpus": 1, "object_store_memory": 100 * 1024**2}
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    try:
        cluster.add_node(**node)
        cluster.wait_for_nodes()
        with tempfile.TemporaryDirectory() as folder:
            summary = train_rllib(ROOT / "configs" / "rllib_default.yaml", run_dir=str(Path(folder) / "run"),
                                  address=cluster.address, overrides=[*TINY, "env_runners.num_env_runners=2",
                                                                      "evaluation.processes=1"],
                                  out=io.StringIO())
        assert summary["iterations"] == 1 and summary["env_steps"] >= 256
        assert len(alive) == 2 and sorted(nodes) == sorted(alive), "one env runner on each node"
        assert not ray.is_initialized(), "train_rllib disconnects from the cluster it did not start"
    finally:
        cluster.shutdown()


def test_without_an_address_a_run_starts_its_own_ray_rather_than_joining_one_found(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from allfives_training.rllib.train import ray_address

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert ray_address(None) == "local"  # Ray's None would join /tmp/ray/ray_current_cluster's cluster
    assert ray_address("auto") == "auto" and ray_address("ray://head:10001") == "ray://head:10001"
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.1:6379")
    assert ray_address(None) == "10.0.0.1:6379"  # the user's own setting still counts
