// Convolutions through oneDNN (ConvArgs): the forward pass and both backward passes of a
// float32 2-d convolution, with the primitive choosing its own layouts (format_tag::any: the
// blocked nChw16c-style ones its JIT kernels run on) and reorders to and from the callers'
// NCHW buffers around it. LibTorch's float32 convolution on the CPU is these same primitives.
// Channels-last activations (ConvArgs::channels_last) run in NHWC itself, with no reorder of
// them at all, where the output has 64 pixels or more (Note [Channels-last convolutions]).
//
// A primitive and its reorders cost milliseconds to create, so each thread keeps those of the
// shapes it has seen (a network has a handful per layer), with the blocked scratch buffers.
// A geometry oneDNN serves only with its reference kernel is declined (the general path is
// faster), and so is every other dtype.

#include "src/backends/cpu/cpu_kernels.h"
#include "src/backends/cpu/thread_budget.h"

#ifdef LOCUS_WITH_DNNL

#include <oneapi/dnnl/dnnl.hpp>
#include <oneapi/dnnl/dnnl_version.h>

#include <array>
#include <cstring>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

namespace locus::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// Everything that shapes a primitive, and the team size (oneDNN splits work for the OpenMP
// threads it sees at creation).
using Key = std::array<int64_t, 22>;

Key key_of(const ops::ConvArgs& a, int threads) {
  return {static_cast<int64_t>(a.pass), a.n, a.c_in, a.h, a.w, a.c_out, a.kh, a.kw, a.out_h, a.out_w, a.groups,
          a.pad_h, a.pad_w, a.stride_h, a.stride_w, a.dilation_h, a.dilation_w,
          a.pass == ops::ConvArgs::Pass::Forward ? a.bias != nullptr : a.grad_bias != nullptr, threads,
          a.channels_last, 0, 0};
}

// One operand as the caller lays it out, as the primitive wants it, and the reorder between.
struct Operand {
  memory::desc user, chosen;
  std::optional<dnnl::reorder> reorder;  // user -> chosen for inputs, chosen -> user for the output
  memory scratch;                        // the chosen layout's buffer when it is not the user's

  void prepare(const dnnl::engine& engine, bool is_output) {
    if (chosen == user) return;
    scratch = memory(chosen, engine);
    reorder = is_output ? dnnl::reorder(dnnl::reorder::primitive_desc(engine, chosen, engine, user))
                        : dnnl::reorder(dnnl::reorder::primitive_desc(engine, user, engine, chosen));
  }
};

Operand operand(const memory::desc& user, const memory::desc& chosen) {
  Operand o;
  o.user = user;
  o.chosen = chosen;
  return o;
}

struct Conv {
  dnnl::primitive primitive;
  Operand a, b, out;   // Forward: src, weights -> dst; BackwardData: diff_dst, weights -> diff_src;
                       // BackwardWeights: src, diff_dst -> diff_weights
  memory::desc bias;   // forward bias or the weights pass's diff_bias (plain [C_out])
};

// The grad_output that a BackwardData pass reordered, left for the BackwardWeights pass its
// caller runs next over the same buffer (ConvArgs::weights_next): the two primitives read it in
// the same blocked layout, so the second reorder is skipped. Every call takes it and clears it,
// so it never outlives the pair.
struct SharedGradOutput {
  const char* data = nullptr;
  memory blocked;  // a handle: it keeps the buffer alive even if the cache drops its primitive
};

struct ThreadDnnl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::map<Key, std::optional<Conv>> convs;  // nullopt: declined (asked once)
  SharedGradOutput shared;
};

ThreadDnnl& thread_dnnl() {
  thread_local ThreadDnnl t;
  return t;
}

constexpr size_t kMaxPrimitives = 128;
constexpr auto f32 = memory::data_type::f32;

// Note [Channels-last convolutions]
// With NHWC activations, oneDNN 2.6 has brgemm kernels that read and write them directly, and
// the activations' reorders (to nChw16c and back: a read and a write of both, per pass) go.
// Measured on this machine's Zen 4, 2 threads, against the blocked path with its reorders:
// forward 5-16% faster and both backward passes 5-14% on ResNet's and the benches' layers
// (32->64 at 14x14, 64->64 at 56x56 and 32x32, 128 at 16x16, 256 at 8x8), but the forward 65%
// slower at 512 channels of 4x4 and 23% at a stride-2 layer into 4x4: below 64 output pixels
// (8x8) the brgemm kernels have too few rows to fill their tiles. There the NHWC buffers are reordered
// to the blocked layout like NCHW ones. Grouped convolutions keep the blocked layout too (the
// NHWC kernels of 2.6 are for groups of one).

// The descriptions shared by the three passes: plain layouts, `any` layouts and the geometry.
struct Shapes {
  memory::dims src, weights, dst, bias, strides, dilates, pad_l, pad_r;
  Tag weights_tag;
  Tag user;         // the callers' activations: nchw or nhwc
  bool run_nhwc;    // the primitive runs on the NHWC buffers themselves

