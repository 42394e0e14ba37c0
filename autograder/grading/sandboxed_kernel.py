"""The kernel manager nbgrader starts a graded notebook's kernel with: in its sandbox.

nbgrader runs a notebook through nbclient, which starts the kernel from its kernel spec
(``python -m ipykernel_launcher -f {connection_file}``). :class:`SandboxedKernelManager`
starts the same command inside the notebook's :class:`~.sandbox.Sandbox`, with the
connection file bound read-only: the kernel talks to nbgrader over the same loopback
sockets as before, and nbgrader (outside) reads the kernel's outputs as before.

What the kernel is given to read from the course's folders is bound under
:data:`~.sandbox.INPUTS`, and its environment names it there: the answers file of a run
whose kernel judges its own checks (when :func:`~.judge.hand_over_answers` has not taken
it for the judge), the recorded checkpoints always.

Two things change with the sandbox, both here:

* a cell stopped at its time limit is interrupted by a message on the kernel's control
  channel (``interrupt_mode = "message"``, which ipykernel answers by interrupting itself),
  not by SIGINT to the process group: the group's leader is now ``bwrap``, whom SIGINT
  would end, and with it the kernel;
* ending the kernel ends ``bwrap``, and with it every process left in the sandbox's PID
  namespace.
"""
from __future__ import annotations

import dataclasses
import os

from jupyter_client.manager import AsyncKernelManager

from ..contract import ANSWERS
from .sandbox import INPUTS, RECORDED_ANSWERS, SANDBOX, Sandbox


class SandboxedKernelManager(AsyncKernelManager):
    """An ``AsyncKernelManager`` whose kernel runs in :attr:`sandbox`."""

    sandbox: Sandbox | None = None

    @property
    def kernel_spec(self):
        spec = super().kernel_spec
        if spec is not None:
            spec.interrupt_mode = "message"
        return spec

    def format_kernel_cmd(self, extra_arguments=None) -> list[str]:
        command = super().format_kernel_cmd(extra_arguments)
        if self.sandbox is None:
            return command
        connection = os.path.realpath(self.connection_file)
        env = dict(self.sandbox.env)
        if os.environ.get(ANSWERS):  # not handed to the judge: the kernel judges its checks
            env[ANSWERS] = f"{INPUTS}/{RECORDED_ANSWERS}"
        inside = dataclasses.replace(self.sandbox, readable=(*self.sandbox.readable, connection),
                                     env=env)
        wrapped = inside.command(command)
        # The kernel's environment is nbgrader's, less the sandbox's own description and
        # nbgrader's pid: ipykernel would compare it with its parent's, which is `bwrap`'s
        # in the sandbox's namespace, and end. `bwrap --die-with-parent` watches instead.
        return [wrapped[0], "--unsetenv", SANDBOX, "--unsetenv", "JPY_PARENT_PID", *wrapped[1:]]
