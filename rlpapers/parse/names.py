"""The name a paper introduces, and a readable title derived from it.

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

MAX_TITLE = 200
_DESCRIPTION_WORDS = 14

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
_CUE_VERB = (
    r"(?:propose|introduce|present|develop|design|build|construct|release|contribute|curate|"
    r"create|establish|offer|unveil|devise|formulate|put\s+forward|describe|open-source|"
    r"collect|assemble|leverage|adopt|employ|explore|investigate|train|launch|report|"
    r"benchmark|implement|pioneer|provide|yield)"
)
_CUE = re.compile(
    r"\b(?:(?:we|(?:this|the)\s+(?:\w+\s+)?(?:paper|work|study|article|report)|our\s+(?:paper|work))\s+"
    r"(?:\w+ly\s+|first\s+|then\s+|also\s+|further\s+|therefore\s+|thus\s+|hence\s+|now\s+)?"
    + _CUE_VERB
    + r"(?:s|d|ed|es)?|(?:propos|introduc|present|develop|design|buil)ing|"
    r"(?:,|\band|\bthen)\s+(?:propose|introduce|present|develop)s?(?=\s+(?-i:[A-Z0-9]))|"
    r"(?:introduces|presents|proposes|our|the\s+proposed)(?=\s+(?-i:[A-Z0-9][\w\-]*[A-Z0-9]))|"
    r"(?:dubbed|called|named|termed|coined|namely|referred\s+to\s+as|known\s+as|"
    r"which\s+we\s+(?:call|name|term|dub)|we\s+(?:call|name|term|dub)(?:\s+(?:it|this|them|our\s+\w+))?|"
    r"(?:our|the\s+resulting|the\s+final)\s+(?:proposed\s+|trained\s+|resulting\s+|final\s+)?(?:method|model|framework|approach|system|agent|"
    r"benchmark|dataset|algorithm|pipeline)s?))\b"
    r"\s*[:,]?\s*",
    re.I,
)
_NAMING_CUE = re.compile(
    r"dubbed|called|named|termed|coined|namely|referred|known|call|name|term|dub|"
    r"(?:method|model|framework|approach|system|agent|benchmark|dataset|algorithm|pipeline)s?",
    re.I,
)
_ARTICLE = re.compile(r"^(?:(?:a|an|the|our|two|three|this|these)\s+)", re.I)
_STOP = {
    "a", "an", "the", "we", "our", "this", "that", "these", "those", "in", "on", "to", "for",
    "of", "and", "or", "with", "by", "from", "it", "its", "is", "are", "as", "at", "via",
    "new", "novel", "first", "simple", "here", "however", "then", "also", "both", "each",
    "such", "two", "three", "several", "one", "which", "what", "how", "when", "where", "while",
    "specifically", "finally", "moreover", "furthermore", "additionally", "thus",
    "unlike", "instead", "based", "using", "given", "large", "existing", "many", "most",
    "their", "they", "them", "there", "through", "across", "over", "under", "into", "more",
    "recent", "efficient", "effective", "unified", "general", "scalable", "lightweight",
    "comprehensive", "robust", "generalizable", "systematic", "theoretical", "practical",
}  # fmt: skip
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

    Every cue proposes candidates with a score; the best wins, the earliest on ties. A token that
    the abstract already used before the cue's sentence is background (a baseline), not a name.
    """
    scored: list[tuple[float, int, str]] = []
    windows = []
    for cue in _CUE.finditer(doc.text):
        found = _candidates_after_cue(doc.text, cue)
        if found and not scored:
            found = [(score + 1.5, start, token) for score, start, token in found]
        scored.extend(found)
        windows.append((cue.start(), cue.end() + _WINDOW))
    for start, token in _emphasised_names(doc):
        in_window = any(lo <= start <= hi for lo, hi in windows)
        scored.append((7.0 if in_window else 3.5, start, token))
    for repo in _REPO_URL.finditer(doc.text):
        name = repo.group(1)
        if is_coined(name):
            first = re.search(r"(?<![\w/.-])" + re.escape(name) + r"(?![\w-])", doc.text)
            scored.append((5.5 if first else 4.0, first.start() if first else repo.start(1), name))
    for subject in _SUBJECT.finditer(doc.text):
        if is_coined(subject.group(1)):
            scored.append((3.0, subject.start(1), subject.group(1)))
    for subject in _ACTING_SUBJECT.finditer(doc.text):
        token = subject.group(1)
        if is_coined(token) and doc.text.find(token) == subject.start(1):
            scored.append((3.0, subject.start(1), token))
    for passive in _PASSIVE.finditer(doc.text):
        if is_coined(passive.group(1)):
            scored.append((5.0, passive.start(1), passive.group(1)))
    for appositive in _APPOSITIVE.finditer(doc.text):
        token = appositive.group(1)
        if (
            token.lower() not in _STOP
            and token not in _GENERIC
            and (is_coined(token) or not token.isalpha())
        ):
            scored.append((4.0, appositive.start(1), token))
    opening = _OPENING.match(doc.text)
    if opening and is_coined(opening.group(1)):
        scored.append((4.5, opening.start(1), opening.group(1)))
    leading = _leading_name(doc.text)
    if leading:
        scored.append((5.0, leading[1], leading[0]))
    best = None
    for score, start, token in scored:
        score += _repetition_bonus(doc.text, token, start)
        if score >= 3 and (best is None or (score, -start) > (best[0], -best[1])):
            best = (score, start, token)
    return (best[2], best[1], best[1] + len(best[2])) if best else None


