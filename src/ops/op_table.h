#pragma once
// The op-traits table: every operation Locus has, one line each. See Note [Op table].
//
// Note [Op table]
// Each line names an op (its OpId and its public name, an identifier) and says what it means: its dtype rule
// (src/ops/dtype_rules.h), and for the elementwise ops its derivative. The functor that computes
// an elementwise op is `fn::<Id>` in src/ops/functors.h, so the table line, the functor and the
// test are all an op needs: the OpId, the kernel-table entries of every backend, the CUDA
// kernels' op switch, the public function's definition and the recorded backward are all
// generated from these lines. A table is consumed by defining X (and G for derivatives) before
// expanding it; nvcc expands only the first columns, so the derivative expressions, which use
// Tensor, are never seen by device code.
//
// Derivative columns are C++ expressions evaluated in backward with
//   g      the gradient of the output (in the output's dtype)
//   x, y   unary: the input (cast to the output's dtype) and the output
//   a, b   binary: the inputs (cast to the output's dtype; b is a 0-dim tensor for a scalar)
//   alpha  add/sub's Scalar, and lo, hi: clamp's optional bounds
//   s      unary: every scalar parameter of the call (ElementwiseScalars: elu's alpha, softplus's
//          beta and threshold, hardtanh's bounds, ...)
// Each result is summed back to its input's shape and dtype. NO_GRAD marks an op whose result
// is never differentiable (bool outputs); wrap an expression that contains commas in parens.
// This file includes nothing: nvcc and the host compiler both expand it.

// Unary elementwise ops, each with a public function `Tensor name(const Tensor&)` generated
// from its line:   X(Id, name, DtypeRule, derivative)
#define LOCUS_PLAIN_UNARY_OPS(X)                                                        \
  X(Neg,        neg,          NoBool,       -g)                                       \
  X(Abs,        abs,          NoBool,       g * sign(x))                              \
  X(Sign,       sign,         Same,         zeros_like(g))                            \
  X(Exp,        exp,          Floating,     g * y)                                    \
  X(Expm1,      expm1,        Floating,     g * (y + 1))                              \
  X(Log,        log,          Floating,     g / x)                                    \
  X(Log1p,      log1p,        Floating,     g / (x + 1))                              \
  X(Sqrt,       sqrt,         Floating,     g / (y * 2))                              \
  X(Rsqrt,      rsqrt,        Floating,     g * y * y * y * -0.5)                     \
  X(Sin,        sin,          Floating,     g * cos(x))                               \
  X(Cos,        cos,          Floating,     -g * sin(x))                              \
  X(Tanh,       tanh,         Floating,     g * (1 - y * y))                          \
  X(Sigmoid,    sigmoid,      Floating,     g * y * (1 - y))                          \
  X(Erf,        erf,          Floating,     g * exp(-(x * x)) * 1.1283791670955126)    \
  X(Relu,       relu,         NoBool,       threshold_backward(g, y))                 \
  X(Gelu,       gelu,         FloatOnly,    gelu_backward(g, x))                   \
  X(Floor,      floor,        NoBool,       zeros_like(g))                            \
  X(Ceil,       ceil,         NoBool,       zeros_like(g))                            \
  X(Round,      round,        NoBool,       zeros_like(g))                            \
  X(Trunc,      trunc,        NoBool,       zeros_like(g))                            \
  X(LogicalNot, logical_not,  Logical,      NO_GRAD)                                  \
  X(Tan,        tan,          Floating,     g * (y * y + 1))                          \
  X(Sinh,       sinh,         Floating,     g * cosh(x))                              \
  X(Cosh,       cosh,         Floating,     g * sinh(x))                              \
  X(Asin,       asin,         Floating,     g * rsqrt(1 - x * x))                     \
  X(Acos,       acos,         Floating,     -g * rsqrt(1 - x * x))                    \
  X(Atan,       atan,         Floating,     g / (x * x + 1))                          \
  X(Log2,       log2,         Floating,     g / (x * 0.6931471805599453))             \
  X(Log10,      log10,        Floating,     g / (x * 2.302585092994046))              \
  X(Exp2,       exp2,         Floating,     g * y * 0.6931471805599453)               \
  X(Reciprocal, reciprocal,   Floating,     -g * (y * y))                             \
  X(Frac,       frac,         FloatOnly,    g)                                        \
  X(IsNan,      isnan,        Logical,      NO_GRAD)                                  \
  X(IsInf,      isinf,        Logical,      NO_GRAD)                                  \
  X(IsFinite,   isfinite,     Logical,      NO_GRAD)                                  \
  X(Silu,       silu,         FloatOnly,    silu_backward(g, x))                      \
  X(Mish,       mish,         FloatOnly,    mish_backward(g, x))                      \
  X(Hardsigmoid, hardsigmoid, FloatOnly,    hardsigmoid_backward(g, x))               \
  X(Hardswish,  hardswish,    FloatOnly,    hardswish_backward(g, x))                 \
  X(LogSigmoid, logsigmoid,   FloatOnly,    logsigmoid_backward(g, x))

