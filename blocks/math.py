"""Memoryless math blocks: y is a function of the inputs at the same instant."""
import numpy as np

from blocksim.accel.expression import lower_expression
from blocksim.accel.lowering import Lowering, LoweringError
from blocksim.language import derivatives, expr
from blocksim.language.behaviour import Behaviour
from blocksim.block import Block, In, Out, PortError
from blocksim.params import Param, ParamError
from blocksim.rundata import Structural

from .conditioning import ConditionWatch, watched_functions
from .linearisation import static


class Gain(Block):
    """y = K*u element-wise for a scalar or vector K, y = K @ u for a matrix K.

    Element-wise products follow numpy broadcasting.
    """

    type = "gain"
    params = (Param("K", doc="gain: scalar, vector (element-wise) or matrix (K @ u)"),)

    def ports(self):
        return [In("u")], [Out("y")]

    def infer(self, shapes):
        u, K = shapes["u"], self.p.K.shape
        self._matrix = len(K) == 2
        if self._matrix:
            if len(u) not in (1, 2) or u[0] != K[1]:
                raise PortError("u", f"matrix gain of shape {K} cannot multiply a signal of shape {u}")
            self.behaviour = self.MATRIX
            return {"y": (K[0],) + tuple(u[1:])}
        try:
            y = u if K in ((), u) else np.broadcast_shapes(K, u)
        except ValueError:
            raise PortError("u", f"gain of shape {K} does not broadcast with a signal of shape {u}") from None
        if y != u:
            raise PortError("u", f"gain of shape {K} would change the signal's shape {u} to {y}")
        self._y = y
        return {"y": y}

    behaviour = Behaviour(outputs={"y": "K * u"})  # element-wise
    MATRIX = Behaviour(outputs={"y": "K @ u"})

    def declare(self, d):
        d.param("K", None if self._matrix else self._y)  # element-wise: K broadcast to y


def _broadcast_inputs(names, shapes):
    """The common shape of inputs that combine element-wise (numpy broadcasting); a
    PortError names the first input that does not broadcast with those before it."""
    shape = ()
    for name in names:
        try:
            shape = np.broadcast_shapes(shape, shapes[name])
        except ValueError:
            raise PortError(name, f"shape {shapes[name]} does not broadcast with the other "
                                  f"inputs' shape {shape}") from None
    return shape


class _Elementwise(Block):
    """Shared by sum and product: y = u1 (op) u2 (op) ... uN, one operator per input, the
    inputs broadcast together (a scalar combines with every element of a vector)."""

    # operator character -> (the first input's term alone, how it joins the terms before)
    OPS = {}
    MARKS = {}  # operator character -> its mark at the input port in drawings
    param = ""  # the parameter holding the operators
    ignored = ""  # characters of it that only decorate (sum's "|")

    def __init__(self, name, params):
        super().__init__(name, params)
        self._ops = "".join(c for c in getattr(self.p, self.param) if c not in self.ignored)
        if not self._ops:
            raise ParamError(self.param, f"expected at least one of {' '.join(self.OPS)}")
        bad = set(self._ops) - set(self.OPS)
        if bad:
            raise ParamError(self.param, f"unexpected character(s) {''.join(sorted(bad))!r}: "
                                         f"use {' '.join(self.OPS)}")
        # y = -u1 + u2 - u3 ..., left to right, as numpy adds them
        text = self.OPS[self._ops[0]][0].format("u1")
        for k, op in enumerate(self._ops[1:], 2):
            text += f" {self.OPS[op][1]} u{k}"
        self.behaviour = Behaviour(outputs={"y": text})

    def ports(self):
        n = len(self._ops)
        return [In(f"u{i + 1}") for i in range(n)], [Out("y")]

    def infer(self, shapes):
        return {"y": _broadcast_inputs([f"u{i + 1}" for i in range(len(self._ops))], shapes)}

    def input_marks(self):
        return tuple(self.MARKS[op] for op in self._ops), self.param


