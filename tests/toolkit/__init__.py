"""The learner's toolkit at the top of ``autograder/``: session, driver, state, plan,
stepper, feedback, recorded answers and ``make check``."""
