"""The old name of :mod:`autograder.chapters.stream_join_checks` (:mod:`autograder.old_paths`)."""
from .old_paths import stand_in

stand_in(__name__)
