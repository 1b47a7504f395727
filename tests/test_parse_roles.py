"""Roles on real shapes: category and author lines of arXiv papers that were once read as papers.

The quoted lines come from the arXiv sample (issue 13); the property generates author lines and
category lines of the same kinds and writes them in the seed layout.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlpapers.errors import ParseWarning
from rlpapers.parse import parse_text
from rlpapers.parse.roles import _FUNCTION_WORD, Role, assign, classify

ABSTRACT = (
    "We propose QeRL, a Quantization-enhanced Reinforcement Learning framework. It reduces memory "
    "by combining NVFP4 quantization with low-rank adaptation, and it speeds up rollouts."
)
OTHER = "Offline reinforcement learning learns policies from static datasets. We show it works."


def parse_quietly(text: str):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ParseWarning)
        return parse_text(text, source="arxiv.txt")


def seed(*papers: tuple[str, str, str]) -> str:
    """A file in the seed layout: a header, then per paper its category, author and abstract."""
    return "arXiv cs 2025-03\n\n" + "\n\n".join("\n\n".join(p) for p in papers) + "\n"


# --- the lines of the issue ---------------------------------------------------------------------

CATEGORY_LINES = [
    "cs.AI · cs.CL · cs.IR · cs.LG · cs.MA · 68T09, 68T50, 68T05, 62R07, 68U15, 68T27, 68T20 "
    "68T09, 68T50, 68T05,\n  62R07, 68U15, 68T27, 68T20 68T09, 68T50, 68T05, 62R07, 68U15, "
    "68T27, 68T20 · I.2; H.3; I.5; I.7; H.5; H.1",
    "cs.HC · cs.AI · cs.CL · cs.CR · cs.CY · I.2; I.2.1; I.2.7; H.3.4; K.4; K.4.1; H.1; H.1.2; "
    "H.5.2; H.4.3",
    "cs.CL · cs.AI · I.2.7.",  # an ACM class that ends like a sentence
    "cs.CV",
    "quant-ph · cs.LG",
]


@pytest.mark.parametrize("line", CATEGORY_LINES, ids=lambda v: v[:20])
def test_long_category_lines_with_classification_codes_are_category_lines(line):
    (paper,) = parse_quietly(seed((line, "Ada Lovelace, Alan Turing", ABSTRACT)))
    assert paper.categories == tuple(" ".join(part.split()) for part in line.split(" · "))
    assert paper.authors == ("Ada Lovelace", "Alan Turing")


AUTHOR_LINES = [
    (
        "Nikin~Matharaarachchi, Muhammad~Fermi Pasha, Sonya~Coleman, Kah PengWong",
        ("Nikin Matharaarachchi", "Muhammad Fermi Pasha", "Sonya Coleman", "Kah PengWong"),
    ),
    (
        "Frank P. -W. Lo, Jianing Qiu, Zeyu Wang, Haibao Yu, Yeming Chen, Gao Zhang, Benny Lo",
        ("Frank P. -W. Lo", "Jianing Qiu", "Zeyu Wang", "Haibao Yu", "Yeming Chen", "Gao Zhang")
        + ("Benny Lo",),
    ),
    ("Negar Arabzadeh, Charles L. A . Clarke", ("Negar Arabzadeh", "Charles L. A . Clarke")),
    (
        "Ho Yin 'Sam' Ng, Ting-Yao Hsu, Aashish Anantha Ramakrishnan, Branislav Kveton, Nedim "
        "Lipka, Franck Dernoncourt, Dongwon Lee, Tong Yu, Sungchul Kim, Ryan A. Rossi, Ting-Hao "
        "'Kenneth' Huang",
        ("Ho Yin 'Sam' Ng", "Ting-Yao Hsu", "Aashish Anantha Ramakrishnan", "Branislav Kveton")
        + ("Nedim Lipka", "Franck Dernoncourt", "Dongwon Lee", "Tong Yu", "Sungchul Kim")
        + ("Ryan A. Rossi", "Ting-Hao 'Kenneth' Huang"),
    ),
    (
        "Mingxiao LI, mang ning, Marie-Francine Moens",
        ("Mingxiao LI", "mang ning", "Marie-Francine Moens"),
    ),
    (
        ". Pazzaglia, V. Vendetti, L. D. Comencini, F. Deriu, V. Modugno",
        (". Pazzaglia", "V. Vendetti", "L. D. Comencini", "F. Deriu", "V. Modugno"),
    ),
    ("D. -F. Qin", ("D. -F. Qin",)),
    (
        "Alessandra M. M. M. Gouvêa, Nuno Paulos, Eduardo Uchoa e Mariá C. V. Nascimento",
        ("Alessandra M. M. M. Gouvêa", "Nuno Paulos", "Eduardo Uchoa e Mariá C. V. Nascimento"),
    ),
    (
        "Ko Watanabe. Stanislav Frolov. Adriano Lucieri. Andreas Dengel",
        ("Ko Watanabe. Stanislav Frolov. Adriano Lucieri. Andreas Dengel",),
    ),
    (
        "Tom Devynck Bilal Faye Djamel Bouchaffra Nadjib Lazaar Hanane Azzag Mustapha Lebbah",
        ("Tom Devynck Bilal Faye Djamel Bouchaffra Nadjib Lazaar Hanane Azzag Mustapha Lebbah",),
    ),
    (
        "H S V N S Kowndinya Renduchintala, Sumit Bhatia",
        ("H S V N S Kowndinya Renduchintala", "Sumit Bhatia"),
    ),
    ("Marcelo Fernandez - TraslaIA", ("Marcelo Fernandez - TraslaIA",)),
]


@pytest.mark.parametrize(("line", "names"), AUTHOR_LINES, ids=lambda v: str(v)[:20])
def test_uncommon_author_lines_are_author_lines(line, names):
    (paper,) = parse_quietly(seed(("cs.CL · quant-ph", line, ABSTRACT)))
    assert paper.authors == names
    assert paper.categories == ("cs.CL", "quant-ph")


@pytest.mark.parametrize(("line", "names"), AUTHOR_LINES, ids=lambda v: str(v)[:20])
def test_uncommon_author_lines_without_a_category_line(line, names):
    """The file's other papers show author lines standing right before abstracts."""
    text = seed(("Ada Lovelace, Alan Turing", OTHER), (line, ABSTRACT))
    assert [p.authors for p in parse_quietly(text)] == [("Ada Lovelace", "Alan Turing"), names]


