"""The plan as a picture: a :class:`~autograder.toolkit.plan.PlanNode` tree drawn with matplotlib.

``explain()`` prints a physical plan upside down: the sink's operator on the first line,
the source on the last. A drawing reads the way rows travel: the source at the bottom,
each operator a box, an arrow from every child up to its parent, and the sink at the top.
Boxes are coloured by what the operator does:

=============  ==================================================================
colour         operators
=============  ==================================================================
orange         stateful operators: they open a state store in every micro-batch
               (``StateStoreRestore``, ``StateStoreSave``, the session-window and
               limit variants, ``StreamingDeduplicate``, ``TransformWithState`` ...)
blue           aggregation without state (``HashAggregate``, ``MergingSessions``)
grey           data movement (``Exchange``, ``Sort``)
green          where rows come from or event time is tracked (scans,
               ``EventTimeWatermark``)
white          everything else
=============  ==================================================================

Any chapter can use it::

    from autograder.widgets.plan_picture import draw_plan
    draw_plan(run.plan(), title="groupBy().count() in update mode")

Only the name of each operator and its most telling detail are drawn (keys, aggregate
functions, output mode, partitioning); the full text stays in ``explain()``.
"""
from __future__ import annotations

import re
import textwrap

from ..toolkit.plan import PlanNode

STATEFUL_COLOUR = "#f6b26b"
AGGREGATE_COLOUR = "#9fc5e8"
MOVEMENT_COLOUR = "#d9d9d9"
SOURCE_COLOUR = "#b6d7a8"
OTHER_COLOUR = "#ffffff"
#: What each colour stands for, as the legend under every picture says.
LEGEND = ((STATEFUL_COLOUR, "stateful: uses a state store"),
          (AGGREGATE_COLOUR, "aggregation, no state"),
          (MOVEMENT_COLOUR, "data movement"),
          (SOURCE_COLOUR, "source or watermark"),
          (OTHER_COLOUR, "other"))

#: Operators that only aggregate rows they are given (no state store).
_AGGREGATES = {"HashAggregate", "ObjectHashAggregate", "SortAggregate", "MergingSessions",
               "UpdatingSessions"}
_MOVEMENT = {"Exchange", "Sort", "ShuffleQueryStage", "AQEShuffleRead"}
_SOURCES = {"FileScan", "LocalTableScan", "EventTimeWatermark", "Scan", "MicroBatchScan",
            "StreamingDataSourceV2ScanRelation", "BatchScan"}
#: Operators whose detail shows their keys (other operators' brackets are expressions).
_KEYED = _AGGREGATES | {"Sort"}


def is_stateful(node: PlanNode) -> bool:
    """True for an operator that reads or writes a state store."""
    return bool(node.state_info) or node.name.startswith(("StateStore", "SessionWindowStateStore",
                                                          "StreamingGlobalLimit",
                                                          "StreamingDeduplicate",
                                                          "TransformWithState",
                                                          "StreamingSymmetricHashJoin"))


def colour_of(node: PlanNode) -> str:
    """The fill colour of an operator's box (see the table in the module docstring)."""
    if is_stateful(node):
        return STATEFUL_COLOUR
    if node.name in _AGGREGATES:
        return AGGREGATE_COLOUR
    if node.name in _MOVEMENT:
        return MOVEMENT_COLOUR
    if node.name in _SOURCES or node.name.endswith("Scan"):
        return SOURCE_COLOUR
    return OTHER_COLOUR


def label_of(node: PlanNode, width: int = 34) -> str:
    """The text in an operator's box: its name, then its most telling details."""
    lines = [node.name + (f" [{node.output_mode}]" if is_stateful(node) and node.output_mode else "")]
    if node.name == "Exchange":
        partitioning = re.match(r"(\w+partitioning\([^)]*\)|SinglePartition)", node.details)
        if partitioning:
            lines.append(partitioning.group(1))
    elif is_stateful(node) or node.name in _KEYED:
        if node.keys:
            keys = [key.replace(" ASC NULLS FIRST", "") for key in node.keys]
            lines.append("keys: " + ", ".join(keys))
    if node.functions:
        lines.append(", ".join(node.functions))
    if is_stateful(node) and "numPartitions" in node.state_info:
        # The partitions the operator's state is laid out for. An aggregation uses a state
        # store in each of them; a global limit reads all rows in one and uses only that.
        lines.append(f"state partitions: {node.state_info['numPartitions']}")
    wrapped = []
    for line in lines:
        wrapped.extend(textwrap.wrap(line, width) or [""])
    return "\n".join(wrapped)


def _layout(root: PlanNode) -> dict[int, tuple[float, int]]:
    """x (leaves side by side, parents centred above their children) and depth per node."""
    positions: dict[int, tuple[float, int]] = {}
    next_leaf = [0.0]

    def place(node: PlanNode, depth: int) -> float:
        if not node.children:
            x = next_leaf[0]
            next_leaf[0] += 1.0
        else:
            xs = [place(child, depth + 1) for child in node.children]
            x = sum(xs) / len(xs)
        positions[id(node)] = (x, depth)
        return x

    place(root, 0)
    return positions


def draw_plan(root: PlanNode, ax=None, title: str | None = None, width: int = 34,
              legend: bool = True):
    """Draw the plan ``root`` (as :func:`autograder.toolkit.plan.physical_plan` returns it).

    Returns the matplotlib figure. Pass ``ax`` to draw into an existing axes (for example
    two plans side by side). Under the drawing, a legend names the colours it uses.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, Patch

    positions = _layout(root)
    depth = max(d for _, d in positions.values()) + 1
    breadth = max(x for x, _ in positions.values()) + 1
    if ax is None:
        fig, ax = plt.subplots(figsize=(max(5.0, 4.2 * breadth), 0.95 * depth + 0.6))
    else:
        fig = ax.figure
    x_step, y_step = 4.2, 1.0

    def centre(node: PlanNode) -> tuple[float, float]:
        x, d = positions[id(node)]
        return x * x_step, (depth - 1 - d) * y_step  # the source (deepest) at the bottom

    boxes = {}
    for node in root.walk():
        x, y = centre(node)
        boxes[id(node)] = ax.text(
            x, y, label_of(node, width), ha="center", va="center", fontsize=11,
            family="monospace", zorder=3,
            bbox=dict(boxstyle="round,pad=0.35", facecolor=colour_of(node),
                      edgecolor="#444444", linewidth=0.8),
        )
    for node in root.walk():
        for child in node.children:
            ax.add_patch(FancyArrowPatch(
                centre(child), centre(node), arrowstyle="-|>", mutation_scale=10,
                color="#555555", linewidth=0.9, zorder=1,
                patchA=boxes[id(child)].get_bbox_patch(), patchB=boxes[id(node)].get_bbox_patch(),
            ))
    ax.set_xlim(-x_step / 2, (breadth - 0.5) * x_step)
    ax.set_ylim(-0.6 * y_step, (depth - 0.4) * y_step)
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=12)
    if legend:
        used = {colour_of(node) for node in root.walk()}
        ax.legend(handles=[Patch(facecolor=colour, edgecolor="#444444", label=meaning)
                           for colour, meaning in LEGEND if colour in used],
                  loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1, fontsize=11,
                  frameon=False)
    fig.tight_layout()
    return fig
