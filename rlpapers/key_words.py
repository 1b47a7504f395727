"""The words a citation key never ends in: function words, adverbs and filler words.

A key's word should tell one paper from another. These three lists hold words that tell nothing:
``wang_has``, ``wang_firstly``, ``zhao_paper``. They are fixed here, apart from the rule that uses
them (``keys.py``), so that ``benchmarks/key_quality.py`` measures every rule against the same
lists. The rule avoids more than these (``keys.GENERIC_WORDS``: words of the field itself, such
as *learning*, and any word ending in *-ly*); the lists are what a key must never end in.

All words are lower-case ASCII, as a key's words are once folded (``text.ascii_word``).
"""

from __future__ import annotations

#: Articles, determiners, pronouns, prepositions, conjunctions, auxiliary and modal verbs.
FUNCTION_WORDS = frozenset(
    """
    a an the this that these those which who whom whose what when where why how whether
    it its itself they them their theirs themselves we us our ours ourselves you your i me my
    he him his she her one ones
    of for and or nor but in on to with via by from into onto over under between through
    across without within while than then as at about above after against along among
    amongst around before behind below beneath beside besides beyond despite during except
    inside like near off out outside past per since throughout till until toward towards
    unlike up upon down versus vs whereas whereby wherein thereby therein if so because
    although though unless once either neither both each all any some such no not nor
    many much more most less least few several other others another same own only
    is are was were be been being am has have had having do does did doing done
    can could may might must shall should will would
    there here
    """.split()
)

#: Adverbs, the connectives of a sentence (and of a derived title that begins mid-sentence).
ADVERBS = frozenset(
    """
    firstly secondly thirdly finally lastly recently currently however moreover furthermore
    additionally consequently therefore thus hence nevertheless nonetheless meanwhile instead
    otherwise indeed notably specifically particularly especially typically generally usually
    often always never sometimes already still yet again further now today increasingly
    significantly substantially largely widely mainly primarily mostly simply merely just
    rather quite almost nearly approximately respectively accordingly subsequently previously
    initially ultimately eventually effectively efficiently consistently jointly explicitly
    implicitly directly automatically dynamically adaptively iteratively simultaneously
    empirically theoretically experimentally formally crucially importantly interestingly
    surprisingly remarkably unfortunately traditionally conventionally commonly frequently
    rarely together alike well also too very even overall namely i.e e.g etc
    """.split()
)

#: Words of an abstract's prose that fit any paper: what it is, what it does, what it claims.
FILLER_WORDS = frozenset(
    """
    paper papers work works article letter note study studies recent novel new
    propose proposes proposed proposing present presents presented presenting
    introduce introduces introduced introducing show shows shown showing demonstrate
    demonstrates demonstrated investigate investigates investigated explore explores explored
    address addresses addressed develop develops developed consider considers considered
    describe describes described report reports reported discuss discusses discussed
    aim aims aimed focus focuses focused seek seeks attempt attempts try tries
    existing current prior previous various different key main important significant
    result results finding findings experiment experiments extensive contribution
    contributions effectiveness performance way ways use uses using used based given known
    make makes made take takes taken get gets need needs able due achieve achieves achieved
    enable enables enabled provide provides provided including called named termed dubbed
    remain remains become becomes lead leads allow allows help helps yield yields
    """.split()
)

#: Every word a key may not end in.
AVOIDED = FUNCTION_WORDS | ADVERBS | FILLER_WORDS
