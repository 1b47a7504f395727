"""The name a paper introduces (``parse.titles`` derives a readable title from it).

No seed paper has a title, but most abstracts introduce a name in a recognisable way:
"We propose QeRL, a Quantization-enhanced ...", "we introduce **AlphaSAGE** (**S**tructure-...)",
"Prompt Curriculum Learning (PCL)", "*PAMD: Pairwise Adaptive Mahalanobis Distance*".

The extractor works on a plain copy of the abstract (markdown and LaTeX emphasis removed, but
remembered) and looks only where a paper introduces something: after a cue such as "we propose"
or "dubbed", inside an emphasised span, or in "Expansion (ACRONYM)" right after such a cue. A
name that the abstract merely mentions (a baseline such as GRPO or PPO) is not taken: where no
introduction is found, ``name`` stays empty and the title is a phrase from the abstract.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .cues import cue_matches
from .name_weights import WEIGHTS
from .phrases import STOP
from .phrases import cut_at_clause as cut_at_clause  # tests and benchmarks use it from here

MAX_TITLE = 200

# --- plain text -------------------------------------------------------------------------------

_LATEX_EMPH = re.compile(
    r"\\(?:textbf|emph|textit|texttt|textsc|mathbf|underline|textsf)\{([^{}]*)\}"
)
_MD_STRONG = re.compile(r"\*\*([^*\n]+?)\*\*|__([^_\n]+?)__")
_MD_EM = re.compile(r"(?<![\w*])\*(?!\s)([^*\n]+?)(?<!\s)\*(?![\w*])")
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Plain:
    text: str
    emphasised: tuple[tuple[int, int], ...]


def plain(abstract: str) -> Plain:
    """The abstract without emphasis markup, with the character spans that were emphasised."""
    if "*" not in abstract and "_" not in abstract and "\\" not in abstract:
        return Plain(abstract, ())
    text = abstract
    for pattern in (_LATEX_EMPH, _MD_STRONG, _MD_EM):
        text = pattern.sub(
            lambda m: "\x01" + next(g for g in m.groups() if g is not None) + "\x02", text
        )
    if "\x01" not in text:
        return Plain(text, ())
    spans = []
    out: list[str] = []
    length = 0
    for piece in re.split(r"([\x01\x02])", text):
        if piece == "\x01":
            start = length
        elif piece == "\x02":
            spans.append((start, length))
        else:
            out.append(piece)
            length += len(piece)
    return Plain("".join(out), tuple(spans))


def strip_markup(text: str) -> str:
    """``text`` without markdown/LaTeX emphasis wrappers; math and everything else kept."""
    return _SPACES.sub(" ", plain(text).text).strip()


# --- names -------------------------------------------------------------------------------------

_TOKEN = r"[A-Za-z0-9\u00c0-\u024f][\w\u00c0-\u024f'’+.^\-]*[\w\u00c0-\u024f+]|[A-Z]"
_NAMING_CUE = re.compile(
    r"dubbed|called|named|termed|coined|namely|referred|known|call|name|term|dub|"
    r"(?:method|model|framework|approach|system|agent|benchmark|dataset|algorithm|pipeline)s?",
    re.I,
)
_ARTICLE = re.compile(r"^(?:(?:a|an|the|our|two|three|this|these)\s+)", re.I)
_GENERIC = {
    "AI", "LLM", "LLMs", "VLM", "VLMs", "MLLM", "MLLMs", "LM", "LMs", "RL", "DRL", "MARL",
    "NLP", "CV", "GPU", "GPUs", "CPU", "API", "APIs", "SOTA", "ML", "DL", "DNN", "DNNs", "CNN",
    "CNNs", "RNN", "GNN", "GNNs", "MLP", "LSTM", "QA", "VQA", "2D", "3D", "4D", "ViT", "ViTs",
    "IoT", "UAV", "UAVs", "RGB", "RGB-D", "SFT", "KL", "MDP", "MDPs", "POMDP", "PPO", "GRPO",
    "DPO", "RLHF", "RLVR", "CoT", "MoE", "OOD", "I", "II", "III", "US", "EU", "GPT", "BERT",
    "LoRA", "Transformer", "Transformers", "Gaussian", "Bayesian", "Markov", "Euclidean",
    "English", "Chinese", "Python", "NeRF", "NeRFs", "LiDAR", "FID", "ImageNet", "COCO",
    "Q-learning", "Monte", "Carlo",
}  # fmt: skip
_WINDOW = 220


def extract_name(abstract: str) -> str:
    """The name ``abstract`` introduces ("QeRL", "AlphaSAGE", "PCL"), or "" when it names none."""
    found = find_name(plain(abstract))
    return found[0] if found else ""


def find_name(doc: Plain) -> tuple[str, int, int] | None:
    """The introduced name with its character span in ``doc.text``; None if nothing is introduced.

    Every cue proposes candidates with a score (``WEIGHTS``); the best wins, the earliest on
    ties. A token that the abstract already used before the cue's sentence is background (a
    baseline), not a name.
    """
    text, w = doc.text, WEIGHTS
    scored: list[tuple[float, int, str]] = []
    windows = []
    for cue in cue_matches(text):
        found = _candidates_after_cue(text, cue)
        if found and not scored:
            found = [(score + w.first_cue, start, token) for score, start, token in found]
        scored.extend(found)
        windows.append((cue.start(), cue.end() + _WINDOW))
    for start, token in _emphasised_names(doc):
        in_window = any(lo <= start <= hi for lo, hi in windows)
        scored.append((w.emphasis_near_cue if in_window else w.emphasis, start, token))
    for repo in _REPO_URL.finditer(text):
        name = repo.group(1)
        if is_coined(name):
            first = _standalone(text, name)
            at = first if first >= 0 else repo.start(1)
            scored.append((w.repository_in_text if first >= 0 else w.repository, at, name))
    scored.extend(_pattern_candidates(text))
    best = None
    for score, start, token in scored:
        score += _repetition_bonus(text, token, start)
        if score >= w.least and (best is None or (score, -start) > (best[0], -best[1])):
            best = (score, start, token)
    return (best[2], best[1], best[1] + len(best[2])) if best else None


def _pattern_candidates(text: str) -> list[tuple[float, int, str]]:
    """Candidates from how a sentence is built, wherever it stands: "X is a …", "X is
    introduced", "…, X, a framework that …", an abstract opening with its name."""
    w = WEIGHTS
    scored: list[tuple[float, int, str]] = []
    starts = _sentence_starts(text)
    for subject in _matches_at(_SUBJECT, text, starts):
        if is_coined(subject.group(1)):
            scored.append((w.subject, subject.start(1), subject.group(1)))
    for subject in _matches_at(_ACTING_SUBJECT, text, starts):
        token = subject.group(1)
        if is_coined(token) and text.find(token) == subject.start(1):
            scored.append((w.acting_subject, subject.start(1), token))
    for passive in _PASSIVE.finditer(text) if _PASSIVE_VERB.search(text) else ():
        if is_coined(passive.group(1)):
            scored.append((w.passive, passive.start(1), passive.group(1)))
    appositives = _matches_at(_APPOSITIVE, text, _appositive_starts(text))
    for appositive in appositives:
        token = appositive.group(1)
        if (
            token.lower() not in STOP
            and token not in _GENERIC
            and (is_coined(token) or not token.isalpha())
        ):
            scored.append((w.appositive, appositive.start(1), token))
    opening = _OPENING.match(text)
    if opening and is_coined(opening.group(1)):
        scored.append((w.opening, opening.start(1), opening.group(1)))
    leading = _leading_name(text)
    if leading:
        scored.append((w.leading, leading[1], leading[0]))
    return scored