_SUBJECT = re.compile(r"(?:^|(?<=[.!?]\s))(" + _TOKEN + r")\s+is\s+an?\s")
# "IatroBench measures this gap.": a sentence opening with a coined name, used there for the first time
_ACTING_SUBJECT = re.compile(
    r"(?:^|(?<=[.!?]\s))(" + _TOKEN + r")\s+(?:\([^()]{4,80}\)\s+)?[a-z]+s\b"
)
# "RoboLayout is introduced as …", "PlanarBench tests …" (the abstract opening with its name)
_PASSIVE = re.compile(
    r"("
    + _TOKEN
    + r"),?\s+(?:is|are|was|were)\s+(?:introduced|proposed|presented|developed|released|designed)\b"
)
# "…, motivates Edit-As-Act, a framework that …": any word set off as the name of a thing
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
        return -4.0
    return min(len(positions) - 1, 2) * 0.75


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


def _candidates_after_cue(text: str, cue: re.Match[str]) -> list[tuple[float, int, str]]:
    start = cue.end()
    window = text[start : start + _WINDOW]
    window = re.split(r"(?<=[a-z0-9)\]])\.\s+(?=[A-Z])", window)[0]
    naming = bool(_NAMING_CUE.fullmatch(cue.group(0).split()[-1].strip(":,").lower()))
    found = []
    acronym = _acronym_expansion(window)
    if acronym:
        found.append((4.0, start + acronym[1], acronym[0]))
    for paren in _PAREN.finditer(window[: _object_limit(window)]):
        if is_coined(paren.group(1)):
            found.append((3.5, start + paren.start(1), paren.group(1)))
    phrase = _PROPER_PHRASE.match(_ARTICLE.sub("", window))
    if phrase:
        found.append((3.5, start + len(window) - len(_ARTICLE.sub("", window)), phrase.group(1)))
    limit = _object_limit(window)
    first = True
    for match in re.finditer(_TOKEN, window[:limit]):
        token = match.group(0).rstrip(".-'’")
        if token.lower() in _STOP:
            continue
        score = _token_score(token, window, match, first, naming)
        if score > 0:
            found.append((score, start + match.start(), token))
        first = False
        if naming:
            break
    return found


def _token_score(token: str, window: str, match: re.Match[str], first: bool, naming: bool) -> float:
    after = window[match.end() : match.end() + 4]
    before = window[max(0, match.start() - 2) : match.start()]
    apposition = bool(re.match(r"\s*[,:(—–.\"”’]|\s+-\s|\s*$", after))
    apposition = apposition or before.strip() in {",", "(", ":"}
    if re.match(
        r"-(?:based|like|style|driven|aware|guided|free|level)\b", window[match.end() - 1 :]
    ):
        return 0.0
    headed = bool(_HEAD_NOUN.match(window, match.end()))
    labelled = bool(_AFTER_HEAD_NOUN.search(window, 0, match.start()))  # "a new paradigm CrossICL"
    if is_coined(token):
        return 1.0 + 2.0 * first + 1.5 * apposition + 3.0 * naming + 1.0 * headed + 2.5 * labelled
    proper = _is_proper_word(token)
    if proper and (naming or first or before.strip() == ":") and apposition:
        return 3.0 + 3.0 * naming
    if proper and headed and "-" in token:
        return 3.0
    return 0.0


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


def _object_limit(window: str) -> int:
    """How far into the window a name may still stand: to the end of the clause's noun phrase."""
    stop = re.search(
        r"[.;]\s|\bthat\b|\bwhich\b|\bwhere\b|\bto\s+(?:address|tackle|solve|overcome|mitigate)\b",
        window,
    )
    return stop.start() if stop else len(window)