// Unary ops with parameters, whose public functions are written by hand (same columns).
// Their scalars travel in ElementwiseScalars (src/ops/kernel_table.h) and fn::Params.
#define LOCUS_SPECIAL_UNARY_OPS(X)                                                      \
  X(Clamp,      clamp,        Bounds,       g * within_bounds(x, lo, hi))             \
  X(Square,     square,       NoBool,       g * x * 2)                                \
  X(NanToNum,   nan_to_num,   Same,         g * isfinite(x).to(g.dtype()))            \
  X(LeakyRelu,  leaky_relu,   FloatOnly,    leaky_relu_backward(g, x, s))             \
  X(Elu,        elu,          FloatOnly,    elu_backward(g, x, s))                    \
  X(Softplus,   softplus,     FloatOnly,    softplus_backward(g, x, s))               \
  X(Hardtanh,   hardtanh,     NoBool,       hardtanh_backward(g, x, s))               \
  X(GeluTanh,   gelu,         FloatOnly,    gelu_tanh_backward(g, x))

#define LOCUS_UNARY_OPS(X) LOCUS_PLAIN_UNARY_OPS(X) LOCUS_SPECIAL_UNARY_OPS(X)

// Binary elementwise ops with parameters (alpha, a rounding mode), public functions by hand:
//   X(Id, name, DtypeRule, derivative for a, derivative for b)
#define LOCUS_SPECIAL_BINARY_OPS(X)                                                                \
  X(Add,         add,           Same,     g,                        (g * alpha))                 \
  X(Sub,         sub,           NoBool,   g,                        (-(g * alpha)))              \
  X(Div,         div,           Floating, g / b,                    -g * y / b)                  \
  X(DivTrunc,    div,           NoBool,   zeros_like(g),            zeros_like(g))               \
  X(DivFloor,    div,           NoBool,   zeros_like(g),            zeros_like(g))               \
  X(ReluBackward, threshold_backward, NoBool, threshold_backward(g, b), zeros_like(g))  \
  X(GeluBackward, gelu_backward, Floating, gelu_backward(g, b), gelu_backward_x(g, a, b))

