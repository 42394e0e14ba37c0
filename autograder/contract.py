"""What the grading command and a learner's kernel agree on.

It lives with the toolkit, not in :mod:`autograder.grading`: the toolkit reads these names
in every kernel, and the grading machinery is the side that needs the toolkit, never the
other way round. A grading run talks to each kernel it starts through environment variables, and both
sides import their names from here: the command sets them (:mod:`autograder.grading.grader`,
:mod:`autograder.grading.reference`), the course's toolkit reads them inside the kernel
(:mod:`autograder.checks.feedback`, :mod:`autograder.toolkit.session`, :mod:`autograder.checks.answers`,
:mod:`autograder.grading.kernel_guard`). This module imports nothing: a kernel pays nothing
for it.
"""

#: Seconds one cell may run, as a learner's self-check (:mod:`autograder.checks.check_notebook`)
#: and a grading run (:class:`autograder.grading.processes.GradingLimits`) both stop it: a
#: cell the self-check lets finish is not stopped when graded.
CELL_TIMEOUT = 300
#: The course's name to nbgrader (its gradebook, its exchange folders): the repository's
#: nbgrader configuration and the one the grading command writes both give it.
COURSE_ID = "inside-spark-state-store"
#: The seed of the run's streams: every notebook of a class is graded on the same ones.
#: Set by hand, it replays a run's streams (``COURSE_SEED=226771``).
SEED = "COURSE_SEED"
#: Where the kernel's Spark writes its JVM log (its own temporary folder while grading).
JVM_LOG = "COURSE_JVM_LOG"
#: The file the kernel's guard appends its events to (starts, repairs, refusals).
GUARD_LOG = "AUTOGRADER_GUARD_LOG"
#: Paths the kernel's guard refuses to open (the solutions, the course folder, other
#: learners' submissions), joined with ``os.pathsep``.
GUARD_DENY = "AUTOGRADER_GUARD_DENY"
#: Spark's answers recorded by the run's solution notebook. The grading command's own process
#: reads them to judge; a learner's kernel is never given this name.
ANSWERS = "AUTOGRADER_ANSWERS"
#: Set to "1" in a graded learner's kernel: the checks only ask the learner's code and write
#: its answers down; the grading command judges them (:mod:`autograder.checks.asking`).
ASKING = "AUTOGRADER_ASKING"
#: The checkpoints the run's solution notebook recorded (inputs some checks hand to a
#: learner's reader), for a graded learner's kernel: a folder, without Spark's answers.
CHECKPOINTS = "AUTOGRADER_CHECKPOINTS"
#: Where the solution notebook's kernel records every answer it asked Spark for.
RECORD_ANSWERS = "AUTOGRADER_RECORD_ANSWERS"
#: A folder several processes that ask Spark the same questions keep its answers in for
#: each other (the test suite's workers): each question is run once among them all.
SHARED_ANSWERS = "AUTOGRADER_SHARED_ANSWERS"
#: A Spark Connect server to grade against (the tests' shared server); ``SPARK_REMOTE``
#: itself is left to the session factory.
SHARED_SERVER = "AUTOGRADER_SPARK_REMOTE"
#: Set to "1" inside a graded notebook's sandbox (:mod:`autograder.grading.sandbox`): what
#: the kernel starts there dies with it and reaches nothing of the grader's, so its guard
#: no longer refuses to start processes.
SANDBOXED = "AUTOGRADER_SANDBOXED"
#: The audit event a reference answer of the course raises when a learner's answer runs it
#: (:func:`autograder.checks.checking.reference_answer`); the kernel's guard records it.
BORROWED = "autograder.reference_borrowed"
#: The audit event the course's checks raise when what failed is not the learner's
#: (:class:`autograder.checks.feedback.GraderFault`); the kernel's guard records it, and the
#: command grades that notebook again instead of scoring it.
GRADER_FAULT = "autograder.grader_fault"
