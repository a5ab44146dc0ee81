"""The engine: a DiagramSpec compiled into a Model (compiler), simulated by the solvers
(simulator, solvers/), recorded (recorder) and written as results (results, csvio)."""
