"""Parse accuracy on real papers: write the arXiv records in several layouts, parse, compare.

    pip install -e '.[bench]'
    python benchmarks/parse_accuracy.py                     # every layout, 75k records (minutes)
    python benchmarks/parse_accuracy.py --sample 5000       # a quick look
    python benchmarks/parse_accuracy.py --layouts seed --baseline ../rlpapers-before
                                                            # also time an older checkout

Each layout is written to a temporary folder, parsed file by file with ``parse_bytes`` (over
``--jobs`` processes; titles are not derived, they do not bear on roles) and compared with the JSON records it was written from. The ``seed`` layout
is exactly what ``benchmarks/bench.py`` writes: 75,000 papers (the records repeated with a marker
beyond 74,728), one file per month, a header line, then per paper a category line, an author line
(the first 12 names, then ``et al.``) and the abstract wrapped at 80 columns. The other layouts
write each record once: ``all-authors`` writes every name on the one author line (up to 3,303),
``dash``, ``semicolon``, ``pipe`` and ``slash`` join the categories with that separator instead
of `` · ``.

A record belongs to a paper when it starts on that paper's abstract line; any other record is
"not a paper". Authors are compared by their words (affiliation marks, a lone ``:``, and a split
on ``;`` or ``and`` are not differences), together with the "cut short" flag; categories exactly
(with a separator other than `` · ``, as the line splits at every separator: ``I.2; I.2.7``
joined by ``;`` is two parts); abstracts by their words as written (lines wrapped inside a URL
stay apart), after the joining rules of docs/parsing.md (whitespace and control characters
collapse to one space; a hyphen at a line end may be kept or mended). A paper counts as
recognised when its record exists, and its authors and categories are those written (or none,
where none were written).

``--baseline CHECKOUT`` times the full parse (``parse_file``) of the seed layout (or
``--timing-layout``) with this checkout and with the ``rlpapers`` package of another checkout, in
pairs run side by side, and prints both CPU times: compare the ratio, absolute times drift on
shared machines.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpora" / "arxiv-cs-2025-2026.jsonl.gz"
SEED_SIZE = 75_000
MAX_AUTHORS = 12  # bench.py writes the first 12 names, then "et al."


# --- the truth ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Truth:
    """One paper as written: what the parser should give back."""

    abstract: str
    authors: tuple[str, ...]
    truncated: bool
    every_author: tuple[str, ...]
    categories: tuple[str, ...]
    month: str
    copy: int


def load_truth(path: Path, size: int | None) -> list[Truth]:
    """The records as bench.py writes them; ``size`` beyond the file repeats them with a marker."""
    from bench import load_records  # the same reading of the arXiv file as the benchmark's

    records = load_records(path, size)
    size = size or len(records)
    papers = []
    for i in range(size):
        record = records[i % len(records)]
        copy = i // len(records)
        abstract = record["abstract"] + (f" [copy {copy + 1}]" if copy else "")
        papers.append(
            Truth(
                abstract=" ".join(abstract.split()),
                authors=tuple(record["authors"][:MAX_AUTHORS]),
                truncated=len(record["authors"]) > MAX_AUTHORS,
                every_author=tuple(record["authors"]),
                categories=tuple(record["categories"]),
                month=f"{record['date'][:7]}-{copy}",
                copy=copy,
            )
        )
    return papers


# --- layouts ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Layout:
    name: str
    description: str
    lines: Callable[[int], tuple[bool, bool]]  # paper index -> (category line?, author line?)
    width: int = 80  # abstracts are wrapped here; author and category lines only when not 80
    newline: str = "\n"
    files: int = 0  # 0: one file per month (bench.py); n: papers dealt into n files
    repeat: bool = False  # the seed layout's 75,000 papers rather than 74,728
    all_authors: bool = False  # every name on the author line, rather than 12 and "et al."
    separator: str = " · "  # between categories


def _mixed(index: int) -> tuple[bool, bool]:
    rng = random.Random(index)
    return rng.random() < 0.5, rng.random() < 0.5


LAYOUTS = [
    Layout("seed", "bench.py's files: categories, authors, abstract", lambda i: (True, True), repeat=True),
    Layout("seed-8", "the same, all papers dealt into 8 files", lambda i: (True, True), files=8),
    Layout("abstracts", "abstracts only", lambda i: (False, False)),
    Layout("authors", "authors without categories", lambda i: (False, True)),
    Layout("categories", "categories without authors", lambda i: (True, False)),
    Layout("mixed", "each paper's lines drawn at random", _mixed),
    Layout("crlf", "seed layout, CRLF line ends", lambda i: (True, True), newline="\r\n"),
    Layout("wrap60", "seed layout, every line wrapped at 60", lambda i: (True, True), width=60),
    Layout("wrap100", "seed layout, every line wrapped at 100", lambda i: (True, True), width=100),
    Layout("all-authors", "seed layout, every name on the author line", lambda i: (True, True), all_authors=True),
    Layout("dash", "seed layout, categories joined by ' - '", lambda i: (True, True), separator=" - "),
    Layout("semicolon", "seed layout, categories joined by '; '", lambda i: (True, True), separator="; "),
    Layout("pipe", "seed layout, categories joined by ' | '", lambda i: (True, True), separator=" | "),
    Layout("slash", "seed layout, categories joined by ' / '", lambda i: (True, True), separator=" / "),
]  # fmt: skip


def author_line(paper: Truth, layout: Layout) -> str:
    if layout.all_authors:
        return ", ".join(paper.every_author)
    return ", ".join(paper.authors) + (", et al." if paper.truncated else "")


def expected_authors(paper: Truth, layout: Layout) -> tuple[tuple[str, ...], bool]:
    return (paper.every_author, False) if layout.all_authors else (paper.authors, paper.truncated)


def expected_categories(paper: Truth, layout: Layout) -> tuple[str, ...]:
    """The parts as written: the record's, or those of the line split at each separator."""
    parts = paper.categories
    if layout.separator != " · ":
        bare = re.escape(layout.separator.strip())
        pattern = rf"\s+{bare}\s+" if layout.separator == " - " else rf"\s*{bare}\s*"
        parts = tuple(re.split(pattern, layout.separator.join(parts)))
    return tuple(" ".join(c.split()) for c in parts if c.strip())


