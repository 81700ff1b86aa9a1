"""The summaries stage: a faithful plain-language TL;DR and news blurb for every paper."""

from __future__ import annotations

from papersift.summarize.authors import author_naming
from papersift.summarize.builtin import WRITER_VERSION, Summary, write_builtin
from papersift.summarize.gate import check as check_summary
from papersift.summarize.stage import Summarize, SummarizeError, flag_paper
from papersift.summarize.text import clean_latex

__all__ = [
    "WRITER_VERSION", "Summary", "SummarizeError", "author_naming", "check_summary", "clean_latex",
    "flag_paper", "Summarize", "write_builtin",
]