def _sentence_starts(text: str) -> list[int]:
    """Where ``(?:^|(?<=[.!?]\\s))`` holds in ``text``: its start and after each sentence's end."""
    return [0, *(gap.end() for gap in _SENTENCE_GAP.finditer(text))]


def _matches_at(pattern: re.Pattern[str], text: str, starts: list[int]) -> list[re.Match[str]]:
    """``pattern.finditer(text)`` for a pattern that can match only at ``starts`` (in order):
    it is tried there alone, not at every position."""
    found = []
    end = 0
    for start in starts:
        if start >= end and (match := pattern.match(text, start)):
            found.append(match)
            end = match.end()
    return found


def _appositive_starts(text: str) -> list[int]:
    """Where an ``_APPOSITIVE`` match can begin: its word ends at a comma that ``_APPOSITIVE_HINT``
    finds, and begins where the run of ``[\\w-]`` characters before that comma begins (its
    look-behind allows no other start)."""
    starts = []
    for hint in _APPOSITIVE_HINT.finditer(text):
        start = hint.start()
        while start > 0 and (_word_char(text[start - 1]) or text[start - 1] == "-"):
            start -= 1
        starts.append(start)
    return starts


def _standalone(text: str, name: str) -> int:
    """Where ``name`` first stands in ``text`` not inside a word, path or dotted name (what
    ``(?<![\\w/.-])name(?![\\w-])`` finds, without compiling a pattern for every name); -1 if
    nowhere."""
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        before = text[at - 1] if at else ""
        after = text[end] if end < len(text) else ""
        if not (before and (_word_char(before) or before in "/.-")) and not (
            after and (_word_char(after) or after == "-")
        ):
            return at
        at = text.find(name, at + 1)
    return -1


