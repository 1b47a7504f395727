"""The scores ``names.find_name`` gives each way an abstract may introduce a name, in one
table. ``benchmarks/names_eval.py`` measures how well they recover the names of real papers;
a change to one shows there and in the golden records."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Weights:
    """What each way of introducing a name scores (``find_name``): the best-scoring candidate
    wins, the earliest on ties, if it scores at least ``least``."""

    least: float = 3.0  # a candidate scoring less is no name
    first_cue: float = 1.5  # added to the candidates of the first cue that proposes any
    cue_acronym: float = 4.0  # "Expansion (ACRONYM)" right after a cue
    cue_paren: float = 3.5  # a coined token in parentheses after a cue
    cue_phrase: float = 3.5  # a Title-Case Phrase right after a cue
    emphasis_near_cue: float = 7.0  # an emphasised name within a cue's window
    emphasis: float = 3.5  # an emphasised name elsewhere
    repository_in_text: float = 5.5  # a repository URL's coined name, used in the text too
    repository: float = 4.0  # a repository URL's coined name, only in the URL
    subject: float = 3.0  # "X is a …"
    acting_subject: float = 3.0  # "X measures …", X used there for the first time
    passive: float = 5.0  # "X is introduced …"
    appositive: float = 4.0  # "…, X, a framework that …"
    opening: float = 4.5  # "X dataset …", "X introduces …" opening the abstract
    leading: float = 5.0  # a name leading the abstract (``_leading_name``)
    background: float = -4.0  # a token used before the cue's sentence: a baseline
    repeated: float = 0.75  # for each further use of the name (at most two)
    # a token after a cue (``_token_score``): a coined one scores its base plus what applies
    coined: float = 1.0
    coined_first: float = 2.0  # the first token after the cue
    coined_apposition: float = 1.5  # set off by a comma, colon, parenthesis or dash
    coined_naming: float = 3.0  # after a naming cue ("called", "dubbed")
    coined_headed: float = 1.0  # followed by a head noun ("X framework")
    coined_labelled: float = 2.5  # after one ("a new paradigm X")
    proper: float = 3.0  # a capitalised word set off after the cue (+ proper_naming)
    proper_naming: float = 3.0
    proper_hyphenated: float = 3.0  # a capitalised hyphenated word before a head noun


WEIGHTS = Weights()