  // An activation as the primitive should take it: the NHWC buffer, or the layout it chooses.
  memory::desc activation(const memory::dims& d) const {
    return memory::desc(d, memory::data_type::f32, run_nhwc ? Tag::nhwc : Tag::any);
  }
};

std::optional<Shapes> shapes_of(const ops::ConvArgs& a) {
  Shapes s;
  s.src = {a.n, a.c_in, a.h, a.w};
  s.dst = {a.n, a.c_out, a.out_h, a.out_w};
  if (a.groups == 1) {
    s.weights = {a.c_out, a.c_in, a.kh, a.kw};
    s.weights_tag = Tag::oihw;
  } else {
    s.weights = {a.groups, a.c_out / a.groups, a.c_in / a.groups, a.kh, a.kw};
    s.weights_tag = Tag::goihw;
  }
  s.bias = {a.c_out};
  s.strides = {a.stride_h, a.stride_w};
  s.dilates = {a.dilation_h - 1, a.dilation_w - 1};  // oneDNN counts the gaps
  s.pad_l = {a.pad_h, a.pad_w};
  // The right padding that makes oneDNN's output size the caller's (floor division drops rows).
  const int64_t pad_b = (a.out_h - 1) * a.stride_h + (a.kh - 1) * a.dilation_h + 1 - a.h - a.pad_h;
  const int64_t pad_r = (a.out_w - 1) * a.stride_w + (a.kw - 1) * a.dilation_w + 1 - a.w - a.pad_w;
  if (pad_b < 0 || pad_r < 0) return std::nullopt;
  s.pad_r = {pad_b, pad_r};
  s.user = a.channels_last ? Tag::nhwc : Tag::nchw;
  s.run_nhwc = a.channels_last && a.groups == 1 && a.out_h * a.out_w >= 64;
  return s;
}

memory::desc any(const memory::dims& d) { return memory::desc(d, f32, Tag::any); }

// The plain [C_out] bias, or the empty description that says there is none.
memory::desc bias_desc(const Shapes& s, bool present = true) {
  return present ? memory::desc(s.bias, f32, Tag::x) : memory::desc();
}

// oneDNN 3 takes a primitive's description straight in its primitive_desc; 2.x built an
// operation descriptor first. The three helpers below hide that difference from create().
dnnl::convolution_forward::primitive_desc forward_pd(const dnnl::engine& e, const Shapes& s, bool bias) {
  constexpr auto prop = dnnl::prop_kind::forward_training;
  constexpr auto alg = dnnl::algorithm::convolution_direct;
  const memory::desc bias_md = bias_desc(s, bias), src = s.activation(s.src), dst = s.activation(s.dst);
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::convolution_forward::primitive_desc(e, prop, alg, src, any(s.weights), bias_md, dst,
                                                   s.strides, s.dilates, s.pad_l, s.pad_r);
#else
  return dnnl::convolution_forward::primitive_desc(
      dnnl::convolution_forward::desc(prop, alg, src, any(s.weights), bias_md, dst, s.strides, s.dilates,
                                      s.pad_l, s.pad_r),
      e);
#endif
}

dnnl::convolution_backward_data::primitive_desc backward_data_pd(const dnnl::engine& e, const Shapes& s) {
  constexpr auto alg = dnnl::algorithm::convolution_direct;
  const auto hint = forward_pd(e, s, false);
  const memory::desc src = s.activation(s.src), dst = s.activation(s.dst);
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::convolution_backward_data::primitive_desc(e, alg, src, any(s.weights), dst, s.strides,
                                                         s.dilates, s.pad_l, s.pad_r, hint);
#else
  return dnnl::convolution_backward_data::primitive_desc(
      dnnl::convolution_backward_data::desc(alg, src, any(s.weights), dst, s.strides, s.dilates, s.pad_l,
                                            s.pad_r),
      e, hint);
#endif
}

dnnl::convolution_backward_weights::primitive_desc backward_weights_pd(const dnnl::engine& e, const Shapes& s, bool bias) {
  constexpr auto alg = dnnl::algorithm::convolution_direct;
  const auto hint = forward_pd(e, s, bias);
  const memory::desc bias_md = bias_desc(s, bias), src = s.activation(s.src), dst = s.activation(s.dst);
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::convolution_backward_weights::primitive_desc(e, alg, src, any(s.weights), bias_md, dst,
                                                            s.strides, s.dilates, s.pad_l, s.pad_r, hint);
#else
  return dnnl::convolution_backward_weights::primitive_desc(
      dnnl::convolution_backward_weights::desc(alg, src, any(s.weights), bias_md, dst, s.strides,
                                               s.dilates, s.pad_l, s.pad_r),
      e, hint);
#endif
}

bool is_reference(const dnnl::primitive_desc_base& pd) { return std::strncmp(pd.impl_info_str(), "ref", 3) == 0; }

