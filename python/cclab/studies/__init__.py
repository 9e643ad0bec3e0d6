"""Reproductions of the seed papers' experiments: ``cclab reproduce NAME``."""

from __future__ import annotations

import importlib

from cclab.studies.base import Study, StudyContext, StudyOptions

#: Study name -> module defining ``STUDY``.
STUDIES = {
    "pacing": "cclab.studies.pacing",
    "recovery": "cclab.studies.recovery",
    "wireless": "cclab.studies.wireless",
}


class UnknownStudyError(Exception):
    pass


def get_study(name: str) -> Study:
    if name not in STUDIES:
        import difflib

        close = difflib.get_close_matches(name, list(STUDIES), n=1)
        hint = f'; did you mean "{close[0]}"?' if close else ""
        raise UnknownStudyError(f'unknown study "{name}"{hint} (known: {", ".join(sorted(STUDIES))})')
    study: Study = importlib.import_module(STUDIES[name]).STUDY
    return study


def reproduce(name: str, options: StudyOptions) -> StudyContext:
    """Runs study ``name`` with ``options``; returns its context (what it wrote)."""
    study = get_study(name)
    options.out.mkdir(parents=True, exist_ok=True)
    ctx = StudyContext(study, options)
    study.run(ctx)
    return ctx


__all__ = ["STUDIES", "Study", "StudyContext", "StudyOptions", "UnknownStudyError", "get_study", "reproduce"]
