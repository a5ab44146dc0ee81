"""The chart block against independent truth: the relay it replaces, closed forms of
transition instants, a hand-written event-driven reference."""
from pathlib import Path

import numpy as np

import blocksim

HERE = Path(__file__).parent
ROOT = HERE.parents[1]


def test_chart_thermostat_switches_when_the_relay_does():
    """diagrams/thermostat.yaml's relay (on when the error rises to band/2, off when it
    falls to -band/2) written as a two-state chart: the same switch times to 1e-10
    relative (the spec's check), the same steps."""
    chart = blocksim.run(HERE / "thermostat_chart.yaml", {"simulation.mode": "normal"})
    relay = blocksim.run(ROOT / "diagrams" / "thermostat.yaml", {"simulation.mode": "normal"})
    assert len(chart.events_t) == len(relay.events_t) > 30
    np.testing.assert_allclose(chart.events_t, relay.events_t, rtol=1e-10, atol=0)
    np.testing.assert_allclose(chart["T"], relay["T"], rtol=1e-10)
    np.testing.assert_allclose(chart["heater"], relay["heater"], rtol=0, atol=1e-12)