class Sum(_Elementwise):
    """y = s1*u1 + s2*u2 + ... + sN*uN, one sign s_i (+ or -) per input.

    Inputs: u1..uN, N = the number of signs (`|` in signs is ignored, e.g. "|+-"); they
    broadcast together (numpy rules: a scalar adds to every element). Output: y, the
    broadcast shape.
    """

    type = "sum"
    params = (Param("signs", "string", "++", "one sign per input, + or - (| ignored)"),)
    OPS = {"+": ("{}", "+"), "-": ("-{}", "-")}
    MARKS = {"+": "+", "-": "\u2212"}  # as drawn at the ports (a minus sign, not a hyphen)
    param = "signs"
    ignored = "|"


class Product(_Elementwise):
    """y = u1 op2 u2 ... opN uN element-wise, op_i one of * and / (a leading / gives 1/u1).

    Inputs: u1..uN, N = the number of operators in ops; they broadcast together (numpy rules).
    Output: y, the broadcast shape.
    """

    type = "product"
    params = (Param("ops", "string", "**", "one operator per input, * or /"),)
    OPS = {"*": ("{}", "*"), "/": ("1.0 / {}", "/")}
    MARKS = {"*": "\u00d7", "/": "\u00f7"}
    param = "ops"


class MatMul(Block):
    """y = u1 @ u2 (matrix product).

    Inputs: u1 (r, c) and u2 (c, k) or (c,); vectors follow numpy's matmul rules.
    Output: y (r, k) or (r,).
    """

    type = "matmul"

    def ports(self):
        return [In("u1"), In("u2")], [Out("y")]

    def infer(self, shapes):
        a, b = shapes["u1"], shapes["u2"]
        for name, s in (("u1", a), ("u2", b)):
            if len(s) not in (1, 2):
                raise PortError(name, f"expected a vector or a matrix, got shape {s}")
        if a[-1] != b[0]:
            raise PortError("u2", f"inner dimensions differ: {a} @ {b}")
        return {"y": a[:-1] + b[1:]}

    behaviour = Behaviour(outputs={"y": "u1 @ u2"})


