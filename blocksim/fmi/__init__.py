"""FMI support shared by importing FMUs (the `fmu` block) and building them: the FMU
builder (build.py) and its C wrappers (c/)."""
