"""The torch-thread rule is one function (allfives_training/threads.py), and nothing else in training sets it."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[1]
TRAINING = ROOT / "allfives_training"
#: torch's calls that make up the rule
RULE_CALLS = {"set_num_threads", "set_default_validate_args"}


def test_one_torch_thread_sets_one_thread_and_no_distribution_checks() -> None:
    import torch

    from allfives_training.threads import one_torch_thread

    threads, validate = torch.get_num_threads(), torch.distributions.Distribution._validate_args
    try:
        torch.set_num_threads(2)
        torch.distributions.Distribution.set_default_validate_args(True)
        one_torch_thread()
        assert torch.get_num_threads() == 1
        assert torch.distributions.Distribution._validate_args is False
    finally:
        torch.set_num_threads(threads)
        torch.distributions.Distribution.set_default_validate_args(validate)


def test_a_worker_without_torch_is_not_made_to_import_it() -> None:
    code = ("import sys; from allfives_training.threads import one_torch_thread; one_torch_thread(if_imported=True); "
            "assert 'torch' not in sys.modules, 'torch imported'; one_torch_thread(); import torch; "
            "assert torch.get_num_threads() == 1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def _rule_setters() -> set[str]:
    """The training modules that call torch's thread or validation setters themselves."""
    found = set()
    for path in TRAINING.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in RULE_CALLS:
                found.add(str(path.relative_to(TRAINING)))
    return found


def test_the_rule_is_set_in_one_place() -> None:
    assert _rule_setters() == {"threads.py"}


def test_both_trainers_start_their_torch_work_through_the_rule() -> None:
    for module in ("sb3_model.py", "rllib/algo.py"):  # where MaskablePPO and RLlib's PPO are built
        tree = ast.parse((TRAINING / module).read_text())
        calls = [n for n in ast.walk(tree)
                 if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "one_torch_thread"]
        assert calls, f"{module} does not call one_torch_thread"
