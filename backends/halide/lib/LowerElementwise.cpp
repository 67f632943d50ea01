//===- LowerElementwise.cpp - Elementwise ops as Halide -------------------===//
//
// Elementwise ops over NumPy-broadcast operands, all pointwise kernels: arithmetic, the
// exact (erf) GELU and the math functions (exp, tanh, sigmoid, ...), whose f32
// evaluations are here, and kiln.constant.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "llvm/ADT/TypeSwitch.h"
#include "llvm/ADT/bit.h"

#include <cmath>

using namespace mlir;
using namespace kiln;
using namespace kiln::halide_backend;

namespace {

/// An elementwise op of broadcast operands named `names`, as its own kernel.
KernelAlgorithm lowerPointwise(Operation *op, const std::vector<std::string> &names) {
  KernelInputs inputs;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    inputs.emplace_back(makeInput(op->getOperand(i), names[i]),
                        extentsOf(tensorType(op->getOperand(i))));
  auto value = [&](const std::vector<Var> &vars) {
    std::vector<Expr> values;
    for (const auto &[input, extents] : inputs)
      values.push_back(input(broadcastIndex(extents, vars)));
    return pointwiseFormula(op)(values);
  };
  return lowerPointwiseKernel(tensorType(op->getResult(0)), inputs, value);
}

//===----------------------------------------------------------------------===//
// GELU
//===----------------------------------------------------------------------===//

Expr horner(llvm::ArrayRef<float> coefficients, const Expr &u) {
  Expr r = coefficients.back();
  for (float c : llvm::reverse(coefficients.drop_back()))
    r = r * u + c;
  return r;
}

/// H(u) ~ 0.5 erfc(z / sqrt(2)) exp(z^2 / 2) with u = 1 / (1 + 0.3 z), z in [0, 14]: a
/// relative-weighted least-squares fit against mpmath (4e-9 in double), rounded to f32,
/// by test/unit/halide/gelu_coefficients.py, which also checks the whole evaluation
/// below in f32.
constexpr float kTailScale = 0.3f;
constexpr float kTailCoefficients[] = {1.89187105e-07f, 0.119683102f,  0.119599484f,
                                       0.110125959f,    0.0786082223f, 0.096052818f,
                                       -0.0799114853f,  0.192977116f,  -0.2294586f,
                                       0.113083877f,    -0.0207606684f};
/// ln 2 in two parts, the first with 16 significant bits so that k ln2High is exact for
/// the |k| <= 185 that occur here.
constexpr float kLn2High = 0.693145751953125f, kLn2Low = 1.42860677e-06f;

/// exp(a - d) for an exact a in [-128, 0] and a small d >= 0, to ~2 ulps: the range
/// reduction a = k ln2 + r (|r| <= ln2 / 2) of Halide's exp, with d folded into the
/// reduced argument, whose Taylor series to r^8 is accurate to 1e-9 on [-0.41, 0.35].
/// Written out rather than Halide::exp(a) * exp(-d): under fast-math reassociation
/// LLVM merged the computation of a into exp's reduction, which lost its extra
/// precision (exp(-47.11) came out 2e-6 off, not 1e-7), and strict_float around exp
/// cost 35% of the kernel (no FMAs, its constants spilled). Here only the two
/// subtractions of the reduction are strict.
Expr expOfExact(const Expr &a, const Expr &d) {
  Expr k = Halide::round(a * 1.44269504f);
  // strict_float: reassociated, the two subtractions would fold into a - k ln2.
  Expr r = Halide::strict_float((a - k * kLn2High) - k * kLn2Low) - d;
  Expr sum = 1.0f / 40320;
  for (int n = 7; n >= 0; --n)
    sum = sum * r + 1.0f / static_cast<float>(std::tgamma(n + 1.0));
  Expr exponent = Halide::cast<int>(k);
  Expr scale = Halide::reinterpret(Halide::Float(32), (exponent + 127) << 23);
  // Below 2^-126 the scale is no float: the result is 0 (Phi(-13.2) ~ 1e-39).
  return Halide::select(exponent < -126, 0.0f, sum * scale);
}

/// GELU(x) = x Phi(x), with Phi(x) = 0.5 erfc(-x / sqrt(2)), in f32 to 4e-7 relative
/// (~6 ulps) at every x in [-10, 10] (LowerLayersTest's GeluSweepRelativeError
/// measures it against erfc in double). Halide 14's erf() would not do: it is itself
/// 4.5e-7 off, and 1 + erf(x / sqrt(2)) cancels for negative x (measured with it:
/// 1.3e-5 relative at x = -3, every digit lost by x = -5.5). So the kernel evaluates
/// the tail T = Phi(-|x|) = exp(-x^2 / 2) H(1 / (1 + 0.3 |x|)) at every x (H is smooth
/// on [0, 14], 1/2 at 0) and returns x T for negative x, x (1 - T) for positive x;
/// neither cancels. exp(-x^2 / 2) would lose accuracy through the rounding of x^2
/// (3e-6 relative at x = 10), so x = h + l with h keeping 12 significant bits: h^2 / 2
/// is exact, and exp(-x^2 / 2) = exp(-h^2 / 2 - (x - h)(x + h) / 2). Per 16 elements:
/// one division, ~25 FMAs, no branch; 1T [8, 128, 2048] in 1.33 ms (12.6 GB/s,
/// compute bound) where Halide's erf() form takes 0.96 ms.
Expr geluExact(Expr x) {
  // |x| clamped to 16 (Phi(-16) is 0 in f32), so that no intermediate overflows for a
  // finite x: with Halide's no-infinities fast-math flags an infinite intermediate is
  // poison (x = 1e30 gave NaN without the clamp).
  Expr z = Halide::min(Halide::abs(x), 16.0f);
  Expr u = 1.0f / (1.0f + kTailScale * z);
  Expr high = Halide::reinterpret(
      Halide::Float(32), Halide::reinterpret(Halide::UInt(32), z) &
                             Halide::Internal::make_const(Halide::UInt(32), 0xfffff000u));
  Expr rest = (z - high) * (z + high);
  Expr gauss = expOfExact((high * high) * -0.5f, rest * 0.5f);
  Expr tail = gauss * horner(kTailCoefficients, u);
  return x * Halide::select(x < 0.0f, tail, 1.0f - tail);
}

//===----------------------------------------------------------------------===//
// Math functions
//===----------------------------------------------------------------------===//

// Halide compiles float arithmetic with fast-math flags that assume no infinities, so
// the formulas below keep every intermediate finite for a finite x. exp and log are
// Halide's (3.3e-7 and 2e-7 relative at worst: LowerMathTest); fast_exp and fast_log
// are ~1e-5 relative off, too far from the interpreter.

/// 1 / (1 + e^-x) from e^-|x|, which cannot overflow: e / (1 + e) for negative x, so
/// that sigmoid(-100) is 3.7e-44, not 1 / inf.
Expr sigmoid(const Expr &x) {
  Expr e = Halide::exp(-Halide::abs(x));
  Expr s = 1.0f / (1.0f + e);
  return Halide::select(x < 0.0f, e * s, s);
}

/// tanh(x) = sign(x) (1 - e) / (1 + e) with e = e^-2|x|, which cannot overflow; below
/// |x| = 0.4, where 1 - e would cancel, the Taylor series to x^13 (truncation < 1e-8).
/// Halide's tanh() is a scalar libm call: [8, 128, 2048] took 28 ms of CPU (1T) against
/// 0.78 ms for the sigmoid.
Expr tanhOf(const Expr &x) {
  Expr a = Halide::abs(x), x2 = x * x;
  Expr e = Halide::exp(-2.0f * a);
  Expr large = (1.0f - e) / (1.0f + e);
  Expr series = 21844.0f / 6081075;
  for (float c : {-1382.0f / 155925, 62.0f / 2835, -17.0f / 315, 2.0f / 15, -1.0f / 3})
    series = series * x2 + c;
  return Halide::select(a < 0.4f, x + x * x2 * series,
                        Halide::select(x < 0.0f, -large, large));
}

/// 0.5 x (1 + tanh(u)) written as x sigmoid(2u): 1 + tanh(u) cancels for negative x
/// (every digit by x = -5), the sigmoid does not. x is clamped to +-100 inside u only,
/// where sigmoid(2u) is already 0 or 1, so that x^3 stays finite.
Expr geluTanh(const Expr &x) {
  Expr c = Halide::clamp(x, -100.0f, 100.0f);
  Expr u = 0.7978845608f * (c + 0.044715f * c * c * c);
  return x * sigmoid(2.0f * u);
}

/// x^exponent; the exponents models write become exact arithmetic (x^2 of a variance,
/// x^-0.5 of a norm). Others are computed in f64 and rounded once: Halide's f32 pow was
/// 1.3e-6 relative off (LowerMathTest), its f64 one is far below f32's rounding; an
/// integer exponent is repeated multiplication, which also takes negative bases.
PointwiseFormula power(float exponent) {
  if (exponent == 1.0f)
    return [](const std::vector<Expr> &v) { return v[0]; };
  if (exponent == 2.0f)
    return [](const std::vector<Expr> &v) { return v[0] * v[0]; };
  if (exponent == 0.5f)
    return [](const std::vector<Expr> &v) { return Halide::sqrt(v[0]); };
  if (exponent == -0.5f)
    return [](const std::vector<Expr> &v) { return 1.0f / Halide::sqrt(v[0]); };
  if (exponent == std::trunc(exponent) && std::abs(exponent) <= 64) {
    int n = static_cast<int>(exponent);
    return [n](const std::vector<Expr> &v) {
      return Halide::cast<float>(Halide::pow(Halide::cast<double>(v[0]), n));
    };
  }
  return [exponent](const std::vector<Expr> &v) {
    return Halide::cast<float>(
        Halide::pow(Halide::cast<double>(v[0]), Expr(static_cast<double>(exponent))));
  };
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

/// The constant's values compiled into the kernel: a splat as one value (from its
/// bits, so that an infinite splat survives the fast-math flags), anything else as a
/// table baked into the object, as lowerSinusoid's frequencies. Scheduled as any
/// pointwise kernel; kiln-fuse-attention and the canonicalizer consume the splats that
/// models write (1 / sqrt(d_k)), so what reaches here is rare and small.
KernelAlgorithm lowerConstant(ConstantOp op) {
  RankedTensorType type = tensorType(op.result());
  Extents extents = extentsOf(type);
  std::vector<Halide::Var> vars = makeVars(type.getRank());
  Func output("result");
  auto values = op.value().getValues<float>();
  if (op.value().isSplat()) {
    output(vars) = floatBits(llvm::bit_cast<int32_t>(*values.begin()));
  } else {
    std::vector<int> sizes(extents.begin(), extents.end());
    Halide::Buffer<float> table(sizes, "constant_values");
    // Halide's dimension 0 is the tensor's last: the buffer's dense storage is the
    // attribute's row-major order.
    float *data = table.data();
    for (float value : values)
      *data++ = value;
    output(vars) = table(asExprs(vars));
  }
  constrainLayout(output.output_buffer(), extents);
  return {{}, {PointwiseKernel{output, vars, extents}}};
}

} // namespace

KernelAlgorithm kiln::halide_backend::lowerPointwiseKernel(
    RankedTensorType resultType, const KernelInputs &inputs,
    const std::function<Expr(const std::vector<Var> &)> &value) {
  PointwiseKernel kernel;
  kernel.extents = extentsOf(resultType);
  kernel.vars = makeVars(resultType.getRank());
  kernel.output = Func("result");
  kernel.output(kernel.vars) = value(kernel.vars);
  OutputImageParam out = kernel.output.output_buffer();
  constrainLayout(out, kernel.extents);
  ExtentSource sources{inputs};
  for (int d = 0; d < resultType.getRank(); ++d) {
    llvm::SmallVector<int> dims;
    for (const auto &operand : sources.operands)
      dims.push_back(d < static_cast<int>(operand.second.size()) ? d : -1);
    sources.tie(out, d, kernel.extents[d], dims);
  }
  KernelAlgorithm lowered;
  for (const auto &input : inputs)
    lowered.inputs.push_back(input.first);
  lowered.stages = {kernel};
  return lowered;
}

PointwiseFormula kiln::halide_backend::pointwiseFormula(Operation *op) {
  using Values = const std::vector<Expr> &;
  return llvm::TypeSwitch<Operation *, PointwiseFormula>(op)
      .Case<AddOp>([](AddOp) { return [](Values v) { return v[0] + v[1]; }; })
      .Case<SubOp>([](SubOp) { return [](Values v) { return v[0] - v[1]; }; })
      .Case<MulOp>([](MulOp) { return [](Values v) { return v[0] * v[1]; }; })
      .Case<DivOp>([](DivOp) { return [](Values v) { return v[0] / v[1]; }; })
      .Case<WhereOp>([](WhereOp) {
        // The i1 condition is held as i32 (see halideType).
        return [](Values v) { return Halide::select(v[0] != 0, v[1], v[2]); };
      })
      .Case<CastOp>([](CastOp op) -> PointwiseFormula {
        // Halide's float-to-int cast truncates toward zero, as kiln.cast does.
        Halide::Type to = halideType(tensorType(op.result()));
        return [to](Values v) { return Halide::cast(to, v[0]); };
      })
      .Case<MaskedFillOp>([](MaskedFillOp op) -> PointwiseFormula {
        // The fill value may be -inf: written as its bits (see floatBits).
        Expr fill =
            floatBits(static_cast<int32_t>(op.value().bitcastToAPInt().getZExtValue()));
        return [fill](Values v) { return Halide::select(v[1] != 0, fill, v[0]); };
      })
      .Case<ScaleOp>([](ScaleOp op) -> PointwiseFormula {
        Expr factor = op.factor().convertToFloat();
        return [factor](Values v) { return v[0] * factor; };
      })
      .Case<ReluOp>(
          [](ReluOp) { return [](Values v) { return Halide::max(v[0], 0.0f); }; })
      .Case<GeluOp>([](GeluOp) { return [](Values v) { return geluExact(v[0]); }; })
      .Case<TanhOp>([](TanhOp) { return [](Values v) { return tanhOf(v[0]); }; })
      .Case<GeluTanhOp>(
          [](GeluTanhOp) { return [](Values v) { return geluTanh(v[0]); }; })
      .Case<SiluOp>([](SiluOp) { return [](Values v) { return v[0] * sigmoid(v[0]); }; })
      .Case<RsqrtOp>(
          [](RsqrtOp) { return [](Values v) { return 1.0f / Halide::sqrt(v[0]); }; })
      .Case<ExpOp>([](ExpOp) { return [](Values v) { return Halide::exp(v[0]); }; })
      .Case<NegOp>([](NegOp) { return [](Values v) { return -v[0]; }; })
      .Case<LogOp>([](LogOp) { return [](Values v) { return Halide::log(v[0]); }; })
      .Case<SigmoidOp>([](SigmoidOp) { return [](Values v) { return sigmoid(v[0]); }; })
      .Case<SqrtOp>([](SqrtOp) { return [](Values v) { return Halide::sqrt(v[0]); }; })
      .Case<PowOp>([](PowOp op) { return power(op.exponent().convertToFloat()); })
      .Default([](Operation *) { return nullptr; });
}

void kiln::halide_backend::populateElementwiseLowerings(LoweringTable &table) {
  auto binary = [](Operation *op) { return lowerPointwise(op, {"lhs", "rhs"}); };
  auto unary = [](Operation *op) { return lowerPointwise(op, {"input"}); };
  table.add<AddOp>(binary);
  table.add<SubOp>(binary);
  table.add<MulOp>(binary);
  table.add<DivOp>(binary);
  table.add<WhereOp>([](WhereOp op) {
    return lowerPointwise(op, {"condition", "on_true", "on_false"});
  });
  table.add<CastOp>(unary);
  table.add<MaskedFillOp>(
      [](MaskedFillOp op) {
        return lowerPointwise(op, {"input", "mask"});
      },
      [](MaskedFillOp op, llvm::raw_ostream &os) {
        os << "{value=" << op.valueAttr() << "}";
      });
  table.add<ScaleOp>(unary, [](ScaleOp op, llvm::raw_ostream &os) {
    os << "{factor=" << op.factorAttr() << "}";
  });
  table.add<ReluOp>(unary);
  table.add<GeluOp>(unary);
  table.add<TanhOp>(unary);
  table.add<GeluTanhOp>(unary);
  table.add<SiluOp>(unary);
  table.add<RsqrtOp>(unary);
  table.add<ExpOp>(unary);
  table.add<NegOp>(unary);
  table.add<LogOp>(unary);
  table.add<SigmoidOp>(unary);
  table.add<SqrtOp>(unary);
  table.add<PowOp>(unary, [](PowOp op, llvm::raw_ostream &os) {
    os << "{exponent=" << op.exponentAttr() << "}";
  });
  table.add<ConstantOp>(lowerConstant, [](ConstantOp op, llvm::raw_ostream &os) {
    os << "{value=" << op.value() << "}";
  });
}
