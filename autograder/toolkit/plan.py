"""The plan reader: the physical operators of a running query, as data.

``query.explain()`` prints the physical plan Spark executed for the last micro-batch: one
operator per line, children indented below their parent behind ``+-`` (last child) or
``:-`` (other children). :func:`physical_plan` turns that text into a tree of
:class:`PlanNode` objects, so a chapter or a check can ask questions such as "which
operators run, from the source up to the sink?" or "what keys does StateStoreSave use?"
without matching strings by hand. The same text is available under Spark Connect, so the
reader works for both kinds of course session.
"""
from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass, field
from typing import Iterator

# "   +- *(2) HashAggregate(keys=[...])" -> indentation, codegen stage, operator text
_LINE = re.compile(r"^(?P<indent>(?:[ |]|:(?!- ))*)(?P<branch>[+:]- )?(?:\*\((?P<stage>\d+)\) )?(?P<text>\S.*)$")
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*")
_EXPR_ID = re.compile(r"#\d+L?")
_OUTPUT_MODES = ("Append", "Complete", "Update")


@dataclass
class PlanNode:
    """One physical operator: its name, the rest of its line, and its children."""

    name: str
    details: str
    codegen_stage: int | None = None
    children: list["PlanNode"] = field(default_factory=list)

    # -- walking the tree ----------------------------------------------------------------
    def walk(self) -> Iterator["PlanNode"]:
        """This node and every node below it, parents before children."""
        yield self
        for child in self.children:
            yield from child.walk()

    def data_flow(self) -> list["PlanNode"]:
        """The operators in the order rows flow through them: source first, sink last.

        For a plan with joins (several children) the first child's branch is followed.
        """
        chain, node = [], self
        while True:
            chain.append(node)
            if not node.children:
                return list(reversed(chain))
            node = node.children[0]

    def operator_names(self) -> list[str]:
        """The names of :meth:`data_flow`, source first."""
        return [node.name for node in self.data_flow()]

    def find_all(self, name: str) -> list["PlanNode"]:
        """Every operator with this name, in data-flow order (source first)."""
        return [node for node in reversed(list(self.walk())) if node.name == name]

    def find(self, name: str) -> "PlanNode":
        """The first operator with this name, counting from the source."""
        found = self.find_all(name)
        if not found:
            raise LookupError(f"no {name} in the plan: {' -> '.join(self.operator_names())}")
        return found[0]

    # -- what an operator's line says -----------------------------------------------------
    @property
    def keys(self) -> list[str]:
        """Grouping keys of an aggregate or state-store operator, without expression ids."""
        match = re.search(r"keys=\[([^\]]*)\]", self.details) or re.match(r"\[([^\]]*)\]", self.details)
        return _split_list(match.group(1)) if match else []

    @property
    def functions(self) -> list[str]:
        """Aggregate functions of a HashAggregate, e.g. ``partial_count(1)``."""
        match = re.search(r"functions=\[(.*?)\](?:, output=|\)$)", self.details)
        return _split_list(match.group(1)) if match else []

    @property
    def output_mode(self) -> str | None:
        """The output mode a stateful operator runs in (``Append``, ``Complete``, ``Update``)."""
        for part in reversed([p.strip() for p in self.details.split(",")]):
            if part in _OUTPUT_MODES:
                return part
        return None

    @property
    def state_info(self) -> dict[str, str]:
        """The ``state info [ ... ]`` of a stateful operator: opId, numPartitions, ..."""
        match = re.search(r"state info \[(.*?)\]", self.details)
        if not match:
            return {}
        pairs = (item.split("=", 1) for item in match.group(1).split(",") if "=" in item)
        return {key.strip(): value.strip() for key, value in pairs}

    def __str__(self) -> str:
        return render(self)


