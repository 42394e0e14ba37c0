"""A corpus of hostile and broken submissions of chapter 1's exercises.

Each entry writes one notebook a grader meets in a real class: broken files, notebooks
whose grade cells were edited or deleted, code that never ends or kills its kernel, code
that leaves Spark in a mess, and cheats. :data:`CASES` maps a learner's name to the
builder of their notebook and to what the grading must record for it:

* ``outcome``: how grading ended (:mod:`autograder.grading`'s ``GRADED``, ``TIMED_OUT``...);
* ``points``: the points per grade cell;
* ``flagged``: whether the summary flags the submission as a cheat;
* ``detail``: a piece of text the result's detail must contain (or None).

Most hostile notebooks start from the untouched release, so that they cost little Spark
time; the honest parts they keep come from the solution.
"""
from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat

from autograder import grading
from autograder.grading.hidden_folders import why_not_hidden
from corpora.submissions import FULL_MARKS, release_notebook, solution_notebook

ASSIGNMENT = "01_global_limit"
FULL = FULL_MARKS[ASSIGNMENT]
ZERO = dict.fromkeys(FULL, 0)
#: The seconds a cell may run in the hostile class, and a whole notebook: several times
#: what an honest notebook's longest cell and whole run take on a busy machine, and short
#: enough that the two notebooks that wait a limit out do not hold the run for long. Graded
#: alone (`make test-hostile`, 2 idle cores), the honest learner takes about 11 s and the
#: solution's run 37 s, while the endless loop and then the other 19 notebooks keep the
#: second slot busy for about 131 s: the sleeper, at 120 s, ends about when they do.
CELL_TIMEOUT = 60
SUBMISSION_TIMEOUT = 120
assert 3 * (CELL_TIMEOUT - 5) > SUBMISSION_TIMEOUT, "the sleeper's three cells must outlast it"
DISK_LIMIT_MB = 64


def _solution_cells() -> dict[str, str]:
    nb = nbformat.read(solution_notebook(ASSIGNMENT), 4)
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in nb.cells
            if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")}


def notebook(answers: dict[str, str] | None = None, *, solved: tuple[str, ...] = (),
             edit: Callable | None = None):
    """The release, with ``solved`` cells taken from the solution, then ``answers``
    (grade_id -> source) written in, then ``edit(cells)`` applied to the cell list."""
    def build(target: Path) -> Path:
        nb = copy.deepcopy(nbformat.read(release_notebook(ASSIGNMENT), 4))
        solution = _solution_cells()
        wanted = {**{g: solution[g] for g in solved}, **(answers or {})}
        for cell in nb.cells:
            grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if grade_id in wanted:
                cell.source = wanted[grade_id]
        if edit:
            edit(nb.cells)
        nbformat.write(nb, target)
        return target
    return build


def raw(text: str):
    def build(target: Path) -> Path:
        target.write_text(text)
        return target
    return build


def _index(cells, grade_id):
    return next(i for i, c in enumerate(cells)
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)


def _delete(grade_id):
    def edit(cells):
        del cells[_index(cells, grade_id)]
    return edit


def _split(grade_id):
    def edit(cells):
        i = _index(cells, grade_id)
        first, *rest = cells[i].source.splitlines()
        second = copy.deepcopy(cells[i])
        second.id = f"{cells[i].get('id', 'cell')}-split"[:60]
        cells[i].source, second.source = first, "\n".join(rest)
        cells.insert(i + 1, second)
    return edit


def _swap(a, b):
    def edit(cells):
        i, j = _index(cells, a), _index(cells, b)
        cells[i], cells[j] = cells[j], cells[i]
    return edit


def _rewrite(grade_id, source):
    def edit(cells):
        cells[_index(cells, grade_id)].source = source
    return edit


STATE_ONLY = {**ZERO, "test_predict_state": 3}
EMITTED_ONLY = {**ZERO, "test_predict_emitted": 2}

WRONG_EMITTED = "def predict_emitted(sizes, limit):\n    return [min(s, limit) for s in sizes]\n"


@dataclass
class Case:
    build: Callable[[Path], Path]
    points: dict[str, float]
    outcome: str = grading.GRADED
    flagged: bool = False
    detail: str | None = None


def _dies_once(target: Path) -> Path:
    """A notebook whose kernel dies in its first grading run only, with task 1 solved. Its
    sandbox keeps nothing from one run to the next, so what remembers the first death is a
    folder Spark wrote, where only the run's Spark server looks (the one place a notebook
    can leave a mark that the next run of it finds)."""
    marker = f"/tmp/kernel-dies-once-{uuid.uuid4().hex}"
    return notebook({"predict_state": (
        "import os\n"
        "try:\n"
        f"    spark.read.text({marker!r}).collect()\n"
        "except Exception:\n"
        f"    spark.range(1).selectExpr('string(id)').write.text({marker!r})\n"
        "    os._exit(9)\n")}, solved=("predict_emitted",))(target)


