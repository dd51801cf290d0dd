#pragma once
// The kernel table: what a backend provides, per op family. Front ends in src/ops/ compute
// the strided description (StridedIter and friends); backends only loop.

#include <cstdint>

#include "locus/dtype.h"
#include "locus/scalar.h"
#include "locus/shape.h"
#include "src/ops/epilogue.h"
#include "src/ops/op_id.h"
#include "src/ops/optimizer_hyperparameters.h"
#include "src/ops/reduce_functors.h"

namespace locus::ops {

/// Up to four operands over one iteration shape, with byte strides per operand (0 where an
/// operand is broadcast). Operand 0 is the output. Dims are coalesced: adjacent dims that are
/// contiguous for every operand are merged, so a contiguous op has ndim 1.
struct StridedIter {
  static constexpr int kMaxOperands = 4;
  int noperands = 0;
  Shape shape;                       ///< iteration shape (innermost last)
  Shape strides[kMaxOperands];       ///< byte strides per operand
  char* data[kMaxOperands] = {};     ///< first element of each operand
  DType dtypes[kMaxOperands] = {};   ///< element type of each operand
  int64_t numel = 0;
  int device = 0;                    ///< index of the device the operands live on
  /// True when every operand is contiguous over the whole range (one dim, unit strides).
  bool contiguous() const noexcept;
};

/// Reduction over some dims of an input into a contiguous output. The folds, Sum and Mean read a
/// strided input described over its full shape (`shape`, `in_strides`); `out_strides` are element
/// strides of the row-major output over those dims, 0 on reduced dims, so out[index] accumulates
/// every input element mapping to it. Max, Min, Argmax and Argmin read a contiguous input as
/// [outer, dim, inner] (`shape` holds those three) and ignore the strides.
struct ReduceArgs {
  OpId op;                 ///< a reduction of LOCUS_REDUCE_OPS, or Max, Min, Argmax, Argmin
  int device = 0;          ///< index of the device the operands live on
  fn::ReduceParams params; ///< norm's order, var/std's correction
  DType in_dtype, out_dtype;
  const char* in = nullptr;
  char* out = nullptr;     ///< values (Sum/Mean/Max/Min) or int64 indices (Argmax)
  char* indices = nullptr; ///< optional int64 indices for Max/Min along a dim
  Shape shape;             ///< input shape (coalesced)
  Shape in_strides;        ///< bytes (the folds, Sum, Mean)
  Shape out_strides;       ///< elements of the output, 0 on reduced dims (the folds, Sum, Mean)
  int64_t out_numel = 0;
  int64_t reduce_numel = 0; ///< elements folded into each output
};

/// Batched matrix product C[b] = alpha * A[b] @ B[b] + beta * C[b] with element strides; C is
/// contiguous. Only KernelTable::linear reads `bias` and `epilogue`; KernelTable::matmul ignores
/// them. See Note [Product scaling] for alpha and beta.
struct MatmulArgs {
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const char* a = nullptr; int64_t a_batch_stride = 0, a_row = 0, a_col = 0;
  const char* b = nullptr; int64_t b_batch_stride = 0, b_row = 0, b_col = 0;
  char* c = nullptr;       int64_t c_batch_stride = 0;  ///< C rows are n elements apart; set it to m n (CUDA assumes that)
  const char* bias = nullptr;  ///< n contiguous elements added to every row of C, or null
  Epilogue epilogue = Epilogue::None;
  // Note [Product scaling]
  // addmm / baddbmm scale the product and add a scaled C in the BLAS call itself (one pass, as
  // PyTorch does). With beta == 0 the kernel writes C without reading it, so NaN or garbage in
  // C never reaches the result (BLAS's rule, which PyTorch documents for addmm). The floating
  // dtypes honour both; the integer kernels require alpha == 1 and beta == 0 (front ends
  // compose the scaling for integer dtypes), and KernelTable::linear requires the defaults.
  double alpha = 1;  ///< scale of the product
  double beta = 0;   ///< scale of C's previous contents; 0: C is not read
};

/// The gradient half of Linear's backward that is not a product, in one pass over the output
/// gradient `grad` [m, n] (contiguous): `grad_pre` = grad where `output` > 0 (ReLU folded into
/// the forward; with no `output` grad_pre is not written) and `bias_grad` [n] = the column sums
/// of grad_pre (when not null).
struct LinearGradArgs {
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  int64_t m = 0, n = 0;
  const char* grad = nullptr;
  const char* output = nullptr;  ///< the forward's ReLU output, or null
  char* grad_pre = nullptr;
  char* bias_grad = nullptr;
};

/// One optimizer step over every parameter of one dtype on one device, each element read and
/// written once (PyTorch's fused/foreach optimizers). All buffers are contiguous and of `dtype`.
struct OptimizerStepArgs : OptimizerHyperparameters {
  int device = 0;  ///< index of the device the tensors live on
  DType dtype = DType::Float32;
  int count = 0;                     ///< tensors
  char* const* params = nullptr;     ///< host arrays of `count` device buffers each
  const char* const* grads = nullptr;
  char* const* state1 = nullptr;     ///< momentum buffers (SGD with momentum) or exp_avg; else null
  char* const* state2 = nullptr;     ///< exp_avg_sq (Adam, AdamW); else null
  const unsigned char* fresh = nullptr;  ///< SGD: 1 where the momentum buffer starts at this step
  const int64_t* numel = nullptr;
};

/// What the cross-entropy forward and backward both read: `m` rows of `c` class logits of
/// `dtype` (contiguous), one int64 target per row, and the target that is ignored.
struct CrossEntropyRows {
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  int64_t m = 0, c = 0;
  const char* logits = nullptr;
  const int64_t* target = nullptr;
  int64_t ignore = -100;
};

/// cross_entropy with class-index targets over contiguous logits [m, c], in one pass per row:
/// `losses[i]` = logsumexp(logits[i]) - logits[i, target[i]] (0 for an ignored target) and
/// `lse[i]` the logsumexp, kept for the backward. A target outside [0, c) that is not `ignore`
/// is reported through `bad_target` (the host reads it: only host-addressable devices).
struct CrossEntropyArgs : CrossEntropyRows {
  char* losses = nullptr;  ///< m elements of `dtype`
  char* lse = nullptr;     ///< m elements of the compute type (float64 for float64, else float32)
  int64_t* bad_target = nullptr;  ///< set to the row of the first bad target, else left at -1
  int64_t* counted = nullptr;     ///< targets that are not `ignore`
};

/// The backward of CrossEntropyArgs in one pass: grad_logits[i, j] = scale[i] *
/// (exp(logits[i, j] - lse[i]) - [j == target[i]]), 0 on ignored rows; `scale` holds one
/// element per row (stride 1) or one for all (stride 0).
struct CrossEntropyGradArgs : CrossEntropyRows {
  const char* lse = nullptr;    ///< CrossEntropyArgs::lse
  const char* scale = nullptr;  ///< of `dtype`
  int64_t scale_stride = 0;
  char* grad_logits = nullptr;
};

/// Softmax or log-softmax along the middle dim of a contiguous [outer, dim, inner] block.
struct SoftmaxArgs {
  int device = 0;  ///< index of the device the operands live on
  bool log = false;
  DType dtype;
  const char* in = nullptr;
  char* out = nullptr;
  int64_t outer = 0, dim = 0, inner = 0;
};

/// Sorting along the last dim of a contiguous [rows, n] input: the first `k` of each row's
/// elements in order (ascending, or descending) with their int64 positions in the row. The
/// order is total and stable: NaN ranks above every number (as PyTorch), equal elements keep
/// their positions' order, so a k < n result is the first k of the full sort (Sort with k = n,
/// Topk with k < n).
struct SortArgs {
  OpId op;         ///< Sort or Topk
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  const char* in = nullptr;
  char* values = nullptr;        ///< [rows, k] of `dtype`
  int64_t* indices = nullptr;    ///< [rows, k]
  int64_t rows = 0, n = 0, k = 0;
  bool descending = false;
};

/// Inclusive scan (cumsum, cumprod) along the last dim of a contiguous [rows, n] input into a
/// contiguous output of the same dtype (the front end converts integers to int64 first).
struct ScanArgs {
  OpId op;         ///< Cumsum or Cumprod
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  const char* in = nullptr;
  char* out = nullptr;
  int64_t rows = 0, n = 0;
};

/// out = input gathered along `dim` by int64 indices (both index_select and gather). The input
/// and output are contiguous; for index_select `index` has `out_dim` entries, for gather it is
/// a contiguous tensor of the output's shape.
/// The scatters are the mirror image: `out` [outer, out_dim, inner] already holds the
/// destination's values and is updated in place from `in` [outer, in_dim, inner]: Scatter
/// writes out[o, index[o, j, i], i] = in[o, j, i] and ScatterAdd adds (`index` of in's shape),
/// IndexAdd adds out[o, index[j], i] += in[o, j, i] (`index` has in_dim entries). Indices are
/// checked against out_dim; `dim` is the user's dim, for the message.
struct IndexArgs {
  OpId op;  ///< IndexSelect, Gather, Scatter, ScatterAdd or IndexAdd
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  const char* in = nullptr;
  char* out = nullptr;
  const int64_t* index = nullptr;
  int64_t outer = 0, in_dim = 0, out_dim = 0, inner = 0;
  int64_t dim = 0;  ///< the dim as the user gave it (wrapped), for error messages
};

/// im2col and its adjoint over `planes` contiguous images [height, width] (planes = batch x
/// channels) and their columns [planes, kernel_h * kernel_w, out_h * out_w] (F.unfold's
/// [N, C kH kW, L], channel-major). Window (oh, ow)'s element (i, j) is image element
/// (oh stride_h - pad_h + i dilation_h, ow stride_w - pad_w + j dilation_w); outside the image it
/// reads `fill` (0 for convolutions and averages, -inf for max pooling). Im2col writes the
/// columns from the image; Col2im writes each image element as the sum of the column entries
/// that read it, in the order (i, j), as a gather (no atomics: the same sum on every device).
/// MaxPool2d writes each window's maximum of the image elements it covers (padding excluded; NaN
/// wins, the last NaN if several, as PyTorch's CPU kernel) to `out` [planes, out_h, out_w] and
/// its flat position ih * width + iw to `indices`; MaxPool2dBackward reads the output gradient
/// from `in` and `indices` and writes each image element the sum of the gradients of the windows
/// whose maximum it is, again as a gather in the order (i, j).
struct Im2colArgs {
  OpId op;         ///< Im2col, Col2im, MaxPool2d or MaxPool2dBackward
  int device = 0;  ///< index of the device the operands live on
  DType dtype;
  const char* in = nullptr;
  char* out = nullptr;
  int64_t planes = 0, height = 0, width = 0;
  int64_t kernel_h = 1, kernel_w = 1, pad_h = 0, pad_w = 0;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t out_h = 0, out_w = 0;  ///< windows per column and per row
  double fill = 0;               ///< Im2col: the value read outside the image
  int64_t* indices = nullptr;    ///< MaxPool2d: written unless null; MaxPool2dBackward: read
  /// MaxPool2d and MaxPool2dBackward: 0 for planes of contiguous [height, width] images; else
  /// the images, windows and indices are channels-last [N, height, width, channels] with
  /// planes = N x channels (only where KernelTable::max_pool_channels_last says so).
  int64_t channels_last = 0;
};

/// A 2-d convolution over contiguous NCHW operands, or NHWC ones with `channels_last` (weight
/// [C_out, C_in / groups, kH, kW] contiguous either way), one
/// pass of it: Forward writes output = conv(input, weight) + bias (bias may be null);
/// BackwardData writes grad_input from grad_output and weight; BackwardWeights writes
/// grad_weight, and grad_bias when it is not null, from input and grad_output. A backend entry
/// returns false, having written nothing, where it has no fast kernel for the dtype or geometry:
/// the front end then takes the general path (Note [General convolution path]).
struct ConvArgs {
  enum class Pass : uint8_t { Forward, BackwardData, BackwardWeights };
  Pass pass = Pass::Forward;
  int device = 0;  ///< index of the device the operands live on
  DType dtype = DType::Float32;
  int64_t n = 0, c_in = 0, h = 0, w = 0, c_out = 0, kh = 1, kw = 1, out_h = 0, out_w = 0, groups = 1;
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  const char* input = nullptr;
  const char* weight = nullptr;
  const char* bias = nullptr;
  const char* grad_output = nullptr;
  char* output = nullptr;
  char* grad_input = nullptr;
  char* grad_weight = nullptr;
  char* grad_bias = nullptr;
  /// BackwardData: the caller's next call is the BackwardWeights pass over the same grad_output,
  /// so a backend may keep what the two share (oneDNN's reordered grad_output) for it.
  bool weights_next = false;
  /// The activations (input, output, grad_output, grad_input) are dense channels-last, NHWC in
  /// memory (MemoryFormat::ChannelsLast); the weights stay contiguous. Only where
  /// KernelTable::convolution_channels_last says the backend takes them.
  bool channels_last = false;
};

/// The per-channel passes of batch norm over contiguous [N, C, S] data, or [N, S, C] with
/// `channels_last` (S: a channel's elements
/// in one sample) in float32 or float64 (Note [Batch norm in training]): Statistics writes each
/// channel's mean and biased variance (`first`, `second`); BackwardReduce writes sum(g) and
/// sum(g x) (`first`, `second`); BackwardInput writes out = g a + x b + c with per-channel a, b,
/// c; Affine writes out = x a + c (c may be null: no shift), the normalisation itself in both
/// modes. Every sum runs in one fixed order, so the results do not depend on the thread count.
struct BatchNormArgs {
  enum class Pass : uint8_t { Statistics, BackwardReduce, BackwardInput, Affine };
  Pass pass = Pass::Statistics;
  int device = 0;  ///< index of the device the operands live on
  DType dtype = DType::Float32;
  int64_t n = 0, channels = 0, inner = 0;
  /// x, grad and out are [N, S, C] in memory (channels-last) instead of [N, C, S]; only where
  /// KernelTable::batch_norm_channels_last says the backend has those passes.
  bool channels_last = false;
  const char* x = nullptr;     ///< the input [N, C, S]
  const char* grad = nullptr;  ///< the output's gradient [N, C, S] (the backward passes)
  char* out = nullptr;         ///< BackwardInput's or Affine's result [N, C, S]
  char* first = nullptr;       ///< [C]: the mean, or sum(g)
  char* second = nullptr;      ///< [C]: the biased variance, or sum(g x)
  const char* a = nullptr;     ///< BackwardInput's and Affine's coefficients, each [C]
  const char* b = nullptr;
  const char* c = nullptr;
};

/// Layer normalisation, or RMS normalisation with `rms`, of `rows` contiguous rows of `cols`
/// elements in float32 or float64 (Note [Fused layer norm]). Forward writes y and each row's mean
/// (0 with rms) and reciprocal standard deviation rstd; Backward reads x, mean, rstd and
/// grad_out and writes grad_input and, where set, grad_weight and grad_bias, summed over the
/// rows in an order that does not depend on the thread count. weight and bias may be null.
struct LayerNormArgs {
  enum class Pass : uint8_t { Forward, Backward };
  Pass pass = Pass::Forward;
  int device = 0;  ///< index of the device the operands live on
  DType dtype = DType::Float32;
  bool rms = false;
  int64_t rows = 0, cols = 0;
  double eps = 1e-5;
  const char* x = nullptr;
  const char* weight = nullptr;  ///< [cols]
  const char* bias = nullptr;    ///< [cols]
  char* y = nullptr;
  char* mean = nullptr;  ///< [rows]: Forward's result, Backward's input
  char* rstd = nullptr;  ///< [rows]
  const char* grad_out = nullptr;
  char* grad_input = nullptr;
  char* grad_weight = nullptr;
  char* grad_bias = nullptr;
};

/// Fused scaled dot-product attention (Note [Attention paths]) over contiguous q [B, L, E],
/// k [B, S, E] and v [B, S, Ev]: float32 or float64 on the CPU (Note [Fused attention]), float16
/// or bfloat16 through cuDNN on CUDA (Note [cuDNN attention]). Forward writes out [B, L, Ev] and
/// the rows' log-sum-exp lse [B, L] (float64 for float64, else float32); Backward reads them with
/// grad_out and writes grad_q, grad_k and grad_v. Scores are q k^T scale, plus the additive mask
/// (same dtype) at mask[mask_offsets[b] + i * mask_row_stride + j * mask_col_stride] when mask
/// is set, with keys j > i masked when causal. With dropout_p > 0 each pass draws from the
/// Philox stream (seed, offset), both passes the same words: on the CPU weight (b, i, j) is kept
/// when word (b L + i) S + j is >= dropout_p; cuDNN draws in its own order.
struct AttentionArgs {
  enum class Pass : uint8_t { Forward, Backward };
  Pass pass = Pass::Forward;
  int device = 0;  ///< index of the device the operands live on
  DType dtype = DType::Float32;
  int64_t batch = 0, length = 0, keys = 0, features = 0, value_features = 0;
  double scale = 1;
  bool causal = false;
  bool backward_follows = false;  ///< Forward: a Backward of the same call will follow
  const char* q = nullptr;
  const char* k = nullptr;
  const char* v = nullptr;
  const char* mask = nullptr;
  const int64_t* mask_offsets = nullptr;  ///< host array of `batch` element offsets
  int64_t mask_row_stride = 0, mask_col_stride = 0;
  double dropout_p = 0;
  uint64_t seed = 0, offset = 0;
  char* out = nullptr;  ///< Forward's result, Backward's input
  char* lse = nullptr;  ///< Forward's result, Backward's input
  const char* grad_out = nullptr;
  char* grad_q = nullptr;
  char* grad_k = nullptr;
  char* grad_v = nullptr;
};

/// The pointwise half of one recurrent step over contiguous rows in float32 or float64 (Note
/// [Fused recurrent cells] in src/ops/recurrent_ops.cpp). LSTM: from `gates` [B, 4H] (i, f, g,
/// o; both products and both biases summed) and `state` c [B, H], Forward writes `out`
/// [2, B, H] (h' then c') and, when set, `workspace` [B, 4H] (the activated gates); Backward
/// reads them back as `forward_out` and `activations` with c and `grad_out` [2, B, H], and
/// writes `grad_gates` [B, 4H] and `grad_state` [B, H]. GRU: from `gates` gi [B, 3H] (with
/// b_ih), `hidden_gates` gh [B, 3H] (with b_hh) and `state` h [B, H], Forward writes `out` h'
/// [B, H] and, when set, `workspace` [B, 4H] (r, z, n and gh's n part); Backward reads h,
/// `activations` and `grad_out` [B, H] and writes `grad_gates`, `grad_hidden_gates` and
/// `grad_state`.
struct RnnCellArgs {
  enum class Cell : uint8_t { Lstm, Gru };
  enum class Pass : uint8_t { Forward, Backward };
  Cell cell = Cell::Lstm;
  Pass pass = Pass::Forward;
  int device = 0;  ///< index of the device the operands live on
  DType dtype = DType::Float32;
  int64_t batch = 0, hidden = 0;
  const char* gates = nullptr;
  const char* hidden_gates = nullptr;  ///< GRU only
  const char* state = nullptr;
  char* out = nullptr;        ///< Forward's result
  char* workspace = nullptr;  ///< Forward's result, or null when no backward follows
  const char* forward_out = nullptr;  ///< LSTM Backward: Forward's `out` (for c')
  const char* activations = nullptr;  ///< Backward: Forward's `workspace`
  const char* grad_out = nullptr;
  char* grad_gates = nullptr;
  char* grad_hidden_gates = nullptr;  ///< GRU only
  char* grad_state = nullptr;
};

/// A whole multi-layer recurrence in one library call (cuDNN's RNN API on CUDA, Note [cuDNN
/// RNNs] in src/backends/cuda/cuda_cudnn_rnn.cpp), over contiguous time-major rows: `x`
/// [rows, input_size] holds step t's batch_sizes[t] rows after step t - 1's (a PackedSequence's
/// data; a padded batch has every batch_sizes[t] = B), `hx` [layers * directions, B, out] with
/// out = proj or hidden, `cx` [layers * directions, B, hidden] (LSTM), and the parameters in
/// PyTorch's order (per layer and direction: weight_ih, weight_hh, then bias_ih and bias_hh
/// with `bias`, then weight_hr with `proj`). Sizes writes `*reserve_bytes` (what a Forward that
/// a Backward follows keeps) and returns false where the backend declines: the front end then
/// composes the recurrence step by step. Forward writes `y` [rows, directions * out], `hy`, `cy`
/// and, with `reserve`, what the Backward reads; Backward reads x, hx, cx, the parameters,
/// `forward_y` and the reserve with `dy`, `dhy`, `dcy` and writes `dx`, `dhx`, `dcx` and every
/// parameter's gradient (`grad_weights`, in the parameters' order).
struct RnnArgs {
  enum class Pass : uint8_t { Sizes, Forward, Backward };
  enum class Mode : uint8_t { RnnTanh, RnnRelu, Lstm, Gru };
  Pass pass = Pass::Sizes;
  Mode mode = Mode::Lstm;
  int device = 0;  ///< index of the device the operands live on
  DType dtype = DType::Float32;
  int64_t input_size = 0, hidden = 0, proj = 0, layers = 1;
  bool bidirectional = false, bias = true;
  const int64_t* batch_sizes = nullptr;  ///< host array of `steps` rows per step, non-increasing
  int64_t steps = 0;
  const char* x = nullptr;
  const char* hx = nullptr;
  const char* cx = nullptr;  ///< LSTM only
  const char* const* weights = nullptr;  ///< host array of `weight_count` parameters
  int64_t weight_count = 0;
  int64_t* reserve_bytes = nullptr;  ///< Sizes' result
  char* reserve = nullptr;           ///< Forward's result when a Backward follows, Backward's input
  char* y = nullptr;
  char* hy = nullptr;
  char* cy = nullptr;
  const char* forward_y = nullptr;  ///< Backward: Forward's `y`
  const char* dy = nullptr;
  const char* dhy = nullptr;
  const char* dcy = nullptr;
  char* dx = nullptr;
  char* dhx = nullptr;
  char* dcx = nullptr;
  char* const* grad_weights = nullptr;  ///< host array of `weight_count` gradients
};

/// Counter-based random fill of a contiguous buffer (Philox 4x32-10, seed plus offset), so the
/// same seed gives the same values on every device.
struct RandomArgs {
  OpId op;  ///< Rand, Randn, Randint, Arange
  int device = 0;  ///< index of the device the output lives on
  DType dtype;
  char* out = nullptr;
  int64_t numel = 0;
  uint64_t seed = 0, offset = 0;
  /// randint bounds, arange start/step, rand's range [low, high) (uniform_: low + (high - low) u)
  /// or randn's mean and standard deviation (normal_: low + high z); rand and randn are exact
  /// with the defaults 0 and 1.
  double low = 0, high = 1;
};

/// Gradients of one dtype on one device multiplied in place by `inv_scale`, with any inf or NaN
/// among them recorded as 1.0f in `*found_inf` (a float in device memory, never read back by
/// the kernel's caller): GradScaler::unscale_'s one pass per device, with no synchronization.
struct UnscaleArgs {
  int device = 0;              ///< index of the device the tensors live on
  DType dtype = DType::Float32;
  int count = 0;               ///< tensors
  char* const* data = nullptr; ///< host array of `count` contiguous device buffers
  const int64_t* numel = nullptr;  ///< host array of their element counts
  float inv_scale = 1;
  float* found_inf = nullptr;
};

/// What a deferred check says when it fails (Note [Deferred checks]).
enum class CheckKind : uint8_t {
  IndexOutOfBounds,   ///< "index {value} is out of bounds for dimension of size {bound}"
  TargetOutOfBounds,  ///< "target {value} is out of bounds for {bound} classes"
};

/// A check of `n` contiguous int64 values that live on the device: one outside [0, bound) and
/// not `ignore` (when has_ignore) is recorded by the device with the op, kind and bound, and the
/// host raises at its next synchronization with the device.
struct DeferredCheckArgs {
  int device = 0;
  const int64_t* values = nullptr;
  int64_t n = 0;
  int64_t bound = 0;
  bool has_ignore = false;
  int64_t ignore = 0;
  OpId op = OpId::IndexSelect;
  CheckKind kind = CheckKind::IndexOutOfBounds;
};

/// The scalar operands and parameters of an elementwise kernel, as the front end gives them
/// (Scalars; a kernel converts them to its compute type).
/// None of them but `other` and clamp's bounds takes part in type promotion.
struct ElementwiseScalars {
  Scalar other;         ///< the second operand of a tensor-scalar binary op (has_other)
  Scalar alpha = 1;     ///< add / sub: a + alpha * b; elu's alpha; leaky_relu's negative_slope
  Scalar lo, hi;        ///< clamp's and hardtanh's bounds (has_lo / has_hi); fill's value is `other`
  bool has_other = false, has_lo = false, has_hi = false;
  Scalar beta = 1, threshold = 20;  ///< softplus's; elu's output scale is beta (selu's constant)
  Scalar nan = 0, posinf, neginf;   ///< nan_to_num's replacements, as the dtype holds them
};

/// An elementwise kernel over iter (out, inputs...): inputs in the op's compute dtype, the
/// output in it too or bool (comparisons, logical ops). A binary op with has_other gets one
/// input and the scalar. Copy converts dtypes; Fill has no input and writes `other`.
using ElementwiseKernel = void (*)(const StridedIter& it, const ElementwiseScalars& scalars);

/// The kernels one device type provides, entries named by op: `elementwise[OpId::Sin]`.
/// A null entry is a kernel the backend lacks (the fallback policy decides what happens).
struct KernelTable {
  ElementwiseKernel elementwise[kNumOps] = {};      ///< unary, binary, where, copy, fill
  void (*reduce)(const ReduceArgs&) = nullptr;      ///< sum, mean, max, min, argmax, argmin
  void (*softmax)(const SoftmaxArgs&) = nullptr;    ///< softmax, log_softmax
  void (*matmul)(const MatmulArgs&) = nullptr;
  void (*sort)(const SortArgs&) = nullptr;          ///< sort, topk
  void (*scan)(const ScanArgs&) = nullptr;          ///< cumsum, cumprod
  void (*index)(const IndexArgs&) = nullptr;        ///< index_select, gather
  void (*random)(const RandomArgs&) = nullptr;      ///< rand, randn, randint, arange
  void (*unscale)(const UnscaleArgs&) = nullptr;    ///< GradScaler's unscale and inf/NaN check
  void (*im2col)(const Im2colArgs&) = nullptr;      ///< unfold, fold, max pooling
  bool max_pool_channels_last = false;  ///< im2col's max pooling takes Im2colArgs::channels_last data
  /// The fused kernels (Note [Fused kernels] in src/ops/fused.h): where one is null, the front
  /// end composes the op from the entries above instead (never a CPU fallback).
  void (*linear)(const MatmulArgs&) = nullptr;           ///< matmul with bias and activation
  void (*linear_grad)(const LinearGradArgs&) = nullptr;  ///< ReLU mask and bias gradient
  void (*optimizer_step)(const OptimizerStepArgs&) = nullptr;
  void (*cross_entropy)(const CrossEntropyArgs&) = nullptr;
  void (*cross_entropy_grad)(const CrossEntropyGradArgs&) = nullptr;
  bool (*convolution)(const ConvArgs&) = nullptr;  ///< one pass of a conv2d; false: not taken
  bool convolution_channels_last = false;  ///< convolution takes ConvArgs::channels_last data
  void (*batch_norm)(const BatchNormArgs&) = nullptr;  ///< one per-channel pass of batch norm
  bool batch_norm_channels_last = false;  ///< batch_norm takes BatchNormArgs::channels_last data
  bool (*attention)(const AttentionArgs&) = nullptr;  ///< one pass of fused attention; false: not taken
  void (*layer_norm)(const LayerNormArgs&) = nullptr;  ///< one pass of layer or RMS norm
  void (*rnn_cell)(const RnnCellArgs&) = nullptr;  ///< one pass of an LSTM or GRU step
  bool (*rnn)(const RnnArgs&) = nullptr;  ///< one pass of a whole recurrence; false: not taken
  /// Records a failed check on the device without waiting; null on devices the host reads
  /// directly (they check at once).
  void (*defer_check)(const DeferredCheckArgs&) = nullptr;

  /// True when the table has a kernel for `op` (composite ops need none).
  bool has(OpId op) const noexcept {
    switch (op_family(op)) {
      case OpFamily::Unary:
      case OpFamily::Binary:
      case OpFamily::Elementwise: return elementwise[static_cast<int>(op)] != nullptr;
      case OpFamily::Reduce: return reduce != nullptr;
      case OpFamily::Softmax: return softmax != nullptr;
      case OpFamily::Matmul: return matmul != nullptr;
      case OpFamily::Sort: return sort != nullptr;
      case OpFamily::Scan: return scan != nullptr;
      case OpFamily::Index: return index != nullptr;
      case OpFamily::Random: return random != nullptr;
      case OpFamily::Unscale: return unscale != nullptr;
      case OpFamily::Im2col: return im2col != nullptr;
      case OpFamily::Composite: return true;
    }
    return false;
  }
};

}  // namespace locus::ops
