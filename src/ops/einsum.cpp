// einsum, planned as products (Note [Einsum plan]).
//
// Note [Einsum plan]
// PyTorch 1.13's algorithm, without opt_einsum:
//  1. Parse the equation into label lists (52 letters, uppercase first, and the ellipsis) and
//     check them against the operands; the implicit output is the ellipsis dims, then every
//     label used exactly once, in label order.
//  2. Give every operand the same T dims: the output dims in output order, then the other labels.
//     A label repeated within one operand becomes its diagonal (a strided view); a dim an
//     operand lacks is a size-1 dim (a view). Sizes must match or be 1 (broadcasting).
//  3. Sum every non-output dim that only one operand has, in that operand.
//  4. Contract left to right: the running result with the next operand, summing the non-output
//     dims no later operand has. Each pair is one bmm: dims both have (size > 1) that stay are
//     the batch, dims only the left has are m, only the right has are n, dims summed in both are
//     k. Both sides are permuted and reshaped into [batch, m, k] and [batch, k, n]; the result
//     is reshaped and permuted back to the T dims, the summed ones left at size 1.
//  5. The output is the first dims of the result.
// Every step is a view, a reshape, a sum or a bmm, so gradients come from those ops' autograd.

#include <algorithm>
#include <cctype>
#include <optional>
#include <span>

#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/ops.h"
#include "locus/products.h"
#include "src/autograd/derivatives.h"
#include "src/autograd/node.h"
#include "src/ops/public_op.h"

