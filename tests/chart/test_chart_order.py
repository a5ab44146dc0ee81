"""The order things happen in a chart, against the documented rule (docs/charts.md, 'What
happens at an instant'), as tables: each case's actions write codes into a trace as they
run; the expected trace is read off the rule by hand. `go` steps from 0 to 1 at t = 1."""
import pytest

from blocksim.errors import SimulationError

from charts import entries, mark, run_chart, trace

GO = "go > 0.5"

pytestmark = pytest.mark.filterwarnings("ignore::blocksim.errors.DiagramWarning")

CASES = {
    # outer before inner: at t = 1 both P -> Q and P.A -> P.B hold; the outer one is taken:
    # A exits, then P (innermost first), the do, then Q is entered
    "outer before inner": ({
        "states": {"P": {"initial": True, "entry": mark(1), "exit": mark(4),
                         "states": {"A": {"initial": True, "entry": mark(2), "exit": mark(3)},
                                    "B": {"entry": mark(9)}}},
                   "Q": {"entry": mark(6)}},
        "transitions": [{"from": "P.A", "to": "P.B", "when": GO},
                        {"from": "P", "to": "Q", "when": GO, "do": mark(5)}]},
        [1, 2, 3, 4, 5, 6]),
    # among one state's transitions the first written that holds is taken
    "priority": ({
        "states": {"A": {"initial": True}, "B": {"entry": mark(1)}, "C": {"entry": mark(2)}},
        "transitions": [{"from": "A", "to": "C", "when": GO},
                        {"from": "A", "to": "B", "when": GO}]},
        [2]),
    # a transition that does not hold yields to the next one
    "priority skips a false one": ({
        "states": {"A": {"initial": True}, "B": {"entry": mark(1)}, "C": {"entry": mark(2)}},
        "transitions": [{"from": "A", "to": "C", "when": "go > 2"},
                        {"from": "A", "to": "B", "when": GO}]},
        [1]),
    # into a composite state: its entry, then its initial child's (outermost first)
    "default entry": ({
        "states": {"A": {"initial": True, "exit": mark(1)},
                   "P": {"entry": mark(2), "states": {
                       "X": {"entry": mark(9)},
                       "Y": {"initial": True, "entry": mark(3), "states": {
                           "Z": {"initial": True, "entry": mark(4)}}}}}},
        "transitions": [{"from": "A", "to": "P", "when": GO}]},
        [1, 2, 3, 4]),
    # a chain at one instant: after A -> B the chart tests again and B -> C holds too
    "chain": ({
        "states": {"A": {"initial": True, "exit": mark(1)}, "B": {"entry": mark(2),
                                                                   "exit": mark(3)},
                   "C": {"entry": mark(4)}},
        "transitions": [{"from": "A", "to": "B", "when": GO},
                        {"from": "B", "to": "C", "when": GO}]},
        [1, 2, 3, 4]),
    # a self-transition leaves the state and enters it again (once: then it is false)
    "self transition": ({
        "states": {"A": {"initial": True, "entry": mark(1), "exit": mark(2)}},
        "transitions": [{"from": "A", "to": "A", "when": "go > 0.5 and n < 3"}]},
        [1, 2, 1]),
    # from an inner state to its parent: the parent is left and entered again, with its
    # initial child (external semantics)
    "child to parent": ({
        "states": {"P": {"initial": True, "entry": mark(1), "exit": mark(4), "states": {
            "A": {"initial": True, "entry": mark(2)},
            "B": {"entry": mark(3), "exit": mark(5)}}}},
        "transitions": [{"from": "P.A", "to": "P.B", "when": GO},
                        {"from": "P.B", "to": "P", "when": "go > 0.5 and n < 5"}]},
        [1, 2, 3, 5, 4, 1, 2, 3]),
    # parallel regions: entered in the order written, each tested in one pass
    "parallel regions": ({
        "parallel": True,
        "states": {"R1": {"entry": mark(1), "states": {"A": {"initial": True},
                                                        "B": {"entry": mark(3)}}},
                   "R2": {"entry": mark(2), "states": {"C": {"initial": True},
                                                        "D": {"entry": mark(4)}}}},
        "transitions": [{"from": "R1.A", "to": "R1.B", "when": GO},
                        {"from": "R2.C", "to": "R2.D", "when": GO}]},
        [1, 2, 3, 4]),
}


@pytest.mark.parametrize("case", CASES)
def test_order(tmp_path, case):
    chart, expected = CASES[case]
    assert trace(run_chart(tmp_path, chart)) == expected


def test_a_chain_happens_at_one_instant(tmp_path):
    """The chain's entries are all logged at t = 1, the instant go steps."""
    chart, _ = CASES["chain"]
    result = run_chart(tmp_path, chart)
    assert entries(tmp_path, result) == [
        (0.0, "A", None), (1.0, "B", "A -> B [go > 0.5]"), (1.0, "C", "B -> C [go > 0.5]")]
    assert result.meta["charts"]["C"]["transitions"] == {"A -> B [go > 0.5]": 1,
                                                         "B -> C [go > 0.5]": 1}


def test_a_loop_at_one_instant_names_its_states(tmp_path):
    chart = {"states": {"A": {"initial": True}, "B": {}},
             "transitions": [{"from": "A", "to": "B", "when": GO},
                             {"from": "B", "to": "A", "when": GO}]}
    with pytest.raises(SimulationError) as info:
        run_chart(tmp_path, chart)
    e = info.value
    assert e.block == "C" and e.time == 1.0
    assert "transition loop: B -> A -> B (more than 100 transitions" in str(e)
