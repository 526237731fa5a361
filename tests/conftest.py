"""Shared fixtures: a real git repository builder and a fake GitHub API server."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fake_github import fake_github  # noqa: F401  (a fixture, registered by import)
from tests.repo_builder import RepoBuilder


@pytest.fixture
def builder(tmp_path: Path) -> RepoBuilder:
    """An empty repository on `main` in a temporary folder."""
    return RepoBuilder(tmp_path / "repo")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "index.db"
