"""The options of `blocksim trim` and `blocksim linearize`; their work (what they print, the
files they write) is in commands.py, imported when one of them runs: every other command
pays nothing for it."""
from __future__ import annotations


def add_parsers(sub):
    trim = sub.add_parser("trim", help="find an operating point (an equilibrium) of a diagram")
    trim.add_argument("file")
    trim.add_argument("--fix", action="append", default=[], metavar="PATH=VALUE",
                      help="hold a state (BLOCK.x[i:j], BLOCK.xd[...]) or a signal "
                           "(BLOCK.PORT, a record name) at a value (repeatable)")
    trim.add_argument("--free", action="append", default=[], metavar="BLOCK.PORT",
                      help="a signal to which the trim may add a constant (repeatable)")
    _common(trim)
    lin = sub.add_parser("linearize", help="linearise a diagram between signals: A, B, C, D, "
                                           "poles, zeros, Bode plot and margins")
    lin.add_argument("file")
    lin.add_argument("--input", action="extend", nargs="+", default=[], metavar="SIG",
                     help="perturbation: BLOCK.PORT (an input port: what enters it; an "
                          "output port: the signal wherever it goes)")
    lin.add_argument("--output", action="extend", nargs="+", default=[], metavar="SIG",
                     help="measurement: BLOCK.PORT or a record name")
    lin.add_argument("--open", action="append", default=[], metavar="BLOCK.PORT",
                     help="cut the wire into this input port (a loop opening; repeatable)")
    point = lin.add_mutually_exclusive_group()
    point.add_argument("--at", type=float, metavar="T",
                       help="linearise the state a run reaches at time T (no equilibrium "
                            "needed)")
    point.add_argument("--op", metavar="FILE", help="linearise at this operating point "
                                                    "(operating_point.yaml from trim)")
    lin.add_argument("--pade", type=int, metavar="N",
                     help="order of the Padé approximation of transport delays (0 to 10)")
    lin.add_argument("--period", type=float, metavar="T",
                     help="a discrete model at period T (continuous blocks sampled, zoh)")
    lin.add_argument("--states", action="extend", nargs="+", default=None, metavar="NAME",
                     help="the order of the model's states: each state as printed "
                          "(Motor.x[0]) or a block for all of its states, every state once; "
                          "commas or spaces between them (e.g. --states X,Xd,Th,Thd)")
    lin.add_argument("--bode", metavar="OUT.png", help="draw the Bode plot (margins marked)")
    _common(lin)


def _common(parser):
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override a value by its dotted path (as for run)")
    parser.add_argument("--out", help="directory for the files (default: runs/<name>/)")


def run(args, load):
    """Run `blocksim trim` or `blocksim linearize` (args from the parser, `load(file,
    sets)` the CLI's loader); the exit code."""
    from .commands import run as run_command
    return run_command(args, load)
