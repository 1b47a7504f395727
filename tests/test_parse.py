"""Unit tests of the parser: decoding, blocks, roles, names and titles."""

from __future__ import annotations

import re
import warnings

import pytest

from rlpapers.errors import ParseError, ParseWarning
from rlpapers.parse import paper_id, parse_bytes, parse_file, parse_text
from rlpapers.parse.blocks import join_lines, split_blocks, vocabulary
from rlpapers.parse.names import extract_name
from rlpapers.parse.roles import Role, classify, is_author_line, split_authors
from rlpapers.parse.text import decode
from rlpapers.parse.titles import derive_title

from .conftest import DATA, SEEDS

ABSTRACT = (
    "We propose QeRL, a Quantization-enhanced Reinforcement Learning framework. It works well."
)


# --- decoding ----------------------------------------------------------------------------------


def test_utf8_bom_is_removed():
    assert decode("\ufeff强化学习".encode()) == "强化学习"


def test_gb18030_is_decoded():
    assert decode("强化学习, 王小明".encode("gb18030")) == "强化学习, 王小明"


def test_latin1_is_decoded():
    assert decode("Aichmüller, François".encode("latin-1")) == "Aichmüller, François"


def test_utf16_with_bom_is_decoded():
    assert decode("Aichmüller".encode("utf-16")) == "Aichmüller"


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_bom_is_decoded(codec):
    """UTF-16 without a byte-order mark (some Windows tools write it) was refused as a binary
    file for its NUL bytes: where the NULs are the high bytes of ASCII text, it is UTF-16."""
    (seed,) = SEEDS.glob("003_*.txt")
    text = seed.read_text(encoding="utf-8")
    assert parse_bytes(text.encode(codec), "x.txt") == parse_text(text, "x.txt")


def test_binary_file_is_a_parse_error_naming_the_file(tmp_path):
    path = tmp_path / "picture.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ParseError, match=r"picture\.png:3: binary file"):
        parse_file(path)


def test_missing_file_and_folder_are_parse_errors(tmp_path):
    with pytest.raises(ParseError, match="nope.txt"):
        parse_file(tmp_path / "nope.txt")
    with pytest.raises(ParseError, match="folder"):
        parse_file(tmp_path)


# --- blocks ------------------------------------------------------------------------------------


def test_blocks_split_on_whitespace_only_lines_and_keep_line_numbers():
    blocks = split_blocks("head\n \t\nfirst line\nsecond line\n\n\n\nthird")
    assert [(b.line, b.lines) for b in blocks] == [
        (1, ("head",)),
        (3, ("first line", "second line")),
        (8, ("third",)),
    ]


def test_one_abstract_a_line_without_blank_lines_is_one_paper_a_line():
    """A file keeping one abstract a line, no blank line between them, was one paper of them
    all. Wrapped lines, and a file keeping one sentence a line, still make one paper."""
    abstracts = [
        f"We study problem {n} of offline reinforcement learning, where {_filler(n)}. "
        f"Our method {n} improves the return on every benchmark we try it on."
        for n in range(3)
    ]
    chinese = [
        f"本文研究离线强化学习中的第{n}个问题，" + "提出一种新的方法并在基准上验证其效果。" * 10
        for n in range(2)
    ]
    for lines in (abstracts, chinese):
        papers = parse_text("Topic\n\n" + "\n".join(lines) + "\n")
        assert [(p.abstract, p.line) for p in papers] == [(a, 3 + n) for n, a in enumerate(lines)]
    sentences = [
        f"This is sentence {n} of one abstract, written one sentence a line as some LaTeX sources are, {_filler(n)[:60]}."
        for n in range(5)
    ]
    wrapped = "\n".join(abstracts[0][i : i + 80] for i in range(0, len(abstracts[0]), 80))
    for text in ("\n".join(sentences), wrapped):
        (paper,) = parse_text("Topic\n\n" + text + "\n")
        assert paper.line == 3


def _filler(n: int) -> str:
    return ", ".join(f"the agent {n} sees state {i} and acts on it" for i in range(12))


def test_hyphen_at_line_end_is_mended_when_the_corpus_knows_the_word():
    vocab = vocabulary("models are pretrained here\nand off-policy there")
    assert join_lines(["are pret-", "rained on"], vocab) == "are pretrained on"
    assert join_lines(["with off-", "policy updates"], vocab) == "with off-policy updates"


def test_unknown_hyphenation_keeps_the_hyphen():
    assert join_lines(["a multi-", "stage plan"], set()) == "a multi-stage plan"


