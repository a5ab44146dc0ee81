"""The safe YAML loader: line numbers, safe_load equivalence, and every limit."""
import datetime
import time

import pytest
import yaml

from blocksim.language import yamlio
from blocksim.errors import DiagramError
from blocksim.language.yamlio import YList, YMap, load_yaml_file, load_yaml_text

# libyaml's event parser when PyYAML has it, and always PyYAML's pure-Python one.
PARSERS = [yamlio._PurePythonEvents] + ([yamlio._Events]
                                       if yamlio._Events is not yamlio._PurePythonEvents else [])


@pytest.fixture(params=PARSERS, ids=lambda p: p.__name__)
def load(request):
    return lambda text, file="t.yaml": yamlio._load(text, file, request.param)


DOC = """\
blocksim: 1
parameters:
  Kp: 100
  qf: [pi/4, 1e-3,
       -2]
blocks:
  a: {type: gain, K: Kp}

  b:
    type: sum
    signs: "+-"
wires:
  - a.y -> b.u1
  -   b.y -> a.u
when: 2001-12-14
base: &base {x: 1, y: 2}
derived:
  <<: *base
  y: 3
"""


def test_lines_of_keys_and_items(load):
    doc = load(DOC)
    # Line numbers counted by hand in DOC above (1-based).
    assert isinstance(doc, YMap) and doc.line == 1 and doc.file == "t.yaml"
    assert [doc.key_line(k) for k in ("blocksim", "parameters", "blocks", "wires")] == [1, 2, 6, 12]
    params = doc["parameters"]
    assert params.line == 3 and params.key_line("Kp") == 3 and params.key_line("qf") == 4
    qf = params["qf"]
    assert isinstance(qf, YList) and qf.line == 4 and qf.file == "t.yaml"
    assert [qf.item_line(i) for i in range(3)] == [4, 4, 5]
    blocks = doc["blocks"]
    assert blocks.key_line("a") == 7 and blocks.key_line("b") == 9
    assert blocks["b"].line == 10 and blocks["b"].key_line("signs") == 11
    assert [doc["wires"].item_line(i) for i in range(2)] == [13, 14]
    # A missing key or item reports the container's own line.
    assert blocks.key_line("nope") == blocks.line == 7 and doc["wires"].item_line(5) == 13
    # Merged keys keep the line where they were written; explicit ones override.
    assert doc["derived"] == {"x": 1, "y": 3}
    assert doc["derived"].key_line("x") == 16 and doc["derived"].key_line("y") == 19


def test_same_values_as_safe_load(load):
    doc = load(DOC)
    assert doc == yaml.safe_load(DOC)
    assert doc["parameters"]["qf"] == ["pi/4", "1e-3", -2]  # YAML 1.1: 1e-3 is a string
    assert doc["when"] == datetime.date(2001, 12, 14)
    assert load("") is None and load("--- 3\n") == 3


def test_aliases_share_one_object_as_in_safe_load(load):
    doc = load("a: &x [1, 2]\nb: *x\n")
    assert doc["a"] is doc["b"]


def test_duplicate_key_names_both_lines(load):
    with pytest.raises(DiagramError) as e:
        load("a: 1\nb:\n  c: 1\n  c: 2\n")
    assert e.value.line == 4 and "duplicate key 'c'" in e.value.message
    assert "line 3" in e.value.message


class Trap:
    """Records every construction; a python/object tag would build one."""
    made = []

    def __init__(self, *args):
        Trap.made.append(args)

    def __setstate__(self, state):
        Trap.made.append(state)


def test_python_tags_are_rejected_and_nothing_is_constructed(load):
    texts = [f"a: !!python/object:{__name__}.Trap {{x: 1}}\n",
             f"a:\n  b: !!python/object/apply:{__name__}.Trap [1]\n",
             "a: !!python/name:os.system\n",
             "a: !custom 1\n", "a: !!binary aGk=\n", "a: !!set {x: null}\n"]
    # The trap works: an unsafe loader does construct it.
    yaml.unsafe_load(texts[0])
    assert Trap.made
    Trap.made.clear()
    for text in texts:
        with pytest.raises(DiagramError, match="tags are not allowed") as e:
            load(text)
        assert e.value.line == text.count("\n")
    assert Trap.made == []
    core = "a: !!str 5\nb: ! 7\nc: !!float 1\n"  # core tags are plain data
    assert load(core) == yaml.safe_load(core) == {"a": "5", "b": 7, "c": 1.0}