def _word_char(c: str) -> bool:
    """What ``\\w`` matches."""
    return c.isalnum() or c == "_"


# _SUBJECT and _ACTING_SUBJECT match only at a sentence's start (``_sentence_starts``).
_SENTENCE_GAP = re.compile(r"[.!?]\s")
_SUBJECT = re.compile(r"(?:^|(?<=[.!?]\s))(" + _TOKEN + r")\s+is\s+an?\s")
# "IatroBench measures this gap.": a sentence opening with a coined name, used there for the first time
_ACTING_SUBJECT = re.compile(
    r"(?:^|(?<=[.!?]\s))(" + _TOKEN + r")\s+(?:\([^()]{4,80}\)\s+)?[a-z]+s\b"
)
# "RoboLayout is introduced as …", "PlanarBench tests …" (the abstract opening with its name)
# What every _PASSIVE match holds, found far faster (it starts with a word, where _PASSIVE
# starts with a token that could stand anywhere): a text without it is not scanned at all.
_PASSIVE_VERB = re.compile(
    r"\s(?:is|are|was|were)\s+(?:introduced|proposed|presented|developed|released|designed)\b"
)
_PASSIVE = re.compile(
    r"("
    + _TOKEN
    + r"),?\s+(?:is|are|was|were)\s+(?:introduced|proposed|presented|developed|released|designed)\b"
)
# "…, motivates Edit-As-Act, a framework that …": any word set off as the name of a thing;
# _APPOSITIVE_HINT is what every match holds, found far faster (``_appositive_starts``)
_APPOSITIVE_HINT = re.compile(r",\s+an?\s")
_APPOSITIVE = re.compile(
    r"(?<![\w-])([A-Za-z0-9][\w\-]*[A-Za-z0-9]),\s+(?:a|an)\s+(?:[\w\-]+\s+){0,4}?"
    r"(?:framework|model|method|benchmark|dataset|approach|system|agent|network|algorithm|"
    r"architecture|pipeline|paradigm|module|library|toolkit|suite|metric|corpus|catalogue|platform)\b"
)
_OPENING = re.compile(
    r"\s*(" + _TOKEN + r")\s+(?:dataset|benchmark|model|framework|corpus|suite|toolkit|library|"
    r"tests|establishes|introduces|provides|offers|enables|is\s+(?:a|an|the)\b)"
)
_PAREN = re.compile(r"\((" + _TOKEN + r")\)")
_REPO_URL = re.compile(
    r"https?://(?:(?:github\.com|gitlab\.com|huggingface\.co)/(?:datasets/|spaces/)?[\w.\-]+"
    r"|[\w\-]+\.github\.io)/([\w\-]+?)(?:\.git|\.github\.io)?/?(?=[\s)\].,;]|$)"
)


def _repetition_bonus(text: str, token: str, start: int) -> float:
    """Repeated names are likelier; a token used before the cue's sentence is background."""
    positions = _positions(text, token)
    sentence_start = max(text.rfind(". ", 0, start), 0)
    if any(p < sentence_start and text[p - 1 : p] != "(" for p in positions):
        return WEIGHTS.background
    return min(len(positions) - 1, 2) * WEIGHTS.repeated


def _positions(text: str, token: str) -> list[int]:
    """Where ``token`` (or its plural) stands as a whole word: not inside a longer word."""
    found = []
    at = text.find(token)
    while at >= 0:
        end = at + len(token)
        if end < len(text) and text[end] == "s":
            end += 1
        before = text[at - 1] if at else " "
        after = text[end] if end < len(text) else " "
        if not (before.isalnum() or before in "-_") and not (after.isalnum() or after in "-_"):
            found.append(at)
        at = text.find(token, at + 1)
    return found


