/* Exact times: the correctly rounded double of a fraction of 128-bit integers, so that a
   sample hit offset + j*period lands on the same float as Python's
   float(Fraction(offset) + j*Fraction(period)) (block.exact_time: 3*0.1 is 0.3). */

static int rt_bits(unsigned __int128 v)
{
    int n = 0;
    while (v) {
        v >>= 1;
        n++;
    }
    return n;
}

/* num/den * 2^e rounded to nearest, ties to even (den > 0). */
static double rt_ratio(i128 num, long long den, int e)
{
    if (num == 0)
        return 0.0;
    int negative = num < 0;
    unsigned __int128 N = negative ? -(unsigned __int128)num : (unsigned __int128)num;
    unsigned __int128 D = (unsigned __int128)den;
    /* scale N/D into [2^54, 2^56): 53 bits of mantissa, a rounding bit and more */
    int s = 55 - (rt_bits(N) - rt_bits(D));
    if (s >= 0)
        N <<= s;
    else
        D <<= -s;
    unsigned __int128 q = N / D, r = N % D;
    int drop = rt_bits(q) - 53;
    unsigned long long mant = (unsigned long long)(q >> drop);
    unsigned __int128 rest = q & (((unsigned __int128)1 << drop) - 1);
    unsigned __int128 half = (unsigned __int128)1 << (drop - 1);
    if (rest > half || (rest == half && (r != 0 || (mant & 1))))
        mant++;
    double v = ldexp((double)mant, drop - s + e);
    return negative ? -v : v;
}

static double rt_series_at(const RtSeries *s, long long j)
{
    return rt_ratio(s->A + (i128)j * s->C, s->L, s->E);
}

/* ---- block.exact_time and sums of exact times (a transport delay's t + delay) ------------ */
/* An exact time n/d * 2^e (d <= 1e9), as block.exact_time gives it: the simplest fraction
   of denominator <= 1e9 that rounds to the float, else the float's binary value. */
typedef struct { i128 n; long long d; int e; } RtExact;

#define RT_MAX_DENOMINATOR 1000000000LL

static i128 rt_floordiv(i128 n, i128 d)  /* Python's n // d, d > 0 */
{
    i128 q = n / d;
    return (n % d != 0 && n < 0) ? q - 1 : q;
}

static unsigned __int128 rt_absdiff(i128 a, i128 b)  /* |a - b| when it fits, wrapping */
{
    unsigned __int128 d = (unsigned __int128)a - (unsigned __int128)b;
    return (i128)d < 0 ? -d : d;
}

/* Fraction(x).limit_denominator(10**9) (Python's algorithm: the convergents, the last
   semiconvergent, the closer of the two, ties to the smaller denominator); the float's own
   value when that does not round back to it */
static RtExact rt_exact_time(double x)
{
    RtExact binary = {0, 1, 0};
    if (x == 0.0 || !isfinite(x))
        return binary;
    int E;
    long long m = (long long)ldexp(frexp(x, &E), 53);
    E -= 53;
    while ((m & 1) == 0) {
        m /= 2;
        E++;
    }
    binary.n = m;
    binary.e = E;
    /* an integer, a denominator 2^-E <= 1e9, or |x| < 2^-33 (no p/q with q <= 1e9 rounds to
       it): the float's value is the answer */
    if (E >= 0 || -E < 30 || fabs(x) < 0x1p-33)
        return binary;
    const i128 n0 = m, d0 = (i128)1 << -E;
    i128 n = n0, d = d0, p0 = 0, q0 = 1, p1 = 1, q1 = 0;
    for (;;) {
        i128 a = rt_floordiv(n, d), q2 = q0 + a * q1;
        if (q2 > RT_MAX_DENOMINATOR)
            break;
        i128 p2 = p0 + a * p1;
        p0 = p1;
        q0 = q1;
        p1 = p2;
        q1 = q2;
        i128 r = n - a * d;
        n = d;
        d = r;
    }
    i128 k = (RT_MAX_DENOMINATOR - q0) / q1, pb = p0 + k * p1, qb = q0 + k * q1;
    /* |p/q - x| = |p d0 - n0 q| / (q d0): compare the two bounds' numerators, crossed */
    unsigned __int128 near = rt_absdiff((i128)((unsigned __int128)p1 * (unsigned __int128)d0),
                                        (i128)((unsigned __int128)n0 * (unsigned __int128)q1));
    unsigned __int128 far = rt_absdiff((i128)((unsigned __int128)pb * (unsigned __int128)d0),
                                       (i128)((unsigned __int128)n0 * (unsigned __int128)qb));
    unsigned __int128 lhs = near * (unsigned __int128)qb, rhs;
    int second = __builtin_mul_overflow(far, (unsigned __int128)q1, &rhs) || lhs <= rhs;
    RtExact simple = {second ? p1 : pb, (long long)(second ? q1 : qb), 0};
    return rt_ratio(simple.n, simple.d, 0) == x ? simple : binary;
}

