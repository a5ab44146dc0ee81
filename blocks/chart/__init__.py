"""The `chart` block: state machines with hierarchical and parallel states (docs/charts.md).

spec.py reads the YAML into plain data and checks it, program.py compiles the actions and
conditions and lays out the chart's memory and tables, machine.py runs an instant of the
chart, block.py is the block, lowering.py (with _chart.c) its compiled form.
"""