class Function(Block):
    """y = expr(inputs): a safe expression of the inputs and the diagram's constants.

    Inputs: one port per name in `inputs` (default: u), any shapes. Output: y, its shape found
    once at compile time by evaluating the expression on zero inputs (on a fixed random sample
    when zeros fail, e.g. inv(u); ikine's arguments only checked there, its n joint values
    not solved for). The language is the diagram expressions' plus inv pinv det
    cond solve transpose reshape. The condition numbers of the matrices inv and pinv invert
    are watched: a run that fails after one was nearly singular (above 1000) says when.
    """

    type = "function"
    reads_names = True
    params = (
        Param("expr", "string", doc="the expression, e.g. 'K @ u + sin(v)'"),
        Param("inputs", "names", ("u",), "names of the input ports"),
    )

    def __init__(self, name, params):
        super().__init__(name, params)
        try:
            for input_name in self.p.inputs:
                expr.check_not_reserved(input_name)
        except expr.ExprError as e:
            raise ParamError("inputs", str(e)) from None
        self._watch = ConditionWatch("a matrix its expression inverts")
        self._f = self._compiled_expression()

    def _compiled_expression(self):
        """The expression compiled with the parameters' values it reads."""
        try:
            return expr.compile_expr(self.p.expr, self.p.inputs, self.p._names,
                                     dotted=self.p._dotted,
                                     functions=self._functions(self._watch))
        except expr.Unavailable:  # a parameter it uses failed: reported there
            raise
        except expr.ExprError as e:
            raise ParamError("expr", str(e)) from None

    def _functions(self, watch):
        """The functions of the block's expressions: inv and pinv tell `watch` how well
        conditioned each matrix they invert is."""
        inv, pinv = watched_functions(watch)
        return {**self.p._functions, **expr.MATRIX_FUNCTIONS,
                "inv": expr.Function(inv), "pinv": expr.Function(pinv)}

    def ports(self):
        return [In(n) for n in self.p.inputs], [Out("y")]

    def infer(self, shapes):
        shapes = [shapes[n] for n in self.p.inputs]
        self._shapes = tuple(tuple(s) for s in shapes)
        rng = np.random.default_rng(0)
        samples = ([np.zeros(s) for s in shapes],
                   [np.asarray(rng.uniform(0.5, 1.5, s)) for s in shapes])
        probe = self._probe()
        errors = []
        for args in samples:
            try:  # with the evaluator's guards: an expression too costly to run is refused
                return {"y": np.shape(probe.checked(*args))}
            except expr.LimitError as e:
                raise PortError(self.p.inputs[0], str(e)) from None
            except (expr.ExprError, ArithmeticError, LookupError, ValueError, TypeError) as e:
                errors.append(e)
        raise PortError(self.p.inputs[0], f"the expression cannot be evaluated on inputs of "
                                          f"shapes {', '.join(map(str, shapes))}: {errors[0]}")

    def _probe(self):
        """The expression as the shape probe evaluates it: a function whose value at the
        stand-in inputs would be an error (ikine of a zero matrix) by its probe."""
        if all(f.probe is None for f in self.p._functions.values()):
            return self._f
        functions = {n: f.probing() for n, f in self._functions(self._watch).items()}
        return expr.compile_expr(self.p.expr, self.p.inputs, self.p._names,
                                 dotted=self.p._dotted, functions=functions)

    def output(self, t):
        self._watch.now = t
        np.copyto(self.y[0], self._f(*self.u))

    def initialize(self, t):
        self._watch.reset()  # a new run: forget the inversions of an earlier one

    def jacobian(self, pade=None):
        """y = f(u): dy/du exact, by forward differentiation of the expression at the inputs
        (blocksim.language.derivatives); None, so that it is differenced, where it calls a
        function without a derivative rule (a robot function on the inputs)."""
        try:
            D = derivatives.jacobian(self.p.expr, self.p.inputs, self.p._names, self.u,
                                     dotted=self.p._dotted,
                                     functions=self._functions(ConditionWatch("")))
        except derivatives.NoDerivative:
            return None
        return static(D)

    def notes(self):
        return self._watch.notes()

    def values_changed(self):
        self._f = self._compiled_expression()

    # ---- compiled form: the expression lowered operation by operation (accel.expression);
    # the values it folded into constants (the parameters it reads) are its run data
    # (P_constants): a parameter's new value changes them, not the code (a fact: a value
    # that decides a shape, as a slice bound, changes the code). The workspace holds the
    # watch of its inversions (W_watch, handed back after a failed run), the scratch its
    # temporaries.
    def _lowering(self, p):
        """The expression's compiled form with the names of `p` (cached for the block's
        own), or None: it has none (LoweringError, raised again by `lower`)."""
        cached = getattr(self, "_lowered", None)
        if cached is not None and cached[0] is p._names:
            return cached[1]
        try:
            low = lower_expression(self.p.expr, self.p.inputs, self._shapes, p._names,
                                   dotted=p._dotted,
                                   functions=self._functions(ConditionWatch("")),  # traced
                                   watch=ConditionWatch.C_SEE)
        except LoweringError as e:
            low = e
        if p is self.p:
            self._lowered = p._names, low
        return low

    def declare(self, d):
        low = self._lowering(self.p)
        if isinstance(low, LoweringError):
            return
        d.derived("constants", low.constants.shape)
        d.value("_names")
        d.fact("code")
        d.work("watch", ConditionWatch.WORK)

    def derive(self, p):
        low = self._lowering(p)
        if isinstance(low, LoweringError):
            raise Structural(str(low))
        return {"constants": low.constants, "code": (low.code, low.scratch)}

    def lower(self, c):
        low = self._lowering(self.p)
        if isinstance(low, LoweringError):
            raise low
        return Lowering({"output": low.code, "initialize": ""}, scratch=low.scratch,
                        doc=f"y = {self.p.expr}")

    def compiled_work(self, work):
        self._watch.load(work.watch)
