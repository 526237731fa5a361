"""The text model: tf-idf over each change's title and body, kept at index time so that
`check` reads a change's text vector with plain SQL.

idf is the smooth idf `ln((N + 1) / (df + 1)) + 1` over all N changes, and a change's vector
its 40 heaviest terms by `(1 + ln count) * idf`, L2-normalised: `detector.text.weigh` of its
text under that idf. One more change moves every idf, and with it every vector, so a vector
is not stored as weights: `term_tf` keeps each top term's `1 + ln count` and `text_norms` the
change's norm, and `check` reads `tf * idf / norm`. A run then tokenises only the texts that
changed (each change's counted terms wait in `text_docs`, with a digest of the text they came
from), updates the df of their terms, and recomputes only what depends on every idf: the
norms, and which terms are the heaviest 40 of a change that has more. The result is the one a
count from scratch gives (`full=True`, run after a first or interrupted run).

A count from scratch is scikit-learn's: `CountVectorizer` (with prdup's tokenizer) counts every
text and `TfidfTransformer` fits the idf; a later run moves the same idf by the document
frequencies of the texts it changed, with the formula scikit-learn documents for its smooth idf
(scikit-learn has no incremental fit). `tests/test_derived.py` holds the two to the same result.
"""

from __future__ import annotations

import functools
import heapq
import math
import sqlite3
from collections import Counter
from collections.abc import Mapping
from hashlib import blake2b
from itertools import groupby
from operator import itemgetter

from detector.text import tokenize
from index.storage.packed import pack_counts, unpack_counts

TERMS_PER_CHANGE = 40
_TEXTS = "SELECT id, coalesce(title, '') || '\n' || coalesce(body, '') FROM changes"


def refresh_text_model(conn: sqlite3.Connection, full: bool) -> int:
    """Bring the model up to date with the changes' texts; returns the number of documents.
    Runs inside the caller's transaction."""
    fresh = full or conn.execute("SELECT 1 FROM text_docs LIMIT 1").fetchone() is None
    if fresh:
        for table in ("text_docs", "term_tf", "text_norms", "term_idf"):
            conn.execute(f"DELETE FROM {table}")
    texts = conn.execute(_TEXTS).fetchall()
    documents = len(texts)
    if fresh:
        counted, idf = _fit(texts)
        df: dict[str, int] = dict(counted.df_steps)
    else:
        counted = _recount(conn, texts)
        df = dict(conn.execute("SELECT term, df FROM term_idf"))
        for term, step in counted.df_steps.items():
            df[term] = df.get(term, 0) + step
        idf = {term: smooth_idf(documents, n) for term, n in df.items() if n > 0}
    conn.execute("DELETE FROM term_idf")
    conn.executemany(
        "INSERT INTO term_idf(term, idf, df) VALUES (?, ?, ?)",
        ((term, value, df[term]) for term, value in idf.items()),
    )
    _save_documents(conn, counted)
    if not idf:  # no text has a word (an index of commits without messages)
        conn.execute("DELETE FROM term_tf")
        conn.execute("DELETE FROM text_norms")
        _set_meta(conn, "text_model", "0")
        return 0
    _place_top_terms(conn, counted, idf)
    _save_norms(conn, idf)
    _set_meta(conn, "text_model", str(documents))
    return documents


def smooth_idf(documents: int, df: int) -> float:
    """scikit-learn's smooth idf (`TfidfTransformer(smooth_idf=True)`), as it documents it."""
    return math.log((documents + 1) / (df + 1)) + 1