def test_billion_laughs_is_rejected(load):
    # 10 ** 9 nodes once expanded; the loader must refuse it without expanding it.
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(DiagramError, match="aliases expand to more than 100,000 nodes") as e:
        load("\n".join(lines) + "\n")
    assert e.value.line == 5  # a: 11 nodes, b: 10 aliases of 11 = 110 ... e: 10 x 11111


def test_alias_budget_boundary(load):
    # An anchored list of 999 scalars is 1000 nodes; 100 aliases of it add exactly 100,000.
    head = "base: &b [" + ", ".join(["0"] * 999) + "]\nuses:\n"
    ok = head + "".join("  - *b\n" for _ in range(100))
    assert len(load(ok)["uses"]) == 100
    with pytest.raises(DiagramError, match="aliases"):
        load(ok + "  - *b\n")


def test_merge_key_bomb_is_rejected(load):
    lines = ["a: &a {" + ", ".join(f"k{i}: {i}" for i in range(10)) + "}"]
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur}\n  <<: [" + ", ".join([f"*{prev}"] * 10) + "]")
    with pytest.raises(DiagramError, match="aliases"):
        load("\n".join(lines) + "\n")


@pytest.mark.parametrize("flow", [True, False], ids=["flow", "block"])
def test_nesting_limit(load, flow):
    def nested(levels):
        if flow:
            return "[" * levels + "]" * levels
        return "".join("  " * i + "- \n" for i in range(levels - 1)) + "  " * (levels - 1) + "- 1\n"
    doc = load(nested(100))
    for _ in range(99):
        doc = doc[0]
    assert doc in ([], [1])
    with pytest.raises(DiagramError, match="nested deeper than 100 levels") as e:
        load(nested(101))
    assert e.value.line == (1 if flow else 101)
    with pytest.raises(DiagramError, match="nested deeper than 100 levels"):
        load(nested(100_000 if flow else 1000))  # block: 1000 levels are 1 MB of indentation


def test_nesting_limit_counts_expanded_aliases(load):
    # The top mapping is level 1, b's 39 lists levels 2..40, the 60 lists of *a 41..100.
    def text(outer):
        return "a: &a " + "[" * 60 + "]" * 60 + "\nb: " + "[" * outer + "*a" + "]" * outer + "\n"
    assert load(text(39))
    with pytest.raises(DiagramError, match="once alias \\*a is expanded") as e:
        load(text(40))
    assert e.value.line == 2


def test_recursive_and_undefined_aliases(load):
    with pytest.raises(DiagramError, match="contains it"):
        load("a: &x [1, *x]\n")
    with pytest.raises(DiagramError, match="undefined alias") as e:
        load("a: 1\nb: *nope\n")
    assert e.value.line == 2


def test_syntax_error_line(load):
    with pytest.raises(DiagramError, match="invalid YAML") as e:
        load("a: 1\nb:\n  c: 2\n d: 3\n")
    assert e.value.line == 4 and e.value.file == "t.yaml"
    with pytest.raises(DiagramError, match="invalid YAML") as e:
        load("a: [1, 2\nb: 3\n")
    assert e.value.line in (2, 3)  # where the parser notices the missing ']'
    with pytest.raises(DiagramError, match="U\\+0007") as e:
        load("a: 1\nb: \x07\n")
    assert e.value.line == 2


def test_single_document_only(load):
    with pytest.raises(DiagramError, match="single YAML document") as e:
        load("a: 1\n---\nb: 2\n")
    assert e.value.line == 2


