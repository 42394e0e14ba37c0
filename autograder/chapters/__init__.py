"""Each chapter's worked examples and checks, with the helpers only that chapter needs. A
chapter imports the toolkit and the check framework (:mod:`autograder.checks`), never the
book's widgets: a graded kernel loads no ipywidgets.

=========================  ============================================================
``global_limit``           chapter 1: the global limit
``aggregation_planning``   chapter 2: how a streaming aggregation is planned
``state_store_save``       chapter 3: StateStoreSaveExec's output modes
``save_model``             chapter 3's executable model of StateStoreSaveExec
``transform_with_state``   chapter 4: transformWithState
``tws_state``, ...         chapter 4's readers (``tws_state``), streams (``tws_streams``) and
                           processor comparison (``processor_pair``)
``state_store_files``      chapter 5: the state store's files
``checkpoint_files``       chapter 5's listing of a checkpoint's files
``stream_join``            chapter 6's join, fed and read back
``stream_join_checks``     chapter 6: the state of a stream-stream join
``deduplication``          chapter 7: deduplication and chains of stateful operators (no
                           checks yet)
=========================  ============================================================
"""
