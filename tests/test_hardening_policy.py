"""Hardening of policy files: whatever a careless or hostile user hands to ``load_policy`` (or to the ``ppo``
agent) is either a whole, playable policy or a :class:`PolicyError` at load that names what was wrong --
never a bare TypeError/KeyError/RecursionError traceback, never an error that waits for the middle of a
game, never unpickling. Built with numpy alone (``write_policy_file``), so no torch is needed."""

from __future__ import annotations

import io
import itertools
import json
import math
import os
import signal
import warnings
import zipfile
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allfives_env.agents import PlayerView, PolicyAgent, make_agent
from allfives_env.core import Game, Rules
from allfives_env.core.errors import AllFivesError
from allfives_env.encoding import ACTION_FEATURES, ObservationEncoder
from allfives_env.match import play_game
from allfives_env.policy import (
    MAX_FILE_BYTES, NumpyPolicy, PolicyError, load_policy, read_policy_header, write_policy_file,
)

RULES = Rules(num_players=2)


def _random_file(path: Path, scorer: bool = True, activation: str = "tanh", params: Any = None,
                 hidden: tuple[int, ...] = (8, 6), rules: Rules = RULES, seed: int = 0) -> Path:
    """A valid policy file with random weights (with the shared placement scorer when ``scorer``)."""
    rng = np.random.default_rng(seed)

    def lin(out: int, fan_in: int) -> tuple[np.ndarray, np.ndarray]:
        return (rng.normal(0, 0.3, (out, fan_in)).astype(np.float32), rng.normal(0, 0.3, out).astype(np.float32))

    enc = ObservationEncoder(rules, action_features=scorer)
    layers, fan_in = [], enc.size
    for h in hidden:
        layers.append(lin(h, fan_in))
        fan_in = h
    spec, scorer_layers = None, []
    if scorer:
        spec = {"offset": enc.slices["features"].start, "placements": 4 * enc.T, "features": len(ACTION_FEATURES),
                "hidden": [4]}
        scorer_layers = [lin(4, len(ACTION_FEATURES)), lin(1, 4)]
        fan_in += enc.num_actions
    return write_policy_file(path, rules, layers, lin(enc.num_actions, fan_in), activation, params or {},
                             (enc.size,), enc.num_actions, {"note": "test"}, algorithm="test", scorer=spec,
                             scorer_layers=scorer_layers)


