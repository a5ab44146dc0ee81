"""One bad diagram per failure mode: exit code 2, a FILE:LINE message naming the offending
thing, no traceback, nothing executed, nothing written as complete.

Each case is a diagram text; `@LINE` marks the line the error must point at (the marker is
stripped before the file is written), so the expected line number is read off the text
itself rather than from the code under test.
"""
import re
import subprocess
import sys
import textwrap

import pytest

from blocksim.cli import main

GOOD_SIM = "simulation: {stop: 1}\n"


def write_case(tmp_path, text, name="diagram.yaml"):
    text = textwrap.dedent(text)
    lines = text.splitlines()
    marked = [i + 1 for i, l in enumerate(lines) if "@LINE" in l]
    text = text.replace("  # @LINE", "").replace("@LINE", "")
    path = tmp_path / name
    path.write_text(text)
    return path, marked


def run_cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


CASES = {
    "yaml_syntax": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: [1, 2}  # @LINE
        """, ["error"]),
    "unknown_top_key": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
        simulaton: {stop: 1}  # @LINE
        """, ["simulaton", "did you mean 'simulation'"]),
    "unknown_block_type": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          G: {type: gian, K: 2}  # @LINE
        wires: [A -> G]
        """ + GOOD_SIM, ["gian", "did you mean 'gain'"]),
    "unknown_parameter": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          G: {type: gain, K: 2, k: 3}  # @LINE
          T: {type: terminator}
        wires: [A -> G, G -> T]
        """ + GOOD_SIM, ["'k'", "block 'G'"]),
    "unknown_port": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          G: {type: gain, K: 2}
          T: {type: terminator}
        wires:
          - A.yy -> G.u  # @LINE
          - G -> T
        """ + GOOD_SIM, ["yy", "block 'A'"]),
    "unknown_block_in_wire": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires:
          - B -> T  # @LINE
        """ + GOOD_SIM, ["unknown block 'B'"]),
    "shape_mismatch": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: [1, 2, 3]}
          I: {type: integrator, x0: [0, 0]}
        wires:
          - A -> I  # @LINE
        """ + GOOD_SIM, ["shape", "(3,)", "(2,)", "'A.y'", "I.u"]),
    "double_driver": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          B: {type: constant, value: 2}
          T: {type: terminator}
        wires:
          - A -> T
          - B -> T  # @LINE
        """ + GOOD_SIM, ["two drivers", "T.u"]),
    "unconnected_input": ("""\
        blocksim: 1
        blocks:
          G: {type: gain, K: 2}  # @LINE
        """ + GOOD_SIM, ["not connected", "block 'G'", "port 'u'"]),
    "algebraic_loop": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          S: {type: sum, signs: "+-"}
          G: {type: gain, K: 2}
        wires:
          - A -> S.u1
          - S -> G  # @LINE
          - G -> S.u2
        """ + GOOD_SIM, ["algebraic loop", "S.y -> G.u", "G.y -> S.u2", "unit_delay"]),
    "attribute_access": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: "().__class__"}  # @LINE
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["block 'A'", "value"]),
    "import_call": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: "__import__('os').system('touch PWNED')"}  # @LINE
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["block 'A'"]),
    "python_tag": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: !!python/object/apply:os.system ["touch PWNED"]}  # @LINE
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["tag"]),
    "unknown_solver": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        simulation:
          stop: 1
          solver: rk99  # @LINE
        """, ["rk99"]),
    "negative_tolerance": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        simulation:
          stop: 1
          rtol: -1e-3  # @LINE
        """, ["rtol"]),
    "stop_before_start": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        simulation:
          start: 2
          stop: 1  # @LINE
        """, ["stop"]),
    "division_by_zero": ("""\
        blocksim: 1
        parameters:
          k: 1/0  # @LINE
        blocks:
          A: {type: constant, value: k}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["parameter 'k'"]),
    "parameter_shadows_pose": ("""\
        blocksim: 1
        robots:
          p560: {model: puma560}
        parameters:
          qz: 1  # @LINE
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["'qz'", "pose"]),
    "unknown_robot_option": ("""\
        blocksim: 1
        robots:
          p560: {model: puma560, fricton: none}  # @LINE
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["fricton", "did you mean 'friction'"]),
    "unknown_robot_model": ("""\
        blocksim: 1
        robots:
          p560: {model: puma650}  # @LINE
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["puma650", "did you mean 'puma560'"]),
    "missing_subsystem_file": ("""\
        blocksim: 1
        blocks:
          S: {type: subsystem, file: nowhere.yaml}  # @LINE
        """ + GOOD_SIM, ["nowhere.yaml", "not found"]),
    "recursive_subsystem": ("""\
        blocksim: 1
        blocks:
          S: {type: subsystem, file: diagram.yaml}  # @LINE
        """ + GOOD_SIM, ["includes itself"]),
    "bad_record": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        record:
          x: A.nope  # @LINE
        """ + GOOD_SIM, ["nope"]),
    # a record selects elements as a wire does: an empty slice is refused in both places
    "record_empty_slice": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: [1, 2, 3]}
        record:
          x: A.y[5:]  # @LINE
        """ + GOOD_SIM, ["slice [5:] of 'A.y' (length 3) is empty"]),
    "wire_empty_slice": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: [1, 2, 3]}
          T: {type: terminator}
        wires: ["A[3:] -> T"]  # @LINE
        """ + GOOD_SIM, ["slice [3:] of 'A.y' (length 3) is empty"]),
    # issue 16: standard tags with content the tag cannot take (PyYAML's converters raised
    # IndexError / KeyError / AttributeError on these)
    **{f"tag_{kind}_{i}": (f"""\
        blocksim: 1
        blocks:
          A: {{type: constant, value: {text}}}  # @LINE
          T: {{type: terminator}}
        wires: [A -> T]
        """ + GOOD_SIM, [f"invalid {kind}", "hint"])
       for i, (kind, text) in enumerate([("int", '!!int ""'), ("float", '!!float ""'),
                                          ("int", '!!int "-"'), ("bool", "!!bool maybe"),
                                          ("timestamp", "!!timestamp 20x"),
                                          ("timestamp", "!!timestamp 2001-13-45")])},
    "name_is_a_list": ("""\
        blocksim: 1
        name: [a, b]  # @LINE
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["'name' must be a string, got a list"]),
    "name_leaves_runs": ("""\
        blocksim: 1
        name: ../../elsewhere  # @LINE
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["cannot name a run directory"]),
    # issue 16 item 17: YAML 1.1 reads yes/no/on/off values as booleans (keys stay words);
    # the hint says so
    "input_named_on": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          F: {type: function, inputs: [x, on], expr: x}  # @LINE
          T: {type: terminator}
        wires: [A -> F.x, A -> F.on, F -> T]
        """ + GOOD_SIM, ["expected a list of names", "quote the word"]),
    "name_yes": ("""\
        blocksim: 1
        name: yes  # @LINE
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["boolean true", "quote the word"]),
    "string_value_off": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: [1, 2]}
          S: {type: sum, signs: off}  # @LINE
          T: {type: terminator}
        wires: [A -> S.u1, S -> T]
        """ + GOOD_SIM, ["expected a string", "quote the word"]),
    "solver_off": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        simulation:
          stop: 1
          solver: off  # @LINE
        """, ["unknown solver False", "quote the word"]),
    # issue 16 item 3: both ends of every wire into the block, with shapes
    "shape_mismatch_names_every_input": ("""\
        blocksim: 1
        blocks:
          C3: {type: constant, value: [1, 2, 3]}
          C2: {type: constant, value: [1, 2]}
          Ssum: {type: sum, signs: "++"}
          T: {type: terminator}
        wires:
          - C3 -> Ssum.u1
          - C2 -> Ssum.u2  # @LINE
          - Ssum -> T
        """ + GOOD_SIM, ["block 'Ssum' port 'u2'", "u1 <- C3.y (3,)", "u2 <- C2.y (2,)"]),
    # issue 16 item 16: NaN is never a usable parameter value
    "nan_parameter": ("""\
        blocksim: 1
        parameters:
          x: .nan  # @LINE
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["parameter 'x' is not a number (NaN)"]),
    # issue 16 item 12: settings that imply more steps or rows than simulation.max_steps
    "grid_of_1e15_rows": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        simulation:
          stop: 100
          output_interval: 1e-13  # @LINE
        """, ["1e+15 result rows", "max_steps"]),
    "tiny_fixed_step": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        simulation:
          stop: 100
          solver: rk4
          step: 1e-12  # @LINE
        """, ["1e+14 steps", "max_steps"]),
    "tiny_max_step": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        simulation:
          stop: 100
          max_step: 1e-12  # @LINE
        """, ["1e+14 steps at least", "max_steps"]),
    "tiny_sample_period": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          Z: {type: zoh, period: 1e-12}  # @LINE
          T: {type: terminator}
        wires: [A -> Z, Z -> T]
        simulation: {stop: 100}
        """, ["1e+14 sample hits", "max_steps"]),
    # issue 16 item 8: robot options (OverflowError, ValueError, TypeError before)
    **{f"robot_{what}": (f"""\
        blocksim: 1
        robots:
          arm: {{model: twolink, {option}}}  # @LINE
        blocks:
          A: {{type: constant, value: 1}}
          T: {{type: terminator}}
        wires: [A -> T]
        """ + GOOD_SIM, [needle])
       for what, option, needle in [
           ("seed_inf", "perturb: 0.1, seed: .inf", "seed must be a non-negative integer"),
           ("seed_nan", "perturb: 0.1, seed: .nan", "seed must be a non-negative integer"),
           ("seed_negative", "perturb: 0.1, seed: -3", "seed must be a non-negative integer"),
           ("payload_vector_mass", "payload: {mass: [1, 2], com: [0, 0, 0]}",
            "payload mass must be one finite number"),
           ("payload_nan_mass", "payload: {mass: .nan}", "payload mass must be one finite"),
           ("payload_com_inf", "payload: {mass: 1, com: [0, .inf, 0]}",
            "payload com must be a finite 3-vector"),
           ("gravity_nan", "gravity: [0, 0, .nan]", "'gravity' must be finite")]},
    "robot_file_duplicate_key": ("""\
        blocksim: 1
        robots:
          arm: {file: arm.yaml}  # @LINE
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["robot 'arm': arm.yaml:4: duplicate key 'name'"]),
    "max_steps_not_whole": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          T: {type: terminator}
        wires: [A -> T]
        simulation:
          stop: 1
          max_steps: 2.5  # @LINE
        """, ["whole number"]),
    "simulation_setting_boolean": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
        simulation:
          stop: yes  # @LINE
        """, ["simulation.stop: expected a number, got the boolean true"]),
    "inline_subsystem_not_a_mapping": ("""\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1}
          S:
            type: subsystem
            diagram: [A]  # @LINE
        """ + GOOD_SIM, ["block 'S'", "'diagram' must be a mapping", "got a list"]),
    # a diagram's own input is a block named by it: no block may have that name
    "input_named_like_a_block": ("""\
        blocksim: 1
        blocks:
          G: {type: gain, K: 2}
          u: {type: constant, value: 1}
        inputs: {u: G.u}  # @LINE
        """ + GOOD_SIM, ["input 'u' has the name of a block", "blocks of their own (type "
                         "inport)"]),
    # an input's mapping form names its targets with `to:`
    "input_mapping_without_to": ("""\
        blocksim: 1
        blocks:
          G: {type: gain, K: 2}
        inputs:
          u: {value: 1}  # @LINE
        """ + GOOD_SIM, ["input 'u' needs 'to'"]),
    # inports are made by `inputs:`, never written as blocks
    "inport_written_as_a_block": ("""\
        blocksim: 1
        blocks:
          u: {type: inport}  # @LINE
          G: {type: gain, K: 2}
        wires: [u -> G]
        """ + GOOD_SIM, ["block 'u' is of type inport", "declared under `inputs:`"]),
    # a subsystem's inputs name targets only: a value is for the diagram's own
    "subsystem_input_with_a_value": ("""\
        blocksim: 1
        blocks:
          S:
            type: subsystem
            diagram:
              blocks: {G: {type: gain, K: 2}}
              inputs:
                u: {to: G.u, value: 1}  # @LINE
              outputs: {y: G.y}
          C: {type: constant, value: 1}
        wires: [C -> S.u]
        """ + GOOD_SIM, ["input 'u' of a subsystem names its targets only"]),
    # a pose that is not a rigid transform (2 I: a scale; a shear) is refused where it is
    # written, not interpolated into a path of non-rotations
    "ctraj_pose_not_rigid": ("""\
        blocksim: 1
        blocks:
          C: {type: ctraj, T0: "2 * eye(4)", T1: eye(4), tf: 1}  # @LINE
          S: {type: ctraj, T0: eye(4), T1: "[[1, 0.5, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]", tf: 1}
        """ + GOOD_SIM, ["block 'C' parameter 'T0': expected a 4x4 homogeneous transform",
                         "not a rotation", "block 'S' parameter 'T1'"]),
    # a bare pose name two robots give different values: say so and how to write it
    "bare_pose_of_two_robots": ("""\
        blocksim: 1
        robots:
          p560: {model: puma560}
          tl: {model: twolink}
        blocks:
          K: {type: constant, value: qz}  # @LINE
          N: {type: constant, value: qn}
        """ + GOOD_SIM, ["unknown name 'qz': robots p560 and tl have different poses 'qz'",
                         "write p560.qz or tl.qz", "unknown name 'qn': only robot p560 has a "
                         "pose 'qn'", "write p560.qn"]),
    # a refine that implies too many rows wants a smaller refine, not a larger one
    "refine_too_large": ("""\
        blocksim: 1
        blocks:
          S: {type: sine}
        simulation: {stop: 1, refine: 1e9}  # @LINE
        """, ["simulation.refine = 1e+09", "use a smaller refine"]),
    # a comma inside { } ends a value: an expression holding commas must be quoted there
    "unquoted_commas_in_flow_mapping": ("""\
        blocksim: 1
        blocks:
          C: {type: ctraj, T0: eye(4), T1: transl(1, 4, 5) @ troty(0.3), tf: 2}  # @LINE
        """ + GOOD_SIM, ["unknown parameter '4'", "a comma inside { } ends the value",
                         'T1: "transl(1, 4, 5) @ troty(0.3)"']),
    # issue 23 item 13: a choice given a number names the choices, not "a string"
    "choice_given_a_number": ("""\
        blocksim: 1
        blocks:
          A: {type: sine}
          R: {type: relay, x0: 0}  # @LINE
          T: {type: terminator}
        wires: [A -> R, R -> T]
        """ + GOOD_SIM, ["parameter 'x0': expected one of off, on, got 0"]),
    # issue 23 item 9: parameters are evaluated in dependency order; a cycle is refused,
    # naming it, at the line of its first parameter
    "parameter_cycle": ("""\
        blocksim: 1
        parameters:
          a: b + 1  # @LINE
          c: 3
          b: 2 * a
        blocks:
          A: {type: constant, value: a}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["parameters a -> b -> a depend on each other"]),
    "parameter_uses_itself": ("""\
        blocksim: 1
        parameters:
          k: 1
          m: m * k  # @LINE
        blocks:
          A: {type: constant, value: m}
          T: {type: terminator}
        wires: [A -> T]
        """ + GOOD_SIM, ["parameter 'm' uses itself"]),
    # issue 35 item 4: a 300 kB block name; `check` took a minute to report it
    "block_name_of_300_kB": ("""\
        blocksim: 1
        blocks:
          """ + "A" * 300_000 + """: {type: gain, K: 2  # @LINE
        """ + GOOD_SIM, ["invalid YAML", "at most 1024 characters long in YAML"]),
    # issue 35 item 4: a span beyond the largest float made the recording check's row count
    # NaN (a ValueError traceback): 1e308 - (-1e308) = inf in IEEE 754 double arithmetic
    "simulation_span_overflows": ("""\
        blocksim: 1
        blocks:
          S: {type: sine}
          I: {type: integrator}
        wires: [S -> I]
        simulation: {start: -1e308, stop: 1e308}  # @LINE
        record: {x: I.y}
        """, ["simulation.stop - start = 1e+308 - (-1e+308) is more than the largest number",
              "overflows"]),
    # a start where one second is below the time's resolution (1e20 + 1 == 1e20, ulp 16384):
    # the stop it was checked with equalled start, max_step 0 (a ZeroDivisionError)
    "simulation_stop_equal_to_a_large_start": ("""\
        blocksim: 1
        blocks:
          S: {type: sine}
        simulation: {start: 1e20, stop: 1e20}  # @LINE
        """, ["simulation.stop (1e+20) must be after start (1e+20)"]),
    "simulation_stop_missing_after_a_large_start": ("""\
        blocksim: 1
        blocks:
          S: {type: sine}
        simulation:
          start: 1e20
          rtol: 0  # @LINE
        """, ["simulation.stop is required", "simulation.rtol must be a positive"]),
    # issue 35 item 5: lengths of time below the spacing of floats at the run's largest
    # |t| (2^-48 = 3.55e-15 s on [16, 32), 2^-19 = 1.91e-6 s on [2^33, 2^34) = [8.6e9,
    # 1.7e10)), refused before the run (a delay: exit 3 at the run's start; a zoh's hits
    # and a fixed step were lost silently: 2 rows for 100 steps)
    "transport_delay_below_the_times_resolution": ("""\
        blocksim: 1
        blocks:
          P: {type: pulse, period: 1}
          D: {type: transport_delay, delay: 1e-15}  # @LINE
          T: {type: terminator}
        wires: [P -> D, D -> T]
        simulation: {stop: 20}
        """, ["block 'D' parameter 'delay': 1e-15 s is below the time's resolution: near "
              "t = 20 floats are 3.55e-15 s apart", "use at least 3.55e-15 s"]),
    "sample_period_below_the_times_resolution": ("""\
        blocksim: 1
        blocks:
          S: {type: sine}
          Z: {type: zoh, period: 1e-7}  # @LINE
          T: {type: terminator}
        wires: [S -> Z, Z -> T]
        simulation: {start: 1e10, stop: 10000000001}
        """, ["block 'Z': sample period 1e-07 s is below the time's resolution: near "
              "t = 1e+10 floats are 1.91e-06 s apart"]),
    "fixed_step_below_the_times_resolution": ("""\
        blocksim: 1
        blocks:
          S: {type: sine}
          I: {type: integrator}
        wires: [S -> I]
        simulation:
          start: 1e10
          stop: 10000000000.00001
          solver: rk4
          step: 1e-7  # @LINE
        """, ["simulation.step: 1e-07 s is below the time's resolution"]),
    # issue 35 item 16: a blend's quartic needs tacc^4 below the largest double (tacc <=
    # 1.16e77 s); 1e200 leaked numpy's overflow warnings
    "mstraj_tacc_beyond_a_double": ("""\
        blocksim: 1
        blocks:
          M: {type: mstraj, via: [[1, 2], [0, 1]], q0: [0, 0], qdmax: 1, tacc: 1e200}  # @LINE
          T: {type: terminator}
        wires: [M.q -> T]
        """ + GOOD_SIM, ["block 'M' parameter 'tacc': tacc 1e+200 s is longer than a blend "
                         "can be"]),
    "sweep_file_run_as_a_diagram": ("""\
        blocksim-sweep: 1  # @LINE
        diagram: other.yaml
        grid: {parameters.k: [1, 2]}
        """, ["unknown key 'blocksim-sweep'", "this is a sweep file: `blocksim sweep FILE`"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_diagram(case, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text, needles = CASES[case]
    path, marked = write_case(tmp_path, text)
    (tmp_path / "arm.yaml").write_text("name: arm\nlinks:\n  - {a: 1, m: 1}\nname: again\n")
    out = tmp_path / "out"
    code, stdout, stderr = run_cli(["run", str(path), "--out", str(out), "--quiet"], capsys)
    assert code == 2, stderr
    assert "Traceback" not in stderr
    # FILE:LINE: error: ... pointing at the marked line
    lines = {int(m) for m in re.findall(re.escape(str(path)) + r":(\d+): error:", stderr)}
    assert marked and marked[0] in lines, (marked, stderr)
    for needle in needles:
        assert needle in stderr, (needle, stderr)
    assert not out.exists(), "nothing may be written for an invalid diagram"
    assert not (tmp_path / "PWNED").exists(), "nothing may be executed"


def test_all_static_problems_reported_together(tmp_path, capsys):
    path, marked = write_case(tmp_path, """\
        blocksim: 1
        blocks:
          A: {type: constnat, value: 1}  # @LINE
          B: {type: gian, K: 1}  # @LINE
        """ + GOOD_SIM)
    code, _, stderr = run_cli(["check", str(path)], capsys)
    assert code == 2
    for line in marked:
        assert f"{path}:{line}: error:" in stderr


def test_block_and_wire_problems_reported_together_without_follow_on_errors(tmp_path, capsys):
    """A bad parameter in one block and a bad port in another's wire: both reported at once.
    An input wired from a block that failed to build, or from an output that does not exist,
    is not also called unconnected (only the real cause is reported: exactly the marked
    lines)."""
    path, marked = write_case(tmp_path, """\
        blocksim: 1
        blocks:
          A: {type: constant, value: 1, valeu: 2}  # @LINE
          B: {type: gain, K: 2}
          C: {type: gain, K: 3}
          D: {type: sum, signs: "++"}
          S: {type: scope, inputs: 2}
        wires:
          - A -> B
          - B.yy -> C  # @LINE
          - C -> D.u1
          - B -> D.u3  # @LINE
          - D -> S.u1
          - C -> S.u2
        """ + GOOD_SIM)
    code, _, stderr = run_cli(["check", str(path)], capsys)
    assert code == 2, stderr
    lines = [int(m) for m in re.findall(re.escape(str(path)) + r":(\d+): error:", stderr)]
    # issue 23 item 10: D.u2 is unconnected because the wire meant for it names u3: the
    # wire's error says so, and D.u2 is not reported again as "not connected"
    assert sorted(lines) == sorted(marked), stderr
    assert "no input named 'u3'" in stderr
    assert "'D.u2' is not connected: this wire may be meant for it (`B -> D.u2`)" in stderr
    assert "not connected\n" not in stderr and "feed it a constant" not in stderr


@pytest.mark.parametrize("wire, meant", [
    ("C -> Dd.u2", "D.u2"),  # a typo in the block: D has u2 unconnected
    ("C -> Sum.u2", None),   # a block name like none of the diagram's: no guess
])
def test_a_wire_to_a_mistyped_block_names_the_input_it_could_have_meant(tmp_path, capsys, wire,
                                                                         meant):
    path, _ = write_case(tmp_path, f"""\
        blocksim: 1
        blocks:
          C: {{type: constant, value: 1}}
          D: {{type: sum, signs: "++"}}
          T: {{type: terminator}}
        wires:
          - C -> D.u1
          - {wire}
          - D -> T
        """ + GOOD_SIM)
    code, _, stderr = run_cli(["check", str(path)], capsys)
    assert code == 2, stderr
    lines = re.findall(re.escape(str(path)) + r":(\d+): error:", stderr)
    if meant:
        assert lines == ["8"], stderr  # the wire only
        assert f"'{meant}' is not connected: this wire may be meant for it" in stderr
    else:  # nothing like Sum: no guess, and D.u2 stays an unconnected input of its own
        assert sorted(lines) == ["4", "8"], stderr
        assert "input is not connected" in stderr


def test_alias_bomb_rejected(tmp_path, capsys):
    # Nine levels of ten-fold aliases expand to 10**9 nodes: far beyond the 100,000 limit.
    lines = ["blocksim: 1", "x0: &a0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"]
    for k in range(1, 10):
        lines.append(f"x{k}: &a{k} [" + ", ".join([f"*a{k - 1}"] * 10) + "]")
    lines += ["blocks: {A: {type: constant, value: 1}}", "simulation: {stop: 1}"]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    code, _, stderr = run_cli(["check", str(path)], capsys)
    assert code == 2
    assert "alias" in stderr.lower() and str(path) in stderr


def test_bad_set_option(tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text("blocksim: 1\nblocks: {A: {type: constant, value: 1}, T: {type: terminator}}\n"
                    "wires: [A -> T]\nsimulation: {stop: 1}\n")
    code, _, stderr = run_cli(["check", str(path), "--set", "simulation.rtoll=1"], capsys)
    assert code == 2 and "rtoll" in stderr and "did you mean 'rtol'" in stderr
    code, _, stderr = run_cli(["check", str(path), "--set", "blocks.A.valu=2"], capsys)
    assert code == 2 and "valu" in stderr and "did you mean 'value'" in stderr


def test_missing_file_is_exit_2(tmp_path, capsys):
    code, _, stderr = run_cli(["run", str(tmp_path / "nope.yaml")], capsys)
    assert code == 2 and "nope.yaml" in stderr


def test_no_traceback_in_a_real_process(tmp_path):
    path, _ = write_case(tmp_path, CASES["algebraic_loop"][0])
    proc = subprocess.run([sys.executable, "-m", "blocksim", "check", str(path)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "algebraic loop" in proc.stderr


def test_set_value_that_is_not_utf8(tmp_path, capsys):
    path = tmp_path / "ok.yaml"
    path.write_text("blocksim: 1\nparameters: {x: 1}\nblocks: {A: {type: constant, value: x}}\n"
                    "simulation: {stop: 1}\n")
    bad = b"parameters.x=\xff".decode("utf-8", "surrogateescape")  # as sys.argv holds it
    code, _, stderr = run_cli(["check", str(path), "--set", bad], capsys)
    assert code == 2 and "not valid UTF-8 (byte 0xff" in stderr and "Traceback" not in stderr
    code, _, stderr = run_cli(["check", str(path), "--set", "parameters.1x=2"], capsys)
    assert code == 2 and "'1x'" in stderr
