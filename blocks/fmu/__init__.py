"""The `fmu` block: FMUs (FMI 2.0 and 3.0) imported into a diagram."""