def test_capitalised_continuation_keeps_the_hyphen():
    assert join_lines(["GPT-", "Style models"], {"gptstyle"}) == "GPT-Style models"


# --- roles -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "first", "role"),
    [
        ("强化学习", True, Role.HEADER),
        ("Deep Learning · Large Language Models", False, Role.CATEGORY),
        ("Yinjie Wang, Tianbao Xie, Ke Shen", False, Role.AUTHORS),
        ("Qingmei Tang, Shuai Hao, 等", False, Role.AUTHORS),
        ("Yoshua Bengio", False, Role.AUTHORS),
        ("Luc Van Gool, Pierre-Luc St-Charles and D. P. Kingma", False, Role.AUTHORS),
        ("王小明, 李华", False, Role.AUTHORS),
        ("Wei Lai, Tianyu Ding, ren dongdong, Lei Wang, Jing Huo", False, Role.AUTHORS),
        ('NVIDIA, :, Hassan Abu Alhaija, Zhaoqin "Richie" Li, et al.', False, Role.AUTHORS),
        ("cs.CV", False, Role.CATEGORY),
        ("We evaluate on MuJoCo, Atari, and DMC.", False, Role.ABSTRACT),
        (ABSTRACT, False, Role.ABSTRACT),
        ("Reinforcement learning is hard, but useful.", False, Role.ABSTRACT),
    ],
)
def test_roles_are_decided_by_content(text, first, role):
    assert classify(text, first=first) is role


def test_trailing_deng_marks_a_truncated_list_and_is_not_a_name():
    assert split_authors("Haonan Song, Qingchen Xie, 等") == (["Haonan Song", "Qingchen Xie"], True)
    assert split_authors("A. Smith et al.") == (["A. Smith"], True)
    assert split_authors("Ada Lovelace, Alan Turing") == (["Ada Lovelace", "Alan Turing"], False)


def test_affiliation_marks_are_dropped_from_names():
    assert split_authors("Tao Yu, Yi-Fan Zhang†, Chaoyou Fu*, Wang Li2") == (
        ["Tao Yu", "Yi-Fan Zhang", "Chaoyou Fu", "Wang Li"],
        False,
    )


def test_a_lone_name_after_the_category_line_is_the_author_line():
    (paper,) = parse_text("Topic\n\ncs.CL · cs.AI\n\nNaomi Omeonga wa Kayembe\n\n" + ABSTRACT)
    assert paper.authors == ("Naomi Omeonga wa Kayembe",) and paper.categories == ("cs.CL", "cs.AI")


def test_a_sentence_is_not_an_author_line():
    assert not is_author_line("However, existing methods fail, and we fix them.")


# --- records -----------------------------------------------------------------------------------


def test_ids_depend_only_on_the_normalised_abstract():
    assert paper_id("a  b\nc") == paper_id("a b c")
    assert paper_id("a b c") != paper_id("a b d")
    assert len(paper_id("x")) == 10


def test_ids_stay_as_they_were_given():
    # ids are written into users' drafts: the form they are made from must never drift (this
    # is the id the first release gave)
    assert paper_id(" Entropy\u00a0regularised\tpolicy  gradients. ") == "vff7navsfx"
    assert paper_id("Cafe\u0301 au lait.") == paper_id("Caf\u00e9 au lait.")


def test_whitespace_is_collapsed_as_the_regular_expression_did():
    # normalise and join_lines split with str.split, which must know exactly re's \s
    import sys

    from rlpapers.parse import normalise

    spaces = re.compile(r"\s+")
    assert all(
        bool(spaces.fullmatch(c)) == c.isspace() for c in map(chr, range(sys.maxunicode + 1))
    )
    text = "a\u2003b\x1c c\u3000\u00a0d \n"
    assert normalise(text) == spaces.sub(" ", text).strip()


def test_the_vocabulary_reads_a_long_file_in_slices_without_losing_words():
    lines = [f"word{n // 26}{chr(97 + n % 26)} off-policy" for n in range(20_000)]
    text = "\n".join(lines)
    expected = {m.group(0) for m in re.finditer(r"[^\W\d_]+(?:-[^\W\d_]+)*", text.lower())}
    assert vocabulary(text) == expected
    assert vocabulary("") == set()


def test_reordering_papers_keeps_their_ids():
    one = parse_text("Alpha paper text. It is long enough.\n\nBeta paper text. Also long enough.")
    two = parse_text("Beta paper text. Also long enough.\n\nAlpha paper text. It is long enough.")
    assert {p.id for p in one} == {p.id for p in two}