def paper_blocks(paper: Truth, layout: Layout, index: int) -> list[str]:
    categories, authors = layout.lines(index)
    blocks = []
    if categories:
        blocks.append(layout.separator.join(paper.categories))
    if authors:
        blocks.append(author_line(paper, layout))
    if layout.width != 80:
        blocks = ["\n".join(textwrap.wrap(block, layout.width)) for block in blocks]
    blocks.append("\n".join(textwrap.wrap(paper.abstract, layout.width)))
    return blocks


@dataclass
class Expected:
    """What one written file should parse into: per paper, the abstract's line and its truth."""

    lines: list[int] = field(default_factory=list)
    papers: list[tuple[Truth, bool, bool]] = field(default_factory=list)
    abstracts: list[str] = field(default_factory=list)  # abstract_key of the lines as written


def groups(papers: list[Truth], layout: Layout) -> dict[str, list[tuple[int, Truth]]]:
    """The papers of each file: by month as bench.py writes them, or dealt into ``files``."""
    files: dict[str, list[tuple[int, Truth]]] = defaultdict(list)
    for i, paper in enumerate(papers):
        files[f"part-{i % layout.files}" if layout.files else paper.month].append((i, paper))
    return dict(sorted(files.items()))


def write_file(
    path: Path, header: str, papers: list[tuple[int, Truth]], layout: Layout
) -> Expected:
    """Write one file of a layout; return what it should give."""
    blocks, want = [header], Expected()
    line = 3  # the header, then a blank line
    for i, paper in papers:
        written = paper_blocks(paper, layout, i)
        for block in written[:-1]:
            line += block.count("\n") + 2
        want.lines.append(line)
        want.papers.append((paper, *layout.lines(i)))
        want.abstracts.append(abstract_key(written[-1]))
        line += written[-1].count("\n") + 2
        blocks += written
    text = "\n\n".join(blocks) + "\n"
    path.write_bytes(text.replace("\n", layout.newline).encode("utf-8"))
    return want


def write_layout(papers: list[Truth], layout: Layout, folder: Path) -> dict[Path, Expected]:
    return {
        folder / f"arxiv-{group}.txt": write_file(
            folder / f"arxiv-{group}.txt", f"arXiv cs {group}", members, layout
        )
        for group, members in groups(papers, layout).items()
    }


# --- comparing ----------------------------------------------------------------------------------

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\ufeff]")
_LINE_END_HYPHEN = re.compile(r"(?<=[^\W\d_])-\s+")
_INNER_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?=[^\W\d_])")
_NAME_WORD = re.compile(r"[^\W\d_]+")


def abstract_key(text: str) -> str:
    """An abstract's words, after the joining rules: whitespace and control characters collapse,
    a hyphen at a line end may be mended or kept, so hyphens between letters are dropped."""
    text = " ".join(_CONTROL.sub(" ", text).split())
    return _INNER_HYPHEN.sub("", _LINE_END_HYPHEN.sub("-", text))


def authors_key(names: tuple[str, ...]) -> list[str]:
    """The names' words: marks, a lone ':' and where a line was split on ';' or 'and' do not count."""
    return [w for w in _NAME_WORD.findall(" ".join(names)) if w != "and"]


