"""Tests for index.git.symbols: changed line -> qualified name of the enclosing definition."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from index.git.symbols import (
    KINDS,
    MAX_SOURCE_BYTES,
    Definition,
    definitions,
    enclosing_symbols,
    language_for_path,
)

REPO_ROOT = Path(__file__).resolve().parents[1]


def src(text: str) -> bytes:
    """Dedented sample source; line 1 is the first line after the opening quotes."""
    return textwrap.dedent(text).lstrip("\n").encode()


def line_of(source: bytes, needle: str, occurrence: int = 1) -> int:
    """1-based line of the n-th line containing needle, so samples can be edited safely."""
    seen = 0
    for number, line in enumerate(source.decode("utf-8", "replace").splitlines(), 1):
        if needle in line:
            seen += 1
            if seen == occurrence:
                return number
    raise AssertionError(f"{needle!r} not in sample")


def qualified_at(path: str, source: bytes, needles: dict[str, str | None]) -> None:
    """Assert the enclosing qualified name for the line holding each needle (None: omitted)."""
    lines = {needle: line_of(source, needle) for needle in needles}
    found = enclosing_symbols(path, source, lines.values())
    actual = {
        needle: (found[line].qualified if line in found else None) for needle, line in lines.items()
    }
    assert actual == needles


def by_qualified(path: str, source: bytes) -> dict[str, Definition]:
    return {d.qualified: d for d in definitions(path, source)}


# --------------------------------------------------------------------------- languages


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a/b/model.py", "python"),
        ("stubs/x.pyi", "python"),
        ("app.js", "javascript"),
        ("app.mjs", "javascript"),
        ("app.cjs", "javascript"),
        ("View.jsx", "javascript"),
        ("app.ts", "typescript"),
        ("View.tsx", "tsx"),
        ("main.go", "go"),
        ("lib.rs", "rust"),
        ("A.java", "java"),
        ("x.c", "c"),
        ("x.h", "c"),
        ("x.cc", "cpp"),
        ("x.cpp", "cpp"),
        ("x.cxx", "cpp"),
        ("x.hpp", "cpp"),
        ("x.hh", "cpp"),
        ("index.php", "php"),
        ("UPPER.PY", "python"),
        ("README.md", None),
        ("Makefile", None),
        ("dir.py/noext", None),
        ("archive.tar.gz", None),
    ],
)
def test_language_for_path(path: str, expected: str | None) -> None:
    assert language_for_path(path) == expected


PYTHON = src(
    '''
    import os

    class Pipeline:
        """Runs stages."""

        def __init__(self, stages):
            self.stages = list(stages)

        @property
        def size(self):
            return len(self.stages)

        class Stage:
            def run(self):
                return "stage"

    def outer(x):
        y = x + 1
        def inner():
            return y
        return inner

    @decorator(arg=1)
    def decorated():
        def nested():
            return "tail"

    CONSTANT = 3
    '''
)


def test_python_qualified_names() -> None:
    qualified_at(
        "pkg/pipeline.py",
        PYTHON,
        {
            "import os": None,
            '"""Runs stages."""': "Pipeline",
            "self.stages = list(stages)": "Pipeline.__init__",
            "@property": "Pipeline.size",
            "return len(self.stages)": "Pipeline.size",
            'return "stage"': "Pipeline.Stage.run",
            "y = x + 1": "outer",
            "return y": "outer.inner",
            "return inner": "outer",
            "@decorator(arg=1)": "decorated",
            'return "tail"': "decorated.nested",
            "CONSTANT = 3": None,
        },
    )


def test_python_kinds_and_spans() -> None:
    defs = by_qualified("p.py", PYTHON)
    assert defs["Pipeline"].kind == "class"
    assert defs["Pipeline.__init__"].kind == "method"
    assert defs["Pipeline.__init__"].name == "__init__"
    assert defs["Pipeline.Stage"].kind == "class"
    assert defs["Pipeline.Stage.run"].kind == "method"
    assert defs["outer"].kind == "function"
    assert defs["outer.inner"].kind == "function"
    # A decorated definition starts at its first decorator...
    assert defs["Pipeline.size"].start_line == line_of(PYTHON, "@property")
    assert defs["decorated"].start_line == line_of(PYTHON, "@decorator")
    # ...but a nested def ending on the same byte as the decorated one is not stretched.
    assert defs["decorated.nested"].start_line == line_of(PYTHON, "def nested")
    assert defs["decorated"].end_line == defs["decorated.nested"].end_line
    assert defs["Pipeline"].start_line == line_of(PYTHON, "class Pipeline")
    assert defs["Pipeline"].end_line == line_of(PYTHON, 'return "stage"')


def test_definitions_are_in_source_order_outer_first() -> None:
    defs = definitions("p.py", PYTHON)
    assert [d.qualified for d in defs] == [
        "Pipeline",
        "Pipeline.__init__",
        "Pipeline.size",
        "Pipeline.Stage",
        "Pipeline.Stage.run",
        "outer",
        "outer.inner",
        "decorated",
        "decorated.nested",
    ]


JAVASCRIPT = src(
    """
    import x from "x";
    class Pipeline extends Base {
      constructor(stages) {
        this.stages = stages;
      }
      run() {
        return this.stages.map((s) => s());
      }
    }
    const double = (n) => {
      return n * 2;
    };
    let legacy = function () {
      return 1;
    };
    function Widget() {
      this.render = function () {
        return "render";
      };
    }
    Widget.prototype.destroy = function () {
      return "destroy";
    };
    var api = {
      get: function (url) {
        return url;
      },
      nested: { put(url) { return "put"; } },
    };
    export function exported() {
      return "exported";
    }
    console.log("top level");
    """
)


def test_javascript_qualified_names() -> None:
    qualified_at(
        "src/pipeline.js",
        JAVASCRIPT,
        {
            'import x from "x";': None,
            "this.stages = stages;": "Pipeline.constructor",
            "return this.stages.map": "Pipeline.run",
            "return n * 2;": "double",
            "return 1;": "legacy",
            'return "render";': "Widget.render",
            'return "destroy";': "Widget.destroy",
            "return url;": "api.get",
            'return "put"': "api.nested.put",
            'return "exported";': "exported",
            'console.log("top level");': None,
        },
    )
    defs = by_qualified("src/pipeline.js", JAVASCRIPT)
    assert defs["Pipeline"].kind == "class"
    assert defs["Pipeline.run"].kind == "method"
    assert defs["double"].kind == "function"
    assert defs["Widget.destroy"].kind == "method"


TYPESCRIPT = src(
    """
    export interface Store {
      get(key: string): string;
    }
    export abstract class Base<T> implements Store {
      abstract get(key: string): string;
      describe(): string {
        return "base";
      }
    }
    namespace Util {
      export function clamp(n: number): number {
        return Math.max(0, n);
      }
    }
    export const handler = async (event: Event): Promise<void> => {
      await event;
    };
    enum Color {
      Red,
    }
    type Alias = { a: number };
    """
)


def test_typescript_qualified_names() -> None:
    qualified_at(
        "src/store.ts",
        TYPESCRIPT,
        {
            "get(key: string): string;": "Store.get",
            'return "base";': "Base.describe",
            "return Math.max(0, n);": "Util.clamp",
            "await event;": "handler",
            "Red,": "Color",
            "type Alias": None,
        },
    )
    defs = by_qualified("src/store.ts", TYPESCRIPT)
    assert defs["Store"].kind == "interface"
    assert defs["Base"].kind == "class"
    assert defs["Util"].kind == "namespace"
    assert defs["Color"].kind == "enum"


def test_tsx_uses_the_tsx_grammar() -> None:
    source = src(
        """
        export function List(props: Props) {
          const rows = props.items.map((item) => <Row key={item.id} item={item} />);
          return <ul className="list">{rows}</ul>;
        }
        export const Row = ({ item }: RowProps) => {
          return <li>{item.name}</li>;
        };
        """
    )
    qualified_at("ui/List.tsx", source, {"<ul": "List", "<li>": "Row"})


GO = src(
    """
    package server

    type Server struct {
        addr string
    }

    type Handler interface {
        Serve()
    }

    func (s *Server) Start() error {
        return nil
    }

    func (s Server[T]) Stop() {
        s.addr = ""
    }

    func New(addr string) *Server {
        return &Server{addr: addr}
    }
    """
)


def test_go_qualified_names() -> None:
    qualified_at(
        "server/server.go",
        GO,
        {
            "package server": None,
            "addr string": "Server",
            "Serve()": "Handler",
            "return nil": "Server.Start",
            's.addr = ""': "Server.Stop",
            "return &Server{addr: addr}": "New",
        },
    )
    defs = by_qualified("server/server.go", GO)
    assert defs["Server"].kind == "struct"
    assert defs["Handler"].kind == "interface"
    assert defs["Server.Start"].kind == "method"
    assert defs["Server.Start"].name == "Start"
    assert defs["New"].kind == "function"


RUST = src(
    """
    use std::fmt;

    pub struct Point {
        x: i32,
    }

    impl<T> fmt::Display for Wrapper<T> {
        fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
            write!(f, "wrapped")
        }
    }

    trait Shape {
        fn area(&self) -> f64;
        fn name(&self) -> String {
            String::from("shape")
        }
    }

    mod geometry {
        enum Kind { Flat }
        pub fn origin() -> i32 {
            0
        }
    }

    #[test]
    fn it_works() {
        assert_eq!(2, 2);
    }
    """
)


def test_rust_qualified_names() -> None:
    qualified_at(
        "src/lib.rs",
        RUST,
        {
            "use std::fmt;": None,
            "x: i32,": "Point",
            'write!(f, "wrapped")': "Wrapper.fmt",
            "fn area(&self) -> f64;": "Shape.area",
            'String::from("shape")': "Shape.name",
            "enum Kind { Flat }": "geometry.Kind",
            "    0": "geometry.origin",
            "#[test]": "it_works",
            "assert_eq!(2, 2);": "it_works",
        },
    )
    defs = by_qualified("src/lib.rs", RUST)
    assert defs["Wrapper"].kind == "impl"
    assert defs["Wrapper.fmt"].kind == "method"
    assert defs["Shape"].kind == "trait"
    assert defs["geometry"].kind == "module"
    assert defs["geometry.origin"].kind == "function"
    assert defs["Point"].kind == "struct"


JAVA = src(
    """
    package demo;

    public class Pipeline {
        private final int size;

        public Pipeline(int size) {
            this.size = size;
        }

        @Override
        public String toString() {
            return "Pipeline";
        }

        interface Listener {
            void onEvent(String event);
        }

        enum State {
            IDLE;
            boolean idle() { return true; }
        }
    }
    """
)


def test_java_qualified_names() -> None:
    qualified_at(
        "src/demo/Pipeline.java",
        JAVA,
        {
            "package demo;": None,
            "private final int size;": "Pipeline",
            "this.size = size;": "Pipeline.Pipeline",
            "@Override": "Pipeline.toString",
            'return "Pipeline";': "Pipeline.toString",
            "void onEvent": "Pipeline.Listener.onEvent",
            "IDLE;": "Pipeline.State",
            "boolean idle()": "Pipeline.State.idle",
        },
    )
    defs = by_qualified("Pipeline.java", JAVA)
    assert defs["Pipeline.Listener"].kind == "interface"
    assert defs["Pipeline.State"].kind == "enum"
    assert defs["Pipeline.Pipeline"].kind == "method"


C = src(
    """
    #include <stdlib.h>

    struct buffer {
        char *data;
    };

    typedef struct {
        int x;
    } Point;

    static char *
    buffer_dup(const struct buffer *b)
    {
        return strdup(b->data);
    }

    int (*pick(int which))(int)
    {
        return handlers[which];
    }

    int main(void) { return 0; }
    """
)


def test_c_qualified_names() -> None:
    qualified_at(
        "src/buffer.c",
        C,
        {
            "#include <stdlib.h>": None,
            "char *data;": "buffer",
            "int x;": "Point",
            "static char *": "buffer_dup",
            "return strdup(b->data);": "buffer_dup",
            "return handlers[which];": "pick",
            "int main(void)": "main",
        },
    )
    defs = by_qualified("src/buffer.c", C)
    assert defs["buffer_dup"].kind == "function"
    assert defs["buffer"].kind == "struct"
    assert defs["buffer_dup"].start_line == line_of(C, "static char *")


CPP = src(
    """
    #include <vector>

    namespace engine {

    template <typename T>
    class Pool {
     public:
      T* take() {
        return items_.back();
      }
     private:
      std::vector<T*> items_;
    };

    struct Config {
      int threads = 1;
    };

    int Pool<int>::size() const {
      return 1;
    }

    }  // namespace engine

    void engine::Runner::start() {
      run();
    }

    bool operator==(const Config& a, const Config& b) {
      return a.threads == b.threads;
    }
    """
)


def test_cpp_qualified_names() -> None:
    qualified_at(
        "src/engine.cpp",
        CPP,
        {
            "#include <vector>": None,
            "template <typename T>": "engine.Pool",
            "return items_.back();": "engine.Pool.take",
            "std::vector<T*> items_;": "engine.Pool",
            "int threads = 1;": "engine.Config",
            "return 1;": "engine.Pool.size",
            "run();": "engine.Runner.start",
            "return a.threads == b.threads;": "operator==",
        },
    )
    defs = by_qualified("src/engine.cpp", CPP)
    assert defs["engine"].kind == "namespace"
    assert defs["engine.Pool"].kind == "class"
    assert defs["engine.Pool.take"].kind == "method"
    assert defs["engine.Runner.start"].kind == "method"
    assert defs["engine.Runner.start"].name == "start"
    assert defs["operator=="].kind == "function"


def test_dot_h_header_with_cpp_falls_back_to_cpp_grammar() -> None:
    header = src(
        """
        #pragma once
        namespace app {
        class Widget : public Base {
         public:
          int size() const { return n_; }
         private:
          int n_;
        };
        }  // namespace app
        """
    )
    qualified_at("include/widget.h", header, {"return n_;": "app.Widget.size"})
    c_header = src(
        """
        static inline int twice(int x) {
            return 2 * x;
        }
        """
    )
    qualified_at("include/twice.h", c_header, {"return 2 * x;": "twice"})


PHP = src(
    """
    <html>
    <p>{ not php } function fake() { }</p>
    <?php
    namespace App;

    interface Repository {
        public function find($id);
    }

    trait Loggable {
        public function log($msg) {
            echo $msg;
        }
    }

    class UserRepository implements Repository {
        public function find($id) {
            return $this->db->get($id);
        }
    }

    function helper() {
        return 42;
    }
    """
)


def test_php_qualified_names() -> None:
    qualified_at(
        "src/UserRepository.php",
        PHP,
        {
            "namespace App;": None,
            "public function find($id);": "Repository.find",
            "echo $msg;": "Loggable.log",
            "return $this->db->get($id);": "UserRepository.find",
            "return 42;": "helper",
        },
    )
    defs = by_qualified("x.php", PHP)
    assert "fake" not in {d.name for d in definitions("x.php", PHP)}
    assert defs["Repository"].kind == "interface"
    assert defs["Loggable"].kind == "trait"
    assert defs["UserRepository"].kind == "class"
    assert defs["UserRepository.find"].kind == "method"
    assert defs["helper"].kind == "function"


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("a.py", PYTHON),
        ("a.js", JAVASCRIPT),
        ("a.ts", TYPESCRIPT),
        ("a.go", GO),
        ("a.rs", RUST),
        ("A.java", JAVA),
        ("a.c", C),
        ("a.cpp", CPP),
        ("a.php", PHP),
    ],
)
def test_kinds_come_from_the_fixed_vocabulary(path: str, source: bytes) -> None:
    defs = definitions(path, source)
    assert defs, path
    for d in defs:
        assert d.kind in KINDS
        assert 1 <= d.start_line <= d.end_line
        assert d.qualified.endswith(d.name)


# --------------------------------------------------------------------------- enclosing


def brute_force(defs: list[Definition], line: int) -> Definition | None:
    """Reference answer: among definitions containing the line, the last-starting one."""
    best: Definition | None = None
    for d in defs:
        if d.start_line <= line <= d.end_line and (best is None or d.start_line >= best.start_line):
            best = d
    return best


def test_enclosing_symbols_matches_brute_force_on_a_real_file() -> None:
    path = REPO_ROOT / "index" / "git" / "symbols.py"
    source = path.read_bytes()
    defs = definitions(str(path), source)
    assert len(defs) > 20
    total = source.count(b"\n") + 2
    found = enclosing_symbols(str(path), source, reversed(range(1, total + 1)))
    for line in range(1, total + 1):
        expected = brute_force(defs, line)
        assert found.get(line) == expected, line
    assert "enclosing_symbols" in {d.qualified for d in found.values()}


def test_enclosing_symbols_ignores_bad_and_duplicate_lines() -> None:
    inside = line_of(PYTHON, "self.stages = list(stages)")
    found = enclosing_symbols("p.py", PYTHON, [inside, inside, 0, -5, 10**9])
    assert list(found) == [inside]
    assert found[inside].qualified == "Pipeline.__init__"
    assert enclosing_symbols("p.py", PYTHON, []) == {}


# --------------------------------------------------------------------------- robustness


def test_unknown_extension_gives_nothing() -> None:
    assert definitions("notes.txt", b"def f():\n    pass\n") == []
    assert enclosing_symbols("notes.txt", b"def f():\n    pass\n", [2]) == {}


def test_broken_source_recovers_what_it_can() -> None:
    broken = src(
        """
        class Pipeline:
            def __init__(self):
                self.x = = 1
            def run(self):
                return 1 +

        def after():
            pass
        """
    )
    qualified_at(
        "broken.py",
        broken,
        {"self.x = = 1": "Pipeline.__init__", "return 1 +": "Pipeline.run", "pass": "after"},
    )
    truncated = b"class Pipeline:\n    def __init__(self:\n        self.x = (\n"
    assert all(isinstance(d, Definition) for d in definitions("t.py", truncated))
    broken_java = b"class A { void m( { int x = ; } class B { void n() {\n return; } }"
    qualified = {d.qualified for d in definitions("A.java", broken_java)}
    assert "A.B.n" in qualified


def test_truncated_definition_does_not_end_past_the_file() -> None:
    # tree-sitter ends the unterminated func at column 0 of the line after the last one.
    truncated = b"package p\nfunc f() {\n  x()\n"
    (only,) = definitions("cut.go", truncated)
    assert (only.qualified, only.start_line, only.end_line) == ("f", 2, 3)


def test_non_utf8_source_does_not_raise() -> None:
    text = "class Caf\xe9:\n    def r\xe9sum\xe9(self):\n        return '\xe9'\n"
    latin1 = text.encode("latin-1")
    found = enclosing_symbols("cafe.py", latin1, [1, 2, 3])
    assert found[1].qualified == "Caf\xe9"
    assert found[3].qualified == "Caf\xe9.r\xe9sum\xe9"
    assert found[3].kind == "method"
    for path in ("x.py", "x.js", "x.go", "x.rs", "X.java", "x.c", "x.cpp", "x.php", "x.ts"):
        definitions(path, b"\xff\xfe\xfd garbage \x80\x81 {{{ ((( ")


def test_binary_and_oversized_files_are_skipped() -> None:
    assert definitions("blob.c", b"int f(void) { return 0; }\n\0\0\0binary") == []
    body = b"def f():\n    return 1\n"
    huge = body * (MAX_SOURCE_BYTES // len(body) + 1)
    assert len(huge) > MAX_SOURCE_BYTES
    assert definitions("huge.py", huge) == []
    assert definitions("small.py", body)[0].qualified == "f"


def test_deep_nesting_does_not_blow_up() -> None:
    deep = b"".join(b"function f%d() {\n" % i for i in range(2000)) + b"}\n" * 2000
    defs = definitions("deep.js", deep)
    assert defs[0].qualified == "f0"
    assert defs[1].qualified == "f0.f1"
    assert len(defs) < 2000  # deeply nested ones are folded into an ancestor
    nested = b"x = " + b"[" * 20000 + b"]" * 20000 + b"\ndef ok():\n    pass\n"
    assert [d.qualified for d in definitions("deep.py", nested)] == ["ok"]


def test_parsers_are_safe_across_threads() -> None:
    samples = [("a.py", PYTHON), ("a.go", GO), ("a.rs", RUST), ("a.js", JAVASCRIPT)] * 8
    expected = [definitions(p, s) for p, s in samples]
    with ThreadPoolExecutor(max_workers=8) as pool:
        actual = list(pool.map(lambda item: definitions(*item), samples))
    assert actual == expected


def test_import_is_lazy() -> None:
    """Importing the module must not load tree-sitter grammars (latency-sensitive path)."""
    code = (
        "import sys, index.git.symbols as s\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.startswith('tree_sitter'))\n"
        "print(loaded())\n"
        "s.definitions('a.go', b'package p\\nfunc F() {}\\n')\n"
        "print(loaded())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    before, after = result.stdout.splitlines()
    assert before == "[]"
    assert "tree_sitter_go" in after
    assert "tree_sitter_python" not in after
    assert "tree_sitter_cpp" not in after
