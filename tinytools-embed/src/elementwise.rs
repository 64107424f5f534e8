//! The encoder's element-wise functions over slices, vectorized: `exp` (attention's softmax)
//! and GELU (after each layer's intermediate product).
//!
//! One value at a time through libm's `expf` these were 18 % of a BFCL query's time (`perf`,
//! 2026-12-06: GELU 11.7 %, `expf` 6.1 %), most of it in the long queries' tail. Here they
//! run on the SIMD width pulp finds (AVX-512, AVX2 + FMA or plain code), with the same
//! formulas as the scalar references below; the tests hold both to f64's answers.

use pulp::{Arch, Simd, WithSimd};

/// `e^v` for every value, to about 2 ulp (inputs are clamped to −87.3..=88, so the result is
/// never a subnormal, infinite or NaN for a finite input).
pub(super) fn exp(values: &mut [f32]) {
    Arch::new().dispatch(Map { values, function: Function::Exp });
}

/// BERT's GELU, `v·Φ(v)` with the error function to within 1.5e-7, for every value.
pub(super) fn gelu(values: &mut [f32]) {
    Arch::new().dispatch(Map { values, function: Function::Gelu });
}

#[derive(Clone, Copy)]
enum Function {
    Exp,
    Gelu,
}

struct Map<'a> {
    values: &'a mut [f32],
    function: Function,
}

impl WithSimd for Map<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Self::Output {
        let (head, tail) = S::as_mut_simd_f32s(self.values);
        match self.function {
            Function::Exp => head.iter_mut().for_each(|v| *v = exp_simd(simd, *v)),
            Function::Gelu => head.iter_mut().for_each(|v| *v = gelu_simd(simd, *v)),
        }
        let scalar = match self.function {
            Function::Exp => f32::exp,
            Function::Gelu => gelu_scalar,
        };
        tail.iter_mut().for_each(|v| *v = scalar(*v));
    }
}

/// Cephes' `expf`: `e^x = 2^n · e^r` with `n = round(x·log₂e)`, `r` reduced in two steps
/// (ln 2 split so the product is exact), `e^r` by a degree-6 polynomial, `2^n` built in the
/// exponent bits.
#[inline(always)]
fn exp_simd<S: Simd>(simd: S, x: S::f32s) -> S::f32s {
    // 1.5·2²³: adding it rounds to an integer, which then sits in the low mantissa bits.
    const ROUND: f32 = 12_582_912.0;
    let x = simd.min_f32s(simd.max_f32s(x, simd.splat_f32s(-87.3)), simd.splat_f32s(88.0));
    let shifted = simd.mul_add_f32s(x, simd.splat_f32s(std::f32::consts::LOG2_E), simd.splat_f32s(ROUND));
    let n = simd.sub_f32s(shifted, simd.splat_f32s(ROUND));
    let r = simd.mul_add_f32s(n, simd.splat_f32s(-0.693_359_4), x);
    let r = simd.mul_add_f32s(n, simd.splat_f32s(2.121_944_4e-4), r);
    let mut p = simd.splat_f32s(1.987_569_1e-4);
    for c in [1.398_199_9e-3, 8.333_452e-3, 4.166_579_6e-2, 0.166_666_65, 0.5] {
        p = simd.mul_add_f32s(p, r, simd.splat_f32s(c));
    }
    let e_r = simd.add_f32s(simd.mul_add_f32s(p, simd.mul_f32s(r, r), r), simd.splat_f32s(1.0));
    // `shifted`'s bits are ROUND's plus n: n + 127 shifted into the exponent is 2^n.
    let n_bits = simd.sub_u32s(simd.transmute_u32s_f32s(shifted), simd.splat_u32s(ROUND.to_bits()));
    let biased = simd.add_u32s(n_bits, simd.splat_u32s(127));
    let two_n = simd.transmute_f32s_u32s(simd.wrapping_dyn_shl_u32s(biased, simd.splat_u32s(23)));
    simd.mul_f32s(e_r, two_n)
}

/// [`gelu_scalar`] on a vector.
#[inline(always)]
fn gelu_simd<S: Simd>(simd: S, x: S::f32s) -> S::f32s {
    let a = simd.abs_f32s(simd.mul_f32s(x, simd.splat_f32s(std::f32::consts::FRAC_1_SQRT_2)));
    let one = simd.splat_f32s(1.0);
    let t = simd.div_f32s(one, simd.mul_add_f32s(simd.splat_f32s(P), a, one));
    let mut poly = simd.splat_f32s(A[0]);
    for c in &A[1..] {
        poly = simd.mul_add_f32s(poly, t, simd.splat_f32s(*c));
    }
    let e = exp_simd(simd, simd.neg_f32s(simd.mul_f32s(a, a)));
    // erf(|x|/√2), then its sign: Φ(x) = (1 + erf(x/√2)) / 2.
    let erf_abs = simd.sub_f32s(one, simd.mul_f32s(simd.mul_f32s(poly, t), e));
    let sign = simd.and_f32s(x, simd.splat_f32s(-0.0));
    let erf = simd.or_f32s(erf_abs, sign);
    simd.mul_f32s(simd.mul_f32s(simd.splat_f32s(0.5), x), simd.add_f32s(one, erf))
}

/// Abramowitz & Stegun 7.1.26: `erf(a) ≈ 1 − t·poly(t)·e^(−a²)`, `t = 1/(1 + P·a)`.
const P: f32 = 0.327_591_1;
/// Its polynomial's coefficients, highest power first.
const A: [f32; 5] = [1.061_405_4, -1.453_152_1, 1.421_413_8, -0.284_496_74, 0.254_829_6];

/// GELU as BERT computes it, `x·Φ(x)` with the exact error function.
fn gelu_scalar(x: f32) -> f32 {
    0.5 * x * (1.0 + erf(x * std::f32::consts::FRAC_1_SQRT_2))
}