@dataclass
class FileResult:
    papers: int = 0
    records: int = 0
    not_papers: list[str] = field(default_factory=list)
    missing: int = 0
    authors_wrong: list[str] = field(default_factory=list)
    categories_wrong: list[str] = field(default_factory=list)
    abstracts_wrong: int = 0
    recognised: int = 0
    warnings: list[str] = field(default_factory=list)
    cpu_s: float = 0.0


class NoTitles(Mapping[str, tuple[str, str]]):
    """``parse_bytes``'s cache of derived titles, answering for every id: titles do not bear on
    roles, and deriving them is most of the parse time."""

    def __getitem__(self, key: str) -> tuple[str, str]:
        return ("", "")

    def __contains__(self, key: object) -> bool:
        return True

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 1  # not empty, or parse_text would not use it


def check_file(path: Path, want: Expected, layout: Layout) -> FileResult:
    from rlpapers.parse import parse_bytes

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        records = parse_bytes(path.read_bytes(), path.name, NoTitles())
        cpu = time.process_time() - start
    result = FileResult(papers=len(want.lines), records=len(records), cpu_s=cpu)
    result.warnings = [str(w.message) for w in caught]
    by_line = {record.line: record for record in records}
    written = set(want.lines)
    result.not_papers = [
        f"{path.name}:{r.line}: {r.abstract[:100]}" for r in records if r.line not in written
    ]
    for line, (truth, has_categories, has_authors), abstract in zip(
        want.lines, want.papers, want.abstracts, strict=True
    ):
        record = by_line.get(line)
        if record is None:
            result.missing += 1
            continue
        where = f"{path.name}:{line}"
        ok = True
        authors = expected_authors(truth, layout) if has_authors else ((), False)
        if (authors_key(record.authors), record.authors_truncated) != (
            authors_key(authors[0]),
            authors[1],
        ):
            ok = False
            result.authors_wrong.append(f"{where}: {record.authors!r} for {authors[0]!r}")
        categories = expected_categories(truth, layout) if has_categories else ()
        if categories != record.categories:
            ok = False
            result.categories_wrong.append(f"{where}: {record.categories!r} for {categories!r}")
        if abstract_key(record.abstract) != abstract:
            result.abstracts_wrong += 1
        result.recognised += ok
    return result


@dataclass
class LayoutResult:
    layout: str
    files: int = 0
    total: FileResult = field(default_factory=FileResult)

    def add(self, part: FileResult) -> None:
        self.files += 1
        t = self.total
        t.papers += part.papers
        t.records += part.records
        t.not_papers += part.not_papers
        t.missing += part.missing
        t.authors_wrong += part.authors_wrong
        t.categories_wrong += part.categories_wrong
        t.abstracts_wrong += part.abstracts_wrong
        t.recognised += part.recognised
        t.warnings += part.warnings
        t.cpu_s += part.cpu_s


def _check(task: tuple[str, Path, str, list[tuple[int, Truth]]]) -> FileResult:
    """Write one file, parse it and compare (in a worker process), then remove it."""
    name, folder, group, papers = task
    layout = next(layout for layout in LAYOUTS if layout.name == name)
    path = folder / f"{name}-{group}.txt"
    want = write_file(path, f"arXiv cs {group}", papers, layout)
    try:
        return check_file(path, want, layout)
    finally:
        path.unlink()


def run_layout(
    papers: list[Truth], layout: Layout, folder: Path, pool: ProcessPoolExecutor
) -> LayoutResult:
    result = LayoutResult(layout.name)
    tasks = [
        (layout.name, folder, group, members) for group, members in groups(papers, layout).items()
    ]
    for part in pool.map(_check, tasks):
        result.add(part)
    return result


# --- timing against another checkout -----------------------------------------------------------


def time_files(folder: Path) -> float:
    """CPU seconds to parse every file of ``folder`` with the ``rlpapers`` on ``sys.path``."""
    from rlpapers.parse import parse_file

    total = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in sorted(folder.glob("*.txt")):
            start = time.process_time()
            parse_file(path)
            total += time.process_time() - start
    return total


