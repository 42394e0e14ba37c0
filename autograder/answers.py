"""Spark's answers, asked once.

A check compares a learner's code with what real Spark does on the same stream. What Spark
does to a stream depends on the stream and nothing else, so the checks ask for it through
:func:`spark_answer`, which remembers each answer:

* **in one process** (a notebook, the tests), a question asked twice is run once;
* **in a class**, the grading command asks once for everybody. It gives every notebook of
  a run the same seed (``COURSE_SEED``, drawn anew for each run, so nobody can know the
  streams beforehand), runs the solution notebook once with ``AUTOGRADER_RECORD_ANSWERS``
  naming a file, where every answer Spark gave is written, and then grades each learner's
  notebook with ``AUTOGRADER_ANSWERS`` naming that file. A learner's kernel reads the file
  when the checks are imported, before the learner's first cell runs; from then on the
  grading guard refuses to open it (it lies in the grading folder).

Answers are plain JSON data (numbers, strings, lists, dicts; tuples come back as lists),
whether Spark was just asked or the answer was recorded, so a check sees the same thing
either way. Each call returns a new copy: a caller cannot change what the next one gets.
"""
from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from types import MappingProxyType
from typing import Any, Callable

#: A JSON file of answers recorded for this grading run (read when this module is imported).
ANSWERS_VARIABLE = "AUTOGRADER_ANSWERS"
#: A JSON file to which this process writes every answer it asks Spark for.
RECORD_VARIABLE = "AUTOGRADER_RECORD_ANSWERS"


def _recorded() -> MappingProxyType:
    path = os.environ.get(ANSWERS_VARIABLE)
    if not path:
        return MappingProxyType({})
    try:
        return MappingProxyType(json.loads(Path(path).read_text()))
    except (OSError, ValueError):
        return MappingProxyType({})  # no answers: every question goes to Spark


#: Answers recorded for this run, read-only.
RECORDED: MappingProxyType = _recorded()
_asked: dict[str, str] = {}
_lock = threading.Lock()


def spark_answer(question: str, about: Any, ask_spark: Callable[[], Any]) -> Any:
    """What Spark answers to ``question`` about ``about`` (JSON data: a stream, a limit ...).

    ``ask_spark()`` runs the query and returns plain data; it is called only when neither
    this process nor the run's recorded answers know the answer yet.
    """
    key = f"{question} {json.dumps(about, sort_keys=True)}"
    with _lock:
        known = _asked.get(key, RECORDED.get(key))
    if known is None:
        known = json.dumps(ask_spark())
        with _lock:
            _asked[key] = known
            _write_record()
    return json.loads(known)


def _write_record() -> None:
    path = os.environ.get(RECORD_VARIABLE)
    if not path:
        return
    partial = Path(f"{path}.partial")
    partial.write_text(json.dumps(_asked, indent=0, sort_keys=True))
    partial.replace(path)
