"""What the installed Spark's jars say, for the claims no Python cell can run.

Some facts of the book are about Scala code: which planning strategy turns a logical
operator into which physical ones, which classes a method builds, whether an error class
exists. The chapters hold such claims with hidden cells that ask the jars PySpark ships
(``pyspark/jars``), so that the book fails to build if the Spark it runs on says otherwise.

``error_conditions()``        Spark's error classes, from ``error/error-conditions.json``
                              inside ``spark-common-utils``
``class_members(name)``       the fields and methods of a class, as ``javap -p`` prints them
``superclass(name)``          the class a class extends, as ``javap`` names it
``referenced_classes(name)``  the classes a class (or one of its methods) uses in its bytecode
``methods_called(name)``      the methods a class (or one of its methods) calls in its bytecode
``string_constants(name)``    the string literals of a class, such as the messages of its checks
"""
import functools
import json
import os
import re
import shutil
import subprocess
import zipfile

import pyspark

JARS = os.path.join(os.path.dirname(pyspark.__file__), "jars")


def jar(prefix):
    """The path of the one jar whose name starts with ``prefix``, e.g. ``spark-sql_``."""
    (found,) = [name for name in os.listdir(JARS) if name.startswith(prefix)]
    return os.path.join(JARS, found)


@functools.cache
def error_conditions():
    """Every error class of the installed Spark, with its message and sub-classes."""
    with zipfile.ZipFile(jar("spark-common-utils_")) as common:
        return json.loads(common.read("error/error-conditions.json"))


def _javap(*options, name):
    javap = shutil.which("javap") or os.path.join(os.environ.get("JAVA_HOME", ""), "bin", "javap")
    done = subprocess.run([javap, *options, "-cp", os.path.join(JARS, "*"), name],
                          capture_output=True, text=True, check=True)
    return done.stdout


@functools.cache
def class_members(name):
    """The members of class ``name`` (a binary name such as ``a.b.Outer$Inner$``), one per line."""
    lines = _javap("-p", name=name).splitlines()
    return [line.strip().rstrip(";") for line in lines if line.startswith("  ")]


def superclass(name):
    """The binary name of the class that class ``name`` extends (``java.lang.Object`` if none
    is named)."""
    heading = next(line for line in _javap("-p", name=name).splitlines()
                   if re.search(r"\b(class|interface) ", line))
    found = re.search(r" extends ([\w.$]+)", heading)
    return found.group(1) if found else "java.lang.Object"


@functools.cache
def _bytecode(name):
    return _javap("-p", "-c", name=name)


def _code_of(name, method=None):
    """The bytecode of class ``name``, or only of its method(s) called ``method``."""
    code = _bytecode(name)
    if method is None:
        return code
    bodies = re.findall(r"^  [^\n]*[ .]" + re.escape(method) + r"\(.*?\n(.*?)(?=^  \S|\Z)",
                        code, flags=re.M | re.S)
    return "\n".join(bodies)


def referenced_classes(name, method=None):
    """The classes that class ``name`` refers to in its bytecode, as dotted names.

    With ``method``, only those referred to in the body of the method(s) of that name.
    """
    code = _code_of(name, method)
    return {found.replace("/", ".") for found in re.findall(r"// \w+ (?:\w+ )?([\w/$]+)[.:\s]", code)
            if "/" in found}


def methods_called(name, method=None):
    """The names of the methods class ``name`` calls in its bytecode (with ``method``, in
    the body of its method(s) of that name), such as ``uploadSnapshot``."""
    return set(re.findall(r"// (?:Interface)?Method (?:[\w/$]+\.)?([\w$<>]+):",
                          _code_of(name, method)))


def string_constants(name):
    """The string literals in the bytecode of class ``name`` (messages of its checks, ...)."""
    return set(re.findall(r"// String (.*)$", _bytecode(name), flags=re.M))
