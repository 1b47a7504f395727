"""Re-keying on request: what ``keys --rederive`` proposes, and old keys in queries."""

from __future__ import annotations

from rlpapers.key_format import parse_format
from rlpapers.model import Paper
from rlpapers.old_keys import Rekey, proposals, with_current_keys


def _paper(pid: str, key: str, **fields: object) -> Paper:
    return Paper(**{"id": pid, "abstract": "a", "key": key, **fields})  # type: ignore[arg-type]


def test_proposals_skip_pinned_papers_and_keys_already_right():
    papers = [
        _paper("p1", "cheng_minimal", title="Reasoning with Exploration", authors=("D Cheng",),
               year=2025),
        _paper("p2", "zhan2025tecrl", name="TECRL", authors=("G Zhan",), year=2025),
        _paper("p3", "mine", title="Pinned work", authors=("A Lee",), year=2024),
    ]  # fmt: skip
    found = proposals(papers, {"p3"}, lambda key: None)
    assert found == [Rekey("p1", "cheng_minimal", "cheng2025reasoning")]


def test_a_new_key_never_takes_one_another_paper_holds_or_held():
    held = {"cheng2025reasoning": "other", "cheng2025reasoningb": "p1"}
    paper = _paper("p1", "cheng_minimal", title="Reasoning", authors=("D Cheng",), year=2025)
    twin = _paper("p2", "cheng_x", title="Reasoning", authors=("D Cheng",), year=2025)
    found = proposals([paper, twin], set(), held.get)
    # p1 takes back a key it once held; p2 takes the next free one
    assert found == [
        Rekey("p1", "cheng_minimal", "cheng2025reasoningb"),
        Rekey("p2", "cheng_x", "cheng2025reasoningc"),
    ]


def test_proposals_follow_a_users_format():
    paper = _paper("p1", "cheng_minimal", title="Reasoning", authors=("D Cheng",), year=2025)
    found = proposals([paper], set(), lambda key: None, parse_format("{auth}:{year}"))
    assert found == [Rekey("p1", "cheng_minimal", "cheng:2025")]


def test_old_keys_in_a_query_become_current_keys():
    current = {"cheng_minimal": "cheng2025reasoning"}.get
    assert with_current_keys("key:cheng_minimal", current) == "key:cheng2025reasoning"
    assert with_current_keys("entropy -KEY:cheng_minimal", current) == (
        "entropy -KEY:cheng2025reasoning"
    )
    assert with_current_keys("(key:cheng_minimal OR x)", current) == (
        "(key:cheng2025reasoning OR x)"
    )
    for kept in ("key:cheng_min*", "title:cheng_minimal", "key:other", 'key:"cheng_minimal"'):
        assert with_current_keys(kept, current) == kept
