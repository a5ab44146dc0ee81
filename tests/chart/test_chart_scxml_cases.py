"""Cases from python-statemachine's test suite (version 3.2.2, tests/test_statechart_*.py and
tests/machines/, MIT licence) carried over as data: the same states, their transitions, the
events sent and the configurations (sets of active states) its tests assert. An event that
the test sends k-th becomes the condition `x > k - 0.5` on the clock x = t (sent at
t = k - 0.5); an eventless transition keeps no condition; a transition on a compound
state's done.state (its final child reached) becomes a transition from that final child.
Its tests that do not map: In() conditions, history, delayed and cancelled events, and
SCXML's precedence of inner transitions over outer ones (a chart tests outer states first,
as Stateflow does)."""
import numpy as np
import pytest

from charts import run_chart, trace

E1, E2, E3 = "x > 0.5", "x > 1.5", "x > 2.5"  # the first, second, third event

CASES = {
    # test_statechart_compound.py, ShireToRivendell
    "enter compound activates initial child": (
        {"states": {"shire": {"initial": True, "states": {"bag_end": {"initial": True},
                                                           "green_dragon": {}}},
                    "road": {}},
         "transitions": [{"from": "shire.bag_end", "to": "shire.green_dragon", "when": "x > 9"},
                         {"from": "shire", "to": "road", "when": "x > 9"}]},
        [(0.25, {"shire", "shire.bag_end"})]),
    "transition within compound": (
        {"states": {"shire": {"initial": True, "states": {"bag_end": {"initial": True},
                                                           "green_dragon": {}}},
                    "road": {}},
         "transitions": [{"from": "shire.bag_end", "to": "shire.green_dragon", "when": E1},
                         {"from": "shire", "to": "road", "when": "x > 9"}]},
        [(0.75, {"shire", "shire.green_dragon"})]),
    "exit compound removes all descendants": (
        {"states": {"shire": {"initial": True, "states": {"bag_end": {"initial": True},
                                                           "green_dragon": {}}},
                    "road": {}},
         "transitions": [{"from": "shire.bag_end", "to": "shire.green_dragon", "when": "x > 9"},
                         {"from": "shire", "to": "road", "when": E1}]},
        [(0.75, {"road"})]),
    # MoriaExpeditionWithEscape: three levels, a deep configuration left for an outer state
    "transition from inner to outer": (
        {"states": {"moria": {"initial": True, "states": {
            "upper_halls": {"initial": True, "states": {"entrance": {"initial": True},
                                                         "bridge": {}}},
            "depths": {}}}, "daylight": {}},
         "transitions": [{"from": "moria.upper_halls.entrance",
                          "to": "moria.upper_halls.bridge", "when": "x > 9"},
                         {"from": "moria.upper_halls", "to": "moria.depths", "when": "x > 9"},
                         {"from": "moria", "to": "daylight", "when": E1}]},
        [(0.25, {"moria", "moria.upper_halls", "moria.upper_halls.entrance"}),
         (0.75, {"daylight"})]),
    # MiddleEarthJourney: from one compound to another, landing on its initial child
    "cross compound transition": (
        {"states": {"rivendell": {"initial": True, "states": {"council": {"initial": True},
                                                               "preparing": {}}},
                    "moria": {"states": {"gates": {"initial": True}, "bridge": {}}}},
         "transitions": [{"from": "rivendell.council", "to": "rivendell.preparing",
                          "when": "x > 9"},
                         {"from": "moria.gates", "to": "moria.bridge", "when": "x > 9"},
                         {"from": "rivendell", "to": "moria", "when": E1}]},
        [(0.25, {"rivendell", "rivendell.council"}), (0.75, {"moria", "moria.gates"})]),
    # QuestForErebor: reaching the final child ends the compound (done.state) at once
    "final child fires done state": (
        {"states": {"lonely_mountain": {"initial": True, "states": {
            "approach": {"initial": True}, "inside": {}}}, "victory": {}},
         "transitions": [{"from": "lonely_mountain.approach", "to": "lonely_mountain.inside",
                          "when": E1},
                         {"from": "lonely_mountain.inside", "to": "victory"}]},
        [(0.25, {"lonely_mountain", "lonely_mountain.approach"}), (0.75, {"victory"})]),
    # test_statechart_eventless.py, BeaconChainLighting: an eventless chain in one macrostep
    "eventless chain cascades": (
        {"states": {"chain": {"initial": True, "states": {
            "amon_din": {"initial": True}, "eilenach": {}, "nardol": {}, "halifirien": {}}},
            "all_lit": {}},
         "transitions": [{"from": "chain.amon_din", "to": "chain.eilenach"},
                         {"from": "chain.eilenach", "to": "chain.nardol"},
                         {"from": "chain.nardol", "to": "chain.halifirien"},
                         {"from": "chain.halifirien", "to": "all_lit"}]},
        [(0.0, {"all_lit"})]),
    # RingCorruptionWithBearRing: each bear_ring adds 2 to the power; corrupted above 5,
    # so after the third (here: the ring borne every second, t = 1, 2, 3)
    "eventless gradual condition": (
        {"data": {"n": 0, "power": 0},
         "states": {"resisting": {"initial": True, "during": [{"every": 1.0,
                                                               "do": "power += 2"}]},
                    "corrupted": {}},
         "transitions": [{"from": "resisting", "to": "corrupted", "when": "power > 5"}]},
        [(2.75, {"resisting"}), (3.0, {"corrupted"})]),
    # test_statechart_parallel.py, WarOfTheRing: all regions active; one moves alone
    "independent transitions in regions": (
        {"parallel": True,
         "states": {"frodos_quest": {"states": {"shire": {"initial": True}, "mordor": {}}},
                    "aragorns_path": {"states": {"ranger": {"initial": True}, "king": {}}},
                    "gandalfs_defense": {"states": {"rohan": {"initial": True},
                                                    "gondor": {}}}},
         "transitions": [{"from": "frodos_quest.shire", "to": "frodos_quest.mordor",
                          "when": E1},
                         {"from": "aragorns_path.ranger", "to": "aragorns_path.king",
                          "when": "x > 9"},
                         {"from": "gandalfs_defense.rohan", "to": "gandalfs_defense.gondor",
                          "when": "x > 9"}]},
        [(0.25, {"frodos_quest", "frodos_quest.shire", "aragorns_path", "aragorns_path.ranger",
                 "gandalfs_defense", "gandalfs_defense.rohan"}),
         (0.75, {"frodos_quest", "frodos_quest.mordor", "aragorns_path", "aragorns_path.ranger",
                 "gandalfs_defense", "gandalfs_defense.rohan"})]),
}


