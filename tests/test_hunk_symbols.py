"""Symbols come from git's own hunk headers: prdup's attributes file turns on git's diff driver
for each language, and the index records the function or class each hunk sits in."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from index.git.doc_sections import headings, section_at
from index.git.hunk_symbols import CONTEXT, DEFINITION, header_kind, header_symbol
from index.indexer import index_repository
from index.metadata import taken_over
from tests.repo_builder import RepoBuilder

# (path, source before, the line a PR changes, what it becomes, the enclosing definition)
SOURCES = [
    (
        "pkg/loader.py",
        "import os\n\n\nclass Loader:\n    def load(self, path):\n"
        "        text = open(path).read()\n        return text\n",
        "        text = open(path).read()",
        "        text = open(path, encoding='utf-8').read()",
        "load",
    ),
    (
        "server/serve.go",
        'package server\n\nimport "net"\n\nfunc (s *Server) Serve(l net.Listener) error {\n'
        "\tconn, err := l.Accept()\n\t_ = conn\n\treturn err\n}\n",
        "\tconn, err := l.Accept()",
        "\tconn, err := s.accept(l)",
        "Serve",
    ),
    (
        "lib/cache.rb",
        "module Store\n  class Cache\n    def fetch(key)\n      value = @data[key]\n"
        "      value\n    end\n  end\nend\n",
        "      value = @data[key]",
        "      value = @data.fetch(key, nil)",
        "fetch",
    ),
    (
        "src/Parser.java",
        "package demo;\n\npublic class Parser {\n    public int parseCount(String text) {\n"
        "        int count = Integer.parseInt(text);\n        return count;\n    }\n}\n",
        "        int count = Integer.parseInt(text);",
        "        int count = Integer.parseInt(text.trim());",
        "parseCount",
    ),
    (
        "src/buffer.c",
        "#include <stdlib.h>\n\nstatic int grow_buffer(struct buf *b, size_t need)\n{\n"
        "\tb->data = realloc(b->data, need);\n\treturn b->data != NULL;\n}\n",
        "\tb->data = realloc(b->data, need);",
        "\tb->data = realloc(b->data, need * 2);",
        "grow_buffer",
    ),
    (
        "src/Mailer.php",
        "<?php\n\nclass Mailer\n{\n    public function send($message)\n    {\n"
        "        $sent = mail($message->to, $message->subject);\n        return $sent;\n    }\n}\n",
        "        $sent = mail($message->to, $message->subject);",
        "        $sent = mail($message->to, $message->subject, $message->body);",
        "send",
    ),
]


def _symbols(db: Path, number: int) -> set[tuple[str, str, str]]:
    with sqlite3.connect(db) as conn:
        return set(
            conn.execute(
                "SELECT s.path, s.qualified, s.side FROM symbols s JOIN changes c "
                "ON c.id = s.change_id WHERE c.number = ?",
                (number,),
            )
        )


@pytest.mark.parametrize(
    ("path", "source", "old", "new", "symbol"), SOURCES, ids=[s[0] for s in SOURCES]
)
def test_a_pr_records_the_definition_git_names_for_its_hunk(
    builder: RepoBuilder, db_path: Path, path: str, source: str, old: str, new: str, symbol: str
):
    builder.commit("Initial", {path: source})
    builder.pr_branch(5, [("Change one line", {path: source.replace(old, new)})])

    index_repository(builder.path, db_path=db_path)

    assert _symbols(db_path, 5) == {(path, symbol, "-"), (path, symbol, "+")}


def test_all_six_languages_in_one_landed_change(builder: RepoBuilder, db_path: Path):
    """A squash-merged PR touching every language: one symbol per file, from history."""
    builder.commit("Initial", {path: source for path, source, *_ in SOURCES})
    changed = {path: source.replace(old, new) for path, source, old, new, _ in SOURCES}
    builder.pr_branch(8, [("Touch everything", changed)])
    builder.merge_pr(8, how="squash")

    index_repository(builder.path, db_path=db_path)

    assert {(p, name) for p, name, _ in _symbols(db_path, 8)} == {
        (path, symbol) for path, _, _, _, symbol in SOURCES
    }


def test_a_repository_s_own_attributes_still_decide(builder: RepoBuilder, db_path: Path):
    """`.gitattributes` in the repository beats prdup's file: here it turns drivers off."""
    path, source, old, new, _ = SOURCES[0]
    builder.commit("Initial", {path: source, ".gitattributes": "*.py -diff\n"})
    builder.pr_branch(6, [("Change", {path: source.replace(old, new)})])

    index_repository(builder.path, db_path=db_path)

    assert _symbols(db_path, 6) == set()  # a "binary" file: no hunks, no symbols


