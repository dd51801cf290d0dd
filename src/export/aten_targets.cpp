// The exported graphs' targets Locus runs, each onto the Locus op of the same meaning, with
// PyTorch's defaults for the arguments a file leaves out (Note [Exported programs]).
//
// Note [Exported modes and devices]
// An export bakes in what the module was doing: `dropout(x, 0.25, train=True)`,
// `batch_norm(..., training=True, ...)`, sdpa's dropout_p, `add_(num_batches_tracked, 1)`, and
// the export-time device of factory ops (arange, full). The imported module decides them again
// at run time, as the Python module would: dropout and batch norm follow the module's train()/
// eval() (an eval-mode export keeps its dropout probabilities, so train() can use them), sdpa's
// dropout applies only in training, a buffer's counter update (num_batches_tracked) only in
// training as BatchNorm's, and factories create on the module's device.

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_map>

#include "locus/attention.h"
#include "locus/autograd.h"
#include "locus/elementwise.h"
#include "locus/errors.h"
#include "locus/factories.h"
#include "locus/nn/functional/pooling.h"
#include "locus/nn_ops.h"
#include "locus/products.h"
#include "locus/random.h"
#include "locus/ops.h"
#include "locus/shape_ops.h"
#include "src/export/interpreter.h"

namespace locus::exported {
namespace {

std::vector<Value> one(Tensor t) { return {Value(std::move(t))}; }

Shape shape_of(const std::vector<int64_t>& v) { return Shape(v); }

TensorOptions factory_options(const Call& c, DType fallback) {
  return TensorOptions().dtype(c.dtype("dtype").value_or(fallback)).device(c.context().device);
}

// A buffer's in-place counter update (num_batches_tracked += 1) is BatchNorm's, done in training
// only (Note [Exported modes and devices]).
bool is_skipped_counter_update(const Call& c) {
  if (c.context().training || !c.context().buffer_of_input) return false;
  const auto it = c.context().buffer_of_input->find(c.tensor_name("self"));
  return it != c.context().buffer_of_input->end() && it->second.ends_with("num_batches_tracked");
}

// b * alpha as a Python number: an int when both are, else a float.
Scalar scaled(const Scalar& b, const Scalar& alpha) {
  if (!b.is_floating_point() && !alpha.is_floating_point()) return Scalar(b.to_int64() * alpha.to_int64());
  return Scalar(b.to_double() * alpha.to_double());
}

Scalar alpha_of(const Call& c) { return c.has("alpha") ? c.scalar("alpha") : Scalar(1); }

// add_ and sub_: on a buffer (no grad) a plain update; on an activation in the graph (a
// residual `out += identity`) the in-place op autograd records (Note [In-place ops in the graph]).
Tensor in_place_add(const Call& c, bool subtract) {
  Tensor self = c.tensor("self");
  if (is_skipped_counter_update(c)) return self;
  if (c.is_tensor("other")) return subtract ? self.sub_(c.tensor("other"), alpha_of(c)) : self.add_(c.tensor("other"), alpha_of(c));
  const Scalar other = scaled(c.scalar("other"), alpha_of(c));
  return subtract ? self.sub_(other) : self.add_(other);
}

// add, sub, mul, div with a tensor or a number as `other` (a number joins as PyTorch's wrapped
// scalar: it does not widen the tensor's dtype).
template <class TensorOp, class ScalarOp>
Target binary(TensorOp on_tensor, ScalarOp on_scalar) {
  return [on_tensor, on_scalar](const Call& c) {
    const Tensor self = c.tensor("self");
    return one(c.is_tensor("other") ? on_tensor(c, self, c.tensor("other")) : on_scalar(c, self, c.scalar("other")));
  };
}

// The biased variance over `dims`, as the native norms save it.
Tensor var_of(const Tensor& x, const Shape& dims, bool keepdim = false) {
  return var(x, std::optional<Shape>(dims), std::optional<int64_t>(0), keepdim);
}

Shape all_dims(const Tensor& x) {
  Shape dims;
  for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

using Table = std::unordered_map<std::string, Target>;

void add_elementwise(Table& t) {
  t["torch.ops.aten.relu.default"] = [](const Call& c) { return one(relu(c.tensor("self"))); };
  t["torch.ops.aten.relu_.default"] = [](const Call& c) {
    Tensor self = c.tensor("self");
    return one(self.relu_());
  };
  t["torch.ops.aten.gelu.default"] = [](const Call& c) { return one(gelu(c.tensor("self"), c.text("approximate", "none"))); };
  t["torch.ops.aten.silu.default"] = [](const Call& c) { return one(silu(c.tensor("self"))); };
  t["torch.ops.aten.tanh.default"] = [](const Call& c) { return one(locus::tanh(c.tensor("self"))); };
  t["torch.ops.aten.sigmoid.default"] = [](const Call& c) { return one(sigmoid(c.tensor("self"))); };
  t["torch.ops.aten.add.Tensor"] = binary(
      [](const Call& c, const Tensor& a, const Tensor& b) { return add(a, b, alpha_of(c)); },
      [](const Call& c, const Tensor& a, const Scalar& b) { return add(a, scaled(b, alpha_of(c))); });
  t["torch.ops.aten.sub.Tensor"] = binary(
      [](const Call& c, const Tensor& a, const Tensor& b) { return sub(a, b, alpha_of(c)); },
      [](const Call& c, const Tensor& a, const Scalar& b) { return sub(a, scaled(b, alpha_of(c))); });
  t["torch.ops.aten.mul.Tensor"] = binary([](const Call&, const Tensor& a, const Tensor& b) { return mul(a, b); },
                                         [](const Call&, const Tensor& a, const Scalar& b) { return mul(a, b); });
  t["torch.ops.aten.div.Tensor"] = binary([](const Call&, const Tensor& a, const Tensor& b) { return div(a, b); },
                                         [](const Call&, const Tensor& a, const Scalar& b) { return div(a, b); });
  t["torch.ops.aten.add_.Tensor"] = [](const Call& c) { return one(in_place_add(c, false)); };
  t["torch.ops.aten.sub_.Tensor"] = [](const Call& c) { return one(in_place_add(c, true)); };
}

void add_layers(Table& t) {
  t["torch.ops.aten.linear.default"] = [](const Call& c) {
    return one(linear(c.tensor("input"), c.tensor("weight"), c.optional_tensor("bias")));
  };
  t["torch.ops.aten.conv2d.default"] = [](const Call& c) {
    return one(conv2d(c.tensor("input"), c.tensor("weight"), c.optional_tensor("bias"), shape_of(c.integers("stride", std::vector<int64_t>{1, 1})),
                      shape_of(c.integers("padding", std::vector<int64_t>{0, 0})), shape_of(c.integers("dilation", std::vector<int64_t>{1, 1})),
                      c.integer("groups", 1)));
  };
  t["torch.ops.aten.batch_norm.default"] = [](const Call& c) {
    // The module's mode decides between batch and running statistics (Note [Exported modes and devices]).
    const bool training = c.context().training || !c.optional_tensor("running_mean").defined();
    return one(batch_norm(c.tensor("input"), c.optional_tensor("weight"), c.optional_tensor("bias"),
                          c.optional_tensor("running_mean"), c.optional_tensor("running_var"), training,
                          c.real("momentum", 0.1), c.real("eps", 1e-5)));
  };
  t["torch.ops.aten.layer_norm.default"] = [](const Call& c) {
    return one(layer_norm(c.tensor("input"), shape_of(c.integers("normalized_shape")), c.optional_tensor("weight"),
                          c.optional_tensor("bias"), c.real("eps", 1e-5)));
  };
  t["torch.ops.aten.embedding.default"] = [](const Call& c) {
    return one(embedding(c.tensor("weight"), c.tensor("indices"), c.integer("padding_idx", -1)));
  };
  t["torch.ops.aten.dropout.default"] = [](const Call& c) {
    return one(dropout(c.tensor("input"), c.real("p"), c.context().training));
  };
  t["torch.ops.aten.max_pool2d.default"] = [](const Call& c) {
    return one(max_pool2d(c.tensor("self"), shape_of(c.integers("kernel_size")), shape_of(c.integers("stride", std::vector<int64_t>{})),
                          shape_of(c.integers("padding", std::vector<int64_t>{0, 0})), shape_of(c.integers("dilation", std::vector<int64_t>{1, 1})),
                          c.boolean("ceil_mode", false)));
  };
  t["torch.ops.aten.avg_pool2d.default"] = [](const Call& c) {
    return one(avg_pool2d(c.tensor("self"), shape_of(c.integers("kernel_size")), shape_of(c.integers("stride", std::vector<int64_t>{})),
                          shape_of(c.integers("padding", std::vector<int64_t>{0, 0})), c.boolean("ceil_mode", false),
                          c.boolean("count_include_pad", true), c.optional_integer("divisor_override")));
  };
  t["torch.ops.aten.adaptive_avg_pool2d.default"] = [](const Call& c) {
    return one(adaptive_avg_pool2d(c.tensor("self"), shape_of(c.integers("output_size"))));
  };
  t["torch.ops.aten.scaled_dot_product_attention.default"] = [](const Call& c) {
    if (c.boolean("enable_gqa", false)) c.fail("grouped-query attention (enable_gqa=True) is not supported");
    const double p = c.context().training ? c.real("dropout_p", 0.0) : 0.0;
    return one(scaled_dot_product_attention(c.tensor("query"), c.tensor("key"), c.tensor("value"),
                                            c.optional_tensor("attn_mask"), p, c.boolean("is_causal", false),
                                            c.optional_real("scale")));
  };
}

void add_shapes(Table& t) {
  // A view the exporter proved possible for PyTorch's strides may not be one for Locus's (sdpa's
  // output is [B, L, heads, E] in memory in PyTorch, so its transpose views as [B, L, heads * E]
  // without the .contiguous() the user wrote, which the export drops): reshape is the view where
  // the strides allow and a copy where they do not, the same values (docs/design.md).
  t["torch.ops.aten.view.default"] = [](const Call& c) { return one(c.tensor("self").reshape(shape_of(c.integers("size")))); };
  t["torch.ops.aten._unsafe_view.default"] = t["torch.ops.aten.view.default"];
  t["torch.ops.aten.reshape.default"] = [](const Call& c) {
    return one(c.tensor("self").reshape(shape_of(c.integers("shape"))));
  };
  t["torch.ops.aten.flatten.using_ints"] = [](const Call& c) {
    return one(c.tensor("self").flatten(c.integer("start_dim", 0), c.integer("end_dim", -1)));
  };
  t["torch.ops.aten.unflatten.int"] = [](const Call& c) {
    return one(unflatten(c.tensor("self"), c.integer("dim"), shape_of(c.integers("sizes"))));
  };
  t["torch.ops.aten.transpose.int"] = [](const Call& c) {
    return one(c.tensor("self").transpose(c.integer("dim0"), c.integer("dim1")));
  };
  t["torch.ops.aten.permute.default"] = [](const Call& c) { return one(c.tensor("self").permute(shape_of(c.integers("dims")))); };
  t["torch.ops.aten.contiguous.default"] = [](const Call& c) { return one(c.tensor("self").contiguous()); };
  t["torch.ops.aten.clone.default"] = [](const Call& c) { return one(c.tensor("self").clone()); };
  t["torch.ops.aten.alias.default"] = [](const Call& c) {
    const Tensor self = c.tensor("self");
    return one(self.view(self.shape()));
  };
  t["torch.ops.aten.unsqueeze.default"] = [](const Call& c) { return one(c.tensor("self").unsqueeze(c.integer("dim"))); };
  t["torch.ops.aten.squeeze.dim"] = [](const Call& c) { return one(c.tensor("self").squeeze(c.integer("dim"))); };
  t["torch.ops.aten.select.int"] = [](const Call& c) {
    return one(c.tensor("self").select(c.integer("dim"), c.integer("index")));
  };
  t["torch.ops.aten.slice.Tensor"] = [](const Call& c) {
    return one(c.tensor("self").slice(c.integer("dim", 0), c.optional_integer("start"), c.optional_integer("end"),
                                      c.integer("step", 1)));
  };
  t["torch.ops.aten.expand.default"] = [](const Call& c) { return one(c.tensor("self").expand(shape_of(c.integers("size")))); };
  t["torch.ops.aten.split.Tensor"] = [](const Call& c) {
    return std::vector<Value>{split(c.tensor("self"), c.integer("split_size"), c.integer("dim", 0))};
  };
  t["torch.ops.aten.split_with_sizes.default"] = [](const Call& c) {
    return std::vector<Value>{split(c.tensor("self"), c.integers("split_sizes"), c.integer("dim", 0))};
  };
  t["torch.ops.aten.triu.default"] = [](const Call& c) { return one(triu(c.tensor("self"), c.integer("diagonal", 0))); };
  t["torch.ops.aten.cat.default"] = [](const Call& c) { return one(cat(c.tensors("tensors"), c.integer("dim", 0))); };
  t["torch.ops.aten.sym_size.int"] = [](const Call& c) { return std::vector<Value>{c.tensor("self").size(c.integer("dim"))}; };
}

void add_factories(Table& t) {
  // The export-time device is replaced by the module's (Note [Exported modes and devices]).
  t["torch.ops.aten.arange.default"] = [](const Call& c) {
    return one(arange(c.scalar("end"), factory_options(c, DType::Int64)));
  };
  t["torch.ops.aten.arange.start"] = [](const Call& c) {
    return one(arange(c.scalar("start"), c.scalar("end"), 1, factory_options(c, DType::Int64)));
  };
  t["torch.ops.aten.arange.start_step"] = [](const Call& c) {
    return one(arange(c.scalar("start"), c.scalar("end"), c.has("step") ? c.scalar("step") : Scalar(1),
                      factory_options(c, DType::Int64)));
  };
  t["torch.ops.aten.full.default"] = [](const Call& c) {
    const Scalar value = c.scalar("fill_value");
    const DType inferred = value.is_floating_point() ? DType::Float32 : value.is_bool() ? DType::Bool : DType::Int64;
    return one(full(shape_of(c.integers("size")), value, factory_options(c, inferred)));
  };
}

// Python's operators on symbolic sizes (`B * T`) and getitem on a list result.
void add_operators(Table& t) {
  const auto arithmetic = [](int64_t (*f)(int64_t, int64_t)) {
    return [f](const Call& c) {
      std::vector<int64_t> args;
      for (const NamedArgument& a : c.node().inputs) args.push_back(c.integer(a.name.c_str()));
      if (args.size() != 2) c.fail("expects two integers");
      return std::vector<Value>{f(args[0], args[1])};
    };
  };
  t["_operator.mul"] = arithmetic([](int64_t a, int64_t b) { return a * b; });
  t["_operator.add"] = arithmetic([](int64_t a, int64_t b) { return a + b; });
  t["_operator.sub"] = arithmetic([](int64_t a, int64_t b) { return a - b; });
  t["_operator.floordiv"] = arithmetic([](int64_t a, int64_t b) {
    if (b == 0) throw ValueError("integer division by zero in a symbolic size");
    return static_cast<int64_t>(std::floor(static_cast<double>(a) / static_cast<double>(b)));
  });
}

// What a native norm returns for saved statistics nothing reads (PyTorch's no-training form
// returns such empty tensors too): computing them is a pass over the input.
Tensor none_like(const Tensor& input) { return empty({0}, TensorOptions().dtype(input.dtype()).device(input.device())); }

// The core-ATen form's targets (run_decompositions()): the decomposed products, the native
// norms and dropout with their extra outputs, and the comparisons and masks the decomposed
// attention builds.
void add_core(Table& t) {
  t["torch.ops.aten.addmm.default"] = [](const Call& c) {
    return one(addmm(c.tensor("self"), c.tensor("mat1"), c.tensor("mat2"), c.has("beta") ? c.scalar("beta") : Scalar(1),
                     c.has("alpha") ? c.scalar("alpha") : Scalar(1)));
  };
  t["torch.ops.aten.mm.default"] = [](const Call& c) { return one(mm(c.tensor("self"), c.tensor("mat2"))); };
  t["torch.ops.aten.bmm.default"] = [](const Call& c) { return one(bmm(c.tensor("self"), c.tensor("mat2"))); };
  t["torch.ops.aten.convolution.default"] = [](const Call& c) {
    const Tensor input = c.tensor("input"), weight = c.tensor("weight"), bias = c.optional_tensor("bias");
    const Shape stride = shape_of(c.integers("stride")), padding = shape_of(c.integers("padding")),
                dilation = shape_of(c.integers("dilation"));
    const int64_t groups = c.integer("groups", 1);
    if (c.boolean("transposed", false)) {
      if (weight.dim() != 4) c.fail("a transposed convolution of other than 2 spatial dims");
      return one(conv_transpose2d(input, weight, bias, stride, padding, shape_of(c.integers("output_padding")), groups, dilation));
    }
    if (weight.dim() == 3) return one(conv1d(input, weight, bias, stride, padding, dilation, groups));
    if (weight.dim() != 4) c.fail("a convolution of " + std::to_string(weight.dim() - 2) + " spatial dims");
    return one(conv2d(input, weight, bias, stride, padding, dilation, groups));
  };
  // The functional batch norm returns the new running statistics, which the signature writes
  // back into the buffers; the statistics it saves for a backward are the batch's.
  t["torch.ops.aten._native_batch_norm_legit_functional.default"] = [](const Call& c) {
    const Tensor input = c.tensor("input");
    Tensor mean, var;
    {
      NoGradGuard no_grad;
      mean = c.tensor("running_mean").clone(), var = c.tensor("running_var").clone();
    }
    const double eps = c.real("eps");
    const Tensor out = batch_norm(input, c.optional_tensor("weight"), c.optional_tensor("bias"), mean, var,
                                  c.context().training, c.real("momentum"), eps);
    if (!c.output_read(1) && !c.output_read(2)) return std::vector<Value>{out, none_like(input), none_like(input), mean, var};
    Shape dims{0};
    for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
    NoGradGuard no_grad;
    const Tensor batch_mean = locus::mean(input, dims), invstd = rsqrt(add(var_of(input, dims), eps));
    return std::vector<Value>{out, batch_mean, invstd, mean, var};
  };
  t["torch.ops.aten._native_batch_norm_legit_no_training.default"] = [](const Call& c) {
    const Tensor input = c.tensor("input");
    const Tensor out = batch_norm(input, c.optional_tensor("weight"), c.optional_tensor("bias"), c.tensor("running_mean"),
                                  c.tensor("running_var"), false, c.real("momentum"), c.real("eps"));
    return std::vector<Value>{out, none_like(input), none_like(input)};
  };
  t["torch.ops.aten.native_layer_norm.default"] = [](const Call& c) {
    const Tensor input = c.tensor("input");
    const std::vector<int64_t> shape = c.integers("normalized_shape");
    const double eps = c.real("eps");
    const Tensor out = layer_norm(input, shape_of(shape), c.optional_tensor("weight"), c.optional_tensor("bias"), eps);
    if (!c.output_read(1) && !c.output_read(2)) return std::vector<Value>{out, none_like(input), none_like(input)};
    Shape dims;
    for (size_t k = 0; k < shape.size(); ++k) dims.push_back(input.dim() - static_cast<int64_t>(shape.size() - k));
    NoGradGuard no_grad;
    const Tensor mean = locus::mean(input, dims, true);
    return std::vector<Value>{out, mean, rsqrt(add(var_of(input, dims, true), eps))};
  };
  t["torch.ops.aten.native_dropout.default"] = [](const Call& c) {
    const Tensor input = c.tensor("input");
    const bool train = c.context().training && c.boolean("train", true);
    const double p = c.real("p");
    if (!train || p == 0) return std::vector<Value>{input.clone(), ones_like(input).to(DType::Bool)};
    const Tensor keep = ge(rand_like(input), p);
    return std::vector<Value>{mul(input, mul(keep.to(input.dtype()), 1.0 / (1.0 - p))), keep};
  };
  t["torch.ops.aten.max_pool2d_with_indices.default"] = [](const Call& c) {
    std::vector<int64_t> stride = c.integers("stride", std::vector<int64_t>{});
    const std::vector<int64_t> kernel = c.integers("kernel_size");
    if (stride.empty()) stride = kernel;
    auto [out, indices] = nn::functional::max_pool2d_with_indices(
        c.tensor("self"), nn::functional::MaxPool2dFuncOptions(kernel)
                              .stride(stride)
                              .padding(c.integers("padding", std::vector<int64_t>{0, 0}))
                              .dilation(c.integers("dilation", std::vector<int64_t>{1, 1}))
                              .ceil_mode(c.boolean("ceil_mode", false)));
    return std::vector<Value>{out, indices};
  };
  t["torch.ops.aten.mean.dim"] = [](const Call& c) {
    const Tensor self = c.tensor("self");
    const Tensor x = c.dtype("dtype") ? self.to(*c.dtype("dtype")) : self;
    const std::vector<int64_t> dims = c.integers("dim", std::vector<int64_t>{});
    if (dims.empty()) return one(c.boolean("keepdim", false) ? locus::mean(x, all_dims(x), true) : locus::mean(x));
    return one(locus::mean(x, shape_of(dims), c.boolean("keepdim", false)));
  };
  t["torch.ops.aten._softmax.default"] = [](const Call& c) {
    return one(softmax(c.tensor("self"), c.integer("dim")));
  };
  t["torch.ops.aten._log_softmax.default"] = [](const Call& c) {
    return one(log_softmax(c.tensor("self"), c.integer("dim")));
  };
  t["torch.ops.aten.where.self"] = [](const Call& c) {
    return one(where(c.tensor("condition"), c.tensor("self"), c.tensor("other")));
  };
  t["torch.ops.aten.logical_and.default"] = [](const Call& c) { return one(logical_and(c.tensor("self"), c.tensor("other"))); };
  t["torch.ops.aten.logical_not.default"] = [](const Call& c) { return one(logical_not(c.tensor("self"))); };
  t["torch.ops.aten.any.dim"] = [](const Call& c) {
    return one(any(c.tensor("self"), c.integer("dim"), c.boolean("keepdim", false)));
  };
  const auto comparison = [&t](const std::string& name, Tensor (*on_tensor)(const Tensor&, const Tensor&),
                               Tensor (*on_scalar)(const Tensor&, const Scalar&)) {
    t["torch.ops.aten." + name + ".Tensor"] = [on_tensor](const Call& c) { return one(on_tensor(c.tensor("self"), c.tensor("other"))); };
    t["torch.ops.aten." + name + ".Scalar"] = [on_scalar](const Call& c) { return one(on_scalar(c.tensor("self"), c.scalar("other"))); };
  };
  comparison("eq", &eq, &eq);
  comparison("ne", &ne, &ne);
  comparison("lt", &lt, &lt);
  comparison("le", &le, &le);
  comparison("gt", &gt, &gt);
  comparison("ge", &ge, &ge);
  t["torch.ops.aten.mul.Scalar"] = [](const Call& c) { return one(mul(c.tensor("self"), c.scalar("other"))); };
  t["torch.ops.aten.div.Scalar"] = [](const Call& c) { return one(div(c.tensor("self"), c.scalar("other"))); };
  t["torch.ops.aten.add.Scalar"] = [](const Call& c) {
    return one(add(c.tensor("self"), scaled(c.scalar("other"), alpha_of(c))));
  };
  t["torch.ops.aten.sub.Scalar"] = [](const Call& c) {
    return one(sub(c.tensor("self"), scaled(c.scalar("other"), alpha_of(c))));
  };
  t["torch.ops.aten.squeeze.dims"] = [](const Call& c) {
    Tensor x = c.tensor("self");
    std::vector<int64_t> dims = c.integers("dim");
    for (int64_t& d : dims) d = d < 0 ? d + x.dim() : d;
    std::sort(dims.rbegin(), dims.rend());
    for (int64_t d : dims)
      if (x.size(d) == 1) x = x.squeeze(d);
    return one(x);
  };
  t["torch.ops.aten.full_like.default"] = [](const Call& c) {
    const Tensor like = c.tensor("self");
    return one(full_like(like, c.scalar("fill_value"),
                         TensorOptions().dtype(c.dtype("dtype").value_or(like.dtype())).device(like.device())));
  };
  t["torch.ops.aten.scalar_tensor.default"] = [](const Call& c) {
    return one(full(Shape{}, c.scalar("s"), factory_options(c, DType::Float32)));
  };
}

const Table& table() {
  static const Table t = [] {
    Table built;
    add_elementwise(built);
    add_layers(built);
    add_shapes(built);
    add_factories(built);
    add_operators(built);
    add_core(built);
    return built;
  }();
  return t;
}

}  // namespace

const Target* find_target(const std::string& target) {
  const auto it = table().find(target);
  return it == table().end() ? nullptr : &it->second;
}

}  // namespace locus::exported