def _emphasised_names(doc: Plain) -> list[tuple[int, str]]:
    """Names set in bold or italics: ``**AlphaSAGE**``, ``\\textbf{Bias-Aware ... (BAMI)}``."""
    names = []
    for start, end in doc.emphasised:
        span = doc.text[start:end].strip()
        acronym = re.search(r"\((" + _TOKEN + r")\)\s*$", span)
        if acronym and is_coined(acronym.group(1)):
            names.append((start + acronym.start(1), acronym.group(1)))
            continue
        head = re.split(r"\s*[:(—–]\s*|\s+-\s+", span)[0].strip(" ,.")
        if head and len(head) <= 40 and (is_coined(head) or _is_titlecase_phrase(head)):
            names.append((start, head))
    return names


_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]])\.\s+(?=[A-Z])")
_TOKENS = re.compile(_TOKEN)


def _candidates_after_cue(text: str, cue: re.Match[str]) -> list[tuple[float, int, str]]:
    start = cue.end()
    window = text[start : start + _WINDOW]
    end = _SENTENCE_END.search(window)
    if end:
        window = window[: end.start()]
    naming = bool(_NAMING_CUE.fullmatch(cue.group(0).split()[-1].strip(":,").lower()))
    found = []
    acronym = _acronym_expansion(window)
    if acronym:
        found.append((WEIGHTS.cue_acronym, start + acronym[1], acronym[0]))
    limit = _object_limit(window)
    for paren in _PAREN.finditer(window[:limit]):
        if is_coined(paren.group(1)):
            found.append((WEIGHTS.cue_paren, start + paren.start(1), paren.group(1)))
    head = _ARTICLE.sub("", window)
    phrase = _PROPER_PHRASE.match(head)
    if phrase:
        found.append((WEIGHTS.cue_phrase, start + len(window) - len(head), phrase.group(1)))
    first = True
    for match in _TOKENS.finditer(window[:limit]):
        token = match.group(0).rstrip(".-'’")
        if token.lower() in STOP:
            continue
        score = _token_score(token, window, match, first, naming)
        if score > 0:
            found.append((score, start + match.start(), token))
        first = False
        if naming:
            break
    return found


_SET_OFF = re.compile(r"\s*[,:(—–.\"”’]|\s+-\s|\s*$")
_MODIFIER = re.compile(r"-(?:based|like|style|driven|aware|guided|free|level)\b")


def _token_score(token: str, window: str, match: re.Match[str], first: bool, naming: bool) -> float:
    coined = is_coined(token)
    if not coined and not _is_proper_word(token):
        return 0.0  # what every branch below gives such a token, found without the patterns
    after = window[match.end() : match.end() + 4]
    before = window[max(0, match.start() - 2) : match.start()]
    apposition = bool(_SET_OFF.match(after))
    apposition = apposition or before.strip() in {",", "(", ":"}
    if _MODIFIER.match(window, match.end() - 1):
        return 0.0
    headed = bool(_HEAD_NOUN.match(window, match.end()))
    labelled = _labelled(window, match.start())  # "a new paradigm CrossICL"
    w = WEIGHTS
    if coined:
        return (
            w.coined
            + w.coined_first * first
            + w.coined_apposition * apposition
            + w.coined_naming * naming
            + w.coined_headed * headed
            + w.coined_labelled * labelled
        )
    proper = _is_proper_word(token)
    if proper and (naming or first or before.strip() == ":") and apposition:
        return w.proper + w.proper_naming * naming
    if proper and headed and "-" in token:
        return w.proper_hyphenated
    return 0.0


def _labelled(window: str, start: int) -> bool:
    """Whether a head noun and spaces ("a new paradigm ") end ``window[:start]``. The noun ends
    where the spaces begin, so the search starts at most ``_HEAD_NOUN_SPAN`` before that: the
    answer of a search from 0, without scanning the window again for every token."""
    noun_end = len(window[:start].rstrip())
    if noun_end == start:
        return False
    return bool(_AFTER_HEAD_NOUN.search(window, max(0, noun_end - _HEAD_NOUN_SPAN), start))


_EXPANSION = re.compile(
    r"((?:[A-Z][\w\-’']*|of|for|and|with|via|in|on|to|the|a|from|by)(?:[\s\-]+(?:[A-Z][\w\-’']*|"
    r"of|for|and|with|via|in|on|to|the|a|from|by)){1,12})\s*\(\s*(" + _TOKEN + r")\s*\)"
)