/// The error function to within 1.5e-7 (Abramowitz & Stegun 7.1.26); `f32::erf` is not
/// stable Rust yet.
fn erf(x: f32) -> f32 {
    let a = x.abs();
    let t = 1.0 / (1.0 + P * a);
    let poly = A.iter().fold(0.0, |acc, c| acc * t + c);
    (1.0 - poly * t * (-a * a).exp()).copysign(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values from −100 to 100, dense near zero, with lengths that leave a scalar tail.
    fn inputs() -> Vec<f32> {
        let mut values: Vec<f32> = (-4000..=4000).map(|i| i as f32 / 400.0).collect();
        values.extend([-100.0, -88.0, -87.0, -50.0, -20.0, 20.0, 50.0, 88.0, 0.0, -0.0, 1e-8, -1e-8, 3.0]);
        values
    }

    #[test]
    fn exp_matches_f64_within_a_few_ulp_over_the_range_that_matters() {
        let mut values = inputs();
        let want: Vec<f64> = values.iter().map(|&v| f64::from(v).exp()).collect();
        exp(&mut values);
        for ((got, want), x) in values.iter().zip(&want).zip(inputs()) {
            if (-87.0..=88.0).contains(&x) {
                let error = (f64::from(*got) - want).abs() / want;
                assert!(error <= 3e-7, "exp({x}) = {got}, want {want} ({error:e})");
            } else {
                assert!(got.is_finite() && *got >= 0.0, "exp({x}) = {got}: clamped, never inf or NaN");
            }
        }
    }

    #[test]
    fn gelu_matches_the_exact_error_function() {
        let mut values = inputs();
        let want: Vec<f64> = values.iter().map(|&v| gelu_f64(f64::from(v))).collect();
        gelu(&mut values);
        for ((got, want), x) in values.iter().zip(&want).zip(inputs()) {
            // A&S 7.1.26's own bound (1.5e-7 on erf) plus f32 rounding, relative to |x|.
            assert!(
                (f64::from(*got) - want).abs() <= 4e-7 * (1.0 + f64::from(x).abs()),
                "gelu({x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn erf_matches_known_values() {
        for (x, expected) in
            [(0.0, 0.0), (0.5, 0.520_499_9), (1.0, 0.842_700_8), (-2.0, -0.995_322_3), (3.5, 0.999_999_3)]
        {
            assert!((erf(x) - expected).abs() < 2e-7, "erf({x}) = {} not {expected}", erf(x));
        }
    }

    #[test]
    fn the_vector_and_scalar_paths_agree() {
        // 19 values: the head goes through the vectors, the tail through the scalar code.
        let original: Vec<f32> = (0..19).map(|i| i as f32 / 3.0 - 3.0).collect();
        let mut values = original.clone();
        gelu(&mut values);
        for (got, x) in values.iter().zip(&original) {
            assert!((got - gelu_scalar(*x)).abs() <= 1e-6, "gelu({x}) = {got} vs {}", gelu_scalar(*x));
        }
        let mut empty: [f32; 0] = [];
        gelu(&mut empty);
        exp(&mut empty);
    }

    /// `exp` and GELU of [`inputs`].
    type Outputs = (Vec<f32>, Vec<f32>);

    #[test]
    fn every_simd_width_gives_the_same_values() {
        let run = |simd_values: &dyn Fn(&mut [f32], Function)| {
            let (mut e, mut g) = (inputs(), inputs());
            simd_values(&mut e, Function::Exp);
            simd_values(&mut g, Function::Gelu);
            (e, g)
        };
        let want = run(&|values, function| Arch::new().dispatch(Map { values, function }));
        let mut levels: Vec<(&str, Outputs)> = vec![
            ("plain", run(&|values, function| pulp::Scalar::new().vectorize(Map { values, function }))),
            ("4 lanes", run(&|values, function| pulp::Scalar128b.vectorize(Map { values, function }))),
            ("8 lanes", run(&|values, function| pulp::Scalar256b.vectorize(Map { values, function }))),
            ("16 lanes", run(&|values, function| pulp::Scalar512b.vectorize(Map { values, function }))),
        ];
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V3::try_new() {
            levels.push(("avx2", run(&|values, function| Simd::vectorize(simd, Map { values, function }))));
        }
        for (level, (e, g)) in levels {
            for (got, want) in e.iter().zip(&want.0).chain(g.iter().zip(&want.1)) {
                assert!((got - want).abs() <= 1e-6 * (1.0 + want.abs()), "{level}: {got} vs {want}");
            }
        }
    }

    /// GELU with erf from its Taylor series (|x| small) or its continued fraction, in f64.
    fn gelu_f64(x: f64) -> f64 {
        0.5 * x * (1.0 + erf_f64(x / std::f64::consts::SQRT_2))
    }

    fn erf_f64(x: f64) -> f64 {
        let a = x.abs();
        let value = if a < 3.0 {
            // Σ (−1)ⁿ a^(2n+1) / (n! (2n+1)), converges fast below 3.
            let (mut term, mut sum, mut n) = (a, a, 0.0);
            while term.abs() > 1e-17 {
                n += 1.0;
                term *= -a * a / n;
                sum += term / (2.0 * n + 1.0);
            }
            sum * 2.0 / std::f64::consts::PI.sqrt()
        } else {
            // erfc by its continued fraction, evaluated from the tail.
            let mut fraction = 0.0;
            for k in (1..60).rev() {
                fraction = f64::from(k) / 2.0 / (a + fraction);
            }
            1.0 - (-a * a).exp() / std::f64::consts::PI.sqrt() / (a + fraction)
        };
        value.copysign(x)
    }
}
