"""The option table (``allfives_env/core/options.py``) is the one list of rules options, and what it says holds.

``Rules``' fields, its checks, the rule sampler, the OpenSpiel parameters and the batch engine's encodings
are all read from the table, so these tests take their cases from it too: a new option is checked the day it
is added -- accepted over its whole domain and refused outside it, drawn by ``random_rules``, spelled as a
``python_allfives`` parameter and played by OpenSpiel's ``random_sim_test``, and refused by the batch
engine until the batch engine encodes it (``tests/test_batch_coverage.py`` then plays every value on games that
meet it, against the core).
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np
import pytest

from allfives_env.batch import BatchGame
from allfives_env.batch import layout
from allfives_env.core import Rules, RulesError
from allfives_env.core.errors import BatchError
from allfives_env.core.options import OPTION, OPTIONS, Option
from allfives_env.openspiel.params import DEFAULTS, make_config, max_hands_limit, param_value, rules_params
from allfives_env.rule_sampler import random_rules

CONTEXT = Rules()
#: Every (option, value-case) of the table: each choice, both switch values, integers at their bounds.
CASES = [(o.name, case) for o in OPTIONS for case in o.cases(CONTEXT)]


def case_id(item: Any) -> str:
    return ",".join(f"{k}={v}" for k, v in item.items()) if isinstance(item, dict) else str(item)


def outside(o: Option) -> list[Any]:
    """Values just outside the option's domain under the default rules."""
    if o.kind == "switch":
        return ["yes", 1]
    if o.kind == "choice":
        return [max(o.choices) + 1] if isinstance(o.choices[0], int) else ["no_such_" + o.name, 1]
    return [o.low - 1, "many", o.high(CONTEXT) + 1]


def test_rules_fields_are_the_table_and_defaults_resolve_as_it_says() -> None:
    assert [f.name for f in fields(Rules)] == [o.name for o in OPTIONS]
    for o in OPTIONS:
        expected = o.auto(CONTEXT) if o.default is None and o.auto else o.default
        assert getattr(CONTEXT, o.name) == expected, o.name
        assert o.doc and o.kind in ("choice", "switch", "count"), o.name
        assert (o.auto is not None) <= bool(o.none_means), o.name  # an "auto" value is documented


@pytest.mark.parametrize("name, case", CASES, ids=[f"{n}:{case_id(c)}" for n, c in CASES])
def test_every_value_of_the_domain_is_accepted(name: str, case: dict) -> None:
    rules = Rules.from_options(case)
    assert Rules(**rules.to_dict()) == rules
    value = case[name]
    if value is not None and not (OPTION[name].presets and value in OPTION[name].presets):
        assert getattr(rules, name) == value


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.name)
def test_values_outside_the_domain_are_refused_naming_the_option(option: Option) -> None:
    for value in outside(option):
        with pytest.raises(RulesError, match=option.name):
            Rules.from_options({option.name: value})


def test_the_sampler_draws_every_option_over_its_sample_values() -> None:
    rng = np.random.default_rng(0)
    drawn = [random_rules(rng) for _ in range(400)]
    for o in OPTIONS:
        seen = {getattr(r, o.name) for r in drawn}
        wanted = len(set(o.sample.values)) + (1 if o.sample.chance else 0)
        assert len(seen) >= min(2, wanted), f"random_rules never varies {o.name}: {seen}"
        if o.kind != "count" and not o.none_means:
            assert seen == set(o.sample.values), o.name


def openspiel_cases() -> list[dict]:
    """Every table value that ``python_allfives`` offers: not ``max_hands=None`` (OpenSpiel needs a finite
    game), nor more hands than a 32-bit history holds (:func:`max_hands_limit`: refused, see below)."""
    return [case for name, case in CASES if OPTION[name].openspiel is not None and not (
        name == "max_hands" and (case[name] is None or case[name] > max_hands_limit(Rules.from_options(case))))]


def test_openspiel_parameters_come_from_the_table_and_round_trip() -> None:
    params = [o.openspiel.name for o in OPTIONS if o.openspiel is not None]
    assert list(DEFAULTS)[:len(params)] == params
    assert set(DEFAULTS) - set(params) == {"episode", "returns", "point_scale", "scores", "scored"}
    for o in OPTIONS:
        if o.openspiel is None:  # no parameter: OpenSpiel plays the default only, so there may be no other
            assert o.values(CONTEXT) == [o.default], f"{o.name} has other values but no OpenSpiel parameter"
    for case in openspiel_cases():
        rules = Rules.from_options(case)
        assert make_config(rules_params(rules)).rules == rules, case
    longest = Rules.from_options({"max_hands": OPTION["max_hands"].high(CONTEXT)})
    with pytest.raises(RulesError, match=r"parameter max_hands=\d+ is not allowed: give 1 to \d+"):
        make_config(rules_params(longest))


@pytest.mark.parametrize("case", openspiel_cases(), ids=case_id)
def test_every_value_passes_openspiels_random_sim_test(case: dict) -> None:
    pyspiel = pytest.importorskip("pyspiel")
    import allfives_env.openspiel  # noqa: F401  (registers python_allfives)

    rules = Rules.from_options(case)
    params: dict[str, Any] = {"max_hands": 2}
    for name, value in case.items():  # a preset name is spelled as the size it stands for; None as "auto" or 0
        option = OPTION[name]
        spelled = param_value(option, getattr(rules, name) if value in option.presets else value)
        params[option.openspiel.name] = spelled  # type: ignore[union-attr]
    pyspiel.random_sim_test(pyspiel.load_game("python_allfives", params), num_sims=1, serialize=False,
                            verbose=False)


def test_the_batch_engine_refuses_an_option_it_has_no_encoding_for(monkeypatch: pytest.MonkeyPatch) -> None:
    encoders = dict(layout.ENCODERS)
    del encoders["lead_scores"]
    monkeypatch.setattr(layout, "ENCODERS", encoders)
    with pytest.raises(BatchError, match=r"no encoding for rules option\(s\) \['lead_scores'\]"):
        BatchGame(Rules(), 1, seed=0)


def test_the_batch_engine_refuses_a_value_it_does_not_play(monkeypatch: pytest.MonkeyPatch) -> None:
    encoders = dict(layout.ENCODERS, rounding=layout.choice("nearest", "down"))
    monkeypatch.setattr(layout, "ENCODERS", encoders)
    layout.rules_vector(Rules(rounding="down"))
    with pytest.raises(BatchError, match=r"rounding='none' is not played by the batch engine"):
        BatchGame(Rules(rounding="none"), 1, seed=0)