def test_unhashable_key_and_hash_flooding(load):
    with pytest.raises(DiagramError, match="must be a scalar"):
        load("? [1, 2]\n: 3\n")
    # Integers that differ by multiples of 2**61 - 1 share one hash (CPython's int hash).
    p = 2**61 - 1
    assert len({hash(i * p) for i in range(1, 20)}) == 1
    load("".join(f"{i * p}: 0\n" for i in range(1, 17)))
    with pytest.raises(DiagramError, match="same hash") as e:
        load("".join(f"{i * p}: 0\n" for i in range(1, 18)))
    assert e.value.line == 17


def test_overlong_integer_is_refused(load):
    # A sexagesimal integer costs quadratic time to convert; 4,300 characters is Python's
    # own limit for decimal integers.
    with pytest.raises(DiagramError, match="integer longer than 4300"):
        load("a: " + ":".join(["1"] * 3000) + "\n")
    assert load("a: 1:30\n") == {"a": 90}  # YAML 1.1 base 60, as safe_load


def test_invalid_scalar_reports_its_line(load):
    with pytest.raises(DiagramError, match="invalid timestamp") as e:
        load("a: 1\nb: 2001-13-45\n")
    assert e.value.line == 2


def test_merge_key_needs_mappings(load):
    with pytest.raises(DiagramError, match="merge key"):
        load("a:\n  <<: [1]\n")
    assert load("a: <<\n") == {"a": "<<"}


