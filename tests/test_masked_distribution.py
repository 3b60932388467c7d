"""allfives_training/masked_distribution.py: the same numbers as sb3-contrib's masked categorical, never an
illegal sample, and a policy built on it trains."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from sb3_contrib.common.maskable.distributions import MaskableCategorical  # noqa: E402

from allfives_training.masked_distribution import FastMaskableCategorical, FastMaskablePolicy  # noqa: E402


def _batch(seed: int, rows: int = 256, actions: int = 113, scale: float = 3.0):
    gen = torch.Generator().manual_seed(seed)
    logits = (torch.randn(rows, actions, generator=gen) * scale).requires_grad_(True)
    masks = torch.rand(rows, actions, generator=gen) < 0.06
    masks[torch.arange(rows), torch.randint(0, actions, (rows,), generator=gen)] = True  # a legal action a row
    return logits, masks


@pytest.mark.parametrize("seed, scale", [(0, 3.0), (1, 30.0), (2, 0.01)])
def test_same_log_probs_entropy_and_gradients_as_sb3(seed: int, scale: float) -> None:
    logits, masks = _batch(seed, scale=scale)
    legal = torch.stack([torch.multinomial(m.float(), 1).squeeze() for m in masks])
    results = []
    for cls in (MaskableCategorical, FastMaskableCategorical):
        logits.grad = None
        dist = cls(logits=logits, masks=masks.numpy())
        log_prob, entropy = dist.log_prob(legal), dist.entropy()
        (log_prob.sum() + 0.3 * entropy.sum()).backward()
        results.append((log_prob.detach(), entropy.detach(), logits.grad.clone(),
                        torch.where(masks, dist.probs, 0.0).detach()))
    for ours, theirs in zip(*results):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    assert torch.isfinite(results[1][2]).all()


def test_an_illegal_action_is_never_sampled_and_the_mode_is_legal() -> None:
    logits, masks = _batch(3, rows=512)
    with torch.no_grad():
        logits[~masks] += 1000.0  # illegal actions that would dominate without the mask
    torch.manual_seed(0)
    dist = FastMaskableCategorical(logits=logits.detach(), masks=masks.numpy())
    drawn = dist.sample(torch.Size([20]))
    assert drawn.shape == (20, 512)
    assert masks.gather(1, drawn.T).all()
    assert masks.gather(1, dist.probs.argmax(1, keepdim=True)).all()


def test_a_row_without_legal_actions_is_uniform_like_sb3() -> None:
    logits = torch.randn(2, 5)
    masks = np.array([[False] * 5, [True, False, True, False, False]])
    ours = FastMaskableCategorical(logits=logits, masks=masks)
    theirs = MaskableCategorical(logits=logits, masks=masks)
    torch.testing.assert_close(ours.probs, theirs.probs)
    assert ours.sample().shape == (2,)
    assert FastMaskableCategorical(logits=logits, masks=None).probs.shape == (2, 5)


def test_the_policy_uses_it_and_learns_a_few_steps() -> None:
    from sb3_contrib import MaskablePPO

    from allfives_env.single_seat import AllFivesSingleSeatEnv

    torch.set_num_threads(1)
    model = MaskablePPO(FastMaskablePolicy, AllFivesSingleSeatEnv(opponents=["random"]), n_steps=64, batch_size=32,
                        n_epochs=1, seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    model.learn(128)
    n = int(model.action_space.n)
    assert isinstance(model.policy.action_dist.proba_distribution(torch.zeros(1, n)).distribution,
                      FastMaskableCategorical)
