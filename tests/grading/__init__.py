"""Grading through real nbgrader and the classroom command (``autograder.grading``)."""