def _is_proper_word(token: str) -> bool:
    return token[:1].isupper() and token not in _GENERIC and token.lower() not in _STOP


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
    return 1 <= len(words) <= 5 and all(w[:1].isupper() or w.lower() in _STOP for w in words)


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


# --- titles ------------------------------------------------------------------------------------


def derive_title(abstract: str) -> tuple[str, str]:
    """(name, title) for an abstract.

    The title is at most MAX_TITLE characters and never ends in "…" or in a cut word: a phrase
    that is too long is cut at a clause boundary (before "that", "which", ",", "by", …).
    """
    doc = plain(abstract)
    found = find_name(doc)
    if found:
        name, start, end = found
        description = _description(doc.text, start, end, name) or _phrase(doc.text, cue_only=True)
        title = f"{name}: {description}" if description else name
    else:
        name, title = "", _phrase(doc.text)
    return name, _clip(_SPACES.sub(" ", title).strip(), MAX_TITLE)


def _description(text: str, start: int, end: int, name: str) -> str:
    after = text[end : end + 400]
    before = text[max(0, start - 300) : start]
    expansion = re.match(r"[\s$}]*\(([^()]{8,160})\)", after)
    if expansion and not expansion.group(1)[:1].isdigit():
        return _sentence_case(expansion.group(1))
    colon = re.match(r"\s*:\s*([^.;]{8,200}?)(?=,\s+(?:which|that|where)\b|[.;]|$)", after)
    if colon:
        return _sentence_case(colon.group(1))
    if before.rstrip().endswith("("):
        expanded = _expansion_before(before.rstrip()[:-1], name)
        if expanded:
            return expanded
    apposition = re.match(
        r"\s*,\s*(?:which\s+is\s+)?((?:an?|the)\s+" + _CLAUSE + r"{8,}?)(?=[,;]|\.\s|\.$|$)", after
    )
    if apposition:
        return _noun_phrase(apposition.group(1))
    lead = re.search(
        r"(?:propose|introduce|present|develop)s?d?\s+(an?\s+[^,;.]{8,}?)\s*(?:,\s*)?(?:called|dubbed|named|termed)?\s*$",
        before,
        re.I,
    )
    if lead:
        return _noun_phrase(lead.group(1))
    return ""


def _expansion_before(before: str, acronym: str) -> str:
    """``trajectory entropy-constrained reinforcement learning`` before ``(TECRL)``.

    The phrase is the shortest run of words ending the text that starts with the acronym's first
    letter and has about as many word parts (hyphen pieces count) as the acronym has letters.
    """
    letters = [c.lower() for c in acronym if c.isalpha()]
    tail = before.split()
    best = ""
    for size in range(1, min(len(tail), 12) + 1):
        phrase = " ".join(tail[-size:])
        if re.search(r"[.;:!?,()]", phrase):
            break
        pieces = [p for p in re.split(r"[\s\-–]+", phrase) if p]
        if letters and pieces[0][:1].lower() == letters[0]:
            best = phrase
            if len(pieces) >= len(letters) - 1:
                break
    return _sentence_case(best) if best else ""


_FILLER = re.compile(
    r"^(?:(?:an?|the|our)\s+)?(?:(?:novel|new|simple|general|first|unified|principled|"
    r"generic|general-purpose|end-to-end)\s+)*",
    re.I,
)


def _noun_phrase(text: str) -> str:
    text = _FILLER.sub("", text.strip())
    words = text.split()
    if len(words) > _DESCRIPTION_WORDS:
        words = cut_at_clause(words, _DESCRIPTION_WORDS)
    return _sentence_case(" ".join(_without_dangling(words)))


# Words a long phrase is cut before: relative and adverbial clauses, prepositional tails, and
# participles that start a modifier ("…method built on …", "…framework trained with …").
_STRONG_BOUNDARY = {"that", "which", "where", "whose", "while", "whereby", "thereby", "wherein"}
_WEAK_BOUNDARY = {
    "by", "to", "for", "with", "using", "via", "through", "in", "on", "and", "from", "across",
    "under", "over", "into", "built", "based", "without", "as", "at", "of",
}  # fmt: skip
_DANGLING = _STOP | {
    "of", "as", "at", "than", "between", "among", "within", "without", "has", "have", "had",
    "was", "were", "be", "been", "being", "can", "could", "may", "might", "will", "would",
    "should", "must", "not", "do", "does", "did", "called", "named", "termed", "dubbed",
}  # fmt: skip
_ADJECTIVE_END = re.compile(r"(?:able|ible|ous|ful|less|ical)$")


