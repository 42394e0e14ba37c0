"""Chapter 7's queries recorded for the stepper: each micro-batch's input and the state of
one operator, or of both operators of a chain. The queries and their state readers are
:mod:`autograder.chapters.deduplication`'s; this module only records them for the book.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..chapters.deduplication import kept
from ..toolkit.driver import StreamRun
from ..toolkit.plan import explain_text
from .step_view import Step
from .stepper import Recording, StateReader, schema_columns


def record(run: StreamRun, batches: Iterable[Sequence[Any]], *, state: StateReader = kept,
           title: str | None = None, plans: list[tuple[int, str]] | None = None) -> Recording:
    """Feed ``batches`` one by one and keep, for each micro-batch that ran (no-data ones
    too), its input and its state as ``state`` reads it (:func:`kept`: operator 0).
    ``plans``, when given, gets after each batch of input the id and the ``explain`` text of
    the last micro-batch that ran (the plan holds each operator's two watermarks)."""
    if run.query is None:
        run.start()
    recording = Recording(title or run.name or run.output_mode,
                          input_columns=schema_columns(run.schema))
    for rows in batches:
        rows = list(rows)
        for position, batch in enumerate(run.add_batch(rows)):
            recording.steps.append(Step(batch, input=rows if position == 0 else [],
                                        state=state(run, batch)))
        if plans is not None:
            plans.append((recording.steps[-1].batch.batch_id, explain_text(run.query)))
    return recording
