"""The plan reader turns explain() text into a tree of operators."""
from autograder.toolkit.plan import below_the_sink, parse_plan, render

AGGREGATION_PLAN = """\
== Physical Plan ==
*(4) HashAggregate(keys=[w#1], functions=[count(1)])
+- StateStoreSave [w#1], state info [ checkpoint = file:/tmp/ck/state, runId = r, opId = 0, ver = 1, numPartitions = 2], Update, 0, 0, 2
   +- *(3) HashAggregate(keys=[w#1], functions=[merge_count(1)])
      +- StateStoreRestore [w#1], state info [ checkpoint = file:/tmp/ck/state, runId = r, opId = 0, ver = 1, numPartitions = 2], 2
         +- *(2) HashAggregate(keys=[w#1], functions=[merge_count(1)])
            +- Exchange hashpartitioning(w#1, 2), ENSURE_REQUIREMENTS, [plan_id=10]
               +- *(1) HashAggregate(keys=[w#1], functions=[partial_count(1)])
                  +- FileScan json [w#1] Batched: false, ReadSchema: struct<w:string>


"""

JOIN_PLAN = """\
== Physical Plan ==
StreamingSymmetricHashJoin [k#1], [k#2], Inner
:- Exchange hashpartitioning(k#1, 2)
:  +- FileScan json [k#1]
+- Exchange hashpartitioning(k#2, 2)
   +- FileScan json [k#2]
"""


def test_operators_are_listed_in_data_flow_order():
    plan = parse_plan(AGGREGATION_PLAN)
    assert plan.operator_names() == [
        "FileScan", "HashAggregate", "Exchange", "HashAggregate", "StateStoreRestore",
        "HashAggregate", "StateStoreSave", "HashAggregate",
    ]


def test_aggregate_functions_and_keys_lose_their_expression_ids():
    plan = parse_plan(AGGREGATION_PLAN)
    aggregates = plan.find_all("HashAggregate")
    assert [a.functions for a in aggregates] == [
        ["partial_count(1)"], ["merge_count(1)"], ["merge_count(1)"], ["count(1)"]]
    assert all(a.keys == ["w"] for a in aggregates)
    assert [a.codegen_stage for a in aggregates] == [1, 2, 3, 4]


def test_stateful_operators_show_mode_keys_and_state_info():
    save = parse_plan(AGGREGATION_PLAN).find("StateStoreSave")
    assert save.output_mode == "Update"
    assert save.keys == ["w"]
    assert save.state_info["opId"] == "0"
    assert save.state_info["numPartitions"] == "2"


def test_a_join_keeps_both_branches_as_children():
    plan = parse_plan(JOIN_PLAN)
    assert plan.name == "StreamingSymmetricHashJoin"
    assert [child.name for child in plan.children] == ["Exchange", "Exchange"]
    assert len(plan.find_all("FileScan")) == 2


def test_render_draws_the_tree_with_indentation():
    text = render(parse_plan(AGGREGATION_PLAN))
    assert text.splitlines()[0] == "HashAggregate keys=['w'] functions=['count(1)']"
    assert text.splitlines()[1].startswith("  StateStoreSave [Update]")


MEMORY_SINK_PLAN = """\
== Physical Plan ==
WriteToDataSourceV2 MicroBatchWrite[epoch: 0, writer: org.apache.spark.sql.execution.streaming.sources.MemoryStreamingWrite@301e6e19]
+- StreamingGlobalLimit 5, state info [ checkpoint = file:/tmp/cp/state, runId = r, opId = 0, ver = 0, numPartitions = 2] stateStoreCkptIds = None, Append
   +- Exchange SinglePartition, ENSURE_REQUIREMENTS, [plan_id=35]
      +- *(1) LocalLimit 5
         +- FileScan json [id#5] Batched: false, Format: JSON, ReadSchema: struct<id:int>
"""


def test_a_sink_at_the_root_of_the_plan_is_not_one_of_its_operators():
    plan = below_the_sink(parse_plan(MEMORY_SINK_PLAN))
    assert plan.operator_names() == ["FileScan", "LocalLimit", "Exchange", "StreamingGlobalLimit"]
    # a plan without a sink node is left as it is
    assert below_the_sink(parse_plan(AGGREGATION_PLAN)).name == "HashAggregate"