@pytest.mark.parametrize(
    ("path", "header", "symbol"),
    [
        ("a.py", "def load(self, path):", "load"),
        ("a.py", "async def fetch(url):", "fetch"),
        ("a.py", "class Loader(Base):", "Loader"),
        ("a.go", "func (s *Server) Serve(l net.Listener) error {", "Serve"),
        ("a.go", "type Config struct {", "Config"),
        ("a.rb", "def self.build(options)", "build"),
        ("a.rb", "class Cache < Base", "Cache"),
        ("A.java", "public static int parseCount(String text) {", "parseCount"),
        ("a.c", "static int grow_buffer(struct buf *b, size_t need)", "grow_buffer"),
        ("a.cpp", "void Widget::paint(Canvas &c) const", "Widget::paint"),
        ("a.php", "public function send($message)", "send"),
        ("a.rs", "pub fn parse<T>(input: &str) -> T {", "parse"),
        ("a.kt", "fun render(view: View)", "render"),
        ("a.cs", "public async Task<int> Get(int id)", "Get"),
        ("a.sh", "cleanup() {", "cleanup"),
        ("a.js", "function render(props) {", "render"),
        ("a.py", "if ready:", None),  # a header that names no definition
        ("check-classes.test", "[case testClassMethod]", "[case testClassMethod]"),
        ("README.md", "## Install", "## Install"),
        ("a.py", "", None),
    ],
)
def test_header_symbol_reads_the_defined_name(path: str, header: str, symbol: str | None):
    assert header_symbol(path, header) == symbol


@pytest.mark.parametrize(
    ("path", "header", "kind"),
    [
        ("a.rb", "def self.build(options)", DEFINITION),
        ("a.rb", "class Cache < Base", DEFINITION),
        ("a.rb", "module ActiveSupport", CONTEXT),  # a namespace around the hunk
        ("a.cpp", "namespace detail {", CONTEXT),
        ("a.c", "static int grow_buffer(struct buf *b, size_t need)", DEFINITION),
        ("a.js", "function render(props) {", DEFINITION),
        ("a.js", "export default Component.extend({", CONTEXT),  # git's default rule: a call
        ("a.js", "describe('the cache', function () {", CONTEXT),
        ("a.js", "moduleFor('Helpers', class extends RenderingTestCase {", CONTEXT),
        ("README.md", "## Install", CONTEXT),  # a document: named by its section instead
        ("docs/guide.rst", "Run the installer with the default options.", CONTEXT),
    ],
)
def test_only_a_header_that_defines_its_name_is_a_definition(path: str, header: str, kind: str):
    assert header_kind(path, header) == kind


def test_a_documents_sections_are_its_titles_of_every_kind():
    text = (
        "Intro.\n\nGuide\n=====\n\nText.\n\n## Install ##\n\n```sh\n# not a title\n```\n"
        "Usage\n-----\n\n== Options\n\n.. note::\n   ------\n"
    )
    assert headings(text) == [(3, "Guide"), (8, "Install"), (13, "Usage"), (16, "Options")]
    assert [section_at(headings(text), n) for n in (1, 3, 12, 15)] == [
        None,
        "Guide",
        "Install",
        "Usage",
    ]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Carry #123", (123,)),
        ("Finishes #12.", (12,)),
        ("carries PR #5 and #6", (5, 6)),
        ("This replaces #1, #2", (1, 2)),
        ("Continuation of https://github.com/o/r/pull/77", (77,)),
        ("Supersedes #8", (8,)),
        ("Take over #10", (10,)),
        ("Rebased version of #9", (9,)),
        ("Rebase #13393 + #13478", (13393, 13478)),  # ember.js #13490
        ("Rebased on #12", ()),  # built on it
        ("Fixes #3", ()),  # an issue it closes
        ("Replaced by #4", ()),  # the other way round
        ("Based on #11", ()),  # stacked on it, not taking it over
    ],
)
def test_a_takeover_is_read_from_what_people_write(text: str, numbers: tuple[int, ...]):
    assert taken_over(text) == numbers