// Binary elementwise ops, each with public functions `name(Tensor, Tensor)` and
// `name(Tensor, Scalar)` generated from its line (same columns).
#define LOCUS_PLAIN_BINARY_OPS(X)                                                                  \
  X(Mul,         mul,           Same,     g * b,                    g * a)                       \
  X(FloorDivide, floor_divide,  NoBool,   not_differentiable("floor_divide"), not_differentiable("floor_divide")) \
  X(Remainder,   remainder,     NoBool,   g,                        -g * div(a, b, "floor"))     \
  X(Fmod,        fmod,          NoBool,   g,                        -g * div(a, b, "trunc"))     \
  X(Pow,         pow,           NoBool,   pow_backward_base(g, a, b, y), pow_backward_exponent(g, a, b, y)) \
  X(Maximum,     maximum,       Same,     (extremum_backward(g, a, b, true)),  (extremum_backward(g, b, a, true)))  \
  X(Minimum,     minimum,       Same,     (extremum_backward(g, a, b, false)), (extremum_backward(g, b, a, false))) \
  X(Eq,          eq,            Compare,  NO_GRAD,                  NO_GRAD)                     \
  X(Ne,          ne,            Compare,  NO_GRAD,                  NO_GRAD)                     \
  X(Lt,          lt,            Compare,  NO_GRAD,                  NO_GRAD)                     \
  X(Le,          le,            Compare,  NO_GRAD,                  NO_GRAD)                     \
  X(Gt,          gt,            Compare,  NO_GRAD,                  NO_GRAD)                     \
  X(Ge,          ge,            Compare,  NO_GRAD,                  NO_GRAD)                     \
  X(LogicalAnd,  logical_and,   Logical,  NO_GRAD,                  NO_GRAD)                     \
  X(LogicalOr,   logical_or,    Logical,  NO_GRAD,                  NO_GRAD)                     \
  X(LogicalXor,  logical_xor,   Logical,  NO_GRAD,                  NO_GRAD)                     \
  X(Atan2,       atan2,         Floating, g * b / (a * a + b * b),  -g * a / (a * a + b * b))    \
  X(Hypot,       hypot,         FloatOnly, g * a / y,               g * b / y)

#define LOCUS_BINARY_OPS(X) LOCUS_SPECIAL_BINARY_OPS(X) LOCUS_PLAIN_BINARY_OPS(X)

// What an elementwise op refuses beyond its dtype rule, checked by call() after the dtype rule
// (src/ops/elementwise_checks.cpp; an op without a line has none):   X(Id, check)
//   bool_alpha_and_operands  sub: no bool operand (PyTorch's message), alpha fitting the dtype
//   alpha_fits               add: a floating alpha only for floating results, bool only for bool
//   integer_exponent         pow: no negative integer power of an integer
//   nonzero_divisor          integer division: ZeroDivisionError, on host-readable devices
#define LOCUS_ELEMENTWISE_CHECKS(X)          \
  X(Add,         alpha_fits)                 \
  X(Sub,         bool_alpha_and_operands)    \
  X(Pow,         integer_exponent)           \
  X(DivTrunc,    nonzero_divisor)            \
  X(DivFloor,    nonzero_divisor)            \
  X(FloorDivide, nonzero_divisor)            \
  X(Remainder,   nonzero_divisor)            \
  X(Fmod,        nonzero_divisor)

// Reductions over a set of dims (all when none are given; keepdim keeps them as size 1), each
// a fold of a functor `fn::<Id>` of src/ops/reduce_functors.h shared by the CPU and CUDA
// kernels (sum and mean keep their own tuned loops). These have public functions by hand (their
// signatures differ: dtype=, p, correction, one dim):
//   X(Id, name, ReduceRule, Autocast, derivative)
// ReduceRule (src/ops/reduce_rules.h) gives the result dtype; Autocast is the CastPolicy under
// autocast. The derivative is an expression of
//   g   the output's gradient, x the input, y the output (both g and y with the reduced dims
//       kept as size 1, so they broadcast against x), in the output's dtype
//   n   the number of elements folded into each output (a double), red the reduced dims (a
//       Shape, for helpers that reduce again), p the norm's order, correction var/std's
#define LOCUS_SPECIAL_REDUCE_OPS(X)                                                                          \
  X(Sum,          sum,           Sum,       Float32, g)                                                     \
  X(Mean,         mean,          FloatOnly, Float32, g / n)                                                 \
  X(Prod,         prod,          SumLike,   Float32, prod_backward(g, x, y, red))                           \
  X(Norm,         norm,          FloatOnly, Float32, norm_backward(g, x, y, p, red))                        \
  X(Var,          var,           FloatOnly, Keep,    var_backward(g, x, red, correction))                   \
  X(Std,          std,           FloatOnly, Keep,    var_backward(g / (y * 2), x, red, correction))         \
  X(Any,          any,           AnyAll,    Keep,    NO_GRAD)                                               \
  X(All,          all,           AnyAll,    Keep,    NO_GRAD)                                               \
  X(CountNonzero, count_nonzero, Int64,     Keep,    NO_GRAD)

