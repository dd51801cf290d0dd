#pragma once
// What an elementwise op refuses beyond its dtype rule: the op table's LOCUS_ELEMENTWISE_CHECKS
// column, run by call() (Note [Op path]) so that no op's rule sits inside the path itself.

#include "locus/device.h"
#include "locus/tensor.h"
#include "src/ops/dtype_rules.h"
#include "src/ops/kernel_table.h"

namespace locus::ops {

/// What a check sees of a call: its tensor inputs, its scalars, the dtypes its dtype rule chose
/// and the device it runs on.
struct CheckedCall {
  OpId op;
  const Tensor* const* inputs;
  int ninputs;
  const ElementwiseScalars& scalars;
  ElementwiseDtypes dtypes;
  Device device;
};

/// The checks, by the names the op table's lines use: each throws the typed error PyTorch
/// raises, or returns.
void bool_alpha_and_operands(const CheckedCall& call);
void integer_exponent(const CheckedCall& call);
void nonzero_divisor(const CheckedCall& call);
/// Add's, inline: it runs on every add.
inline void alpha_fits(const CheckedCall& call);

/// Runs `op`'s check from LOCUS_ELEMENTWISE_CHECKS, if it has one. Inline, with the call's parts
/// as arguments: an op without a check costs one switch on the hot path, nothing is built.
inline void check_elementwise(OpId op, const Tensor* const* inputs, int ninputs, const ElementwiseScalars& scalars,
                              ElementwiseDtypes dtypes, Device device) {
  switch (op) {
#define LOCUS_CHECK_CASE(id, check)                                 \
  case OpId::id:                                                    \
    check(CheckedCall{op, inputs, ninputs, scalars, dtypes, device}); \
    break;
    LOCUS_ELEMENTWISE_CHECKS(LOCUS_CHECK_CASE)
#undef LOCUS_CHECK_CASE
    default: break;
  }
}

/// Sub's refusal of bool operands, also for a number first (`true - t`).
[[noreturn]] void refuse_bool_sub();
/// Add's and sub's refusal of an alpha the result's dtype cannot take.
[[noreturn]] void refuse_alpha(OpId op, bool floating);

inline void alpha_fits(const CheckedCall& c) {
  const Scalar& alpha = c.scalars.alpha;
  if (alpha.is_floating_point() && !is_floating_point(c.dtypes.compute)) refuse_alpha(c.op, true);
  if (alpha.is_bool() && c.dtypes.compute != DType::Bool) refuse_alpha(c.op, false);
}

}  // namespace locus::ops
