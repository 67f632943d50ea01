#!/usr/bin/env python3
"""Derives the polynomial of geluExact (backends/halide/lib/LowerElementwise.cpp).

GELU(x) = x Phi(x), with T = Phi(-|x|) = 0.5 erfc(|x| / sqrt(2)) evaluated as
  T = exp(-x^2 / 2) H(u),  u = 1 / (1 + 0.3 |x|),  H ~ 0.5 erfc(z / sqrt(2)) exp(z^2 / 2)
on z = |x| in [0, 14] (Phi(-14) ~ 8e-45 is the last f32 value above 0), and
GELU = x T for x < 0, x (1 - T) otherwise. H is a least-squares fit with relative
weights on Chebyshev nodes against mpmath at 30 digits, printed as f32 literals; the
script then evaluates GELU the way the kernel does (f32 Horner; exp(-x^2 / 2) as
exp(-h^2 / 2 - (x - h)(x + h) / 2) with h = x to 12 bits, h^2 / 2 exact, by expOfExact's
range reduction and Taylor series) and reports its error against mpmath.
Usage: /usr/bin/python3 gelu_coefficients.py   (needs numpy and mpmath)
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 30
f32 = np.float32
U_SCALE, DEGREE, Z_MAX = 0.3, 10, 14.0


def horner(c, u):
    r = np.full_like(u, c[-1])
    for k in c[-2::-1]:
        r = (r * u + k).astype(f32)
    return r


def exp_of_exact(a, d):
    """The kernel's expOfExact: exp(a - d), a exact."""
    k = np.round(a * f32(1.44269504)).astype(f32)
    r = ((a - k * f32(0.693145751953125)) - k * f32(1.42860677e-06)).astype(f32) - d
    s = np.full_like(r, f32(1 / 40320))
    for n in range(7, -1, -1):
        s = (s * r + f32(1 / float(mp.factorial(n)))).astype(f32)
    e = k.astype(np.int32)
    scale = ((e + 127) << 23).astype(np.int32).view(f32)
    return np.where(e < -126, f32(0), (s * scale).astype(f32))


def gelu_f32(x, h_coefficients):
    x = x.astype(f32)
    z = np.minimum(np.abs(x), f32(16))
    u = (f32(1) / (f32(1) + f32(U_SCALE) * z)).astype(f32)
    high = (z.view(np.uint32) & np.uint32(0xFFFFF000)).view(f32)
    rest = ((z - high) * (z + high)).astype(f32)
    gauss = exp_of_exact((high * high) * f32(-0.5), (rest * f32(0.5)).astype(f32))
    t = (gauss * horner(h_coefficients, u)).astype(f32)
    return (x * np.where(x < 0, t, f32(1) - t)).astype(f32)


def main():
    z = 0 + Z_MAX * (1 - np.cos(np.linspace(0, np.pi, 4001))) / 2
    h = np.array([float(mp.erfc(v / mp.sqrt(2)) * mp.exp(v * v / 2) / 2) for v in map(mp.mpf, z)])
    a = np.vander(1 / (1 + U_SCALE * z), DEGREE + 1, increasing=True)
    w = 1 / h
    c, *_ = np.linalg.lstsq(a * w[:, None], h * w, rcond=None)
    coefficients = [f32(v) for v in c]
    print("H:", ", ".join("%.9gf" % v for v in coefficients))
    print("fit error (double): %.3g" % np.max(np.abs(a @ c - h) / h))
    xs = np.linspace(-10, 10, 400001).astype(f32)[::3]
    ref = np.array([float(mp.mpf(float(v)) * mp.ncdf(mp.mpf(float(v)))) for v in xs])
    got = gelu_f32(xs, coefficients).astype(np.float64)
    nz = ref != 0
    print("max relative error of GELU on [-10, 10]: %.3g" %
          np.max(np.abs(got - ref)[nz] / np.abs(ref[nz])))


if __name__ == "__main__":
    main()