def _timer(checkout: Path, folder: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    code = (
        "import sys, rlpapers; sys.path.insert(0, sys.argv[1]); import parse_accuracy as p; "
        "print(p.time_files(__import__('pathlib').Path(sys.argv[2])), rlpapers.__file__)"
    )
    argv = [sys.executable, "-c", code, str(Path(__file__).parent), str(folder)]
    # run in the folder of corpus files, so that no rlpapers in the current folder comes first
    return subprocess.Popen(argv, env=env, cwd=folder, stdout=subprocess.PIPE, text=True)


def compare_speed(
    papers: list[Truth], layout: Layout, baseline: Path, folder: Path, rounds: int
) -> dict[str, Any]:
    """Parse ``layout`` with this checkout and ``baseline`` side by side, ``rounds`` times."""
    write_layout(papers, layout, folder)
    times: dict[str, list[float]] = {"this": [], "baseline": []}
    for _ in range(rounds):
        checkouts = {"this": ROOT, "baseline": baseline.resolve()}
        procs = {name: _timer(checkout, folder) for name, checkout in checkouts.items()}
        for name, proc in procs.items():
            out, _ = proc.communicate()
            seconds, module = out.split() if proc.returncode == 0 else ("", "")
            if not module.startswith(str(checkouts[name])):
                raise RuntimeError(f"timing {name} failed or imported rlpapers from {module}")
            times[name].append(float(seconds))
    best = {name: min(values) for name, values in times.items()}
    return {
        "cpu_s": best,
        "runs": times,
        "ratio": best["this"] / best["baseline"],
    }


# --- report -------------------------------------------------------------------------------------


def table(results: list[LayoutResult]) -> str:
    head = (
        "| layout | files | papers | records | not papers | missing | authors differ "
        "| categories differ | abstracts differ | recognised | warnings |"
    )
    rows = [head, "|" + " --- |" * 11]
    for r in results:
        t = r.total
        share = 100 * t.recognised / t.papers if t.papers else 0.0
        rows.append(
            f"| {r.layout} | {r.files} | {t.papers:,} | {t.records:,} | {len(t.not_papers)} "
            f"| {t.missing} | {len(t.authors_wrong)} | {len(t.categories_wrong)} "
            f"| {t.abstracts_wrong} | {share:.3f}% | {len(t.warnings)} |"
        )
    return "\n".join(rows)


def examples(results: list[LayoutResult], per_kind: int) -> Iterator[str]:
    for r in results:
        t = r.total
        kinds = {
            "not a paper": t.not_papers,
            "authors": t.authors_wrong,
            "categories": t.categories_wrong,
            "warning": t.warnings,
        }
        for kind, items in kinds.items():
            for item in items[:per_kind]:
                yield f"{r.layout} {kind}: {item}"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the arXiv .jsonl.gz")
    parser.add_argument("--sample", type=int, help="only the first N records (default: all)")
    names = [layout.name for layout in LAYOUTS]
    parser.add_argument(
        "--layouts", nargs="*", choices=names, default=names, help="none: only --baseline timing"
    )
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument("--baseline", type=Path, help="a checkout to time the seed layout against")
    parser.add_argument("--rounds", type=int, default=3, help="timing rounds with --baseline")
    parser.add_argument(
        "--timing-layout", choices=names, default="seed", help="the layout --baseline times"
    )
    parser.add_argument("--examples", type=int, default=5, help="failures to show per kind")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if not args.corpus.exists():
        parser.error(f"{args.corpus} not found; pass --corpus")

    started = time.perf_counter()
    seed = load_truth(args.corpus, args.sample or SEED_SIZE)
    papers = [paper for paper in seed if not paper.copy]
    results = []
    timed = next(layout for layout in LAYOUTS if layout.name == args.timing_layout)
    with tempfile.TemporaryDirectory(prefix="parse-accuracy-") as tmp:
        with ProcessPoolExecutor(args.jobs) as pool:
            for layout in LAYOUTS:
                if layout.name in args.layouts:
                    chosen = seed if layout.repeat else papers
                    results.append(run_layout(chosen, layout, Path(tmp), pool))
                    print(table(results[-1:]).splitlines()[-1], file=sys.stderr)
        speed = (
            compare_speed(
                seed if timed.repeat else papers, timed, args.baseline, Path(tmp), args.rounds
            )
            if args.baseline
            else None
        )

    print(f"{len(papers):,} records ({len(seed):,} in the seed layout), {args.jobs} processes\n")
    print(table(results))
    if speed:
        cpu = speed["cpu_s"]
        print(
            f"\n{timed.name} layout parse CPU s (best of {args.rounds}): this {cpu['this']:.1f}, "
            f"baseline {cpu['baseline']:.1f}, ratio {speed['ratio']:.3f}"
        )
    shown = list(examples(results, args.examples))
    if shown:
        print("\n" + "\n".join(shown))
    print(f"\n{time.perf_counter() - started:.0f} s in all", file=sys.stderr)
    if args.json:
        data = {r.layout: {"files": r.files, **r.total.__dict__} for r in results}
        args.json.write_text(json.dumps({"layouts": data, "speed": speed}, indent=1))


if __name__ == "__main__":
    main()
