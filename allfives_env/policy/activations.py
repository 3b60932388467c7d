"""The activation functions a policy file may name: each in numpy, its parameters, and a bound on its output.

The names are the header's ``activation`` field; the parameters (``activation_params``) are the torch
module's attributes, with torch's defaults. The bounds let :class:`~allfives_env.policy.NumpyPolicy` prove
at load that no observation can overflow float32 (interval arithmetic on magnitudes).
"""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np

#: torch's default ``negative_slope`` of ``LeakyReLU`` and ``alpha`` of ``ELU``, used when a header omits them.
DEFAULT_NEGATIVE_SLOPE = 0.01
DEFAULT_ELU_ALPHA = 1.0

Activation = Callable[[np.ndarray, Mapping[str, float]], np.ndarray]


def _tanh(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    return np.tanh(x)


def _relu(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    return np.maximum(x, np.float32(0))


def _leaky_relu(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    return np.where(x >= 0, x, x * np.float32(p.get("negative_slope", DEFAULT_NEGATIVE_SLOPE)))


def _elu(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    alpha = np.float32(p.get("alpha", DEFAULT_ELU_ALPHA))
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, np.float32(0))))


def _silu(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-x) = inf for x << 0 gives the right limit, 0
        return x / (np.float32(1) + np.exp(-x))


def _sigmoid(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.float32(1) / (np.float32(1) + np.exp(-x))


def _identity(x: np.ndarray, p: Mapping[str, float]) -> np.ndarray:
    return x


#: Activation name (the header's ``activation``) -> the function, ``f(x, params)``.
ACTIVATIONS: dict[str, Activation] = {
    "tanh": _tanh, "relu": _relu, "leaky_relu": _leaky_relu, "elu": _elu, "silu": _silu, "sigmoid": _sigmoid,
    "identity": _identity,
}

#: The parameters each activation takes (the torch module's attributes); any other is refused.
ACTIVATION_PARAMS: dict[str, tuple[str, ...]] = {"leaky_relu": ("negative_slope",), "elu": ("alpha",)}

#: Bounds on ``|activation(x)|`` given ``|x| <= m`` (elementwise, float64), to prove at load that no value
#: can overflow.
ACTIVATION_BOUNDS: dict[str, Callable[[np.ndarray, Mapping[str, float]], np.ndarray]] = {
    "tanh": lambda m, p: np.minimum(m, 1.0), "sigmoid": lambda m, p: np.ones_like(m), "relu": lambda m, p: m,
    "identity": lambda m, p: m, "silu": lambda m, p: m,
    "leaky_relu": lambda m, p: m * max(1.0, abs(p.get("negative_slope", DEFAULT_NEGATIVE_SLOPE))),
    "elu": lambda m, p: np.maximum(m, abs(p.get("alpha", DEFAULT_ELU_ALPHA))),
}
