"""Chapter 6's join recorded for the stepper: each micro-batch's input and both sides' state,
each row marked new, kept or evicted. The join itself and its state readers are
:mod:`autograder.chapters.stream_join`'s; this module only records them for the book.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from ..chapters.stream_join import buffered, changes
from ..toolkit.driver import StreamRun
from ..toolkit.plan import explain_text
from .step_view import Step
from .stepper import Recording, schema_columns


def record_join(run: StreamRun, batches: Iterable[Sequence[Any]], title: str | None = None,
                plans: list[tuple[int, str]] | None = None) -> Recording:
    """Feed ``batches`` one by one; keep for each micro-batch that ran (no-data ones too)
    its input and both sides' state, each row marked new, kept or evicted (:func:`changes`).
    ``plans``, when given, gets after each batch of input the id and the plan (``explain``
    text, whose join line holds the state watermarks) of the last micro-batch that ran."""
    if run.query is None:
        run.start()
    recording = Recording(title or run.name or "join", input_columns=schema_columns(run.schema))
    before: list[dict[str, Any]] = []
    for rows in batches:
        rows = list(rows)
        for position, batch in enumerate(run.add_batch(rows)):
            after = buffered(run, batch)
            recording.steps.append(Step(batch, input=rows if position == 0 else [],
                                        state=changes(before, after)))
            before = after
        if plans is not None:
            plans.append((recording.steps[-1].batch.batch_id, explain_text(run.query)))
    return recording