namespace locus {
namespace {

using ops::OpId;

constexpr int kLabels = 52;
constexpr int kEllipsis = -1;

int label_index(char c) { return std::isupper(static_cast<unsigned char>(c)) ? c - 'A' : 26 + (c - 'a'); }
char label_char(int i) { return static_cast<char>(i < 26 ? 'A' + i : 'a' + (i - 26)); }
bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

[[noreturn]] void fail(const std::string& what) { throw ValueError(detail::error_prefix("einsum") + "einsum(): " + what); }
[[noreturn]] void fail_shape(const std::string& what) {
  throw ShapeError(detail::error_prefix("einsum") + "einsum(): " + what);
}

struct Equation {
  std::vector<std::vector<int>> inputs;  // label indices, kEllipsis for "..."
  std::optional<std::vector<int>> output;
};

// The subscripts between `begin` and `end` of `eq`, split at commas (the output has none).
// Positions in errors count from the start of the whole equation, as PyTorch's do.
std::vector<std::vector<int>> parse_terms(std::string_view eq, size_t begin, size_t end, bool output,
                                          size_t noperands) {
  std::vector<std::vector<int>> terms(1);
  bool ellipsis = false;
  for (size_t i = begin; i < end; ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    const std::string who = output ? "output" : "operand " + std::to_string(terms.size() - 1);
    if (c == '.') {
      if (ellipsis) fail("found '.' for " + who + (output ? " but an ellipsis (...) was already found" : " for which an ellipsis was already found"));
      if (i + 2 >= end || eq[i + 1] != '.' || eq[i + 2] != '.')
        fail("found '.' for " + who + (output ? " that is not part of any ellipsis (...)" : " that is not part of any ellipsis"));
      terms.back().push_back(kEllipsis);
      ellipsis = true;
      i += 2;
    } else if (c == ',' && !output) {
      if (terms.size() >= noperands) fail("fewer operands were provided than specified in the equation");
      terms.emplace_back();
      ellipsis = false;
    } else if (is_label(c)) {
      terms.back().push_back(label_index(c));
    } else {
      fail("invalid subscript given at index " + std::to_string(i) +
           " in the equation string, subscripts must be in [a-zA-Z]");
    }
  }
  return terms;
}

Equation parse(std::string_view eq, const std::vector<Tensor>& tensors) {
  Equation e;
  const size_t arrow = eq.find("->");
  const size_t lhs_end = arrow == std::string_view::npos ? eq.size() : arrow;
  e.inputs = parse_terms(eq, 0, lhs_end, false, tensors.size());
  if (e.inputs.size() < tensors.size()) fail("more operands were provided than specified in the equation");
  for (size_t k = 0; k < tensors.size(); ++k) {
    const auto& labels = e.inputs[k];
    const bool has_ellipsis = std::find(labels.begin(), labels.end(), kEllipsis) != labels.end();
    const int64_t named = static_cast<int64_t>(labels.size()) - (has_ellipsis ? 1 : 0);
    const int64_t ndim = tensors[k].dim();
    if (has_ellipsis ? named > ndim : named != ndim)
      fail_shape("the number of subscripts in the equation (" + std::to_string(named) +
                 (has_ellipsis ? ") is more than the number of dimensions (" : ") does not match the number of dimensions (") +
                 std::to_string(ndim) + ") for operand " + std::to_string(k) + (has_ellipsis ? "" : " and no ellipsis was given"));
  }
  if (arrow != std::string_view::npos) {
    std::vector<int> out = parse_terms(eq, arrow + 2, eq.size(), true, 1).front();
    bool seen[kLabels] = {};
    for (int l : out) {
      if (l == kEllipsis) continue;
      if (seen[l]) fail(std::string("output subscript ") + label_char(l) + " appears more than once in the output");
      seen[l] = true;
      bool used = false;
      for (const auto& in : e.inputs) used = used || std::find(in.begin(), in.end(), l) != in.end();
      if (!used) fail(std::string("output subscript ") + label_char(l) + " does not appear in the equation for any input operand");
    }
    e.output = std::move(out);
  }
  return e;
}

// The view of `base` whose dims of one label are merged into the first (the diagonal: strides
// add up); `dim_label` is the label of each of base's dims, kEllipsis for the ellipsis's.
Tensor diagonal_view(const Tensor& base, const std::vector<int>& dim_label, size_t operand) {
  Shape sizes, strides;
  int first[kLabels];
  std::fill(std::begin(first), std::end(first), -1);
  for (int64_t d = 0; d < base.dim(); ++d) {
    const int l = dim_label[static_cast<size_t>(d)];
    if (l != kEllipsis && first[l] >= 0) {
      const size_t at = static_cast<size_t>(first[l]);
      if (sizes[at] != base.size(d))
        fail_shape(std::string("subscript ") + label_char(l) + " is repeated for operand " + std::to_string(operand) +
                   " but the sizes don't match, " + std::to_string(base.size(d)) + " != " + std::to_string(sizes[at]));
      strides[at] += base.stride(d);
      continue;
    }
    if (l != kEllipsis) first[l] = static_cast<int>(sizes.size());
    sizes.push_back(base.size(d)), strides.push_back(base.stride(d));
  }
  return Tensor(detail::make_intrusive<detail::TensorImpl>(base.impl()->storage(), base.dtype(), std::move(sizes),
                                                           std::move(strides), base.storage_offset()));
}

// `t` with every label that repeats within it taken as a diagonal; `labels` then lists each
// label once, in place of its first occurrence.
Tensor take_diagonals(const Tensor& t, std::vector<int>& labels, size_t operand) {
  std::vector<int> dim_label, once;
  bool seen[kLabels] = {}, repeated = false;
  for (int l : labels) {
    if (l == kEllipsis) {
      dim_label.insert(dim_label.end(), static_cast<size_t>(t.dim()) - (labels.size() - 1), kEllipsis);
      once.push_back(l);
      continue;
    }
    dim_label.push_back(l);
    if (seen[l]) repeated = true;
    else once.push_back(l);
    seen[l] = true;
  }
  if (!repeated) return t;
  labels = once;
  Tensor view = diagonal_view(t, dim_label, operand);
  if (autograd::needs_grad({&t})) {
    // The gradient lands on the same diagonal of a zero tensor shaped like the operand.
    const Shape shape = t.shape();
    autograd::record_view("DiagonalBackward0", t, view, [shape, dim_label, operand](const Tensor& g) {
      Tensor z = zeros(shape, TensorOptions().dtype(g.dtype()).device(g.device()));
      diagonal_view(z, dim_label, operand).copy_(g);
      return z;
    });
  }
  return view;
}

// One pair of the contraction (Note [Einsum plan], step 4): left and right have the same T
// dims; `sum` marks the dims to sum. Returns T dims, the summed ones of size 1.
Tensor sumproduct_pair(Tensor left, Tensor right, const std::vector<bool>& sum) {
  const int64_t T = left.dim();
  Shape batch, lo, ro, summed, unit;
  for (int64_t d = 0; d < T; ++d) {
    const bool l = left.size(d) != 1, r = right.size(d) != 1;
    if (sum[static_cast<size_t>(d)]) {
      if (l && r) summed.push_back(d);
      else {
        if (l) left = left.sum(d, true);
        if (r) right = right.sum(d, true);
        unit.push_back(d);
      }
    } else if (l && r) {
      batch.push_back(d);
    } else if (l) {
      lo.push_back(d);
    } else if (r) {
      ro.push_back(d);
    } else {
      unit.push_back(d);
    }
  }
  const auto size_of = [](const Tensor& t, const Shape& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= t.size(d);
    return n;
  };
  const auto concat = [](std::initializer_list<const Shape*> parts) {
    Shape s;
    for (const Shape* p : parts)
      for (int64_t d : *p) s.push_back(d);
    return s;
  };
  const int64_t B = size_of(left, batch), M = size_of(left, lo), K = size_of(left, summed), N = size_of(right, ro);
  // The dims a side has at size 1 (the other side's m or n, the unit dims) ride along at its end.
  const auto permuted = [](const Tensor& t, const Shape& order) { return t.dim() > 1 ? t.permute(order) : t; };
  const Tensor l3 = permuted(left, concat({&batch, &lo, &summed, &ro, &unit})).reshape(Shape{B, M, K});
  const Tensor r3 = permuted(right, concat({&batch, &summed, &ro, &lo, &unit})).reshape(Shape{B, K, N});
  Tensor p = bmm(l3, r3);
  // Back to T dims: [batch, lo, ro, summed and unit at size 1], then the inverse permutation.
  Shape out_shape;
  for (int64_t d : batch) out_shape.push_back(left.size(d));
  for (int64_t d : lo) out_shape.push_back(left.size(d));
  for (int64_t d : ro) out_shape.push_back(right.size(d));
  for (size_t i = 0; i < summed.size() + unit.size(); ++i) out_shape.push_back(1);
  const Shape order = concat({&batch, &lo, &ro, &summed, &unit});
  Shape inverse(static_cast<size_t>(T), 0);
  for (size_t i = 0; i < order.size(); ++i) inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  return permuted(p.reshape(out_shape), inverse);
}

}  // namespace

Tensor einsum(std::string_view equation, const std::vector<Tensor>& tensors) {
  const ops::PublicOp op("einsum", {});
  if (tensors.empty()) fail("must provide at least one operand");
  ops::common_device(OpId::Matmul, tensors);  // one device for all, before any product runs
  Equation e = parse(equation, tensors);
  const size_t n = tensors.size();

  // The implicit output keeps the labels written once (a repeat within an operand counts).
  int written[kLabels] = {};
  for (const auto& in : e.inputs)
    for (int l : in)
      if (l != kEllipsis) ++written[l];

  // Step 2: diagonals, then every operand's labels; the ellipsis covers the most dims any has.
  std::vector<Tensor> operands(n);
  int64_t ell_dims = 0;
  for (size_t k = 0; k < n; ++k) {
    operands[k] = take_diagonals(tensors[k], e.inputs[k], k);
    const auto& labels = e.inputs[k];
    if (std::find(labels.begin(), labels.end(), kEllipsis) != labels.end())
      ell_dims = std::max<int64_t>(ell_dims, operands[k].dim() - static_cast<int64_t>(labels.size() - 1));
  }
  std::vector<int> output;
  if (e.output) {
    output = *e.output;
  } else {
    output.push_back(kEllipsis);
    for (int l = 0; l < kLabels; ++l)
      if (written[l] == 1) output.push_back(l);
  }
  // Global dim of each label and of each ellipsis dim: output first, then the rest.
  int label_dim[kLabels];
  std::fill(std::begin(label_dim), std::end(label_dim), -1);
  std::vector<int64_t> ell_dim(static_cast<size_t>(ell_dims), -1);
  int64_t T = 0;
  for (int l : output) {
    if (l == kEllipsis)
      for (int64_t j = 0; j < ell_dims; ++j) ell_dim[static_cast<size_t>(j)] = T++;
    else
      label_dim[l] = static_cast<int>(T++);
  }
  const int64_t out_ndim = T;
  for (int64_t j = 0; j < ell_dims; ++j)
    if (ell_dim[static_cast<size_t>(j)] < 0) ell_dim[static_cast<size_t>(j)] = T++;
  for (int l = 0; l < kLabels; ++l)
    if (written[l] && label_dim[l] < 0) label_dim[l] = static_cast<int>(T++);

  // Align every operand to the T dims; check sizes; note which operands have each dim.
  Shape size(static_cast<size_t>(T), 1);
  std::vector<std::vector<bool>> has(n, std::vector<bool>(static_cast<size_t>(T), false));
  for (size_t k = 0; k < n; ++k) {
    const Tensor& t = operands[k];
    const auto& labels = e.inputs[k];
    std::vector<int64_t> target;  // the global dim of each of t's dims
    for (int l : labels) {
      if (l != kEllipsis) {
        target.push_back(label_dim[l]);
        continue;
      }
      const int64_t covered = t.dim() - static_cast<int64_t>(labels.size() - 1);
      for (int64_t j = 0; j < covered; ++j) target.push_back(ell_dim[static_cast<size_t>(ell_dims - covered + j)]);
    }
    for (size_t d = 0; d < target.size(); ++d) {
      const size_t g = static_cast<size_t>(target[d]);
      const int64_t s = t.size(static_cast<int64_t>(d));
      has[k][g] = true;
      if (s == 1) continue;
      if (size[g] != 1 && size[g] != s) {
        int label = -1;
        for (int q = 0; q < kLabels; ++q)
          if (label_dim[q] == static_cast<int>(g)) label = q;
        if (label >= 0)
          fail_shape(std::string("subscript ") + label_char(label) + " has size " + std::to_string(s) + " for operand " +
                     std::to_string(k) + " which does not broadcast with previously seen size " + std::to_string(size[g]));
        const auto pos = std::find(ell_dim.begin(), ell_dim.end(), static_cast<int64_t>(g)) - ell_dim.begin();
        fail_shape("dimension " + std::to_string(pos) + " covered by ellipsis in operand " + std::to_string(k) + "has size " +
                   std::to_string(s) + " which does not broadcast with previously seen ellipsis with size " +
                   std::to_string(size[g]) + " for the respective dimension");
      }
      size[g] = s;
    }
    // Permute into global order, then insert the missing dims at size 1 (views both).
    Shape perm(target.size(), 0);
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return target[static_cast<size_t>(a)] < target[static_cast<size_t>(b)]; });
    Tensor aligned = t.dim() > 1 ? t.permute(perm) : t;
    for (int64_t g = 0; g < T; ++g)
      if (!has[k][static_cast<size_t>(g)]) aligned = aligned.unsqueeze(g);
    operands[k] = aligned;
  }

  // Step 3: dims only one operand has and the output lacks are summed there first.
  for (size_t k = 0; k < n; ++k) {
    Shape dims;
    for (int64_t g = out_ndim; g < T; ++g) {
      bool only = has[k][static_cast<size_t>(g)];
      for (size_t q = 0; q < n && only; ++q) only = q == k || !has[q][static_cast<size_t>(g)];
      if (only) dims.push_back(g);
    }
    if (!dims.empty()) operands[k] = operands[k].sum(dims, true);
    for (int64_t g : dims) has[k][static_cast<size_t>(g)] = false;
  }

  // Step 4: left to right.
  Tensor result = operands[0];
  for (size_t k = 1; k < n; ++k) {
    std::vector<bool> sum(static_cast<size_t>(T), false);
    for (int64_t g = out_ndim; g < T; ++g) {
      bool later = false;
      for (size_t q = k + 1; q < n; ++q) later = later || has[q][static_cast<size_t>(g)];
      sum[static_cast<size_t>(g)] = !later;
    }
    result = sumproduct_pair(result, operands[k], sum);
  }

  // Step 5: the non-output dims are size 1 now (summed, or never there).
  const Shape out_shape(std::span<const int64_t>(result.shape().data(), static_cast<size_t>(out_ndim)));
  return result.reshape(out_shape);
}

}  // namespace locus
