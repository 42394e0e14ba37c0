"""The old name of :mod:`autograder.chapters.state_store_save` (:mod:`autograder.old_paths`)."""
from .old_paths import stand_in

stand_in(__name__)