def _fit(texts: list[tuple[int, str]]) -> tuple[_Recount, dict[str, float]]:
    """Every text counted, and the idf fitted, by scikit-learn."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer

    result = _Recount()
    vectorizer = CountVectorizer(analyzer=tokenize)
    try:
        matrix = vectorizer.fit_transform(text for _, text in texts).tocsr()
    except ValueError:  # no text has a word (an index of commits without messages)
        result.changed = {cid: (_digest(text), Counter()) for cid, text in texts}
        return result, {}
    terms = vectorizer.get_feature_names_out().tolist()
    fitted = TfidfTransformer(smooth_idf=True).fit(matrix)
    idf = dict(zip(terms, fitted.idf_.tolist(), strict=True))
    indptr, indices, data = matrix.indptr, matrix.indices.tolist(), matrix.data.tolist()
    for row, (change_id, text) in enumerate(texts):
        span = slice(indptr[row], indptr[row + 1])
        counts = Counter({terms[j]: n for j, n in zip(indices[span], data[span], strict=True)})
        result.changed[change_id] = (_digest(text), counts)
    result.df_steps = Counter(dict(zip(terms, matrix.getnnz(axis=0).tolist(), strict=True)))
    return result, idf


class _Recount:
    """The texts that changed since the model last read them, counted again."""

    def __init__(self) -> None:
        self.changed: dict[int, tuple[int, Counter[str]]] = {}  # change -> digest, counts
        self.deleted: list[int] = []
        self.df_steps: Counter[str] = Counter()


def _digest(text: str) -> int:
    return int.from_bytes(
        blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big", signed=True
    )


def _recount(conn: sqlite3.Connection, texts: list[tuple[int, str]]) -> _Recount:
    known = dict(conn.execute("SELECT change_id, digest FROM text_docs"))
    result = _Recount()
    replaced: list[int] = []
    for change_id, text in texts:
        digest = _digest(text)
        before = known.pop(change_id, None)
        if before != digest:
            result.changed[change_id] = (digest, Counter(tokenize(text)))
            if before is not None:
                replaced.append(change_id)
    result.deleted = list(known)
    for change_id in [*replaced, *result.deleted]:
        (packed,) = conn.execute(
            "SELECT counts FROM text_docs WHERE change_id = ?", (change_id,)
        ).fetchone()
        result.df_steps.subtract(unpack_counts(packed).keys())
    for _, counts in result.changed.values():
        result.df_steps.update(counts.keys())
    return result


def _save_documents(conn: sqlite3.Connection, counted: _Recount) -> None:
    conn.executemany(
        "DELETE FROM text_docs WHERE change_id = ?", ((cid,) for cid in counted.deleted)
    )
    conn.executemany(
        "INSERT OR REPLACE INTO text_docs(change_id, digest, counts, terms) VALUES (?, ?, ?, ?)",
        (
            (cid, digest, pack_counts(sorted(counts.items())), len(counts))
            for cid, (digest, counts) in counted.changed.items()
        ),
    )


def _heaviest_first(item: tuple[str, float]) -> tuple[float, str]:
    return -item[1], item[0]


@functools.cache
def _tf(count: int) -> float:
    return 1 + math.log(count)


def _top_terms(counts: Mapping[str, int], idf: Mapping[str, float]) -> dict[str, float]:
    """The terms `detector.text.weigh` keeps, with their `1 + ln count`: the heaviest by
    tf * idf, ties by term, as there."""
    raw = {term: _tf(n) * idf[term] for term, n in counts.items() if term in idf}
    best = heapq.nsmallest(TERMS_PER_CHANGE, raw.items(), key=_heaviest_first)
    return {term: _tf(counts[term]) for term, _ in best}


def _place_top_terms(conn: sqlite3.Connection, counted: _Recount, idf: Mapping[str, float]) -> None:
    """Write the top terms of the changed texts, and of every text with more terms than are
    kept whose heaviest ones moved with the idf."""
    rewrite: dict[int, dict[str, float]] = {
        cid: _top_terms(counts, idf) for cid, (_, counts) in counted.changed.items()
    }
    long_texts = conn.execute(
        "SELECT change_id, counts FROM text_docs WHERE terms > ?", (TERMS_PER_CHANGE,)
    ).fetchall()
    for change_id, packed in long_texts:
        if change_id in rewrite:
            continue
        top = _top_terms(unpack_counts(packed), idf)
        stored = {
            term
            for (term,) in conn.execute(
                "SELECT term FROM term_tf WHERE change_id = ?", (change_id,)
            )
        }
        if stored != top.keys():
            rewrite[change_id] = top
    gone = [*counted.deleted, *rewrite]
    conn.executemany("DELETE FROM term_tf WHERE change_id = ?", ((cid,) for cid in gone))
    conn.executemany(
        "INSERT INTO term_tf(change_id, term, tf) VALUES (?, ?, ?)",
        ((cid, term, tf) for cid, top in rewrite.items() for term, tf in top.items()),
    )


def _save_norms(conn: sqlite3.Connection, idf: Mapping[str, float]) -> None:
    """Each change's norm under the current idf, summed heaviest first as `weigh` sums."""
    rows = conn.execute("SELECT change_id, term, tf FROM term_tf ORDER BY change_id, term")
    norms = []
    for change_id, group in groupby(rows.fetchall(), itemgetter(0)):
        values = sorted([tf * idf[term] for _, term, tf in group], reverse=True)
        norms.append((change_id, math.sqrt(sum([v * v for v in values])) or 1.0))
    conn.execute("DELETE FROM text_norms")
    conn.executemany("INSERT INTO text_norms(change_id, norm) VALUES (?, ?)", norms)


def _set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (key, value))