def _read(path: Path) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    with np.load(path, allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    return json.loads(arrays.pop("header").tobytes().decode()), arrays


def _write(path: Path, header: Any, arrays: dict[str, np.ndarray]) -> Path:
    """``header``: a dict (JSON-encoded), str or bytes (stored as given), or an array (stored as is)."""
    if isinstance(header, (dict, list)) or header is None or isinstance(header, (int, float)):
        header = json.dumps(header)
    if isinstance(header, str):
        header = header.encode("utf-8", "surrogatepass")
    if isinstance(header, bytes):
        header = np.frombuffer(header, dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, header=header, **arrays)  # object arrays are pickled here: the loader must refuse them
    path.write_bytes(buf.getvalue())
    return path


@pytest.fixture(scope="module")
def valid(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _random_file(tmp_path_factory.mktemp("valid") / "valid.npz")


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _random_file(tmp_path_factory.mktemp("plain") / "plain.npz", scorer=False, activation="relu")


# ---------------------------------------------------------------------------------------------- the catalogue
def _set(**changes: Any) -> Callable[[dict, dict], None]:
    def mutate(header: dict, arrays: dict) -> None:
        header.update(changes)
    return mutate


def _drop_key(key: str) -> Callable[[dict, dict], None]:
    return lambda header, arrays: header.pop(key)


def _scorer(**changes: Any) -> Callable[[dict, dict], None]:
    def mutate(header: dict, arrays: dict) -> None:
        header["action_scorer"] = {**header["action_scorer"], **changes}
    return mutate


def _array(name: str, f: Callable[[np.ndarray], Any]) -> Callable[[dict, dict], None]:
    def mutate(header: dict, arrays: dict) -> None:
        arrays[name] = f(arrays[name])
    return mutate


def _add_array(name: str, value: np.ndarray) -> Callable[[dict, dict], None]:
    return lambda header, arrays: arrays.__setitem__(name, value)


def _drop_array(name: str) -> Callable[[dict, dict], None]:
    return lambda header, arrays: arrays.pop(name)


def _poke(value: float, index: tuple = (0, 0)) -> Callable[[np.ndarray], np.ndarray]:
    def f(a: np.ndarray) -> np.ndarray:
        a = a.copy()
        a[index[:a.ndim]] = value
        return a
    return f


def _resize_first_layer(obs_size: int) -> Callable[[dict, dict], None]:
    """A consistent file (header and arrays agree) whose obs_size does not fit its rules."""
    def mutate(header: dict, arrays: dict) -> None:
        header["obs_size"] = obs_size
        w = arrays["hidden_0_weight"]
        arrays["hidden_0_weight"] = np.resize(w, (w.shape[0], obs_size)).astype(np.float32)
    return mutate


def _fewer_actions(header: dict, arrays: dict) -> None:
    """A consistent file (header and arrays agree) whose action count does not fit its rules."""
    header["num_actions"] = 100
    header["action_scorer"]["placements"] = 100
    arrays["action_weight"] = arrays["action_weight"][:100, :-12]
    arrays["action_bias"] = arrays["action_bias"][:100]


MALFORMED: dict[str, tuple[Callable[[dict, dict], None], str]] = {
    # header fields of the wrong type or out of range
    "hidden-string": (_set(hidden="8,6"), "hidden"),
    "hidden-int": (_set(hidden=8), "hidden"),
    "hidden-null": (_set(hidden=None), "hidden"),
    "hidden-floats": (_set(hidden=[8.0, 6.0]), "hidden"),
    "hidden-float-fraction": (_set(hidden=[8.5, 6]), "hidden"),
    "hidden-bools": (_set(hidden=[True, 6]), "hidden"),
    "hidden-zero": (_set(hidden=[0, 6]), "hidden"),
    "hidden-negative": (_set(hidden=[-8, 6]), "hidden"),
    "hidden-nested": (_set(hidden=[[8], 6]), "hidden"),
    "hidden-dict": (_set(hidden={"0": 8}), "hidden"),
    "hidden-huge": (_set(hidden=[10 ** 30, 6]), "hidden"),
    "hidden-shorter-than-arrays": (_set(hidden=[8]), "hidden_1|hidden|layer"),
    "obs_size-string": (_set(obs_size="1496"), "obs_size"),
    "obs_size-float": (_set(obs_size=1496.0), "obs_size"),
    "obs_size-bool": (_set(obs_size=True), "obs_size"),
    "obs_size-zero": (_set(obs_size=0), "obs_size"),
    "obs_size-negative": (_set(obs_size=-1496), "obs_size"),
    "obs_size-list": (_set(obs_size=[1496]), "obs_size"),
    "obs_size-null": (_set(obs_size=None), "obs_size"),
    "obs_size-huge": (_set(obs_size=10 ** 30), "obs_size"),
    "obs_size-not-the-rules": (_resize_first_layer(1400), "obs_size"),
    "num_actions-string": (_set(num_actions="112"), "num_actions"),
    "num_actions-float": (_set(num_actions=112.0), "num_actions"),
    "num_actions-bool": (_set(num_actions=True), "num_actions"),
    "num_actions-zero": (_set(num_actions=0), "num_actions"),
    "num_actions-not-the-rules": (_fewer_actions, "num_actions|actions"),
    "activation-int": (_set(activation=5), "activation"),
    "activation-list": (_set(activation=["tanh"]), "activation"),
    "activation-null": (_set(activation=None), "activation"),
    "activation-unknown": (_set(activation="softmax"), "activation"),
    "activation-torch-name": (_set(activation="Tanh"), "activation"),
    "activation-dunder": (_set(activation="__class__"), "activation"),
    "activation_params-string": (_set(activation_params="x"), "activation_params"),
    "activation_params-list": (_set(activation_params=[1]), "activation_params"),
    "activation_params-unknown": (_set(activation_params={"alpha": 1.0}), "activation_params"),
    "activation_params-string-value": (_set(activation="leaky_relu", activation_params={"negative_slope": "0.1"}),
                                       "negative_slope"),
    "activation_params-nan": (_set(activation="elu", activation_params={"alpha": math.nan}), "alpha"),
    "activation_params-bool": (_set(activation="elu", activation_params={"alpha": True}), "alpha"),
    "rules-string": (_set(rules="default"), "rules"),
    "rules-list": (_set(rules=[]), "rules"),
    "rules-null": (_set(rules=None), "rules"),
    "rules-bad-option": (_set(rules={"num_players": 5}), "rules.*num_players"),
    "rules-unknown-option": (_set(rules={"num_playrs": 2}), "rules.*num_playrs"),
    "rules-string-option": (_set(rules={"num_players": "2"}), "rules.*num_players"),
    "rules-list-option": (_set(rules={"max_pip": [6]}), "rules.*max_pip"),
    "rules-other-spaces": (_set(rules={"num_players": 3}), "obs_size|observation"),
    "action_features-string": (_set(action_features="yes"), "action_features"),
    "action_features-int": (_set(action_features=1), "action_features"),
    "action_features-null": (_set(action_features=None), "action_features"),
    "action_features-false": (_set(action_features=False), "obs_size|action_features"),
    "action_scorer-string": (_set(action_scorer="x"), "action_scorer"),
    "action_scorer-list": (_set(action_scorer=[]), "action_scorer"),
    "action_scorer-empty": (_set(action_scorer={}), "action_scorer"),
    "action_scorer-null-with-scorer-arrays": (_set(action_scorer=None), "scorer_0|action_weight|layer"),
    "action_scorer-hidden-string": (_scorer(hidden="4"), "action_scorer.*hidden"),
    "action_scorer-hidden-zero": (_scorer(hidden=[0]), "action_scorer.*hidden"),
    "action_scorer-offset-negative": (_scorer(offset=-1), "action_scorer.*offset"),
    "action_scorer-offset-elsewhere": (_scorer(offset=0), "action_scorer.*offset"),
    "action_scorer-offset-past-the-end": (_scorer(offset=10 ** 6), "action_scorer.*offset"),
    "action_scorer-placements-too-many": (_scorer(placements=200), "action_scorer.*placements"),
    "action_scorer-placements-float": (_scorer(placements=112.0), "action_scorer.*placements"),
    "action_scorer-features-zero": (_scorer(features=0), "action_scorer.*features"),
    "action_scorer-extra-key": (_scorer(activation="relu"), "action_scorer.*activation"),
    "action_scorer-missing-key": (lambda h, a: h["action_scorer"].pop("offset"), "action_scorer.*offset"),
    "action_scorer-context-string": (_scorer(context="yes"), "action_scorer.context"),
    "action_scorer-context-without-its-weights": (_scorer(context=True), "scorer layer 0|scorer_0"),
    "action_scorer-context-without-hidden": (lambda h, a: (_scorer(context=True)(h, a), h.update(hidden=[])),
                                             "context: true needs a hidden layer"),
    "version-bool": (_set(version=True), "version"),
    "version-float": (_set(version=1.0), "version"),
    "version-string": (_set(version="1"), "version"),
    "layout-bool": (_set(obs_layout_version=True), "layout"),
    "layout-float": (_set(obs_layout_version=1.0), "layout"),
    "format-int": (_set(format=5), "format"),
    "format-list": (_set(format=["allfives-policy"]), "format"),
    "algorithm-int": (_set(algorithm=5), "algorithm"),
    "algorithm-list": (_set(algorithm=["x"]), "algorithm"),
    "metadata-string": (_set(metadata="x"), "metadata"),
    "metadata-list": (_set(metadata=[1]), "metadata"),
    "metadata-too-deep": (_set(metadata=json.loads("[" * 100 + "]" * 100)), "metadata|deep|nest"),
    "unknown-key": (_set(activaton="relu"), "activaton"),
    "missing-obs_size": (_drop_key("obs_size"), "obs_size"),
    "missing-hidden": (_drop_key("hidden"), "hidden"),
    "missing-rules": (_drop_key("rules"), "rules"),
    "missing-activation": (_drop_key("activation"), "activation"),
    # arrays that do not match the header
    "extra-layer-array": (_add_array("hidden_2_weight", np.zeros((4, 6), np.float32)), "hidden_2_weight"),
    "extra-junk-array": (_add_array("junk", np.zeros(3, np.float32)), "junk"),
    "missing-action_bias": (_drop_array("action_bias"), "action_bias"),
    "missing-scorer-array": (_drop_array("scorer_1_weight"), "scorer_1_weight"),
    "wrong-bias-shape": (_array("hidden_0_bias", lambda a: a[:7]), "layer 0|hidden_0_bias"),
    "transposed-weight": (_array("hidden_1_weight", lambda a: a.T.copy()), "layer 1|hidden_1_weight"),
    "scalar-weight": (_array("action_bias", lambda a: np.float32(1.0)), "action_bias|layer 2"),
    "3d-weight": (_array("hidden_0_weight", lambda a: a[None]), "hidden_0_weight|layer 0"),
    "not-chaining": (lambda h, a: a.update(hidden_1_weight=np.zeros((6, 7), np.float32)), "layer 1|hidden_1_weight"),
    "int-weights": (_array("hidden_0_weight", lambda a: a.astype(np.int32)), "hidden_0_weight.*int32"),
    "complex-weights": (_array("hidden_1_weight", lambda a: a.astype(np.complex64)), "hidden_1_weight.*complex"),
    "bool-weights": (_array("action_bias", lambda a: a > 0), "action_bias.*bool"),
    "string-weights": (_array("action_bias", lambda a: a.astype(str)), "action_bias"),
    "structured-weights": (_array("action_bias", lambda a: np.zeros(a.shape, [("x", "f4")])), "action_bias"),
    "object-weights": (_array("action_bias", lambda a: a.astype(object)), "pickle"),
    "nan-weight": (_array("hidden_0_weight", _poke(math.nan)), "hidden_0_weight.*finite"),
    "inf-bias": (_array("action_bias", _poke(math.inf)), "action_bias.*finite"),
    "neg-inf-scorer": (_array("scorer_1_bias", _poke(-math.inf)), "scorer_1_bias.*finite"),
    "nan-float64": (_array("hidden_1_bias", lambda a: _poke(math.nan)(a.astype(np.float64))), "hidden_1_bias.*finite"),
    "float64-overflows-float32": (_array("hidden_1_bias", lambda a: _poke(1e300)(a.astype(np.float64))),
                                  "hidden_1_bias.*(finite|float32)"),
    "logits-overflow": (_array("action_weight", lambda a: a * np.float32(3e37)), "overflow"),
}


def _malformed(tmp_path: Path, valid: Path, name: str) -> Path:
    header, arrays = _read(valid)
    MALFORMED[name][0](header, arrays)
    return _write(tmp_path / f"{name}.npz", header, arrays)


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_every_malformed_file_is_refused_at_load(tmp_path: Path, valid: Path, name: str) -> None:
    path = _malformed(tmp_path, valid, name)
    with pytest.raises(PolicyError, match=MALFORMED[name][1]) as info:
        load_policy(path)
    assert str(path) in str(info.value)
    # the agent refuses it when it is made, not in the middle of a game
    with pytest.raises(PolicyError, match=MALFORMED[name][1]):
        PolicyAgent(path=str(path))
    with pytest.raises(AllFivesError):
        make_agent(f"ppo:path={path}")


# ---------------------------------------------------------------------------------------------- headers
@pytest.mark.parametrize("raw, match", [
    ("[" * 100_000 + "]" * 100_000, "nest|deep"),
    ('{"a":' * 50_000 + "1" + "}" * 50_000, "nest|deep"),
    ("[1, 2]", "JSON object|format"),
    ('"allfives-policy"', "JSON object|format"),
    ("null", "JSON object|format"),
    ("", "JSON"),
    ("{", "JSON"),
    (b"\xff\xfe\x00", "UTF-8|JSON"),
    ('{"obs_size": ' + "9" * 5000 + "}", "JSON|obs_size|digits"),
    ('{"a": 1, "a": 2}', "twice|duplicate"),
])
def test_header_json_that_is_not_a_header_is_refused(tmp_path: Path, valid: Path, raw: Any, match: str) -> None:
    _, arrays = _read(valid)
    path = _write(tmp_path / "h.npz", raw, arrays)
    with pytest.raises(PolicyError, match=match) as info:
        load_policy(path)
    assert str(path) in str(info.value)
    with pytest.raises(PolicyError, match=match):
        read_policy_header(path)


def test_duplicate_header_fields_are_refused(tmp_path: Path, valid: Path) -> None:
    header, arrays = _read(valid)
    text = json.dumps(header)
    path = _write(tmp_path / "dup.npz", text[:-1] + ', "obs_size": 5}', arrays)
    with pytest.raises(PolicyError, match="obs_size.*(twice|duplicate)"):
        load_policy(path)


@pytest.mark.parametrize("header", [
    np.zeros(10, np.int64),  # not bytes
    np.zeros((2, 5), np.uint8),  # not one row
    np.frombuffer(b"{}", np.uint8).astype(np.float32),
])
def test_header_arrays_of_the_wrong_kind_are_refused(tmp_path: Path, valid: Path, header: np.ndarray) -> None:
    _, arrays = _read(valid)
    with pytest.raises(PolicyError, match="header"):
        load_policy(_write(tmp_path / "h.npz", header, arrays))


def test_a_huge_header_is_refused_before_it_is_parsed(tmp_path: Path, valid: Path) -> None:
    header, arrays = _read(valid)
    header["metadata"] = {"padding": "x" * (2 << 20)}
    path = _write(tmp_path / "huge.npz", header, arrays)
    with pytest.raises(PolicyError, match="header.*(large|bytes)") as info:
        load_policy(path)
    assert str(path) in str(info.value)


# ---------------------------------------------------------------------------------------------- whole files
def _zip(path: Path, members: Any) -> Path:
    """An archive of ``members`` (a dict, or (name, bytes) pairs, which may repeat a name)."""
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in (members.items() if isinstance(members, dict) else members):
            zf.writestr(name, data)
    return path


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a)
    return buf.getvalue()


def test_files_that_are_not_policy_files_name_the_path(tmp_path: Path, valid: Path) -> None:
    data = valid.read_bytes()
    header, arrays = _read(valid)
    npy = tmp_path / "array.npy"
    np.save(npy, np.zeros(3))
    dup = tmp_path / "dup.npz"
    with warnings.catch_warnings():  # zipfile warns of the duplicate name it writes
        warnings.simplefilter("ignore")
        _zip(dup, [("header.npy", _npy(np.frombuffer(json.dumps(header).encode(), np.uint8))),
                   *[(f"{k}.npy", _npy(v)) for k, v in arrays.items()],
                   ("action_bias.npy", _npy(arrays["action_bias"]))])
    cases = {
        tmp_path / "missing.npz": "does not exist",
        tmp_path: "directory",
        (tmp_path / "empty.npz", b""): "empty|zip|npz",
        (tmp_path / "text.npz", b"not a zip at all"): "zip|npz",
        (tmp_path / "truncated.npz", data[: len(data) // 2]): "zip|npz|truncated",
        (tmp_path / "cut-end.npz", data[:-10]): "zip|npz|truncated",
        npy: "zip|npz",
        _zip(tmp_path / "raw-member.npz", {"header": b'{"format": "allfives-policy"}'}): "header|npy",
        _zip(tmp_path / "not-npy.npz", {"header.npy": b"garbage garbage garbage"}): "header|npy",
        dup: "action_bias.*(twice|duplicate)",
    }
    for case, match in cases.items():
        if isinstance(case, tuple):
            case[0].write_bytes(case[1])
            case = case[0]
        with pytest.raises(PolicyError, match=match) as info:
            load_policy(case)
        assert str(case) in str(info.value), (case, info.value)


def test_special_and_oversized_files_are_refused_without_reading(tmp_path: Path) -> None:
    """A named pipe must not block the loader (opening one for reading waits for a writer), a device is not
    a policy file, and a file far larger than any policy is refused before its zip directory is parsed."""
    fifo = tmp_path / "pipe.npz"
    os.mkfifo(fifo)
    previous = signal.signal(signal.SIGALRM, lambda *_: pytest.fail("load_policy blocked on a named pipe"))
    signal.alarm(10)
    try:
        for path in (fifo, Path("/dev/zero")):
            for read in (load_policy, read_policy_header):
                with pytest.raises(PolicyError, match="not a regular file") as info:
                    read(path)
                assert str(path) in str(info.value)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    huge = tmp_path / "huge.npz"
    with open(huge, "wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(PolicyError, match="larger than"):
        load_policy(huge)


def test_a_lying_array_header_is_refused_before_the_data_is_read(tmp_path: Path, valid: Path) -> None:
    """An .npy member that declares a huge shape (a zip bomb, or a tiny truncated file)."""
    header, arrays = _read(valid)
    members = {f"{k}.npy": _npy(v) for k, v in arrays.items()}
    members["header.npy"] = _npy(np.frombuffer(json.dumps(header).encode(), np.uint8))
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f4", "fortran_order": False, "shape": (10 ** 11,)})
    fake = buf.getvalue() + b"\0" * 16
    for name in ("hidden_0_bias.npy", "header.npy"):
        path = _zip(tmp_path / f"lying-{name}.npz", {**members, name: fake})
        with pytest.raises(PolicyError, match=name.removesuffix(".npy")):
            load_policy(path)


@pytest.mark.parametrize("path, match", [
    (None, "path"), (5, "path"), (["a.npz"], "path"), ("a\0b.npz", "path|null"), ("", "path"),
])
def test_paths_that_are_not_paths_are_refused(path: Any, match: str) -> None:
    with pytest.raises(PolicyError, match=match):
        load_policy(path)
    with pytest.raises(PolicyError, match=match):
        read_policy_header(path)


@pytest.mark.parametrize("params, match", [
    ({"path": 123}, "path"), ({"path": {"a": 1}}, "path"), ({"path": True}, "path"),
    ({"temperature": math.inf}, "temperature"), ({"temperature": math.nan}, "temperature"),
    ({"temperature": "hot"}, "temperature"), ({"sample": "maybe"}, "sample"),
])
def test_ppo_agent_parameters_are_checked(valid: Path, params: dict, match: str) -> None:
    with pytest.raises(PolicyError, match=match):
        PolicyAgent(**{"path": str(valid), **params})


# ---------------------------------------------------------------------------------------------- what loads, plays
@pytest.mark.parametrize("activation, params", [
    ("tanh", {}), ("relu", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {"alpha": 0.5}), ("silu", {}),
    ("sigmoid", {}), ("identity", {}),
])
def test_a_valid_file_plays_whole_games(tmp_path: Path, activation: str, params: dict) -> None:
    for scorer in (False, True):
        path = _random_file(tmp_path / f"{activation}-{scorer}.npz", scorer=scorer, activation=activation,
                            params=params)
        load_policy(path, RULES)
        for sample in (False, True):
            agents = [make_agent("ppo", seed=0, path=str(path), sample=sample), make_agent("greedy", seed=1)]
            result = play_game(RULES, agents, seed=3)
            assert result.decisions[0] > 0


def test_sampling_at_extreme_temperatures_plays(valid: Path) -> None:
    """A tiny temperature must not turn the softmax into NaN in the middle of a game."""
    for temperature in (1e-300, 5e-324, 1e300):
        agents = [make_agent("ppo", seed=0, path=str(valid), sample=True, temperature=temperature),
                  make_agent("random", seed=1)]
        assert play_game(RULES, agents, seed=1).decisions[0] > 0


def test_older_and_wider_files_are_accepted(tmp_path: Path, plain: Path, valid: Path) -> None:
    """Accepted on purpose: headers of earlier exports (no action_features / action_scorer / activation_params
    / algorithm / metadata), rules given in part (the rest are the defaults, checked against obs_size),
    and weights in any real float type that float32 holds (they are played as float32)."""
    header, arrays = _read(plain)
    for key in ("action_features", "action_scorer", "activation_params", "algorithm", "metadata"):
        header.pop(key)
    header["rules"] = {"num_players": 2}
    old = load_policy(_write(tmp_path / "old.npz", header, arrays), RULES)
    assert old.rules == RULES.to_dict() and old.action_features is False
    header, arrays = _read(valid)
    ref = load_policy(valid)
    obs = np.random.default_rng(0).uniform(0, 1, (5, ref.obs_size)).astype(np.float32)
    for dtype in (np.float64, np.float16, ">f4"):
        wide = load_policy(_write(tmp_path / f"{np.dtype(dtype).str}.npz", header,
                                  {k: v.astype(dtype) for k, v in arrays.items()}))
        np.testing.assert_allclose(wide.logits(obs), ref.logits(obs), rtol=0.05, atol=0.05)


def test_compressed_and_fortran_order_archives_load_the_same(tmp_path: Path, valid: Path) -> None:
    header, arrays = _read(valid)
    raw = np.frombuffer(json.dumps(header).encode(), np.uint8)
    np.savez_compressed(tmp_path / "z.npz", header=raw, **{k: np.asfortranarray(v) for k, v in arrays.items()})
    a, b = load_policy(tmp_path / "z.npz"), load_policy(valid)
    assert all(np.array_equal(x, y) for x, y in zip(a.layers[0] + a.action + a.scorer[0], b.layers[0] + b.action
                                                    + b.scorer[0]))


def test_writing_refuses_what_would_not_load(tmp_path: Path) -> None:
    enc = ObservationEncoder(RULES)
    w, b = np.ones((4, enc.size), np.float32), np.zeros(4, np.float32)
    head = (np.zeros((enc.num_actions, 4), np.float32), np.zeros(enc.num_actions, np.float32))
    args = (RULES, [(w, b)], head, "tanh", {}, (enc.size,), enc.num_actions)
    write_policy_file(tmp_path / "ok.npz", *args)
    w[0, 0] = 2.0  # the caller's arrays stay the caller's: writable
    for name, change, match in [
        ("nan", lambda a: (RULES, [(np.full_like(w, np.nan), b)], *a[2:]), "hidden_0_weight.*finite"),
        ("param", lambda a: (*a[:4], {"alpha": 2.0}, *a[5:]), "activation_params"),
        ("bias", lambda a: (RULES, [(w, np.float32(0))], *a[2:]), "bias|pairs"),
        ("rules", lambda a: ("default", *a[1:]), "rules"),
        ("activation", lambda a: (*a[:3], ["tanh"], *a[4:]), "activation"),
    ]:
        with pytest.raises(PolicyError, match=match):
            write_policy_file(tmp_path / f"{name}.npz", *change(args))
        assert not (tmp_path / f"{name}.npz").exists()
    with pytest.raises(PolicyError, match="metadata"):
        write_policy_file(tmp_path / "meta.npz", *args, metadata={"x": object()})


def test_numpy_policy_checks_what_it_is_built_from(valid: Path) -> None:
    header, arrays = _read(valid)
    def pair(prefix: str) -> tuple[np.ndarray, np.ndarray]:
        return arrays[f"{prefix}_weight"], arrays[f"{prefix}_bias"]

    layers, action, scorer = [pair("hidden_0"), pair("hidden_1")], pair("action"), [pair("scorer_0"), pair("scorer_1")]
    NumpyPolicy(header, layers, action, scorer=scorer)
    for args, match in [
        ((header, layers[:1], action), "hidden"),
        ((header, layers, action), "scorer"),
        ((header, layers, action[0]), "pair"),
        ((header, 5, action), "pairs"),
        ((header, [(["x"], "y"), layers[1]], action), "hidden_0_weight"),
        (({**header, "hidden": "8"}, layers, action), "hidden"),
        (([], layers, action), "object|format"),
    ]:
        with pytest.raises(PolicyError, match=match):
            NumpyPolicy(*args, scorer=scorer if match != "scorer" else ())


def test_the_loaded_arrays_are_the_files(valid: Path) -> None:
    header, arrays = _read(valid)
    policy = load_policy(valid)
    loaded = [w for pair in policy.layers + [policy.action] + policy.scorer for w in pair]
    names = ["hidden_0_weight", "hidden_0_bias", "hidden_1_weight", "hidden_1_bias", "action_weight", "action_bias",
             "scorer_0_weight", "scorer_0_bias", "scorer_1_weight", "scorer_1_bias"]
    assert len(loaded) == len(names) and all(np.array_equal(a, arrays[n]) for a, n in zip(loaded, names))


# ---------------------------------------------------------------------------------------------- the policy's API
@pytest.mark.filterwarnings("error")  # refused with a PolicyError, not warned about on the way
def test_bad_observations_masks_and_rules_are_refused(valid: Path) -> None:
    policy = load_policy(valid)
    obs = np.zeros(policy.obs_size, np.float32)
    mask = np.ones(policy.num_actions, bool)
    for bad in (np.float32(0), np.zeros(5), np.zeros((3, 5)), ["a"] * policy.obs_size,
                np.full(policy.obs_size, np.nan), np.full(policy.obs_size, 1e300), None, "obs"):
        with pytest.raises(PolicyError, match="observation"):
            policy.logits(bad)
    for bad_mask in (np.ones(3, bool), np.zeros(policy.num_actions, bool), None):
        with pytest.raises(PolicyError, match="mask"):
            policy.predict(obs, bad_mask)
    assert policy.predict(obs, mask) in range(policy.num_actions)
    for bad_rules in (None, "default", 5, [("num_players", 2)]):
        with pytest.raises(PolicyError, match="rules"):
            policy.check_rules(bad_rules)


def test_loaded_policies_are_read_only(valid: Path) -> None:
    policy = load_policy(valid)
    with pytest.raises(ValueError):
        policy.layers[0][0][0, 0] = 1.0


# ---------------------------------------------------------------------------------------------- properties
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_KEYS = ["format", "version", "obs_layout_version", "obs_size", "num_actions", "action_features", "action_scorer",
         "rules", "activation", "activation_params", "hidden", "algorithm", "metadata"]
_ARRAY_NAMES = ["hidden_0_weight", "hidden_0_bias", "hidden_1_weight", "hidden_1_bias", "action_weight",
                "action_bias", "scorer_0_weight", "scorer_0_bias", "scorer_1_weight", "scorer_1_bias", "hidden_2_bias"]
_DTYPES = ["f4", "f8", "f2", ">f4", "i4", "u1", "c8", "?", "U2", "V4"]


@st.composite
def _arrays_like(draw: Any) -> np.ndarray:
    dtype = np.dtype(draw(st.sampled_from(_DTYPES)))
    shape = tuple(draw(st.lists(st.integers(0, 5), max_size=3)))
    raw = draw(st.binary(min_size=dtype.itemsize * math.prod(shape), max_size=dtype.itemsize * math.prod(shape)))
    return np.frombuffer(raw, dtype=dtype).reshape(shape) if dtype.kind != "V" else np.zeros(shape, dtype)


@st.composite
def _garbage(draw: Any) -> tuple[Any, dict[str, np.ndarray]]:
    header, arrays = json.loads(json.dumps(_BASE[0])), dict(_BASE[1])
    kind = draw(st.sampled_from(["json", "bytes", "field", "drop", "extra", "scorer", "array", "value", "rules"]))
    if kind == "json":
        header = draw(_json)
    elif kind == "bytes":
        header = draw(st.binary(max_size=64))
    elif kind == "field":
        header[draw(st.sampled_from(_KEYS))] = draw(_json)
    elif kind == "drop":
        header.pop(draw(st.sampled_from(_KEYS)))
    elif kind == "extra":
        header[draw(st.text(max_size=8))] = draw(_json)
    elif kind == "scorer":
        header["action_scorer"][draw(st.sampled_from(["offset", "placements", "features", "hidden", "x"]))] = draw(
            _json | st.integers(-3, 2000))
    elif kind == "rules":
        header["rules"][draw(st.sampled_from(sorted(RULES.to_dict()) + ["x"]))] = draw(_json)
    elif kind == "array":
        name = draw(st.sampled_from(_ARRAY_NAMES))
        if draw(st.booleans()) and name in arrays:
            del arrays[name]
        else:
            arrays[name] = draw(_arrays_like())
    else:
        name = draw(st.sampled_from(_ARRAY_NAMES[:-1]))
        a = arrays[name].copy()
        a.flat[draw(st.integers(0, a.size - 1))] = draw(st.floats(width=32) | st.sampled_from([3e38, -3e38, 1e20]))
        arrays[name] = a
    return header, arrays


_BASE: list[Any] = []
_COUNTER = itertools.count()


@pytest.fixture(scope="module")
def garbage_dir(tmp_path_factory: pytest.TempPathFactory, valid: Path) -> Path:
    _BASE[:] = _read(valid)
    return tmp_path_factory.mktemp("garbage")


@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_file_loads_whole_or_fails_with_an_allfives_error(garbage_dir: Path, data: st.DataObject) -> None:
    header, arrays = data.draw(_garbage())
    path = _write(garbage_dir / f"g{next(_COUNTER)}.npz", header, arrays)  # new names: no cache hits
    try:
        policy = load_policy(path)
    except AllFivesError:
        return
    rules = Rules.from_options(policy.rules)
    game = Game(rules, 0)
    enc = ObservationEncoder(rules, policy.action_features)
    logits = policy.logits(enc.encode(game, game.current))
    assert logits.shape == (policy.num_actions,) and np.isfinite(logits).all()
    agent = PolicyAgent(path=str(path), sample=True)
    assert agent.act(PlayerView(game, game.current)) in game.legal