def parse_plan(text: str) -> PlanNode:
    """Parse the ``== Physical Plan ==`` section of an ``explain()`` text into a tree."""
    lines = text.splitlines()
    if any(line.startswith("== Physical Plan ==") for line in lines):
        start = next(i for i, line in enumerate(lines) if line.startswith("== Physical Plan =="))
        lines = lines[start + 1:]
    root: PlanNode | None = None
    stack: list[tuple[int, PlanNode]] = []
    for line in lines:
        if not line.strip():
            if root is not None:
                break
            continue
        if line.startswith("=="):
            break
        match = _LINE.match(line)
        name = _NAME.match(match.group("text")) if match else None
        if not name:  # a continuation of the previous operator's text
            continue
        text = match.group("text")
        depth = len(match.group("indent")) + len(match.group("branch") or "")
        node = PlanNode(
            name=name.group(0),
            details=_EXPR_ID.sub("", text[name.end():]).strip(),
            codegen_stage=int(match.group("stage")) if match.group("stage") else None,
        )
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1].children.append(node)
        else:
            root = node
        stack.append((depth, node))
    if root is None:
        raise ValueError("no physical plan in this text:\n" + text)
    return root


def explain_text(query) -> str:
    """What ``query.explain()`` prints, as a string (local and Connect sessions alike)."""
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        query.explain()
    return buffer.getvalue()


def physical_plan(query) -> PlanNode:
    """The physical plan of a streaming query's last micro-batch."""
    return explained_plan(explain_text(query))


def explained_plan(text: str) -> PlanNode:
    """The physical plan in what a streaming query's ``explain()`` printed, below its sink."""
    if "No physical plan" in text:
        raise LookupError("the query has not run a micro-batch yet, so it has no plan")
    return below_the_sink(parse_plan(text))


def below_the_sink(root: PlanNode) -> PlanNode:
    """The plan without its sink node, so that it starts at the query's last operator.

    A sink written through the DataSource V2 API (Spark's memory sink) is the root of the
    plan, ``WriteToDataSourceV2``; a ``foreachBatch`` sink does not show up at all. The
    sink is not an operator of the query, so either way the plan starts below it.
    """
    if root.name == "WriteToDataSourceV2" and len(root.children) == 1:
        return root.children[0]
    return root


def render(node: PlanNode, indent: str = "") -> str:
    """The tree as short indented text: operator names with their most telling detail."""
    label = node.name
    if node.output_mode:
        label += f" [{node.output_mode}]"
    if node.keys:
        label += f" keys={node.keys}"
    if node.functions:
        label += f" functions={node.functions}"
    lines = [indent + label]
    for child in node.children:
        lines.append(render(child, indent + "  "))
    return "\n".join(lines)


def _split_list(text: str) -> list[str]:
    """Split "a, count(b, c), d" on the top-level commas only."""
    items, depth, current = [], 0, ""
    for char in text:
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        if char == "," and depth == 0:
            items.append(current.strip())
            current = ""
        else:
            current += char
    if current.strip():
        items.append(current.strip())
    return items


def planning_strategies(query) -> list[tuple[str, str]]:
    """Which planning strategy turned each logical operator of the last micro-batch into
    physical ones: ``(logical operator, strategy)`` pairs, top of the plan first.

    The planner asks its strategies in order and takes the first that answers with a plan;
    this asks them the same way. It reads the JVM's objects, so it needs a local session
    (not Spark Connect).
    """
    execution = query._jsq.streamingQuery().lastExecution()
    strategies = execution.planner().strategies()
    strategies = [strategies.apply(i) for i in range(strategies.size())]
    found, nodes = [], [execution.optimizedPlan()]
    while nodes:
        node = nodes.pop(0)
        found.append((node.nodeName(), next(
            (strategy.getClass().getSimpleName().rstrip("$") for strategy in strategies
             if _answers(strategy, node)), None)))
        children = node.children()
        nodes[:0] = [children.apply(i) for i in range(children.size())]
    return found


def _answers(strategy, node) -> bool:
    try:
        return not strategy.apply(node).isEmpty()
    except Exception:  # noqa: BLE001 - a strategy may throw on an operator it does not plan
        return False