def test_a_one_author_line_is_not_a_category_line():
    assert classify("D. -F. Qin", first=False) is Role.AUTHORS


# --- one-part category lines --------------------------------------------------------------------


def test_a_one_part_category_line_before_the_author_line_is_a_category_line():
    (paper,) = parse_quietly(seed(("Reinforcement Learning", "Yoshua Bengio, Minsu Kim", ABSTRACT)))
    assert paper.categories == ("Reinforcement Learning",)
    assert paper.authors == ("Yoshua Bengio", "Minsu Kim")


def test_a_one_part_category_line_in_a_file_without_author_lines():
    text = (
        "Topic\n\nDeep Learning · Planning\n\n"
        + OTHER
        + "\n\nReinforcement Learning\n\n"
        + ABSTRACT
    )
    papers = parse_quietly(text)
    assert [p.categories for p in papers] == [
        ("Deep Learning", "Planning"),
        ("Reinforcement Learning",),
    ]
    assert all(p.authors == () for p in papers)


def test_a_lone_name_is_still_an_author_line_in_a_file_with_author_lines():
    text = seed(("Ada Lovelace, Alan Turing", OTHER), ("Yoshua Bengio", ABSTRACT))
    assert [p.categories for p in parse_quietly(text)] == [(), ()]


@pytest.mark.parametrize("name", ["王小明", "\U00020bb7田太郎"])
def test_a_lone_cjk_name_is_an_author_line(name):
    """The second name starts with an ideograph of extension B (U+20BB7), which the parser's
    own CJK class once missed: the CJK rule is ``rlpapers.text``'s, the same for every layer."""
    (paper,) = parse_quietly(seed((name, ABSTRACT)))
    assert paper.authors == (name,)


def test_a_short_abstract_after_a_category_line_stays_an_abstract():
    text = "Topic\n\ncs.LG\n\nWe prove a bound, and it is tight.\n\n" + ABSTRACT
    assert assign(text.split("\n\n")) == [
        Role.HEADER,
        Role.CATEGORY,
        Role.ABSTRACT,
        Role.ABSTRACT,
    ]


# --- every block not used is named -------------------------------------------------------------


def test_every_unused_category_and_author_line_is_a_warning_with_its_line():
    text = "Topic\n\ncs.LG\n\nAda Lovelace, Alan Turing\n\ncs.CV\n\nYoshua Bengio, Minsu Kim\n\n"
    with pytest.warns(ParseWarning) as caught:
        (paper,) = parse_text(text + ABSTRACT, source="x.txt")
    assert paper.categories == ("cs.CV",) and paper.authors == ("Yoshua Bengio", "Minsu Kim")
    assert sorted(str(w.message) for w in caught) == [
        "x.txt:3: category or author line with no abstract after it, ignored",
        "x.txt:5: category or author line with no abstract after it, ignored",
    ]


def test_a_second_author_line_names_the_first_and_keeps_the_category_line():
    text = "Topic\n\ncs.LG\n\nAda Lovelace, Alan Turing\n\nYoshua Bengio, Minsu Kim\n\n" + ABSTRACT
    with pytest.warns(ParseWarning, match=r"x\.txt:5: category or author line"):
        (paper,) = parse_text(text, source="x.txt")
    assert paper.categories == ("cs.LG",) and paper.authors == ("Yoshua Bengio", "Minsu Kim")


