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
