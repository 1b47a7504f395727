"""How good the citation keys of a fresh library are: the 74,728 arXiv records of
``../shared/corpora``, keyed once with their real titles and years given as id-addressed metadata
(a ``metadata.yaml`` mapping each paper id to its title and year) and once without.

    python benchmarks/key_quality.py [--papers N] [--sample 100] [--seed 26] [--checkout DIR]

Each run is a new data folder (a new identity ledger), so every key is a first key. Counted, for
each run:
- keys whose last word is one of ``rlpapers/key_words.py``'s lists (function words, adverbs,
  filler words: ``wang_has``, ``zhao_paper``);
- keys with a word cut in the middle: a word part that is not a run of whole words of the
  paper's name, title or abstract (``stoisser_grouprelativepolicyoptim``);
- keys carrying the paper's year, of those whose year is known (the metadata gives it);
- collisions: keys that took a suffix b, c… because another paper had their base first;
- keys that differ between the two runs;
then a random sample of keys (fixed seed) with each run's key and the real title.

The word lists are read from the checkout measured (``--checkout``, default this one), and the
keys come from its ``rlpapers export -f jsonl``: the code measured is the code a user runs.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ARXIV = ROOT.parent / "shared" / "corpora" / "arxiv-cs-2025-2026.jsonl.gz"
PER_FILE = 5000


def records(count: int | None) -> list[dict[str, Any]]:
    out = []
    with gzip.open(ARXIV, "rt", encoding="utf-8") as lines:
        for line in lines:
            out.append(json.loads(line))
            if count is not None and len(out) == count:
                break
    return out


def write_corpus(folder: Path, papers: list[dict[str, Any]], metadata: bool) -> None:
    """The records in the seed layout, ``PER_FILE`` a file; with ``metadata``, a metadata.yaml of
    their titles and years addressed by paper id."""
    from rlpapers.parse import paper_id

    folder.mkdir(parents=True)
    for n in range(0, len(papers), PER_FILE):
        with open(folder / f"part{n // PER_FILE:02d}.txt", "w", encoding="utf-8") as out:
            out.write("Papers\n\n")
            for r in papers[n : n + PER_FILE]:
                out.write(" · ".join(r["categories"]) + "\n\n" + ", ".join(r["authors"][:8]))
                out.write("\n\n" + " ".join(r["abstract"].split()) + "\n\n")
    if metadata:
        with open(folder / "metadata.yaml", "w", encoding="utf-8") as out:
            for r in papers:
                pid = paper_id(" ".join(r["abstract"].split()))
                entry = {"title": " ".join(r["title"].split()), "year": int(r["date"][:4])}
                out.write(f"{json.dumps(pid)}: {json.dumps(entry, ensure_ascii=False)}\n")


def keyed(checkout: Path, scratch: Path, corpus: Path) -> list[dict[str, Any]]:
    """Every paper of a fresh library over ``corpus``, as ``export -f jsonl`` prints it."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RLPAPERS_")},
        "RLPAPERS_DATA_DIR": str(scratch / "data"),
        "RLPAPERS_INDEX_DIR": str(scratch / "index"),
        "RLPAPERS_CONFIG": str(scratch / "config.yaml"),
        "PYTHONPATH": str(checkout),
    }
    (scratch / "config.yaml").write_text("", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "rlpapers", "--corpus", str(corpus), "export", "-f", "jsonl"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    return [json.loads(line) for line in done.stdout.splitlines()]


def tokens(*texts: str) -> list[str]:
    from anyascii import anyascii

    return re.findall(r"[a-z0-9]+", anyascii(" ".join(texts)).lower())


def consecutive_words(part: str, words: list[str]) -> list[str] | None:
    """The run of consecutive ``words`` that ``part`` is made of (``D-LIF`` gives ``dlif``), or
    None."""
    for start, first in enumerate(words):
        if not part.startswith(first):
            continue
        run, joined = [first], first
        for word in words[start + 1 :]:
            if len(joined) >= len(part) or not part.startswith(joined + word):
                break
            run.append(word)
            joined += word
        if joined == part:
            return run
    return None


def whole_words(part: str, words: list[str], avoided: frozenset[str]) -> list[str] | None:
    """The whole words ``part`` is made of, or None: a run of consecutive words of the text,
    else words of three letters or more taken from anywhere in it (``pipelineleverages`` skips
    the *that* between), else a listed word on its own (the rule's last resort ``paper``)."""
    run = consecutive_words(part, words)
    if run is not None:
        return run
    known = {word for word in words if len(word) >= 3}
    best: list[list[str] | None] = [[]] + [None] * len(part)
    for end in range(3, len(part) + 1):
        for start in range(end - 3, -1, -1):
            earlier = best[start]
            if earlier is not None and part[start:end] in known:
                best[end] = [*earlier, part[start:end]]
                break
    return best[len(part)] or ([part] if part in avoided else None)


def word_parts(key: str, paper: dict[str, Any], year: str) -> list[str]:
    """A key's word parts: without the first author's surname, separators and ``year``."""
    from rlpapers.text import ascii_word, surname

    rest = key
    if paper["authors"]:
        family = ascii_word(surname(paper["authors"][0]), 100)
        if family and rest.startswith(family):
            rest = rest[len(family) :]
    pieces = rest.split(year, 1) if year else [rest]
    return [p for piece in pieces for p in re.split(r"[^a-z0-9]+", piece) if p]


def runs_of(
    key: str, paper: dict[str, Any], words: list[str], avoided: frozenset[str]
) -> list[list[str]] | None:
    """The runs of whole words a key's word parts are made of; None if one is not. The year
    is taken out of the key where it stands as the year, else left in as part of a word (a
    name may hold it: ``TF2025``)."""
    for year in dict.fromkeys((str(paper.get("year") or ""), "")):
        runs = [whole_words(part, words, avoided) for part in word_parts(key, paper, year)]
        if all(run is not None for run in runs):
            return runs  # type: ignore[return-value]
    return None


def measure(papers: list[dict[str, Any]], avoided: frozenset[str]) -> dict[str, Any]:
    """The counts of one run. A key whose word parts are not whole words, but which is another
    key of the run plus one or two letters (``paperb``, ``paperba``), is a collision."""
    keys = {p["key"] for p in papers}
    listed, cut, with_year, year_known, collisions, lone = [], [], 0, 0, 0, 0
    for paper in papers:
        key = paper["key"]
        words = tokens(paper["name"], paper["title"], paper["abstract"])
        runs = runs_of(key, paper, words, avoided)
        if runs is None:
            for n in (1, 2):
                if key[-n:].isalpha() and key[:-n] in keys:
                    runs = runs_of(key[:-n], paper, words, avoided)
                    if runs is not None:
                        collisions += 1
                        break
        if runs is None:
            cut.append(key)
        elif runs and runs[-1][-1] in avoided:
            listed.append(key)
            lone += len(runs[-1]) == 1  # the word is the listed word alone (``wang_has``)
        if paper.get("year"):
            year_known += 1
            with_year += str(paper["year"]) in key
    return {
        "papers": len(papers),
        "listed": listed,
        "cut": cut,
        "with_year": with_year,
        "year_known": year_known,
        "collisions": collisions,
        "lone": lone,
        "distinct": len(keys),
    }


def avoided_words(checkout: Path) -> frozenset[str]:
    """The word lists of the checkout measured (``rlpapers/key_words.py``)."""
    namespace: dict[str, Any] = {}
    source = (checkout / "rlpapers" / "key_words.py").read_text(encoding="utf-8")
    exec(compile(source, "key_words.py", "exec"), namespace)
    return frozenset(namespace["AVOIDED"])


def report(name: str, found: dict[str, Any]) -> Iterable[str]:
    n = found["papers"]
    yield f"{name}: {n:,} papers, {found['distinct']:,} distinct keys"
    yield f"  ending in a listed word: {len(found['listed']):,}  e.g. {found['listed'][:6]}"
    yield f"    of which the word is the listed word alone: {found['lone']:,}"
    yield f"  cut mid-word:            {len(found['cut']):,}  e.g. {found['cut'][:6]}"
    known = found["year_known"]
    carried = f"{found['with_year']:,} of {known:,}" if known else "no year known"
    yield f"  carrying the year:       {carried}"
    yield f"  collisions (b, c, …):    {found['collisions']:,}"


def _build(args: argparse.Namespace, source: list[dict[str, Any]]) -> dict[str, Any]:
    """Each run's records, from a fresh library over the corpus written for it."""
    runs: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name, metadata in (("with metadata", True), ("without metadata", False)):
            folder = Path(scratch) / name.replace(" ", "-")
            write_corpus(folder / "corpus", source, metadata)
            runs[name] = keyed(args.checkout, folder, folder / "corpus")
            if args.save:
                args.save.mkdir(parents=True, exist_ok=True)
                with open(args.save / f"{name.replace(' ', '-')}.jsonl", "w") as out:
                    out.writelines(json.dumps(p, ensure_ascii=False) + "\n" for p in runs[name])
    return runs


def _load(folder: Path, name: str) -> list[dict[str, Any]]:
    with open(folder / f"{name.replace(' ', '-')}.jsonl", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=None, help="the first N records (all)")
    parser.add_argument("--sample", type=int, default=100)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--checkout", type=Path, default=ROOT)
    parser.add_argument("--save", type=Path, help="also write each run's records (jsonl) here")
    parser.add_argument("--load", type=Path, help="measure the records --save wrote there")
    args = parser.parse_args()
    source = records(args.papers)
    avoided = avoided_words(args.checkout)
    if args.load:
        runs = {name: _load(args.load, name) for name in ("with metadata", "without metadata")}
    else:
        runs = _build(args, source)
    print(f"Key quality, {len(source):,} arXiv records, word lists of {len(avoided)} words")
    for name, papers in runs.items():
        print("\n".join(report(name, measure(papers, avoided))))
    with_meta = {p["id"]: p for p in runs["with metadata"]}
    without = {p["id"]: p for p in runs["without metadata"]}
    common = sorted(set(with_meta) & set(without))
    differ = sum(with_meta[i]["key"] != without[i]["key"] for i in common)
    print(f"keys that differ between the two runs: {differ:,} of {len(common):,}")
    print(f"\nRandom sample of {args.sample} papers (seed {args.seed}): with | without | title")
    for pid in random.Random(args.seed).sample(common, min(args.sample, len(common))):
        title = with_meta[pid]["title"][:60]
        print(f"  {with_meta[pid]['key']:<32} {without[pid]['key']:<32} {title}")


if __name__ == "__main__":
    main()