# --- generated author and category lines in the seed layout -------------------------------------

lower = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=2, max_size=9)
capital = st.builds(str.capitalize, lower)
# a lower-case name is never an English function word: "aa by" reads as prose (parse/roles.py)
pinyin = lower.filter(lambda w: not _FUNCTION_WORD.fullmatch(w))
initial = st.sampled_from("ABCDEFGHJKLMNPRSTVWXYZ").map(lambda c: c + ".")
given_name = st.one_of(
    capital,
    initial,
    st.builds(lambda a, b: f"{a} {b}", initial, initial),  # L. D.
    st.builds(lambda a, b: f"{a[0]}. -{b[0].upper()}.", capital, capital),  # P. -W.
    st.builds(lambda a, b: f"{a}-{b}", capital, capital),  # Pierre-Luc
    st.builds(lambda a, b: f"{a} '{b}'", capital, capital),  # Ho Yin 'Sam'
)
surname = st.one_of(
    capital,
    st.builds(
        lambda p, s: f"{p} {s}", st.sampled_from(["van der", "de la", "von", "di", "bin"]), capital
    ),
    st.builds(lambda s: f"O'{s}", capital),
    st.builds(lambda s: f"d'{s}", capital),
    st.builds(lambda a, b: f"{a}-{b}", capital, capital),
    st.builds(str.upper, lower),  # LI
)
latin_name = st.one_of(
    st.builds(lambda g, s: f"{g} {s}", given_name, surname),
    st.builds(lambda g, s: f"{g}~{s}", capital, capital),  # LaTeX tie
    st.builds(lambda g, s: f"{g} {s}", pinyin, pinyin),  # mang ning
)
cjk_name = st.text(
    alphabet="王李张刘陈杨黄赵吴周徐孙马朱胡林郭何高罗小明华伟芳娜敏静丽强磊军洋勇艳杰",
    min_size=2,
    max_size=4,
)
ARXIV = ["cs.LG", "cs.AI", "cs.CL", "cs.CV", "cs.RO", "stat.ML", "eess.SY", "math.OC", "quant-ph"]
classes = st.one_of(
    st.lists(
        st.sampled_from(["68T05", "68T07", "68T50", "62R07", "90C26"]), min_size=1, max_size=4
    ).map(", ".join),
    st.lists(
        st.sampled_from(["I.2", "I.2.6", "I.2.7", "H.3.3", "K.4.1", "I.4.8"]),
        min_size=1,
        max_size=6,
    ).map("; ".join),
    st.just("68T50 (Primary) 68T07, 68Q32 (Secondary)"),
)


@st.composite
def author_line(draw):
    names = draw(st.lists(st.one_of(latin_name, latin_name, cjk_name), min_size=1, max_size=14))
    end = draw(st.sampled_from(["", "", ", et al.", " et al.", ", 等"]))
    expected = tuple(name.replace("~", " ") for name in names)
    return ", ".join(names) + end, expected, bool(end)


@st.composite
def category_line(draw):
    codes = draw(st.lists(st.sampled_from(ARXIV), min_size=1, max_size=5, unique=True))
    parts = codes + draw(st.lists(classes, max_size=2))
    return " · ".join(parts), tuple(parts)


sentence = st.builds(
    lambda first, rest: " ".join([first.capitalize(), *rest]) + ".",
    lower,
    st.lists(lower, min_size=6, max_size=20),
)
abstract = st.builds(" ".join, st.lists(sentence, min_size=1, max_size=4))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(category_line(), author_line(), abstract), min_size=1, max_size=5))
def test_generated_author_and_category_lines_come_back_as_such(papers):
    text = seed(*((c[0], a[0], abstract) for c, a, abstract in papers))
    got = parse_quietly(text)
    assert [(p.categories, p.authors, p.authors_truncated, p.abstract) for p in got] == [
        (c[1], a[1], a[2], abstract) for c, a, abstract in papers
    ]


@pytest.mark.parametrize(
    "header", ["Reading list, March 2025", "RL papers, 2024", "Topic #1 & R&D", "Deep Learning"]
)
def test_a_first_line_of_parts_that_are_not_names_is_the_header(header):
    """A header with a comma or an ampersand (``Reading list, March 2025``) was split like an
    author line, was no header, and became a paper of its own. Parts that read as names at the
    top of a file are still its first paper's author line."""
    abstract = "We propose a method for exploration in sparse-reward tasks, and it works well."
    (paper,) = parse_text(f"{header}\n\n{abstract}\n")
    assert (paper.topic, paper.authors) == (header, ())
    (paper,) = parse_text(f"Yoshua Bengio, Minsu Kim\n\n{abstract}\n")
    assert (paper.topic, paper.authors) == ("", ("Yoshua Bengio", "Minsu Kim"))
