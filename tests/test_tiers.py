"""The two tiers: `pytest` runs the fast tests, `pytest -m slow` the ones that start processes,
send signals or run for seconds (tests/conftest.py marks them)."""

from __future__ import annotations

import tomllib

from . import test_fuzz, test_identity, test_identity_processes
from .conftest import ROOT, SLOW_TESTS, starts_processes


def test_a_test_starting_a_process_through_a_helper_is_found():
    assert starts_processes(
        test_identity_processes.test_a_parse_on_two_processes_stops_at_once,  # via _slow_parse
        test_identity_processes,
    )
    assert starts_processes(  # through _bounded, another function of its module
        test_fuzz.test_warm_commands_over_10k_papers_return_within_10_seconds, test_fuzz
    )


def test_a_test_in_process_is_not_taken_for_one_starting_processes():
    assert not starts_processes(test_identity.test_particles_stay_in_surnames, test_identity)


def test_the_default_run_leaves_the_slow_tier_out():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "-m 'not slow'" in config["tool"]["pytest"]["ini_options"]["addopts"]


def test_every_test_listed_as_slow_exists():
    for name in SLOW_TESTS:
        module, function = name.split("::")
        source = (ROOT / "tests" / module).read_text(encoding="utf-8")
        assert f"def {function}(" in source, name
