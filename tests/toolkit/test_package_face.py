"""The package's face loads its names when first used: what a graded kernel imports before
any learner code (the names it shares with the command, its guard) loads no pyspark, and
every name the face lists is still there."""
import subprocess
import sys
import textwrap

import autograder

ROOT = autograder.__path__[0].rsplit("/", 1)[0]


def run_without_pyspark(code: str) -> subprocess.CompletedProcess:
    """``code`` in a fresh interpreter where importing pyspark fails."""
    blocked = textwrap.dedent("""
        import sys
        class NoPyspark:
            def find_spec(self, name, path=None, target=None):
                if name == "pyspark" or name.startswith("pyspark."):
                    raise ImportError("pyspark is blocked here")
        sys.meta_path.insert(0, NoPyspark())
    """)
    return subprocess.run([sys.executable, "-c", blocked + textwrap.dedent(code)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)


def test_the_contract_and_the_kernel_guard_import_without_pyspark():
    done = run_without_pyspark("""
        import autograder.contract
        import autograder.grading.kernel_guard
        print(sorted(name for name in sys.modules if name.startswith("pyspark")))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_importing_a_toolkit_name_without_pyspark_says_why():
    done = run_without_pyspark("from autograder import StreamRun")
    assert done.returncode != 0 and "pyspark is blocked here" in done.stderr


def test_every_name_of_the_face_is_there():
    for name in autograder.__all__:
        assert getattr(autograder, name).__name__ == name
    assert set(autograder.__all__) <= set(dir(autograder))
