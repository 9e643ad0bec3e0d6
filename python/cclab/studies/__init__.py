"""Reproductions of the seed papers' experiments: ``cclab reproduce NAME``."""

from __future__ import annotations

import importlib

from cclab.studies.base import Study, StudyContext, StudyOptions

#: Study name -> module defining ``STUDY``.
STUDIES = {
    "buffers": "cclab.studies.buffers",
    "buffers-real": "cclab.studies.buffers_real",
    "l4s": "cclab.studies.l4s",
    "pacing": "cclab.studies.pacing",
    "recovery": "cclab.studies.recovery",
    "udt": "cclab.studies.udt",
    "udt-real": "cclab.studies.udt_real",
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
    if not options.from_cache:
        study.run(ctx)
        return ctx
    from cclab.sweep import SweepError, recorded_builds, replaying

    builds = recorded_builds(options.out / "cache")
    if len(builds) != 1:
        found = "no cached runs" if not builds else f"runs of {len(builds)} simulator builds"
        raise SweepError(f"--from-cache: {options.out / 'cache'} holds {found}; it needs the runs of exactly one")
    with replaying(builds.pop()):
        study.run(ctx)
    return ctx


__all__ = ["STUDIES", "Study", "StudyContext", "StudyOptions", "UnknownStudyError", "get_study", "reproduce"]
