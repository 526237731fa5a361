"""GitHub Actions expressions (a job's `if:`), evaluated as the runner does, for tests.

Enough of the language for the conditions prdup's workflows use: literals, property access
(a missing property is null), `!`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `&&`, `||` (which give one
of their operands, as in JavaScript), and the functions contains, startsWith, endsWith and
fromJSON. Strings compare without regard to case; values of different types compare as numbers.
See docs.github.com, "Evaluate expressions in workflows and actions".
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_TOKEN = re.compile(
    r"\s*(?:(?P<number>\d+(?:\.\d+)?)|(?P<string>'(?:[^']|'')*')"
    r"|(?P<op>==|!=|<=|>=|&&|\|\||[<>!().,\[\]])|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))"
)


def evaluate(expression: str, context: dict[str, Any]) -> Any:
    """The value of `expression` (with or without `${{ }}`) in `context` (github, env, ...)."""
    text = expression.strip()
    if text.startswith("${{") and text.endswith("}}"):
        text = text[3:-2]
    return _Parser(text, context).parse()


def truthy(value: Any) -> bool:
    """Falsy are false, 0, -0, NaN, "" and null; everything else is truthy."""
    if isinstance(value, float) and math.isnan(value):
        return False
    return value not in (None, False, 0, "")


def _number(value: Any) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool | int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip() or 0)
        except ValueError:
            return math.nan
    return math.nan


def _equal(left: Any, right: Any) -> bool:
    if isinstance(left, str) and isinstance(right, str):
        return left.casefold() == right.casefold()
    if isinstance(left, dict | list) or isinstance(right, dict | list):
        return left is right
    if type(left) is type(right):
        return bool(left == right)
    return _number(left) == _number(right)


def _contains(search: Any, item: Any) -> bool:
    if isinstance(search, list):
        return any(_equal(element, item) for element in search)
    return _text(item).casefold() in _text(search).casefold()


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return "Object" if isinstance(value, dict) else "Array"
    return str(value)


_FUNCTIONS = {
    "contains": _contains,
    "startswith": lambda s, p: _text(s).casefold().startswith(_text(p).casefold()),
    "endswith": lambda s, p: _text(s).casefold().endswith(_text(p).casefold()),
    "fromjson": lambda s: json.loads(_text(s)),
}


class _Parser:
    """Recursive descent, evaluating as it parses (expressions have no side effects)."""

    def __init__(self, text: str, context: dict[str, Any]) -> None:
        self.tokens: list[tuple[str, str]] = []
        position = 0
        while position < len(text.rstrip()):
            match = _TOKEN.match(text, position)
            if match is None or match.end() == position:
                raise ValueError(f"cannot read {text[position:]!r}")
            kind = match.lastgroup or ""
            self.tokens.append((kind, match.group(kind)))
            position = match.end()
        self.context = {name.casefold(): value for name, value in context.items()}
        self.at = 0

    def parse(self) -> Any:
        value = self._or()
        if self.at != len(self.tokens):
            raise ValueError(f"unexpected {self.tokens[self.at][1]!r}")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.at][1] if self.at < len(self.tokens) else None

    def _take(self, expected: str | None = None) -> tuple[str, str]:
        if self.at >= len(self.tokens):
            raise ValueError("unexpected end of expression")
        token = self.tokens[self.at]
        if expected is not None and token[1] != expected:
            raise ValueError(f"expected {expected!r}, found {token[1]!r}")
        self.at += 1
        return token

    def _or(self) -> Any:
        value = self._and()
        while self._peek() == "||":
            self._take()
            right = self._and()
            value = value if truthy(value) else right
        return value

    def _and(self) -> Any:
        value = self._equality()
        while self._peek() == "&&":
            self._take()
            right = self._equality()
            value = right if truthy(value) else value
        return value

    def _equality(self) -> Any:
        value = self._comparison()
        while self._peek() in ("==", "!="):
            operator = self._take()[1]
            same = _equal(value, self._comparison())
            value = same if operator == "==" else not same
        return value

    def _comparison(self) -> Any:
        value = self._unary()
        while self._peek() in ("<", "<=", ">", ">="):
            operator = self._take()[1]
            right = self._unary()
            if isinstance(value, str) and isinstance(right, str):
                left_key, right_key = value.casefold(), right.casefold()
                value = _ORDER[operator](left_key, right_key)
            else:
                value = _ORDER[operator](_number(value), _number(right))
        return value

    def _unary(self) -> Any:
        if self._peek() == "!":
            self._take()
            return not truthy(self._unary())
        return self._postfix()

    def _postfix(self) -> Any:
        value = self._primary()
        while self._peek() in (".", "["):
            if self._take()[1] == ".":
                value = _member(value, self._take()[1])
            else:
                value = _member(value, self._or())
                self._take("]")
        return value

    def _primary(self) -> Any:
        kind, text = self._take()
        if text == "(":
            value = self._or()
            self._take(")")
            return value
        if kind == "number":
            return float(text)
        if kind == "string":
            return text[1:-1].replace("''", "'")
        if kind != "name":
            raise ValueError(f"unexpected {text!r}")
        if self._peek() == "(":
            self._take()
            arguments = []
            while self._peek() != ")":
                arguments.append(self._or())
                if self._peek() == ",":
                    self._take()
            self._take(")")
            return _FUNCTIONS[text.casefold()](*arguments)
        literals = {"true": True, "false": False, "null": None}
        if text in literals:
            return literals[text]
        return self.context.get(text.casefold())


_ORDER = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


def _member(value: Any, key: Any) -> Any:
    """`value.key` or `value[key]`: null when there is no such property."""
    if isinstance(value, dict):
        wanted = _text(key).casefold()
        return next((v for k, v in value.items() if k.casefold() == wanted), None)
    if isinstance(value, list) and isinstance(key, float | int) and 0 <= key < len(value):
        return value[int(key)]
    return None
