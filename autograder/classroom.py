"""The instructor's grading command: ``python -m autograder.classroom grade ...``.

Everything it does lives in :mod:`autograder.grading` (one module per concern; its
docstring has the map). This module only keeps the command's name.
"""
import sys

from .grading.cli import main

if __name__ == "__main__":
    sys.exit(main())
