"""Running a learner's StatefulProcessor beside the course's, in one streaming query.

Chapter 4's checks do not compare a learner's processor with rows written down in advance:
they run it and the course's processor as two transformWithState operators over the same
input, tag each operator's output and union them (:func:`paired_query`). One query means
one input, one clock and one watermark for both, so what differs is the processors alone.
:class:`PairedRun` feeds micro-batches, compares the two outputs of each, and compares
anything read back from the two operators (their state rows, timers, metrics) with
:meth:`PairedRun.compare`.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.streaming import StatefulProcessor

from .checking import plain_value, spark_failure_as_lesson
from .driver import BatchRecord, StreamRun
from .feedback import check_equal, stop_if_unfinished

LEARNER, REFERENCE = "learner", "reference"
#: The column that tags each output row with the operator that emitted it.
_WHO = "__who"

#: A chapter's query around a processor: ``build(events, processor)`` is a DataFrame.
Build = Callable[[DataFrame, StatefulProcessor], DataFrame]
#: Reads something back from one operator of a run: ``reader(run, operator_id)``.
Reader = Callable[[StreamRun, int], Any]


def paired_query(build: Build, learner: StatefulProcessor,
                 reference: StatefulProcessor) -> Callable[[DataFrame], DataFrame]:
    """One query running both processors on the same input, outputs tagged and unioned."""
    def query(events: DataFrame) -> DataFrame:
        mine = build(events, learner).withColumn(_WHO, F.lit(LEARNER))
        ours = build(events, reference).withColumn(_WHO, F.lit(REFERENCE))
        return mine.unionByName(ours)
    return query


def split_output(batch: BatchRecord) -> dict[str, list]:
    """A micro-batch's output rows, as sorted value lists, per processor."""
    rows: dict[str, list] = {LEARNER: [], REFERENCE: []}
    for row in batch.output:
        values = row.asDict()
        who = values.pop(_WHO)
        rows[who].append([plain_value(v) for v in values.values()])
    return {who: sorted(found, key=repr) for who, found in rows.items()}


def operator_ids(run: StreamRun) -> dict[str, int]:
    """Which operator is the learner's and which the course's.

    The learner's branch comes first in the union, so it gets operator id 0; when exactly
    one operator has variables named ``course_...``, that one is the course's.
    """
    ids = {LEARNER: 0, REFERENCE: 1}
    course = []
    for row in run.state_metadata():
        names = [v["stateName"] for v in json.loads(row.operatorProperties)["stateVariables"]]
        if any(name.startswith("course_") for name in names):
            course.append(row.operatorId)
    if len(course) == 1:
        ids = {REFERENCE: course[0], LEARNER: 1 - course[0]}
    return ids


class PairedRun:
    """Feeds micro-batches to a paired query and compares what the two processors did.

    ``context`` names the stream in a failure's lesson; a check that runs a fixed edge
    stream before the seed's sets it to the part being fed. ``revisit`` is the section a
    difference in the output sends the learner to.
    """

    def __init__(self, run: StreamRun, context: str, revisit: str, *, life_cycle: str):
        self.run, self.context, self.revisit = run, context, revisit
        self.life_cycle = life_cycle  # where a query that fails sends the learner
        self.records: list[BatchRecord] = []

    def add(self, rows: list) -> list[BatchRecord]:
        """Feed one batch of input rows; every micro-batch it runs must emit the same rows."""
        with spark_failure_as_lesson("the streaming query running your processor",
                                     revisit=self.life_cycle, context=self.context):
            records = self.run.add_batch(rows)
        for record in records:
            split = split_output(record)
            check_equal(split[LEARNER], split[REFERENCE],
                        "the rows your processor emitted in this micro-batch",
                        batch=record.batch_id, revisit=self.revisit, context=self.context)
        self.records.extend(records)
        return records

    def learners(self, reader: Reader) -> Any:
        """What ``reader`` reads back from the learner's operator."""
        return reader(self.run, operator_ids(self.run)[LEARNER])

    def compare(self, reader: Reader, what: str, *, revisit: str) -> None:
        """``reader`` must read the same from both operators after the last micro-batch."""
        ids = operator_ids(self.run)
        check_equal(reader(self.run, ids[LEARNER]), reader(self.run, ids[REFERENCE]), what,
                    batch=self.records[-1].batch_id if self.records else None,
                    revisit=revisit, context=self.context)


def quick_try(processor: StatefulProcessor, rows_by_key: dict, *, time_mode: str = "None",
              **tester_options: Any) -> None:
    """Run the processor on a few rows in ``TwsTester`` (no JVM) before the real query.

    Only a missing piece of code (the stub's ``NotImplementedError``) fails here, in a
    fraction of a second, with a one-line :class:`~autograder.feedback.TaskNotDone` naming
    the method; everything else is left to the real query, because TwsTester does not model
    TTL, the watermark or the state store (chapter 4, section "Fast checks with TwsTester").
    """
    from pyspark.sql.streaming.tws_tester import TwsTester

    def try_it() -> None:
        tester = TwsTester(processor, timeMode=time_mode, **tester_options)
        for key, rows in rows_by_key.items():
            tester.test(key, rows)

    stop_if_unfinished(try_it)
