"""Bundled demo data: the Kestrel knowledge base, the "web" corpus, the QA set, the answer cache."""

from __future__ import annotations

from pathlib import Path

DATA_DIR = Path(__file__).parent
KB_DIR = DATA_DIR / "kb"
WEB_DIR = DATA_DIR / "web"
QA_PATH = DATA_DIR / "qa.jsonl"
ANSWER_CACHE_PATH = DATA_DIR / "answer_cache.jsonl"