std::optional<Conv> create(const dnnl::engine& e, const ops::ConvArgs& a) {
  const std::optional<Shapes> s = shapes_of(a);
  if (!s) return std::nullopt;
  const memory::desc src(s->src, f32, s->user), dst(s->dst, f32, s->user), wei(s->weights, f32, s->weights_tag);
  Conv c;
  using Pass = ops::ConvArgs::Pass;
  if (a.pass == Pass::Forward) {
    const auto pd = forward_pd(e, *s, a.bias != nullptr);
    if (is_reference(pd)) return std::nullopt;
    c.primitive = dnnl::convolution_forward(pd);
    c.a = operand(src, pd.src_desc()), c.b = operand(wei, pd.weights_desc()), c.out = operand(dst, pd.dst_desc());
    c.bias = bias_desc(*s);
  } else if (a.pass == Pass::BackwardData) {
    const auto pd = backward_data_pd(e, *s);
    if (is_reference(pd)) return std::nullopt;
    c.primitive = dnnl::convolution_backward_data(pd);
    c.a = operand(dst, pd.diff_dst_desc()), c.b = operand(wei, pd.weights_desc()), c.out = operand(src, pd.diff_src_desc());
  } else {
    const auto pd = backward_weights_pd(e, *s, a.grad_bias != nullptr);
    if (is_reference(pd)) return std::nullopt;
    c.primitive = dnnl::convolution_backward_weights(pd);
    c.a = operand(src, pd.src_desc()), c.b = operand(dst, pd.diff_dst_desc()), c.out = operand(wei, pd.diff_weights_desc());
    c.bias = bias_desc(*s);
  }
  c.a.prepare(e, false), c.b.prepare(e, false), c.out.prepare(e, true);
  return c;
}

// The memory the primitive reads for an input: the caller's buffer, or its reordered copy.
memory input(ThreadDnnl& t, Operand& o, const char* data) {
  memory user(o.user, t.engine, const_cast<char*>(data));
  if (!o.reorder) return user;
  o.reorder->execute(t.stream, user, o.scratch);
  return o.scratch;
}

}  // namespace

bool dnnl_convolution(const ops::ConvArgs& a) {
  if (a.dtype != DType::Float32 || a.n == 0) return false;
  ThreadDnnl& t = thread_dnnl();
  const SharedGradOutput shared = std::exchange(t.shared, SharedGradOutput{});
  const Key key = key_of(a, threads_now());
  auto it = t.convs.find(key);
  if (it == t.convs.end()) {
    if (t.convs.size() >= kMaxPrimitives) t.convs.clear();
    std::optional<Conv> created;
    try {
      created = create(t.engine, a);
    } catch (const dnnl::error&) {
      // No implementation for this geometry: the general path serves it.
    }
    it = t.convs.emplace(key, std::move(created)).first;
  }
  if (!it->second) return false;
  Conv& c = *it->second;
  using Pass = ops::ConvArgs::Pass;
  try {
    const char* first = a.pass == Pass::BackwardData ? a.grad_output : a.input;
    const char* second = a.pass == Pass::Forward ? a.weight : a.pass == Pass::BackwardData ? a.weight : a.grad_output;
    char* result = a.pass == Pass::Forward ? a.output : a.pass == Pass::BackwardData ? a.grad_input : a.grad_weight;
    const memory ma = input(t, c.a, first);
    const bool reuse = a.pass == Pass::BackwardWeights && c.b.reorder && shared.data == a.grad_output &&
                       shared.blocked.get_desc() == c.b.chosen;
    const memory mb = reuse ? shared.blocked : input(t, c.b, second);
    if (a.pass == Pass::BackwardData && a.weights_next && c.a.reorder) t.shared = {a.grad_output, ma};
    memory user_out(c.out.user, t.engine, result);
    const memory mo = c.out.reorder ? c.out.scratch : user_out;
    std::unordered_map<int, memory> args;
    if (a.pass == Pass::Forward) {
      args = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mo}};
      if (a.bias) args.emplace(DNNL_ARG_BIAS, memory(c.bias, t.engine, const_cast<char*>(a.bias)));
    } else if (a.pass == Pass::BackwardData) {
      args = {{DNNL_ARG_DIFF_DST, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DIFF_SRC, mo}};
    } else {
      args = {{DNNL_ARG_SRC, ma}, {DNNL_ARG_DIFF_DST, mb}, {DNNL_ARG_DIFF_WEIGHTS, mo}};
      if (a.grad_bias) args.emplace(DNNL_ARG_DIFF_BIAS, memory(c.bias, t.engine, a.grad_bias));
    }
    c.primitive.execute(t.stream, args);
    if (c.out.reorder) c.out.reorder->execute(t.stream, c.out.scratch, user_out);
    t.stream.wait();
  } catch (const dnnl::error&) {
    return false;  // nothing the caller reads was finished: it computes the pass again
  }
  return true;
}

}  // namespace locus::cpu

#else

namespace locus::cpu {
bool dnnl_convolution(const ops::ConvArgs&) { return false; }
}  // namespace locus::cpu

#endif
