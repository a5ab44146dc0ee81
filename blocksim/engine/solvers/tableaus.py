"""Butcher tableaus of the explicit Runge–Kutta methods, as data.

A stage is ``k_i = f(t + c_i h, y + h Σ_j a_ij k_j)`` (A strictly lower triangular). Fixed-step
methods advance with ``y1 = y + h Σ_i b_i k_i``. The embedded methods here are all written
"first same as last": their last step stage has ``c = 1`` and the row of ``b`` in A, so its
argument *is* y1 and the stage is f(t + h, y1), the next step's first stage. Their error
estimate is ``h Σ_i e_i k_i`` over the step stages and their dense output on
``θ = (t - t_old)/h`` is the nested form of Hairer's DOPRI codes::

    y(θ) = y0 + θ(F0 + (1-θ)(F1 + θ(F2 + (1-θ)(F3 + θ(F4 + ...)))))
    F0 = y1 - y0,  F1 = h f0 - F0,  F2 = 2 F0 - h (f0 + f1),  F3.. = h D k

(F0..F2 alone are the cubic Hermite interpolant from the end-point values and slopes). Rows of
A beyond `stages` are extra stages evaluated only when dense output is asked for.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Tableau:
    """One explicit RK method: `order` of the solution, `error_order` of the embedded
    estimate (the controller exponent is 1/(error_order + 1)), `stages` evaluated per step."""
    order: int
    c: np.ndarray
    A: np.ndarray
    stages: int
    b: np.ndarray | None = None
    e: np.ndarray | None = None
    error_order: int | None = None
    D: np.ndarray | None = None
    # (i, j, bound) for the stiffness test of the embedded methods: stages i and j, whose
    # difference estimates h·λ (see `adaptive_rk`), and the |h·λ| above which the step is
    # taken to be held by the method's stability, just inside the stability interval on the
    # negative real axis
    stiffness: tuple | None = None


def _matrix(rows, width):
    """Dense (len(rows), width) array from rows given as lists (leading entries) or as
    {column: value} dicts (sparse)."""
    out = np.zeros((len(rows), width))
    for i, row in enumerate(rows):
        items = row.items() if isinstance(row, dict) else enumerate(row)
        for j, value in items:
            out[i, j] = value
    return out


def _lower(rows):
    """Strictly lower-triangular A from its rows 1.. (row 0 is zero)."""
    return _matrix([[]] + list(rows), len(rows) + 1)


# Forward Euler, order 1.
EULER = Tableau(order=1, c=np.array([0.0]), A=_lower([]), stages=1, b=np.array([1.0]))

# Heun's method (explicit trapezoidal rule), order 2.
HEUN = Tableau(order=2, c=np.array([0.0, 1.0]), A=_lower([[1.0]]), stages=2,
               b=np.array([1 / 2, 1 / 2]))

# The classical Runge–Kutta method (Kutta 1901), order 4.
RK4 = Tableau(order=4, c=np.array([0.0, 1 / 2, 1 / 2, 1.0]),
              A=_lower([[1 / 2], [0.0, 1 / 2], [0.0, 0.0, 1.0]]), stages=4,
              b=np.array([1 / 6, 1 / 3, 1 / 3, 1 / 6]))

# Bogacki & Shampine, "A 3(2) pair of Runge-Kutta formulas", Appl. Math. Lett. 2 (1989).
# Order 3 with an embedded order-2 estimate; FSAL; dense output is the cubic Hermite
# interpolant (F0..F2), third order.
BS23 = Tableau(
    order=3, error_order=2, stages=4,
    c=np.array([0.0, 1 / 2, 3 / 4, 1.0]),
    A=_lower([[1 / 2], [0.0, 3 / 4], [2 / 9, 1 / 3, 4 / 9]]),
    # b - b_hat, b_hat = (7/24, 1/4, 1/3, 1/8)
    e=np.array([-5 / 72, 1 / 12, 1 / 9, -1 / 8]),
    # no two stages share c = 1; stages c = 3/4 and 1 (the time difference adds h·f_t/4 to
    # the stage difference, negligible next to λ·ΔY when the problem is stiff). Stability
    # interval [-2.51, 0] (R(z) = 1 + z + z²/2 + z³/6).
    stiffness=(2, 3, 2.4),
)

# Dormand & Prince, "A family of embedded Runge-Kutta formulae", J. Comp. Appl. Math. 6 (1980).
# Order 5 with an embedded order-4 estimate; FSAL. Dense output: the fourth-order continuous
# extension of Hairer, Nørsett & Wanner, Solving ODEs I, II.6 (coefficients d_i of DOPRI5's
# CONTD5).
DP54 = Tableau(
    order=5, error_order=4, stages=7,
    c=np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0]),
    A=_lower([
        [1 / 5],
        [3 / 40, 9 / 40],
        [44 / 45, -56 / 15, 32 / 9],
        [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
        [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
        [35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
    ]),
    # b - b_hat, b_hat = (5179/57600, 0, 7571/16695, 393/640, -92097/339200, 187/2100, 1/40)
    e=np.array([71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40]),
    # stages 6 and 7 both at t + h; 3.25 as in Hairer's DOPRI5 (interval [-3.31, 0])
    stiffness=(5, 6, 3.25),
    D=np.array([[-12715105075 / 11282082432, 0.0, 87487479700 / 32700410799,
                 -10690763975 / 1880347072, 701980252875 / 199316789632,
                 -1453857185 / 822651844, 69997945 / 29380423]]),
)

# Dormand & Prince's 8(5,3) pair as published in Hairer's DOP853 code (Hairer, Nørsett &
# Wanner, Solving ODEs I, 2nd ed., II.10): order 8, twelve stages plus the FSAL stage, two
# embedded estimates (orders 5 and 3, combined in `Dop853._error_norm`) and a seventh-order
# dense output that needs three extra stages (rows 13..15).
_DOP853_A = _matrix([
    {},
    {0: 5.26001519587677318785587544488e-2},
    {0: 1.97250569845378994544595329183e-2, 1: 5.91751709536136983633785987549e-2},
    {0: 2.95875854768068491816892993775e-2, 2: 8.87627564304205475450678981324e-2},
    {0: 2.41365134159266685502369798665e-1, 2: -8.84549479328286085344864962717e-1,
     3: 9.24834003261792003115737966543e-1},
    {0: 3.7037037037037037037037037037e-2, 3: 1.70828608729473871279604482173e-1,
     4: 1.25467687566822425016691814123e-1},
    {0: 3.7109375e-2, 3: 1.70252211019544039314978060272e-1,
     4: 6.02165389804559606850219397283e-2, 5: -1.7578125e-2},
    {0: 3.70920001185047927108779319836e-2, 3: 1.70383925712239993810214054705e-1,
     4: 1.07262030446373284651809199168e-1, 5: -1.53194377486244017527936158236e-2,
     6: 8.27378916381402288758473766002e-3},
    {0: 6.24110958716075717114429577812e-1, 3: -3.36089262944694129406857109825,
     4: -8.68219346841726006818189891453e-1, 5: 2.75920996994467083049415600797e1,
     6: 2.01540675504778934086186788979e1, 7: -4.34898841810699588477366255144e1},
    {0: 4.77662536438264365890433908527e-1, 3: -2.48811461997166764192642586468,
     4: -5.90290826836842996371446475743e-1, 5: 2.12300514481811942347288949897e1,
     6: 1.52792336328824235832596922938e1, 7: -3.32882109689848629194453265587e1,
     8: -2.03312017085086261358222928593e-2},
    {0: -9.3714243008598732571704021658e-1, 3: 5.18637242884406370830023853209,
     4: 1.09143734899672957818500254654, 5: -8.14978701074692612513997267357,
     6: -1.85200656599969598641566180701e1, 7: 2.27394870993505042818970056734e1,
     8: 2.49360555267965238987089396762, 9: -3.0467644718982195003823669022},
    {0: 2.27331014751653820792359768449, 3: -1.05344954667372501984066689879e1,
     4: -2.00087205822486249909675718444, 5: -1.79589318631187989172765950534e1,
     6: 2.79488845294199600508499808837e1, 7: -2.85899827713502369474065508674,
     8: -8.87285693353062954433549289258, 9: 1.23605671757943030647266201528e1,
     10: 6.43392746015763530355970484046e-1},
    # the weights b of the eighth-order solution (FSAL stage)
    {0: 5.42937341165687622380535766363e-2, 5: 4.45031289275240888144113950566,
     6: 1.89151789931450038304281599044, 7: -5.8012039600105847814672114227,
     8: 3.1116436695781989440891606237e-1, 9: -1.52160949662516078556178806805e-1,
     10: 2.01365400804030348374776537501e-1, 11: 4.47106157277725905176885569043e-2},
    # extra stages for the dense output
    {0: 5.61675022830479523392909219681e-2, 6: 2.53500210216624811088794765333e-1,
     7: -2.46239037470802489917441475441e-1, 8: -1.24191423263816360469010140626e-1,
     9: 1.5329179827876569731206322685e-1, 10: 8.20105229563468988491666602057e-3,
     11: 7.56789766054569976138603589584e-3, 12: -8.298e-3},
    {0: 3.18346481635021405060768473261e-2, 5: 2.83009096723667755288322961402e-2,
     6: 5.35419883074385676223797384372e-2, 7: -5.49237485713909884646569340306e-2,
     10: -1.08347328697249322858509316994e-4, 11: 3.82571090835658412954920192323e-4,
     12: -3.40465008687404560802977114492e-4, 13: 1.41312443674632500278074618366e-1},
    {0: -4.28896301583791923408573538692e-1, 5: -4.69762141536116384314449447206,
     6: 7.68342119606259904184240953878, 7: 4.06898981839711007970213554331,
     8: 3.56727187455281109270669543021e-1, 12: -1.39902416515901462129418009734e-3,
     13: 2.9475147891527723389556272149, 14: -9.15095847217987001081870187138},
], 16)

_DOP853_B = _DOP853_A[12, :12]

DOP853 = Tableau(
    order=8, error_order=7, stages=13,
    c=np.array([0.0, 0.526001519587677318785587544488e-01, 0.789002279381515978178381316732e-01,
                0.118350341907227396726757197510, 0.281649658092772603273242802490,
                1 / 3, 0.25, 4 / 13, 127 / 195, 0.6, 6 / 7, 1.0, 1.0, 0.1, 0.2, 7 / 9]),
    A=_DOP853_A,
    # stages 12 and 13 both at t + h; 6.1 as in Hairer's DOP853 (interval [-6.39, 0])
    stiffness=(11, 12, 6.1),
    # fifth-order estimate (Hairer's ER coefficients)
    e=_matrix([{0: 0.1312004499419488073250102996e-1, 5: -0.1225156446376204440720569753e+1,
                6: -0.4957589496572501915214079952, 7: 0.1664377182454986536961530415e+1,
                8: -0.3503288487499736816886487290, 9: 0.3341791187130174790297318841,
                10: 0.8192320648511571246570742613e-1,
                11: -0.2235530786388629525884427845e-1}], 13)[0],
    D=_matrix([
        {0: -0.84289382761090128651353491142e+1, 5: 0.56671495351937776962531783590,
         6: -0.30689499459498916912797304727e+1, 7: 0.23846676565120698287728149680e+1,
         8: 0.21170345824450282767155149946e+1, 9: -0.87139158377797299206789907490,
         10: 0.22404374302607882758541771650e+1, 11: 0.63157877876946881815570249290,
         12: -0.88990336451333310820698117400e-1, 13: 0.18148505520854727256656404962e+2,
         14: -0.91946323924783554000451984436e+1, 15: -0.44360363875948939664310572000e+1},
        {0: 0.10427508642579134603413151009e+2, 5: 0.24228349177525818288430175319e+3,
         6: 0.16520045171727028198505394887e+3, 7: -0.37454675472269020279518312152e+3,
         8: -0.22113666853125306036270938578e+2, 9: 0.77334326684722638389603898808e+1,
         10: -0.30674084731089398182061213626e+2, 11: -0.93321305264302278729567221706e+1,
         12: 0.15697238121770843886131091075e+2, 13: -0.31139403219565177677282850411e+2,
         14: -0.93529243588444783865713862664e+1, 15: 0.35816841486394083752465898540e+2},
        {0: 0.19985053242002433820987653617e+2, 5: -0.38703730874935176555105901742e+3,
         6: -0.18917813819516756882830838328e+3, 7: 0.52780815920542364900561016686e+3,
         8: -0.11573902539959630126141871134e+2, 9: 0.68812326946963000169666922661e+1,
         10: -0.10006050966910838403183860980e+1, 11: 0.77771377980534432092869265740,
         12: -0.27782057523535084065932004339e+1, 13: -0.60196695231264120758267380846e+2,
         14: 0.84320405506677161018159903784e+2, 15: 0.11992291136182789328035130030e+2},
        {0: -0.25693933462703749003312586129e+2, 5: -0.15418974869023643374053993627e+3,
         6: -0.23152937917604549567536039109e+3, 7: 0.35763911791061412378285349910e+3,
         8: 0.93405324183624310003907691704e+2, 9: -0.37458323136451633156875139351e+2,
         10: 0.10409964950896230045147246184e+3, 11: 0.29840293426660503123344363579e+2,
         12: -0.43533456590011143754432175058e+2, 13: 0.96324553959188282948394950600e+2,
         14: -0.39177261675615439165231486172e+2, 15: -0.14972683625798562581422125276e+3},
    ], 16),
)

# Third-order estimate of DOP853: b minus Hairer's BHH weights (stages 1, 9, 12).
DOP853_E3 = np.append(_DOP853_B, 0.0) - _matrix(
    [{0: 0.244094488188976377952755905512, 8: 0.733846688281611857341361741547,
      11: 0.220588235294117647058823529412e-1}], 13)[0]
