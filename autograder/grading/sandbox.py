"""The sandbox a learner's code runs in while it is graded.

A graded notebook's kernel runs code the learner wrote, and so do the processes that code
starts. None of it may reach what decides a grade: the gradebook, the grading records, the
CSV, the course folder nbgrader works in, the answers in the grading processes' memory,
other learners' notebooks. Watching the kernel's own Python (the guard's audit hook) cannot
promise that: the next route is one standard-library function away. So the kernel is
started in a sandbox where none of it exists:

* **its own PID namespace**: the kernel sees its own processes only (``/proc`` is mounted
  anew), never the grading processes that are its ancestors nor a sibling notebook's
  kernel; and when the sandbox's first process ends, the Linux kernel kills every process
  left in the namespace, a detached (``setsid``, double-forked) one included: nothing a
  notebook starts outlives it;
* **its own user namespace**, as ``nobody`` with no capability: it cannot mount, trace or
  signal anything outside;
* **its own mount namespace**, built from nothing: the system's programs and libraries,
  this Python and its packages and the course's ``autograder`` package, all read-only; its
  own working folder read-write; a private ``/tmp``. The repository, the course folder, the
  submissions and the other learners' folders are not hidden: they were never mounted;
* its own IPC and host-name namespaces.

It is built by `bubblewrap <https://github.com/containers/bubblewrap>`_ (``bwrap``),
Debian's package of the tool Flatpak sandboxes its applications with: one program whose
options name the namespaces and mounts, which needs no root (it uses unprivileged user
namespaces) and no daemon. The Spark Connect server a class shares runs in a sandbox of the
same kind (:func:`server_sandbox`), which sees the kernels' working folders but not the
course folder.

A machine that cannot build one (no ``bwrap``, not Linux, user namespaces turned off) is
named at the start by :func:`why_not_available`; the grading command then refuses to grade
unless told ``--unsandboxed``, and every record of such a run says so.
"""
from __future__ import annotations

import functools
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..contract import SANDBOXED

#: The tool that builds the sandbox (Debian's ``bubblewrap`` package).
BWRAP = "bwrap"
#: Who a sandboxed process is inside its user namespace: ``nobody``, no capability.
NOBODY = 65534
#: The system's folders a program needs, bound read-only where they are folders (on a
#: merged-/usr system ``/bin``, ``/lib`` ... are links into ``/usr``, and are made so).
SYSTEM_FOLDERS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
#: What of ``/etc`` a Python, a JVM and name lookups read. The rest of ``/etc`` (the
#: machine's passwords, its services' configs) is not the sandbox's business.
ETC = ("passwd", "group", "hosts", "nsswitch.conf", "resolv.conf", "localtime", "timezone",
       "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates",
       "java-17-openjdk", "mime.types", "os-release")
#: Where a sandbox finds what it is given to read from the course's folders (the streams
#: and checkpoints a run recorded), so that those folders' own paths do not exist inside.
INPUTS = "/course-inputs"
#: The name a run's answers file has there, when a kernel judging its own checks reads it
#: (its recorded checkpoints are beside it, as outside: ``recorded.checkpoints``).
RECORDED_ANSWERS = "recorded.json"
#: The environment variable a notebook's nbgrader process finds its kernel's sandbox in
#: (:class:`Sandbox`, as JSON); it takes it out before the kernel starts.
SANDBOX = "AUTOGRADER_SANDBOX"


def work_root() -> Path:
    """The folder every graded notebook's working folder is made in (:func:`new_workdir`),
    the one folder of the grading machine the Connect server's sandbox may write.

    It is made without read permission (mode 0300): a sandboxed process, which has no
    capability, can enter a folder inside it whose name it knows, but cannot list it. Each
    notebook's folder has a random name of 128 bits, so one learner's query cannot name
    another's (``spark.read.text`` of a glob lists the folder first, and is refused)."""
    root = Path(tempfile.gettempdir()) / f"state-store-grading-{os.getuid()}"
    root.mkdir(mode=0o300, exist_ok=True)
    os.chmod(root, 0o300)
    return root


def new_workdir(purpose: str = "notebook") -> Path:
    """A fresh working folder for one graded notebook (or the solution's run)."""
    folder = work_root() / f"{purpose}-{secrets.token_hex(16)}"
    folder.mkdir(mode=0o700)
    return folder


