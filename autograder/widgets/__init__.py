"""The book's widgets and pictures: the micro-batch stepper, its HTML, the plan as a picture and
SVG figures. Only the book's pages use them; nothing graded imports this package.

=====================  ================================================================
``stepper``            replays a recorded stream one micro-batch at a time (ipywidgets)
``step_view``          one micro-batch as the stepper shows it, as HTML
``plan_picture``       a physical plan drawn with matplotlib
``pictures``           matplotlib figures as SVG with their text kept as text
``join_steps``         chapter 6's join recorded for the stepper
``dedup_steps``        chapter 7's deduplications and chains recorded for the stepper
=====================  ================================================================
"""