// Reductions whose public functions `name(x, dims = {}, keepdim)`, `name(x, dim, keepdim)` and
// the Tensor methods of the same spelling are generated from the line (same columns).
#define LOCUS_PLAIN_REDUCE_OPS(X)                                                                            \
  X(Amax,         amax,          Same,      Keep,    g * evenly_among_equal(x, y, red))                     \
  X(Amin,         amin,          Same,      Keep,    g * evenly_among_equal(x, y, red))                     \
  X(Logsumexp,    logsumexp,     Floating,  Keep,    g * exp(x - y))

#define LOCUS_REDUCE_OPS(X) LOCUS_SPECIAL_REDUCE_OPS(X) LOCUS_PLAIN_REDUCE_OPS(X)

// The other elementwise ops (where, copy, fill) and the structured ops, with their kernel
// family and their public name as a string:   X(Id, "name", Family)
#define LOCUS_OTHER_OPS(X)                           \
  X(Where,        "where",         Elementwise)     \
  X(Copy,         "copy_",         Elementwise)     \
  X(Fill,         "fill_",         Elementwise)     \
  X(Max,          "max",           Reduce)          \
  X(Min,          "min",           Reduce)          \
  X(Argmax,       "argmax",        Reduce)          \
  X(Argmin,       "argmin",        Reduce)          \
  X(Softmax,      "softmax",       Softmax)         \
  X(LogSoftmax,   "log_softmax",   Softmax)         \
  X(Matmul,       "matmul",        Matmul)          \
  X(Linear,       "linear",        Composite)       \
  X(Sort,         "sort",          Sort)            \
  X(Topk,         "topk",          Sort)            \
  X(Cumsum,       "cumsum",        Scan)            \
  X(Cumprod,      "cumprod",       Scan)            \
  X(IndexSelect,  "index_select",  Index)           \
  X(Gather,       "gather",        Index)           \
  X(Rand,         "rand",          Random)          \
  X(Randn,        "randn",         Random)          \
  X(Randint,      "randint",       Random)          \
  X(Arange,       "arange",        Random)          \
  X(UnscaleGrads, "unscale_",      Unscale)         \
  X(OptimizerStep, "optimizer_step", Composite)    \
  X(Cat,          "cat",           Composite)       \
  X(Stack,        "stack",         Composite)       \
  X(CrossEntropy, "cross_entropy", Composite)       \
  X(NllLoss,      "nll_loss",      Composite)       \
  X(MseLoss,      "mse_loss",      Composite)       \
  X(Scatter,      "scatter",       Index)           \
  X(ScatterAdd,   "scatter_add",   Index)           \
  X(IndexAdd,     "index_add",     Index)           \
  X(MaskedFill,   "masked_fill",   Composite)       \
  X(MaskedSelect, "masked_select", Composite)       \
  X(MaskedScatter, "masked_scatter", Composite)     \
  X(TakeAlongDim, "take_along_dim", Composite)      \
  X(TensorIndex,  "index",         Composite)       \
  X(IndexPut,     "index_put_",    Composite)       \
  X(Im2col,       "unfold",        Im2col)          \
  X(Col2im,       "fold",          Im2col)          \
  X(MaxPool2d,    "max_pool2d",    Im2col)          \
  X(MaxPool2dBackward, "max_pool2d_backward", Im2col) \
  X(Convolution,  "convolution",   Composite)       \
  X(GroupNorm,    "group_norm",    Composite)       \
  X(BatchNorm,    "batch_norm",    Composite)       \
  X(LayerNorm,    "layer_norm",    Composite)       \
  X(RmsNorm,      "rms_norm",      Composite)       \
  X(LstmCell,     "lstm_cell",     Composite)       \
  X(GruCell,      "gru_cell",      Composite)       \
  X(Recurrence,   "rnn",           Composite)       \
  X(ScaledDotProductAttention, "scaled_dot_product_attention", Composite)