@dataclass(frozen=True)
class Sandbox:
    """What one sandboxed process tree may see: ``writable`` folders (bound read-write at
    their own paths), ``readable`` files and folders (read-only), and where it starts."""

    writable: tuple[str, ...]
    readable: tuple[str, ...] = ()
    chdir: str | None = None
    #: Environment variables set inside (over what the process was started with).
    env: dict[str, str] = field(default_factory=dict)
    #: Folders bound read-write *over* the sandbox's private ``/tmp`` (a server's scratch).
    tmp: str | None = None
    #: Files and folders bound read-only at another path (``(outside, inside)``), under
    #: :data:`INPUTS`: the folder they come from (the course's) does not appear inside.
    inputs: tuple[tuple[str, str], ...] = ()

    def to_json(self) -> dict:
        return {"writable": list(self.writable), "readable": list(self.readable),
                "chdir": self.chdir, "env": self.env, "tmp": self.tmp,
                "inputs": [list(pair) for pair in self.inputs]}

    @classmethod
    def from_json(cls, data: dict) -> "Sandbox":
        return cls(tuple(data["writable"]), tuple(data.get("readable", ())), data.get("chdir"),
                   dict(data.get("env", {})), data.get("tmp"),
                   tuple(tuple(pair) for pair in data.get("inputs", ())))

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this sandbox."""
        options = [BWRAP, "--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY),
                   "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                   "--hostname", "sandbox", "--die-with-parent",
                   "--proc", "/proc", "--dev", "/dev"]
        for folder in SYSTEM_FOLDERS:
            path = Path(folder)
            if path.is_symlink():
                options += ["--symlink", os.readlink(path), folder]
            elif path.is_dir():
                options += ["--ro-bind", folder, folder]
        for name in ETC:
            if os.path.lexists(f"/etc/{name}"):
                options += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
        if self.tmp:
            options += ["--bind", self.tmp, "/tmp"]
        else:
            options += ["--tmpfs", "/tmp"]
        for path in _outermost([*python_folders(), *self.readable]):
            options += ["--ro-bind", path, path]
        for real, alias in python_aliases():
            options += ["--ro-bind", real, alias]
        for outside, inside in self.inputs:
            options += ["--ro-bind", outside, inside]
        for path in self.writable:
            options += ["--bind", path, path]
        if self.chdir:
            options += ["--chdir", self.chdir]
        for key, value in self.env.items():
            options += ["--setenv", key, value]
        return [*options, "--", *argv]


def python_folders() -> list[str]:
    """What a sandboxed Python needs to read: this interpreter, its virtual environment,
    every site-packages folder this Python imports from (an environment may reach another's
    through a ``.pth`` file), the course's ``autograder`` package (an editable install finds
    it in the repository: that folder alone is bound, not the repository), and Java. The
    folder a command was started in is on ``sys.path`` too, and is never bound: it may be
    the course's."""
    import pyspark

    from .. import __file__ as package
    folders = {Path(sys.base_prefix), Path(sys.prefix), Path(package).parent,
               Path(pyspark.__file__).parent}
    folders |= {Path(entry) for entry in sys.path
                if Path(entry).name in ("site-packages", "dist-packages")}
    java = shutil.which("java")
    if java:
        folders.add(Path(java).resolve().parents[1])
    if os.environ.get("JAVA_HOME"):
        folders.add(Path(os.environ["JAVA_HOME"]))
    return [str(folder.resolve()) for folder in folders if folder.exists()]


def python_aliases() -> list[tuple[str, str]]:
    """``(real folder, the path it is reached by)`` for this Python's environments reached
    through a link (a virtual environment that is a link to another folder, a home folder
    that is one): the kernel is started by the path, so the sandbox has the folder there
    too, not only at its real place."""
    return sorted({(str(Path(prefix).resolve()), str(Path(prefix).absolute()))
                   for prefix in (sys.prefix, sys.base_prefix)
                   if Path(prefix).exists() and Path(prefix).resolve() != Path(prefix).absolute()})


def _outermost(paths) -> list[str]:
    """The paths that lie in no other of them (binding the outer one binds the inner)."""
    resolved = sorted({str(Path(p).resolve()) for p in paths if os.path.exists(p)})
    return [p for p in resolved
            if not any(p != other and Path(p).is_relative_to(other) for other in resolved)]


def kernel_sandbox(workdir: Path, *, readable: list[Path] = (), writable: list[Path] = (),
                   inputs: dict[str, Path] | None = None,
                   env: dict[str, str] | None = None) -> Sandbox:
    """The sandbox of one graded notebook's kernel: its working folder is its home, its
    temporary folder and the only place it writes. ``inputs`` ({name: path}): read-only,
    at ``INPUTS/name`` inside."""
    workdir = str(Path(workdir).resolve())
    return Sandbox(writable=(workdir, *map(str, writable)), readable=tuple(map(str, readable)),
                   chdir=workdir,
                   inputs=tuple((str(Path(path).resolve()), f"{INPUTS}/{name}")
                                for name, path in (inputs or {}).items()),
                   env={SANDBOXED: "1",
                        "HOME": workdir, "TMPDIR": workdir, "IPYTHONDIR": f"{workdir}/.ipython",
                        "JUPYTER_CONFIG_DIR": f"{workdir}/.jupyter",
                        "MPLCONFIGDIR": f"{workdir}/.matplotlib", **(env or {})})


def server_sandbox(log_dir: Path, *, readable: list[Path] = ()) -> Sandbox:
    """The sandbox of the Spark a class shares (its Connect server, a standalone worker):
    it reads and writes the notebooks' working folders (their streams and checkpoints:
    :func:`work_root`, which it cannot list) and its own logs and scratch, and sees nothing
    of the course folder or the repository but the ``autograder`` package."""
    from ..toolkit.warm_python import scripts_folder, worker_python

    log_dir = Path(log_dir).resolve()
    scratch = log_dir / "scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    worker_python()  # the script Spark starts as its Python: written before it is bound
    return Sandbox(writable=(str(log_dir), str(work_root())),
                   readable=(str(scripts_folder()), *map(str, readable)),
                   chdir="/tmp", env={"TMPDIR": "/tmp", "HOME": "/tmp"}, tmp=str(scratch))


@functools.lru_cache(maxsize=1)
def why_not_available() -> str | None:
    """None when this machine can build the sandbox; else why not, in a line."""
    if sys.platform != "linux":
        return f"grading in a sandbox needs Linux (this is {sys.platform})"
    if shutil.which(BWRAP) is None:
        return ("this machine has no `bwrap` (Debian's package bubblewrap: "
                "`apt-get install bubblewrap`, or `make sandbox`)")
    with tempfile.TemporaryDirectory(prefix="sandbox-probe-") as folder:
        probe = Sandbox(writable=(folder,), chdir=folder)
        try:
            done = subprocess.run(probe.command(["/bin/sh", "-c", "echo $$; id -u"]),
                                  capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"`bwrap` failed ({error})"
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return f"this machine does not let `bwrap` build a sandbox ({said})"
    if done.stdout.split() != ["2", str(NOBODY)]:
        return f"`bwrap` ran, but not in namespaces of its own ({done.stdout.strip()!r})"
    return None
