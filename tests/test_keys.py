"""The key rule and the key format language: what a paper's first key looks like."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlpapers import Library
from rlpapers.key_format import KeyFormatError, parse_format
from rlpapers.key_words import AVOIDED
from rlpapers.keys import SAFE_KEY, base_key, title_word
from rlpapers.model import Paper
from rlpapers.parse import paper_id

from .conftest import run


def _paper(**fields: object) -> Paper:
    return Paper(**{"id": "x", "abstract": "a", **fields})  # type: ignore[arg-type]


CHENG = _paper(
    title="Reasoning with Exploration: An Entropy Perspective",
    authors=("Daixuan Cheng", "Shaohan Huang"),
    year=2025,
)


# --- the default rule ----------------------------------------------------------------------------


def test_a_year_gives_surname_year_word_as_better_bibtex_writes_it():
    assert base_key(CHENG) == "cheng2025reasoning"
    tecrl = _paper(name="TECRL", title="TECRL: Trajectory", authors=("Guojian Zhan",), year=2025)
    assert base_key(tecrl) == "zhan2025tecrl"


def test_without_a_year_the_key_stays_surname_underscore_word():
    assert base_key(_paper(name="TECRL", authors=("Guojian Zhan",))) == "zhan_tecrl"
    assert base_key(CHENG.with_changes(year=None)) == "cheng_reasoning"


def test_a_derived_title_also_skips_generic_words():
    derived = CHENG.with_changes(title_derived=True)
    assert base_key(derived) == "cheng2025entropy"  # reasoning, exploration: the field's words


def test_the_real_title_wins_over_the_derived_one_which_is_the_fallback():
    paper = _paper(title="On the", authors=("Ann Lee",), year=2024)
    assert base_key(paper, derived="Framework that improves sparsification") == (
        "lee2024sparsification"
    )


@pytest.mark.parametrize(
    "title",
    [
        "Firstly, the method has recent gains",
        "This paper can propose novel results",
        "We show that it has been done",
    ],
)
def test_a_key_never_ends_in_a_listed_word(title):
    key = base_key(_paper(title=title, authors=("Wei Wang",), title_derived=True))
    assert not any(key.endswith(word) for word in AVOIDED if len(word) > 2), key


def test_a_name_is_never_cut_inside_a_word():
    paper = _paper(name="Group Relative Policy Optimization", authors=("A. Stoisser",))
    assert base_key(paper) == "stoisser_grouprelativepolicy"
    long = _paper(title="Generative-adversarial-reasoning-networks win", authors=("Bo Liu",))
    assert base_key(long) == "liu_generative"  # a compound too long to keep whole: its parts


def test_papers_without_authors_take_two_distinctive_title_words_around_the_year():
    paper = _paper(title="Eigenvalues under perturbations of matrices", title_derived=True)
    assert base_key(paper) == "eigenvaluesperturbations"
    assert base_key(paper.with_changes(year=2025)) == "eigenvalues2025perturbations"
    assert base_key(_paper(name="QeRL", title="QeRL: Quantization")) == "qerl"


def test_a_paper_with_nothing_to_go_by_gets_a_safe_key():
    assert base_key(_paper()) == "untitled"
    assert base_key(_paper(authors=("Ann Lee",), year=2020)) == "lee2020untitled"


def test_titles_never_give_a_listed_word():
    assert title_word("Firstly, we can show the paper has merit") == "merit"
    assert title_word("Recent novel approach") == ""  # one content word, and generic


# --- the format language -------------------------------------------------------------------------


def test_a_format_renders_fields_and_literal_text_lower_case():
    fmt = parse_format("{auth}{year}{title:1}")
    assert fmt.render(CHENG) == "cheng2025reasoning"
    assert parse_format("{auth}_{title:2}").render(CHENG) == "cheng_reasoningexploration"
    assert parse_format("Ref-{auth}.{year}").render(CHENG) == "ref-cheng.2025"
    named = CHENG.with_changes(name="Entropy-RL")
    assert parse_format("{auth}:{name}").render(named) == "cheng:entropyrl"
    assert parse_format("{auth}:{word}").render(named) == "cheng:entropyrl"


def test_a_format_output_is_ascii_and_bibtex_safe():
    paper = _paper(title="Über Straße", authors=("Zoë Ångström",), year=2021)
    for text in ("{auth}{year}{title:1}", "_{name}{auth}", "{name}", "{year}-{title:3}"):
        key = parse_format(text).render(paper)
        assert SAFE_KEY.fullmatch(key) and key == key.lower() and key.isascii(), (text, key)
    assert parse_format("_{auth}").render(paper) == "angstrom"


def test_a_format_that_gives_nothing_falls_back_to_the_default_rule():
    assert parse_format("{name}").render(CHENG) == "cheng2025reasoning"


@pytest.mark.parametrize(
    ("text", "position", "words"),
    [
        ("{auth}{year", 7, "never closed"),
        ("{auth}}", 7, "closes nothing"),
        ("{author}{year}", 1, "unknown field"),
        ("{auth} {year}", 7, "cannot be in a citation key"),
        ("{auth}{title:0}", 14, "from 1 to 9"),
        ("{auth}{title:x}", 14, "from 1 to 9"),
        ("{year:2}", 6, "takes no"),
        ("paper", 5, "at least one field"),
        ("", 1, "at least one field"),
        ("{auth}{ti{tle}", 10, "inside a field"),
        ("{auth}%", 7, "cannot be in a citation key"),
    ],
)
def test_a_bad_format_names_the_position(text, position, words):
    with pytest.raises(KeyFormatError) as caught:
        parse_format(text)
    assert caught.value.position == position
    assert words in str(caught.value) and f"at character {position}" in str(caught.value)


# --- first sight: metadata that names a paper by id ----------------------------------------------

ABSTRACT = (
    "We study minimal policies for sparse-reward control and show that a small entropy bonus "
    "suffices across many benchmark tasks with strong empirical results in every setting."
)


def _corpus(tmp_path: Path, metadata: str | None) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "a.txt").write_text(f"Papers\n\nDaixuan Cheng\n\n{ABSTRACT}\n", encoding="utf-8")
    if metadata is not None:
        (corpus / "metadata.yaml").write_text(metadata, encoding="utf-8")
    return corpus


def _only_key(corpus: Path) -> str:
    with Library([corpus]) as lib:
        (paper,) = lib.papers
        return paper.key


def test_id_addressed_metadata_gives_the_first_key_its_title_and_year(tmp_path):
    pid = paper_id(ABSTRACT)
    title = "Reasoning with Exploration: An Entropy Perspective"
    corpus = _corpus(tmp_path, f"{pid}:\n  title: '{title}'\n  year: 2025\n")
    assert _only_key(corpus) == "cheng2025reasoning"


def test_metadata_added_later_never_moves_a_key(tmp_path):
    corpus = _corpus(tmp_path, None)
    before = _only_key(corpus)
    assert before.startswith("cheng_")
    pid = paper_id(ABSTRACT)
    _corpus(tmp_path, f"{pid}:\n  title: 'Reasoning with Exploration'\n  year: 2025\n")
    assert _only_key(corpus) == before


def test_a_compound_drops_an_ending_that_fits_any_paper():
    paper = _paper(title="VLM-based: object state segmentation", authors=("A Mandikal",))
    assert base_key(paper.with_changes(name="VLM-based")) == "mandikal_vlm"
    assert base_key(paper.with_changes(title_derived=True)) == "mandikal_vlm"


def test_a_derived_title_with_no_word_falls_back_to_the_abstract():
    paper = _paper(
        title="In this paper",
        title_derived=True,
        authors=("Ann Mandal",),
        abstract="In this paper we study sparsification of transformers.",
    )
    assert base_key(paper) == "mandal_sparsification"


def test_the_config_sets_a_format_and_a_bad_one_names_the_file_line_and_position(tmp_path):
    from rlpapers.config import _key_format as format_from_config
    from rlpapers.errors import ParseError

    config = tmp_path / "config.yaml"
    config.write_text('keys:\n  format: "{auth}{year}{title:1}"\n', encoding="utf-8")
    assert format_from_config({"keys": {"format": "{auth}{year}{title:1}"}}, config) is not None
    assert format_from_config({}, config) is None
    bad = {"keys": {"format": "{auth}{yeer}"}}
    with pytest.raises(ParseError) as caught:
        format_from_config(bad, config)
    assert f"{config}:1:" in str(caught.value) and "at character 7" in str(caught.value)
    for section in ({"keys": {"fmt": "x"}}, {"keys": "{auth}"}, {"keys": {"format": 3}}):
        with pytest.raises(ParseError):
            format_from_config(section, config)


# --- the format in the config --------------------------------------------------------------------


def _config(text: str) -> None:
    Path(os.environ["RLPAPERS_CONFIG"]).write_text(text, encoding="utf-8")


def test_a_configured_format_keys_papers_first_seen_after_it_and_moves_no_key(tmp_path):
    corpus = _corpus(tmp_path, None)
    before = _only_key(corpus)
    _config('keys:\n  format: "Ref-{auth}{title:2}"\n')
    assert _only_key(corpus) == before  # existing keys never move
    other = corpus / "b.txt"
    other.write_text(
        "Papers\n\nAda Lovelace\n\nWe propose sparsification of attention maps for long "
        "sequences and show gains on many benchmark tasks with strong empirical results.\n",
        encoding="utf-8",
    )
    with Library([corpus]) as lib:
        keys = {p.key for p in lib.papers}
    assert keys == {before, "ref-lovelacesparsificationattention"}


def test_a_bad_configured_format_is_exit_2_naming_the_file_line_and_position(tmp_path):
    _config('search:\n  mode: lexical\nkeys:\n  format: "{auth}{title:x}"\n')
    result = run("keys", code=2)
    assert "config.yaml:3:" in result.stderr and "at character 14" in result.stderr
    assert "{title:N} needs a number" in result.stderr and result.stderr.count("\n") == 1


def test_config_shows_the_key_format_in_use():
    rows = {
        r.split("\t")[0]: r.split("\t")[1:]
        for r in run("config", "-f", "tsv").stdout.split("\n")
        if r
    }
    # the default rule is no format: showing one the config refuses misled a newcomer who
    # pasted it into config.yaml (exit 2, "unknown field {surname}")
    assert rows["keys.format"] == ["the default rule", "default"]
    _config('keys:\n  format: "{auth}{year}{title:1}"\n')
    rows = {
        r.split("\t")[0]: r.split("\t")[1:]
        for r in run("config", "-f", "tsv").stdout.split("\n")
        if r
    }
    assert rows["keys.format"] == ["{auth}{year}{title:1}", os.environ["RLPAPERS_CONFIG"]]