def test_abstract_text_is_verbatim_apart_from_whitespace():
    text = "强化学习\n\nWe show a $\\tilde{O}(d^2)$ bound, 0.07\\% error,\n**AlphaSAGE** and 35% gains."
    (paper,) = parse_text(text)
    assert (
        paper.abstract
        == "We show a $\\tilde{O}(d^2)$ bound, 0.07\\% error, **AlphaSAGE** and 35% gains."
    )
    assert paper.topic == "强化学习"


def test_links_are_collected_without_trailing_punctuation():
    (paper,) = parse_text("Code is at https://github.com/a/b. Data: https://x.org/d).")
    assert paper.links == ("https://github.com/a/b", "https://x.org/d")


def test_empty_and_header_only_files_warn_and_give_no_records():
    for name in ("empty.txt", "header_only.txt"):
        with pytest.warns(ParseWarning, match="no records"):
            assert parse_file(DATA / "parse" / name) == []


def test_orphan_author_line_warns_with_its_line():
    with pytest.warns(ParseWarning) as caught:
        parse_text("Topic\n\nAda Lovelace, Alan Turing\n", source="x.txt")
    messages = [str(w.message) for w in caught]
    assert "x.txt:3: category or author line with no abstract after it, ignored" in messages
    assert "x.txt: no abstracts found, no records" in messages


def test_parse_bytes_reads_crlf_and_bom():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        papers = parse_bytes(
            b"\xef\xbb\xbfTopic\r\n\r\nAda Lovelace, Alan Turing\r\n\r\n" + ABSTRACT.encode()
        )
    assert papers[0].authors == ("Ada Lovelace", "Alan Turing")
    assert papers[0].topic == "Topic"


# --- names and titles ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("abstract", "name"),
    [
        (
            "We propose QeRL, a Quantization-enhanced Reinforcement Learning framework for LLMs.",
            "QeRL",
        ),
        (
            "To this end we introduce **AlphaSAGE** (**S**tructure-**A**ware Alpha Mining via GFlowNets).",
            "AlphaSAGE",
        ),
        ("We introduce Prompt Curriculum Learning (PCL), a lightweight algorithm.", "PCL"),
        ("*PAMD: Pairwise Adaptive Mahalanobis Distance* is a reward model for imitation.", "PAMD"),
        (
            "We present \\textbf{Active Attacks}, a novel RL-based red-teaming algorithm.",
            "Active Attacks",
        ),
        ("GRPO is popular. We study GRPO and PPO on many tasks and report what we find.", ""),
        (
            "Group relative policy optimization (GRPO) is slow. We analyse its variance in detail.",
            "",
        ),
        (
            "We prove a lower bound. Our results match the upper bounds of the SAVE algorithm (Zhao 2023).",
            "",
        ),
        (
            "Data is scarce. This data paper introduces MajinBook, an open catalogue of books.",
            "MajinBook",
        ),
        ("Planning is hard. RoboLayout is introduced as an extension of LayoutVLM.", "RoboLayout"),
        (
            "Code: https://github.com/someone/SurfaceSplat. We fuse SDF and 3DGS here.",
            "SurfaceSplat",
        ),
    ],
)
def test_introduced_names_are_found_and_mentioned_baselines_are_not(abstract, name):
    assert extract_name(abstract) == name


def test_titles_combine_the_name_and_its_description():
    name, title = derive_title(
        "We propose QeRL, a Quantization-enhanced Reinforcement Learning framework for LLMs."
    )
    assert (name, title) == (
        "QeRL",
        "QeRL: Quantization-enhanced Reinforcement Learning framework for LLMs",
    )
    assert (
        derive_title("We introduce Prompt Curriculum Learning (PCL), an algorithm.")[1]
        == "PCL: Prompt Curriculum Learning"
    )


def test_unnamed_paper_gets_a_phrase_title():
    name, title = derive_title(
        "Offline RL is hard. We introduce a novel approach based on contrastive preference learning, which helps."
    )
    assert name == ""
    assert title == "Approach based on contrastive preference learning"


def test_titles_are_at_most_200_characters():
    _, title = derive_title("We propose " + "very " * 100 + "long things.")
    assert 0 < len(title) <= 200


def test_a_suspended_hyphen_at_a_line_end_keeps_its_space():
    """ "semantic-\\nand syntactic-level" was joined as "semantic-and"."""
    for word in ("and", "or", "nor", "to", "And"):
        joined = join_lines(["both semantic-", f"{word} syntactic-level cues"], set())
        assert joined == f"both semantic- {word} syntactic-level cues"
    assert join_lines(["a multi-", "stage plan"], set()) == "a multi-stage plan"