CASES: dict[str, Case] = {
    # -- broken files and edited structure ------------------------------------------------
    "not_json": Case(raw('{"cells": [ this is not json'), ZERO, grading.NOT_A_NOTEBOOK),
    "empty_file": Case(raw(""), ZERO, grading.NOT_A_NOTEBOOK),
    "edited_grade_cell": Case(notebook(solved=("predict_emitted",), edit=_rewrite(
        "test_predict_emitted", "print('all good')")), EMITTED_ONLY),
    "deleted_grade_cell": Case(notebook(solved=("predict_emitted",),
                                        edit=_delete("test_predict_emitted")), EMITTED_ONLY),
    "split_grade_cell": Case(notebook(solved=("predict_emitted",),
                                      edit=_split("test_predict_emitted")), EMITTED_ONLY),
    "reordered_cells": Case(notebook(solved=("predict_emitted",),
                                     edit=_swap("predict_emitted", "test_predict_emitted")), ZERO),
    # -- code that never ends, kills its kernel, or leaves Spark in a mess -----------------
    "endless_loop": Case(notebook({"predict_emitted": "while True:\n    pass\n"},
                                  solved=("predict_state",)), STATE_ONLY,
                         detail=f"stopped at the {CELL_TIMEOUT} s cell limit: predict_emitted"),
    # each cell stays under the cell timeout; together they pass the notebook's
    "sleeper": Case(notebook(dict.fromkeys(("predict_emitted", "predict_state", "emitted_so_far"),
                                           f"import time\ntime.sleep({CELL_TIMEOUT - 5})\n")),
                    ZERO, grading.TIMED_OUT),
    "kernel_exit": Case(notebook({"predict_state": "import os\nos._exit(3)\n"},
                                 solved=("predict_emitted",)), ZERO, grading.KERNEL_DIED,
                        detail="it died again when graded a second time"),
    # a kernel that dies once, as one short of memory would: not the learner's doing
    "kernel_dies_once": Case(_dies_once, EMITTED_ONLY,
                             detail="not counted against the learner"),
    "stops_spark": Case(notebook({"emitted_so_far": "spark.stop()\n"},
                                 solved=("predict_emitted", "first_clicks")), EMITTED_ONLY),
    "leaves_query": Case(notebook({"emitted_so_far": (
        "query = (spark.readStream.format('rate').load()\n"
        "         .writeStream.format('noop').start())\n")}, solved=("predict_emitted",)),
        EMITTED_ONLY, detail="left 1 streaming query"),
    "fills_disk": Case(notebook({"predict_state": (
        "import os, tempfile\n"
        "folder = tempfile.mkdtemp(prefix='checkpoint-')\n"
        "for i in range(600):\n"
        "    with open(os.path.join(folder, f'{i}.delta'), 'wb') as f:\n"
        "        f.write(os.urandom(2**20))\n")}, solved=("predict_emitted",)),
        ZERO, grading.DISK_FULL),
    # -- cheats ---------------------------------------------------------------------------
    "patches_check": Case(notebook({"predict_emitted": (
        "import autograder.global_limit as g\n"
        "g.check_predicted_output = lambda *a, **k: None\n" + WRONG_EMITTED)}), ZERO,
        flagged=True),
    "redefines_check": Case(notebook({"predict_emitted": (
        "def check_predicted_output(*args, **kwargs):\n    print('passed')\n" + WRONG_EMITTED)}),
        ZERO, flagged=True),
    "patches_during_check": Case(notebook({"predict_emitted": (
        "def predict_emitted(sizes, limit):\n"
        "    m = __import__('autograder.glob' + 'al_limit', fromlist=['x'])\n"
        "    setattr(m, 'check_' + 'equal', lambda *a, **k: None)\n"
        "    return [0] * len(sizes)\n")}), ZERO, flagged=True),
    "always_equal": Case(notebook({"predict_emitted": (
        "class Anything(list):\n"
        "    def __eq__(self, other):\n        return True\n"
        "def predict_emitted(sizes, limit):\n    return Anything()\n")}), ZERO),
    "hides_tracebacks": Case(notebook({"predict_emitted": (
        "get_ipython().showtraceback = lambda *a, **k: None\n" + WRONG_EMITTED)}), ZERO,
        flagged=True),
    "reads_solutions": Case(notebook({"predict_emitted": (
        "import os, autograder\n"
        "here = os.path.dirname(os.path.dirname(autograder.__file__))\n"
        "path = os.path.join(here, 'sol' + 'utions', '01_global_limit', '01_global_limit.ipynb')\n"
        "answer = open(path).read()\n")}, solved=("predict_state",)), ZERO, flagged=True),
    # the same notebook read by Spark, which the kernel's guard does not stand between:
    # the grading server cannot see the solutions (autograder.grading.hidden_folders), so
    # the read fails and the task is not done (nothing to flag: no answer was taken). On a
    # machine that cannot hide folders the read succeeds, and so does the cheat.
    "reads_solutions_through_spark": Case(notebook({"predict_emitted": (
        "import json, os, autograder\n"
        "here = os.path.dirname(os.path.dirname(autograder.__file__))\n"
        "path = os.path.join(here, 'sol' + 'utions', '01_global_limit', '01_global_limit.ipynb')\n"
        "text = '\\n'.join(row.value for row in spark.read.text(path).collect())\n"
        "exec(next(''.join(cell['source']) for cell in json.loads(text)['cells']\n"
        "          if cell['metadata'].get('nbgrader', {}).get('grade_id') == 'predict_emitted'))\n")},
        solved=("predict_state",)),
        STATE_ONLY if why_not_hidden() is None
        else {**STATE_ONLY, "test_predict_emitted": FULL["test_predict_emitted"]}),
    # the gradebook looked for around the kernel's folder: in the sandbox there is none to
    # find (the course folder is not mounted), so nothing is done and nothing is flagged
    "writes_gradebook": Case(notebook({"predict_emitted": (
        "import glob, importlib\n"
        "db = importlib.import_module('sql' + 'ite3')\n"
        "for path in glob.glob('../../../*.db'):\n"
        "    db.connect(path).execute('update grade set auto_score = 99')\n")},
        solved=("predict_state",)), STATE_ONLY),
    # Spark's Python is a script in a folder of the grading run (autograder.toolkit.warm_python):
    # without it, the notebooks graded after this one would have no Python for a processor
    "removes_spark_python": Case(notebook({"predict_emitted": (
        "import os\n"
        "os.remove(os.environ['PYSPARK_PYTHON'])\n")}, solved=("predict_state",)),
        ZERO, flagged=True),
    "borrows_answers": Case(notebook({"predict_emitted": (
        "from autograder.global_limit import limit_run\n"
        "def predict_emitted(sizes, limit):\n"
        "    return [batch['emitted'] for batch in limit_run(spark, sizes, limit)]\n")},
        solved=("predict_state",)), ZERO, flagged=True),
    # the course's reference reached at run time, where no scan of the text sees it: the
    # guard records the call (autograder.checks.checking.reference_answer), whichever the route
    "borrows_through_sys_modules": Case(notebook({"predict_emitted": (
        "import sys\n"
        "def predict_emitted(sizes, limit):\n"
        "    __import__('autograder.glob' + 'al_limit')\n"
        "    found = getattr(sys.modules['autograder.glob' + 'al_limit'], 'limit' + '_run')\n"
        "    return [batch['emitted'] for batch in found(spark, sizes, limit)]\n")},
        solved=("predict_state",)), ZERO, flagged=True),
    "hands_in_the_reference": Case(notebook({"first_clicks": (
        "import functools, importlib\n"
        "module = importlib.import_module('autograder.glob' + 'al_limit')\n"
        "first_clicks = functools.partial(vars(module)['reference_' + 'first_clicks'])\n")},
        solved=("predict_emitted", "predict_state")),
        {**ZERO, "test_predict_emitted": FULL["test_predict_emitted"],
         "test_predict_state": FULL["test_predict_state"]}, flagged=True),
    # -- honest learners graded beside them -----------------------------------------------
    "honest": Case(lambda target: Path(target).write_bytes(
        solution_notebook(ASSIGNMENT).read_bytes()) and target, FULL),
    "honest_partial": Case(notebook(solved=("predict_emitted", "predict_state")),
                           {**ZERO, "test_predict_emitted": 2, "test_predict_state": 3}),
}


#: The notebooks that wait out a time limit: graded first, so that the rest of the class is
#: graded beside them rather than after them.
WAITS_A_LIMIT_OUT = ("sleeper", "endless_loop")


def write_corpus(folder: Path, names=None) -> dict[str, Path]:
    """Write the corpus (or the named cases) into ``folder``; learner -> notebook, in the
    order they are to be graded."""
    folder.mkdir(parents=True, exist_ok=True)
    names = sorted(names or CASES, key=lambda name: name not in WAITS_A_LIMIT_OUT)
    return {name: CASES[name].build(folder / f"{name}.ipynb") for name in names}
