"""Derived titles (issue 11): never an ellipsis or a cut word, at most 200 characters, cut at a
clause boundary; marked as derived in records and exports, and easy to find."""

from __future__ import annotations

import json
import random
import warnings

import pytest
import yaml

from rlpapers.parse import parse_file, parse_text
from rlpapers.parse.names import MAX_TITLE, cut_at_clause
from rlpapers.parse.titles import derive_title, title_problems

from .conftest import SEEDS, run


def _seed_papers():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [paper for path in sorted(SEEDS.glob("*.txt")) for paper in parse_file(path)]


@pytest.mark.parametrize("paper", _seed_papers(), ids=lambda p: p.id)
def test_every_bundled_title_is_whole(paper):
    assert paper.title_derived
    assert title_problems(paper.title, paper.abstract) == []


def test_the_checker_catches_what_the_issue_saw():
    abstract = "We propose RL4RLA, a framework for the discovery of interpretable algorithms."
    assert title_problems("RL4RLA: Framework for the discovery of interpr", abstract)
    assert title_problems("RL4RLA: Framework for the discovery of…", abstract)
    assert title_problems("RL4RLA: Framework for the discovery of", abstract)
    assert title_problems("x" * 201, abstract + " " + "x" * 201)
    assert title_problems("RL4RLA: Framework for the discovery", abstract) == []


def test_long_phrases_are_cut_before_a_clause():
    words = "concurrency-aware speculative decoding framework that dynamically adjusts the drafting and verification strategy according to real-time concurrency levels".split()
    assert cut_at_clause(words, 14) == "concurrency-aware speculative decoding framework".split()
    words = "reinforcement learning–based GUI-VG method built on a systematic empirical study and a novel stabilization technique".split()
    assert cut_at_clause(words, 14) == "reinforcement learning–based GUI-VG method".split()
    words = "training paradigm, which first employs warm-up supervised fine-tuning to help models distinguish between them".split()
    assert cut_at_clause(words, 14) == ["training", "paradigm,"]


def test_a_phrase_without_any_boundary_is_cut_between_words():
    rng = random.Random(7)
    vocab = ["policy", "gradient", "estimator", "variance", "entropy", "reward", "critic"]
    for _ in range(50):
        run_on = " ".join(rng.choice(vocab) for _ in range(rng.randint(20, 80)))
        abstract = f"We propose ZapRL, a {run_on}. It works."
        name, title = derive_title(abstract)
        assert name == "ZapRL" and title.startswith("ZapRL: ")
        assert title_problems(title, abstract) == [], title


def test_a_very_long_description_stays_under_the_limit():
    expansion = " ".join(f"Word{i}" for i in range(60))
    abstract = f"We propose LongNameRL ({expansion}), which works. It is good."
    _, title = derive_title(abstract)
    assert len(title) <= MAX_TITLE and title_problems(title, abstract) == []


def test_derived_titles_are_marked_and_found(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text(
        "qerl:\n  title: 'QeRL: Beyond Efficiency'\n", encoding="utf-8"
    )
    records = {
        r["key"]: r for r in json.loads(run("--corpus", seeds_copy, "list", "-f", "json").stdout)
    }
    assert records["qerl"]["title_derived"] is False
    assert records["pcl"]["title_derived"] is True
    derived = run("--corpus", seeds_copy, "list", "--derived-titles", "-f", "ids").stdout.split()
    assert len(derived) == 39 and records["qerl"]["id"] not in derived
    assert yaml.safe_load(run("--corpus", seeds_copy, "show", "pcl", "-f", "yaml").stdout)[0][
        "title_derived"
    ]


def test_exports_say_the_title_was_derived(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text(
        "qerl:\n  title: 'QeRL: Beyond Efficiency'\n  note: Read it\n", encoding="utf-8"
    )

    def export(key, fmt):
        return run("--corpus", seeds_copy, "export", "--ids", "-", "-f", fmt, input=key).stdout

    assert "Title derived from the abstract" in export("pcl", "bibtex")
    assert "Title derived from the abstract" not in export("qerl", "bibtex")
    assert "note = {Read it. Abstract from" in export("qerl", "bibtex")
    assert json.loads(export("pcl", "csljson"))[0]["note"] == "Title derived from the abstract"
    assert json.loads(export("qerl", "csljson"))[0]["note"] == "Read it"
    assert "N1  - Title derived from the abstract" in export("pcl", "ris")
    assert "N1  - Title derived from the abstract" not in export("qerl", "ris")


def test_a_parsed_record_says_its_title_is_derived():
    (paper,) = parse_text("Topic\n\nWe propose FooRL, a method for foo. It works.\n")
    assert paper.title_derived and paper.to_dict()["title_derived"] is True


def test_a_new_parser_version_rederives_stored_titles(tmp_path, monkeypatch):
    import rlpapers.parse as parse
    import rlpapers.parse.titles as titles
    import rlpapers.store as store
    import rlpapers.store.refresh as refresh
    from rlpapers.library import Library

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.txt").write_text("Topic\n\nWe propose FooRL, a method for foo. It works.\n")
    real = titles.derive_title
    monkeypatch.setattr(titles, "derive_title", lambda abstract: ("FooRL", "FooRL: old guess…"))
    assert Library([corpus], tmp_path / "ix").papers[0].title == "FooRL: old guess…"
    monkeypatch.setattr(titles, "derive_title", real)
    for module in (parse, store, refresh):
        monkeypatch.setattr(module, "PARSER_VERSION", parse.PARSER_VERSION + "-next")
    assert Library([corpus], tmp_path / "ix").papers[0].title == "FooRL: Method for foo"
