"""Accelerated mode: a diagram compiled to C, events, solver and recording included.

A layer above the engine (it reads a compiled Model) and below `api` (which runs a model in
the mode `mode.decide` picks): `codegen` writes the C source from the Model and the blocks'
lowerings (the contract is in `lowering`), `build` compiles and caches it, `runner` runs it
on the model's own buffers and returns what `simulate()` returns, `stiff` runs scipy's
implicit solvers on compiled evaluations.
"""