/* 256-bit magnitudes, four 64-bit limbs, least significant first */
typedef struct { unsigned long long w[4]; } RtU256;

static RtU256 u256_of(unsigned __int128 v, int shift)  /* v << shift, shift <= 128 */
{
    RtU256 r = {{0, 0, 0, 0}};
    int limb = shift / 64, bit = shift % 64;
    unsigned long long part[2] = {(unsigned long long)v, (unsigned long long)(v >> 64)};
    for (int i = 0; i < 2; i++) {
        unsigned __int128 p = (unsigned __int128)part[i] << bit;
        if (i + limb < 4)
            r.w[i + limb] |= (unsigned long long)p;
        if (i + limb + 1 < 4)
            r.w[i + limb + 1] |= (unsigned long long)(p >> 64);
    }
    return r;
}

static int u256_cmp(RtU256 a, RtU256 b)
{
    for (int i = 3; i >= 0; i--)
        if (a.w[i] != b.w[i])
            return a.w[i] < b.w[i] ? -1 : 1;
    return 0;
}

static RtU256 u256_add(RtU256 a, RtU256 b, int subtract)  /* a + b, or a - b (a >= b) */
{
    RtU256 r;
    unsigned long long carry = 0;
    for (int i = 0; i < 4; i++) {
        unsigned __int128 s = subtract ? (unsigned __int128)a.w[i] - b.w[i] - carry
                                       : (unsigned __int128)a.w[i] + b.w[i] + carry;
        r.w[i] = (unsigned long long)s;
        carry = subtract ? (unsigned long long)(s >> 64) != 0 : (unsigned long long)(s >> 64);
    }
    return r;
}

static int u256_bits(RtU256 a)
{
    for (int i = 3; i >= 0; i--)
        if (a.w[i])
            return 64 * i + 64 - __builtin_clzll(a.w[i]);
    return 0;
}

static int u256_bit(RtU256 a, int k) { return (int)((a.w[k / 64] >> (k % 64)) & 1); }

static int u256_any_below(RtU256 a, int k)  /* any bit below bit k set */
{
    for (int i = 0; i < k / 64; i++)
        if (a.w[i])
            return 1;
    return k % 64 && (a.w[k / 64] & ((1ULL << (k % 64)) - 1)) != 0;
}

static RtU256 u256_shl(RtU256 a, int s)
{
    RtU256 r = {{0, 0, 0, 0}};
    for (int i = 3; i >= 0; i--) {
        int j = i - s / 64;
        if (j < 0)
            continue;
        r.w[i] = a.w[j] << (s % 64);
        if (s % 64 && j > 0)
            r.w[i] |= a.w[j - 1] >> (64 - s % 64);
    }
    return r;
}

/* N / D * 2^e rounded to the nearest double, ties to even (D > 0) */
static double u256_ratio(RtU256 N, unsigned long long D, int e)
{
    int bits = u256_bits(N);
    if (bits == 0)
        return 0.0;
    int s = 255 - bits;  /* the quotient then has at least 192 bits */
    N = u256_shl(N, s);
    RtU256 Q;
    unsigned __int128 r = 0;
    for (int i = 3; i >= 0; i--) {
        r = (r << 64) | N.w[i];
        Q.w[i] = (unsigned long long)(r / D);
        r %= D;
    }
    int drop = u256_bits(Q) - 53;
    unsigned long long mant = 0;
    for (int k = 52; k >= 0; k--)
        mant = (mant << 1) | (unsigned long long)u256_bit(Q, drop + k);
    if (u256_bit(Q, drop - 1) && (u256_any_below(Q, drop - 1) || r != 0 || (mant & 1)))
        mant++;
    return ldexp((double)mant, drop - s + e);
}

/* float(a + b) of two exact times (Python: float(exact_time(t) + exact_time(delay))) */
static double rt_exact_sum(RtExact a, RtExact b)
{
    int e = a.e < b.e ? a.e : b.e;
    if (a.e - e > 120 || b.e - e > 120)  /* times 2^120 apart: beyond any simulation */
        return rt_ratio(a.n, a.d, a.e) + rt_ratio(b.n, b.d, b.e);
    RtU256 terms[2];
    int negative[2];
    RtExact ab[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        negative[i] = ab[i].n < 0;
        unsigned __int128 mag = (unsigned __int128)ab[i].n;
        if (negative[i])
            mag = -mag;
        terms[i] = u256_of(mag * (unsigned __int128)ab[1 - i].d, ab[i].e - e);
    }
    int sign = negative[0];
    RtU256 sum;
    if (negative[0] == negative[1]) {
        sum = u256_add(terms[0], terms[1], 0);
    } else if (u256_cmp(terms[0], terms[1]) >= 0) {
        sum = u256_add(terms[0], terms[1], 1);
    } else {
        sum = u256_add(terms[1], terms[0], 1);
        sign = negative[1];
    }
    double v = u256_ratio(sum, (unsigned long long)a.d * (unsigned long long)b.d, e);
    return sign ? -v : v;
}
