"""Fit the text model (tf-idf over titles, bodies and messages) at index time.

scikit-learn is imported here only, so `check` reads precomputed weights with plain SQL.
"""

from __future__ import annotations

from detector.text import tokenize, weigh
from index.store import IndexStore

TERMS_PER_CHANGE = 40


def rebuild_text_model(store: IndexStore) -> int:
    """Refit idf over every change's text and store each change's top terms; returns doc count."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    rows = list(
        store.rows("SELECT id, coalesce(title, '') || '\n' || coalesce(body, '') FROM changes")
    )
    documents = [text for _, text in rows]
    if not any(d.strip() for d in documents):
        store.replace_text_model({}, [])
        store.set_meta("text_model", "0")
        return 0
    vectorizer = TfidfVectorizer(analyzer=tokenize, sublinear_tf=True, min_df=1)
    try:
        vectorizer.fit(documents)
    except ValueError:  # every document empty after tokenising
        store.replace_text_model({}, [])
        store.set_meta("text_model", "0")
        return 0
    idf = {term: float(vectorizer.idf_[index]) for term, index in vectorizer.vocabulary_.items()}
    weights = (  # streamed into the table: a list of them is hundreds of MB on a big index
        (change_id, term, weight)
        for change_id, text in rows
        for term, weight in weigh(text, idf, TERMS_PER_CHANGE).items()
    )
    store.replace_text_model(idf, weights)
    store.set_meta("text_model", str(len(rows)))
    return len(rows)