_HEAD_NOUN = re.compile(
    r"\s+(?:framework|model|method|benchmark|dataset|approach|system|agent|network|algorithm|"
    r"architecture|pipeline|paradigm|module|library|toolkit|suite|metric|corpus|platform)s?\b"
)
_AFTER_HEAD_NOUN = re.compile(
    r"\b(?:framework|model|method|benchmark|dataset|approach|system|agent|network|algorithm|"
    r"architecture|pipeline|paradigm|module|library|toolkit|suite|metric|corpus|platform)s?,?\s+$"
)
#: The longest text ``_AFTER_HEAD_NOUN`` matches before its closing spaces ("architectures,").
_HEAD_NOUN_SPAN = len("architectures,")
_PROPER_PHRASE = re.compile(
    r"((?:[A-Z][\w’'\-]*)(?:\s+(?:[A-Z][\w’'\-]*|the|of|for|in|and|with|to|a)){1,4}?\s+[A-Z][\w’'\-]*)"
    r"(?=\s*(?::\s|,\s+(?:an?|the)\s|\s+\())"
)


def _acronym_expansion(window: str) -> tuple[str, int] | None:
    """``Prompt Curriculum Learning (PCL)`` near the start of the window: the acronym."""
    head = _ARTICLE.sub("", window)
    skipped = len(window) - len(head)
    match = _EXPANSION.match(head)
    if match and is_coined(match.group(2)) and _initials_fit(match.group(1), match.group(2)):
        expansion = match.group(1).strip()
        if re.fullmatch(r"[A-Z][\w]*(?:-[\w]+){2,}", expansion):
            return expansion, skipped + match.start(
                1
            )  # "Chain-of-Agents (CoA)": the compound is the name
        return match.group(2), skipped + match.start(2)
    return None


_CLAUSE_END = re.compile(
    r"[.;]\s|\bthat\b|\bwhich\b|\bwhere\b|\bto\s+(?:address|tackle|solve|overcome|mitigate)\b"
)


def _object_limit(window: str) -> int:
    """How far into the window a name may still stand: to the end of the clause's noun phrase."""
    stop = _CLAUSE_END.search(window)
    return stop.start() if stop else len(window)


def _is_proper_word(token: str) -> bool:
    return token[:1].isupper() and token not in _GENERIC and token.lower() not in STOP


@lru_cache(maxsize=1 << 16)  # a pure function of a short string; abstracts repeat tokens
def is_coined(token: str) -> bool:
    """A made-up name: mixed case (QeRL, TreeBench), an acronym (PCL), letters with digits (3DTV).

    A hyphenated run of ordinary capitalised words (``Geo-Temporal``) is not coined.
    """
    if token in _GENERIC or len(token) < 2 or len(token) > 40:
        return False
    if sum(c.isalpha() for c in token) < 2:
        return False
    parts = [p for p in re.split(r"[-–]", token) if p]
    if len(parts) > 1 and all(_ordinary_word(p) for p in parts):
        return False
    upper = sum(c.isupper() for c in token[1:])
    if not token[0].isalnum():
        return False
    if token[0].isdigit():
        return upper >= 2
    if upper >= 1:
        return token[0].isupper() or not token.startswith(("e-", "x-", "k-", "n-"))
    return token[0].isupper() and any(c.isdigit() for c in token)


def _ordinary_word(part: str) -> bool:
    return part.isalpha() and (part.islower() or part[0].isupper() and part[1:].islower())


def _is_titlecase_phrase(text: str) -> bool:
    if len(text) < 3:
        return False
    words = text.split()
    return 1 <= len(words) <= 5 and all(w[:1].isupper() or w.lower() in STOP for w in words)


def _initials_fit(expansion: str, acronym: str) -> bool:
    """``Quadtree Diffusion Model`` fits ``QDM``: the acronym's first letter starts a word in it."""
    letters = [c.lower() for c in acronym if c.isalpha()]
    words = [w for w in re.split(r"[\s\-]+", expansion) if w]
    initials = "".join(w[0].lower() for w in words)
    return bool(letters) and letters[0] in initials


def _leading_name(text: str) -> tuple[str, int, int] | None:
    """``AlphaSAGE: a ...`` or ``PAMD is a ...`` opening the abstract."""
    match = re.match(r"\s*(" + _TOKEN + r")\s*(?::\s|\(|,\s+an?\s|\s+is\s+an?\s)", text)
    if match and is_coined(match.group(1)):
        return match.group(1), match.start(1), match.end(1)
    return None
