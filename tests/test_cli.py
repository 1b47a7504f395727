"""CLI behaviour through CliRunner: formats, filters, exit codes, errors on stderr."""

from __future__ import annotations

import json

import yaml

from .conftest import DATA, RECORD_FIELDS, SEEDS, run


def test_list_json_prints_the_40_bundled_papers_with_the_stable_schema():
    records = json.loads(run("list", "--format", "json").stdout)
    assert len(records) == 40
    assert all(set(RECORD_FIELDS) <= set(r) for r in records)
    assert sum(bool(r["authors"]) for r in records) == 20


def test_default_format_in_a_pipe_is_tsv():
    from rlpapers.cli.render import TSV_COLUMNS

    lines = run("list").stdout.splitlines()
    assert len(lines) == 40
    assert all(len(line.split("\t")) == len(TSV_COLUMNS) for line in lines)


def test_jsonl_yaml_ids_and_table_formats():
    assert len(run("list", "-f", "jsonl").stdout.splitlines()) == 40
    assert len(yaml.safe_load(run("list", "-f", "yaml").stdout)) == 40
    ids = run("list", "-f", "ids").stdout.split()
    assert len(ids) == 40 and all(len(i) == 10 for i in ids)
    table = run("list", "-f", "table", "--author", "Bengio").stdout
    assert "yun_activeattacks" in table and "1 paper" in table


def test_unknown_format_is_a_usage_error():
    result = run("list", "--format", "docx", code=2)
    assert "docx" in result.stderr


def test_filters_and_nothing_found_exit_1():
    out = run("list", "--category", "Planning", "-f", "ids").stdout.split()
    assert len(out) >= 1
    result = run("list", "--author", "Nobody Atall", code=1)
    assert result.stdout == "" and "no papers match" in result.stderr


def test_show_by_key_id_and_stdin():
    paper = json.loads(run("show", "qerl", "-f", "json").stdout)[0]
    assert paper["name"] == "QeRL"
    again = json.loads(run("show", paper["id"][:6], "-f", "json").stdout)
    assert again[0]["id"] == paper["id"]
    piped = run("show", "-", "-f", "ids", input="qerl\npcl\n").stdout.split()
    assert len(piped) == 2
    card = run("show", "qerl", "-f", "table").stdout
    assert "QeRL: Quantization" in card and "abstract" not in card.lower().split("qerl")[0]


def test_show_unknown_reference_is_exit_1_with_a_message():
    result = run("show", "nosuchkey", code=1)
    assert "nosuchkey" in result.stderr and result.stdout == ""


def test_parse_a_file_and_stdin():
    records = json.loads(run("parse", DATA / "parse" / "missing_lines.txt", "-f", "json").stdout)
    assert [r["authors_truncated"] for r in records] == [True, False, True]
    data = (DATA / "parse" / "crlf_bom.txt").read_bytes()
    assert len(run("parse", "-", "-f", "ids", input=data).stdout.split()) == 3


def test_parse_binary_file_is_exit_2_with_one_line(tmp_path):
    path = tmp_path / "x.pdf"
    path.write_bytes(b"%PDF-1.4\x00\x01\x02")
    result = run("parse", path, code=2)
    assert result.stderr.count("\n") == 1 and "x.pdf:1: binary file" in result.stderr


def test_parse_header_only_file_warns_and_exits_1():
    result = run("parse", DATA / "parse" / "header_only.txt", code=1)
    assert "warning:" in result.stderr and "no records" in result.stderr


def test_missing_corpus_is_exit_2():
    result = run("--corpus", "/no/such/dir", "list", code=2)
    assert result.stderr == "error: corpus path does not exist: /no/such/dir\n"


def test_corpus_option_and_environment(tmp_path, monkeypatch):
    (tmp_path / "one.txt").write_text("Topic\n\nWe propose FooRL, a method. It is good.\n")
    assert run("--corpus", tmp_path / "one.txt", "list", "-f", "ids").stdout.count("\n") == 1
    monkeypatch.setenv("RLPAPERS_CORPUS", str(tmp_path))
    assert run("list", "-f", "ids").stdout.count("\n") == 1


def test_config_lists_files_and_origins():
    out = run("config", "-f", "json").stdout
    rows = json.loads(out)
    assert {"setting": "corpus path", "value": str(SEEDS), "from": "bundled seeds"} in rows
    assert sum(r["setting"] == "corpus file" for r in rows) == 2


def test_invalid_metadata_is_exit_2_naming_file_and_line(seeds_copy):
    (seeds_copy / "metadata.yaml").write_text("qerl: [1, 2\n")
    result = run("--corpus", seeds_copy, "list", code=2)
    assert "metadata.yaml:" in result.stderr and "Traceback" not in result.stderr


def test_version():
    assert run("--version").stdout.startswith("rlpapers ")


def test_build_progress_shows_only_on_a_terminal_and_after_a_second(monkeypatch):
    from rlpapers.cli import render

    clock = iter([0.0, 0.5, 1.5, 2.0, 3.0])
    progress = render.BuildProgress()
    progress._clock = lambda: next(clock)
    monkeypatch.setattr(render, "_isatty", lambda stream: True)
    opened = []
    monkeypatch.setattr(
        progress, "_open", lambda total: opened.append(total) or _fake_bar(progress)
    )
    progress(200, 1000)  # t=0: starts the clock
    progress(400, 1000)  # t=0.5: too early for a bar
    assert opened == []
    progress(600, 1000)  # t=1.5: a bar appears
    assert opened == [1000]
    progress(1000, 1000)  # done: the bar goes away
    assert progress._bar is None

    quiet = render.BuildProgress()
    monkeypatch.setattr(render, "_isatty", lambda stream: False)
    quiet(1, 2)
    assert quiet._start is None  # in a pipe it does nothing at all


def _fake_bar(progress):
    class Bar:
        def update(self, *args, **kwargs):
            pass

        def stop(self):
            pass

    progress._bar = Bar()
    progress._task = 0


def test_hit_card_styles_title_bold_and_only_the_title(monkeypatch, capsys):
    from rich.console import Console

    from rlpapers.cli import render
    from rlpapers.hit import Hit
    from rlpapers.model import Paper

    console = Console(
        force_terminal=True, color_system="standard", width=80, highlight=False, no_color=False
    )
    monkeypatch.setattr(render, "_console", lambda stderr=False: console)
    paper = Paper(id="x", abstract="abc", key="k", title="A Title", authors=("Ada Lovelace",))
    render.hits([Hit(paper, 1.0, 1, "about entropy here", ((6, 13),))], "table")
    lines = capsys.readouterr().out.splitlines()
    title, authors, snippet = lines[1], lines[2], lines[3]
    assert "\x1b[1m" in title and "A Title" in title
    assert "\x1b[1m" not in authors and "\x1b[32m" in authors  # green, not bold
    assert "\x1b[1;33m" in snippet or "\x1b[33;1m" in snippet  # the matched word stands out
    assert snippet.startswith("    ")