def paths(states, prefix=""):
    for name, body in states.items():
        yield prefix + name
        yield from paths((body or {}).get("states", {}), f"{prefix}{name}.")


@pytest.mark.parametrize("case", CASES)
def test_configuration(tmp_path, case):
    chart, expected = CASES[case]
    every = list(paths(chart["states"]))
    record = {f"in_{p.replace('.', '_')}": f"C.in_{p.replace('.', '_')}" for p in every}
    result = run_chart(tmp_path, {**chart, "active": every}, stop=3.5, record=record)
    for when, active in expected:
        row = int(np.flatnonzero(result.t <= when)[-1])
        got = {p for p in every if result[f"in_{p.replace('.', '_')}"][row] == 1.0}
        assert got == active, (when, got)


def test_entry_exit_action_ordering(tmp_path):
    """test_statechart_compound.py test_entry_exit_action_ordering: leaving realm (in day)
    for outside logs exit_day, exit_realm, enter_outside (here 1, 2, 3)."""
    from charts import mark
    chart = {"states": {"realm": {"initial": True, "exit": mark(2), "states": {
        "day": {"initial": True, "exit": mark(1)}, "night": {}}},
        "outside": {"entry": mark(3)}},
        "transitions": [{"from": "realm.day", "to": "realm.night", "when": "x > 9"},
                        {"from": "realm", "to": "outside", "when": E1}]}
    assert trace(run_chart(tmp_path, chart)) == [1, 2, 3]