def test_file_limits_and_errors(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_bytes(b"[" * (11 * 2**20))  # invalid YAML too: the size is checked first
    with pytest.raises(DiagramError, match="10 MiB") as e:
        load_yaml_file(big)
    assert e.value.file == str(big)
    with pytest.raises(DiagramError, match="10 MiB"):
        load_yaml_text("#" * (11 * 2**20))

    with pytest.raises(DiagramError, match="file not found"):
        load_yaml_file(tmp_path / "missing.yaml")
    with pytest.raises(DiagramError, match="directory"):
        load_yaml_file(tmp_path)
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("a: 1\nname: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(DiagramError, match="not UTF-8") as e:
        load_yaml_file(bad)
    assert e.value.line == 2

    good = tmp_path / "good.yaml"
    good.write_text("\ufeffa:\n  b: [1, 2]\n", encoding="utf-8")  # a BOM is fine
    doc = load_yaml_file(good)
    assert doc == {"a": {"b": [1, 2]}}
    assert doc.file == str(good) and doc["a"]["b"].file == str(good)
    assert doc["a"].key_line("b") == 2


def test_ymap_and_ylist_are_plain_containers():
    m = YMap({"a": 1}, line=3, file="f")
    assert m == {"a": 1} and m.key_line("a") == 3 and YMap().line is None
    assert YList([1, 2], line=5).item_line(0) == 5


@pytest.mark.parametrize("text, kind", [
    ('!!int ""', "int"), ('!!float ""', "float"), ('!!int "-"', "int"), ("!!int 0x", "int"),
    ("!!bool maybe", "bool"), ("!!timestamp 20x", "timestamp"),
    ("!!timestamp 2001-13-45", "timestamp"), ('!!float "1.2.3"', "float"),
])
def test_standard_tag_with_content_it_cannot_take(load, text, kind):
    """PyYAML's converters raise IndexError, KeyError or AttributeError on some of these;
    every one is a DiagramError with the line and a hint showing the tag's form."""
    with pytest.raises(DiagramError, match=f"invalid {kind}") as e:
        load(f"a: 1\nb: {text}\n")
    assert e.value.line == 2 and f"!!{kind} is written like" in e.value.hint


def test_standard_tags_with_good_content_work_as_in_safe_load(load):
    text = "a: !!int '12'\nb: !!float '1'\nc: !!bool 'on'\nd: !!str 12\ne: !!null ''\n"
    assert load(text) == yaml.safe_load(text) == {"a": 12, "b": 1.0, "c": True, "d": "12",
                                                  "e": None}


def test_text_that_is_not_utf8_is_refused():
    # what Python makes of a command-line argument holding the byte 0xff (surrogateescape)
    arg = b"[1, \xff]".decode("utf-8", "surrogateescape")
    with pytest.raises(DiagramError, match="not valid UTF-8 \\(byte 0xff at character 5\\)"):
        load_yaml_text(arg, "--set x")
    assert load_yaml_text("[1, \u00e9]") == [1, "\u00e9"]  # other non-ASCII text is fine


@pytest.mark.parametrize("text, line, hint", [
    # issue 23 item 8: an index inside a flow mapping or sequence ends the collection early
    ("blocksim: 1\nrecord: {w: Motor.y[0]}\n", 2, '"Motor.y[0]"'),
    ("wires: [A.y[0:2] -> B]\n", 1, '"A.y[0:2]"'),
    # a tab in the indentation, at the top level or inside a block
    ("blocksim: 1\nblocks:\n\tA: 1\n", 3, "YAML cannot indent with tabs"),
    ("a:\n  b: 1\n\tc: 2\n", 3, "YAML cannot indent with tabs"),
    # issue 35 item 4: a name longer than YAML's 1024-character limit on a one-line key (YAML
    # 1.2 spec, section 7.4.2) is "could not find expected ':'"; the hint says why
    ("blocks:\n  " + "A" * 1025 + ": {type: gain}\n", 2, "at most 1024 characters"),
    ("- " + "A" * 1025 + ": 1\n", 1, "at most 1024 characters"),
    ("x: {a: 1, " + "A" * 1025 + ": 1}\n", 1, "at most 1024 characters"),
    ("blocks:\n  " + "A" * 300_000 + ": {type: gain\nwires: []\n", 2,
     "at most 1024 characters"),
    # a long indexed value is quoted cut to 60 characters
    ("record: {w: " + "A" * 300_000 + ".y[0]}\n", 1, '"' + "A" * 57 + '..."'),
])
def test_syntax_errors_hint_at_their_usual_cause(load, text, line, hint):
    with pytest.raises(DiagramError, match="invalid YAML") as e:
        load(text)
    assert e.value.line == line
    assert hint in e.value.hint
    if "[" in hint:
        assert "quote the value" in e.value.hint and "block style" in e.value.hint


def test_syntax_errors_without_a_known_cause_have_no_hint(load):
    with pytest.raises(DiagramError) as e:
        load("a: [1, 2}\n")
    assert e.value.hint is None


@pytest.mark.parametrize("line", [
    "x: {" + "A" * 1000 + "[0]: 1", "x: {" + "b.c/" * 250 + ")[1] 2", "{w: f(x)[0], y: 1}",
    "x: [" + "A" * 300 + "[", "[" + "A" * 300 + "][0" + "]" * 30, "a: [" + "A" * 1000 + ", 1}",
    "a[0", "[0]", "x: [y.z[1:2],f[3]}", "(a)(b)[c d]",
])
def test_indexed_value_is_found_as_the_regular_expression_found_it(line):
    """The hint's value, found from its '[' outwards, is what the regular expression it
    replaced finds (its leftmost match; a second algorithm, affordable on short lines)."""
    import re
    found = re.search(r"[\w./]*[\w\])]\[[^\s,{}]*", line)
    assert yamlio._indexed_value(line) == (found.group() if found else None)


def test_an_error_in_a_long_line_costs_what_reading_the_line_costs(load):
    """issue 35 item 4: a 300 kB block name took `check` a minute to report its YAML error,
    the hint trying every character of the line as the start of an indexed name (quadratic
    in the line's length). The hint's cost is compared with the parser's on the same line
    without the error, in this process's CPU time (the machine's speed and load cancel):
    40 kB took the old hint about 20 s, over 1,000 times the parse; linear, it is a few."""
    name = "A" * 40_000

    def cost(text):
        best = float("inf")
        for _ in range(3):
            t0 = time.process_time()
            try:
                load(text)
            except DiagramError as e:
                assert "invalid YAML" in e.message and e.hint is None
            best = min(best, time.process_time() - t0)
        return best

    read = cost(f"x: [{name}, 1]\n")
    report = cost(f"x: [{name}, 1}}\n")  # a flow sequence closed by '}'
    assert report < 20 * read + 0.01, (report, read)