def cut_at_clause(words: list[str], most: int, least: int = 2) -> list[str]:
    """The first ``n`` words (``least <= n <= most``) ending before a clause boundary: a comma,
    a relative pronoun ("that", "which"), a preposition or a participle. The strongest boundary
    wins, the earliest among equals (a preposition or participle needs four words before it);
    with no boundary, the first ``most`` words. Never cuts inside a word, never adds "…"."""
    best: tuple[int, int] | None = None  # (strength, n)
    for n in range(least, min(most, len(words) - 1) + 1):
        strength = _boundary(words, n)
        if strength < 3 and n < 4:
            continue  # "Approach that shifts | from …": a weaker boundary needs four words
        if strength and (best is None or strength > best[0]):
            best = (strength, n)
            if strength == 3:
                break
    return words[: best[1]] if best else words[:most]


def _boundary(words: list[str], n: int) -> int:
    """How good a place to end the phrase the gap before ``words[n]`` is (0: not one)."""
    before, after = words[n - 1], words[n].lower().strip("(")
    if before.lower().strip(",;:") in _DANGLING:
        return 0
    if before.endswith((",", ";", ":")) or after in _STRONG_BOUNDARY:
        return 3
    if after in _WEAK_BOUNDARY or (after.isalpha() and after.endswith(("ing", "ed"))):
        return 2 if not before.lower().endswith(("ed", "ing")) else 1
    return 0


def _without_dangling(words: list[str]) -> list[str]:
    """``words`` without a tail that cannot end a title: "of", "the", a lone adjective
    ("the discovery of interpretable"); nothing when nothing else is left."""
    while words:
        last = words[-1].rstrip(",;:~").lower()
        unclosed = (
            last.count("(") > last.count(")")
            or last.count("$") % 2
            or last.endswith(("{", "/", "`", "\\"))
            or not any(c.isalnum() for c in last)
        )
        if unclosed or last in _DANGLING or (last.isalpha() and _ADJECTIVE_END.search(last)):
            words = words[:-1]
        else:
            break
    return words


_CLAUSE = r"(?:[^,;.]|\.(?=\d))"
_ASIDE = re.compile(r",?\s*to\s+(?:the\s+best\s+of\s+)?our\s+knowledge,?\s*", re.I)


def _phrase(text: str, cue_only: bool = False) -> str:
    """A concise title-like phrase: what the paper says it introduces, else its first clause."""
    text = _ASIDE.sub(" ", text)
    for cue in _CUE.finditer(text):
        rest = text[cue.end() : cue.end() + 300]
        rest = re.sub(r"^and\s+\w+\s+", "", rest)
        obj = re.match(r"((?:an?|the)\s+" + _CLAUSE + r"{12,}?)(?=[,;]|\.\s|\.$|$)", rest)
        if obj:
            return _noun_phrase(obj.group(1))
    if cue_only:
        return ""
    sentence = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip())[0].rstrip(".")
    clause = re.split(r",\s+|;\s+|\s+(?:that|which|where|while|because)\s+", sentence)[0]
    return _noun_phrase(clause)


def _sentence_case(text: str) -> str:
    text = re.sub(r"\*+", "", text).strip(" ,;:.")
    return text[:1].upper() + text[1:]


def _clip(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` characters, else cut at the last clause boundary that
    fits (whole words only, no "…")."""
    if len(text) <= limit:
        return text
    words = text[: limit + 1].split()[:-1]  # whole words that fit
    return " ".join(_without_dangling(cut_at_clause(words, len(words), 1))).rstrip(" ,;:")


def title_problems(title: str, abstract: str) -> list[str]:
    """What is wrong with a derived ``title`` for ``abstract``, for tests and benchmarks: longer
    than MAX_TITLE, an ellipsis, a last word cut short (not a whole word of the abstract) or
    left dangling ("of", "the")."""
    problems = []
    if len(title) > MAX_TITLE:
        problems.append(f"{len(title)} characters")
    if title.rstrip().endswith(("…", "...")):
        problems.append("ends in an ellipsis")
    words = title.split()
    last = words[-1].strip(".,;:()[]\"'") if words else ""
    text = plain(abstract).text
    if last and not re.search(r"(?<![\w\-])" + re.escape(last) + r"(?![\w])", text, re.I):
        problems.append(f"last word {last!r} is not a whole word of the abstract")
    if last in _DANGLING and len(words) > 1:  # lower case only: "Skeleton Less is More" is a name
        problems.append(f"ends in {last!r}")
    return problems
