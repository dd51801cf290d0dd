// CPU benchmarks with the names and JSON layout of ../shared/bench/README.md, so compare.py
// sets them beside PyTorch measured in the same run. The method is the PyTorch side's own
// (calibrated repeat count, warm-up, median of samples), hence a small harness here rather
// than Google Benchmark, whose statistics differ.
//   locus_cpu_bench --json out.json [--only overhead,matmul,elementwise,mlp,convert,amp,everyday,cnn,attention,rnn]
// (cnn, attention and rnn only when asked for, as the PyTorch side's default leaves them out)
// The `everyday` rows (sort, topk, scans, scatters, batched products, einsum, the optimizer step
// with parameter groups) have no PyTorch side in ../shared/bench: bench/libtorch/libtorch_everyday_bench.cpp
// times the same bodies in LibTorch, and bench/everyday_bench.sh runs both in the same rounds.

#include <cstdio>
#include <string>

#include "bench/bench_cnn_model.h"
#include "bench/bench_harness.h"
#include "locus/locus.h"
#include "tools/locus/char_lm.h"
#include "tools/locus/mlp.h"

using namespace locus;
using bench::gbps;
using bench::gflops;
using bench::ms;
using bench::us;
namespace {

bench::Harness g_bench;
template <class... A>
void run(A&&... args) { g_bench.run(std::forward<A>(args)...); }

void overhead() {
  for (int64_t n : {1, 1000}) {
    const std::string sfx = std::to_string(n);
    Tensor a = rand({n}), b = rand({n}), out = empty({n});
    run("add_" + sfx, [&](long k) { for (long i = 0; i < k; ++i) { Tensor c = a + b; } }, "us", us, 15, 0.01);
    run("add_" + sfx + "_out", [&](long k) { for (long i = 0; i < k; ++i) add_out(out, a, b); }, "us", us, 15, 0.01);
    run("add_" + sfx + "_inplace", [&](long k) { for (long i = 0; i < k; ++i) a.add_(b); }, "us", us, 15, 0.01);
    Tensor ag = rand({n}, TensorOptions().requires_grad(true)), bg = rand({n}, TensorOptions().requires_grad(true));
    run("add_" + sfx + "_requires_grad", [&](long k) { for (long i = 0; i < k; ++i) { Tensor c = ag + bg; } }, "us", us, 15,
        0.01);
    run("add_" + sfx + "_requires_grad_in_no_grad", [&](long k) {
      NoGradGuard g;
      for (long i = 0; i < k; ++i) { Tensor c = ag + bg; }
    }, "us", us, 15, 0.01);
  }
  Tensor ag = rand({1}, TensorOptions().requires_grad(true)), bg = rand({1}, TensorOptions().requires_grad(true));
  run("tiny_mul_sum_backward_1", [&](long k) { for (long i = 0; i < k; ++i) (ag * bg).sum().backward(); }, "us", us, 15, 0.01);
}

// The MLP of the tutorials, as ../shared/bench/libtorch_bench.cpp times it.
void mlp() {
  manual_seed(0);
  for (int64_t batch : {64, 512}) {
    for (const std::string opt_name : {"sgd", "adam"}) {
      auto model = locus::cli::make_mlp();
      std::unique_ptr<optim::Optimizer> opt;
      if (opt_name == "sgd") opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{0.01});
      else opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions{1e-3});
      const Tensor x = randn({batch, 784});
      const Tensor y = randint(0, 10, {batch});
      const std::string sfx = opt_name + "_b" + std::to_string(batch);
      run("mlp_train_step_" + sfx, [&](long k) {
        for (long i = 0; i < k; ++i) {
          opt->zero_grad();
          nn::functional::cross_entropy((*model)(x), y).backward();
          opt->step();
        }
      }, "ms", ms, 15, 0.1);
      const double b = static_cast<double>(batch);
      run("mlp_train_" + sfx + "_samples_per_s", [&](long k) {
        for (long i = 0; i < k; ++i) {
          opt->zero_grad();
          nn::functional::cross_entropy((*model)(x), y).backward();
          opt->step();
        }
      }, "samples/s", [b](double s) { return b / s; }, 15, 0.1);
      if (opt_name != "sgd") continue;
      run("mlp_fwd_nograd_b" + std::to_string(batch), [&](long k) {
        NoGradGuard g;
        for (long i = 0; i < k; ++i) { Tensor o = (*model)(x); }
      }, "ms", ms, 15, 0.1);
      run("mlp_fwd_loss_grad_b" + std::to_string(batch), [&](long k) {
        for (long i = 0; i < k; ++i) { Tensor l = nn::functional::cross_entropy((*model)(x), y); }
      }, "ms", ms, 15, 0.1);
    }
  }
  // Each optimizer's step after 1,500 steps on a batch whose left half of pixels is always 0,
  // as the images' black border is: the moment estimates of those weights have decayed below
  // float32's normal range (Note [Denormals]). Flushed, each row runs at the speed of its
  // fresh-state row (mlp_train_step_*_b64).
  for (const std::string opt_name : {"sgd", "adam", "adamw"}) {
    auto model = locus::cli::make_mlp();
    std::unique_ptr<optim::Optimizer> opt;
    if (opt_name == "sgd") opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{0.01}.momentum(0.9));
    else if (opt_name == "adam") opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions{1e-3});
    else opt = std::make_unique<optim::AdamW>(model->parameters(), optim::AdamOptions{1e-3});
    Tensor x = randn({64, 784});
    x.narrow(1, 0, 392).zero_();
    const Tensor y = randint(0, 10, {64});
    const auto steps = [&](long k) {
      for (long i = 0; i < k; ++i) {
        opt->zero_grad();
        nn::functional::cross_entropy((*model)(x), y).backward();
        opt->step();
      }
    };
    steps(1500);
    run("mlp_train_step_" + opt_name + "_b64_underflowed", steps, "ms", ms, 15, 0.1);
  }
}

// The CNN rows of ../shared/bench (torch_cpu_bench.py --only cnn, libtorch_bench --only cnn):
// the Adam training step at batch 64 and 256, the eval forward, three convolutions, BatchNorm2d
// and MaxPool2d.
void cnn() {
  manual_seed(0);
  for (int64_t batch : {64, 256}) {
    nn::Sequential model = bench::cnn_model();
    optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
    const Tensor x = randn({batch, 1, 28, 28});
    const Tensor y = randint(0, 10, {batch});
    const auto step = [&](long k) {
      for (long i = 0; i < k; ++i) {
        opt.zero_grad();
        nn::functional::cross_entropy(model(x), y).backward();
        opt.step();
      }
    };
    const std::string b = "_b" + std::to_string(batch);
    run("cnn_train_step_adam" + b, step, "ms", ms, batch == 64 ? 15 : 11, 0.1);
    const double n = static_cast<double>(batch);
    run("cnn_train_adam" + b + "_samples_per_s", step, "samples/s", [n](double s) { return n / s; }, batch == 64 ? 15 : 11, 0.1);
    if (batch != 64) continue;
    model->eval();
    run("cnn_fwd_nograd" + b, [&](long k) {
      NoGradGuard g;
      for (long i = 0; i < k; ++i) { Tensor o = model(x); }
    }, "ms", ms, 15, 0.1);
  }
  struct ConvRow {
    const char* name;
    int64_t cin, cout, hw, batch;
    bool backward;
  };
  for (const ConvRow& r : {ConvRow{"conv2d_3x3_32to64_14x14_b64", 32, 64, 14, 64, true},
                           ConvRow{"conv2d_3x3_64to64_56x56_b8", 64, 64, 56, 8, true},
                           ConvRow{"conv2d_1to32_28x28_b64", 1, 32, 28, 64, false}}) {
    nn::Conv2d conv(nn::Conv2dOptions(r.cin, r.cout, 3).padding(1));
    const Tensor x = randn({r.batch, r.cin, r.hw, r.hw});
    run(std::string(r.name) + "_fwd", [&](long k) {
      NoGradGuard g;
      for (long i = 0; i < k; ++i) { Tensor o = conv(x); }
    }, "ms", ms, 15, 0.1);
    if (!r.backward) continue;
    const Tensor xg = x.clone().requires_grad_();
    run(std::string(r.name) + "_fwdbwd", [&](long k) {
      // PyTorch's row takes autograd.grad (nothing accumulated): backward, gradients dropped.
      for (long i = 0; i < k; ++i) {
        conv(xg).sum().backward();
        for (Tensor t : {xg, conv->weight, conv->bias}) t.set_grad(Tensor());
      }
    }, "ms", ms, 15, 0.1);
  }
  nn::BatchNorm2d bn(64);
  const Tensor xb = randn({64, 64, 14, 14}).requires_grad_();
  run("batchnorm2d_64ch_14x14_b64_train_fwdbwd", [&](long k) {
    for (long i = 0; i < k; ++i) {
      bn(xb).sum().backward();
      for (Tensor t : {xb, bn->weight, bn->bias}) t.set_grad(Tensor());
    }
  }, "ms", ms, 15, 0.1);
  nn::MaxPool2d pool(2);
  const Tensor xp = randn({64, 64, 28, 28});
  run("maxpool2d_2x2_64ch_28x28_b64_fwd", [&](long k) {
    NoGradGuard g;
    for (long i = 0; i < k; ++i) { Tensor o = pool(xp); }
  }, "ms", ms, 15, 0.1);
}

// The same MLP step under autocast bfloat16 (bench/torch_amp_bench.py times torch.autocast).
void amp_group() {
  manual_seed(0);
  for (int64_t batch : {64, 512}) {
    auto model = locus::cli::make_mlp();
    optim::SGD opt(model->parameters(), optim::SGDOptions{0.01});
    const Tensor x = randn({batch, 784});
    const Tensor y = randint(0, 10, {batch});
    run("mlp_amp_bf16_train_step_sgd_b" + std::to_string(batch), [&](long k) {
      for (long i = 0; i < k; ++i) {
        opt.zero_grad();
        Tensor loss;
        {
          const amp::AutocastGuard autocast(kCPU, kBFloat16);
          loss = nn::functional::cross_entropy((*model)(x), y);
        }
        loss.backward();
        opt.step();
      }
    }, "ms", ms, 15, 0.1);
  }
}

void matmul_group() {
  for (int64_t n : {256, 512, 1024, 2048}) {
    Tensor a = rand({n, n}), b = rand({n, n}), c = empty({n, n});
    run("mm_" + std::to_string(n), [&](long k) { for (long i = 0; i < k; ++i) mm_out(c, a, b); }, "GFLOP/s",
        gflops(2.0 * n * n * n), 11, 0.05);
  }
  for (int64_t m : {64, 512}) {
    Tensor a = rand({m, 784}), b = rand({784, 256}), c = empty({m, 256});
    run("mm_" + std::to_string(m) + "x784x256", [&](long k) { for (long i = 0; i < k; ++i) mm_out(c, a, b); },
        "GFLOP/s", gflops(2.0 * m * 784 * 256), 11, 0.05);
  }
}

void elementwise() {
  const int64_t n = int64_t{1} << 24;
  const double f = static_cast<double>(n);
  Tensor a = rand({n}), b = rand({n}), c = rand({n}), out = empty({n}), tmp = empty({n});
  run("ew_add_16M_out", [&](long k) { for (long i = 0; i < k; ++i) add_out(out, a, b); }, "GB/s", gbps(12 * f), 11, 0.05);
  run("ew_add_16M_alloc", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = a + b; } }, "GB/s", gbps(12 * f), 11, 0.05);
  run("ew_add_16M_alloc_ms", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = a + b; } }, "ms", ms, 11, 0.05);
  run("ew_relu_16M_alloc", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = relu(a); } }, "GB/s", gbps(8 * f), 11, 0.05);
  run("ew_relu_16M_out", [&](long k) { for (long i = 0; i < k; ++i) relu_out(out, a); }, "GB/s", gbps(8 * f), 11, 0.05);
  run("ew_relu_16M_inplace", [&](long k) { for (long i = 0; i < k; ++i) out.relu_(); }, "GB/s", gbps(8 * f), 11, 0.05);
  run("ew_fma_relu_16M_alloc", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = (a * b + c).relu(); } }, "GB/s",
      gbps(16 * f), 11, 0.05);
  run("ew_fma_relu_16M_alloc_ms", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = (a * b + c).relu(); } }, "ms", ms,
      11, 0.05);
  run("ew_fma_relu_16M_prealloc", [&](long k) {
    for (long i = 0; i < k; ++i) {
      mul_out(tmp, a, b);
      add_out(out, tmp, c);
      out.relu_();
    }
  }, "GB/s", gbps(16 * f), 11, 0.05);
  run("reduce_sum_16M", [&](long k) { for (long i = 0; i < k; ++i) { Tensor s = a.sum(); } }, "GB/s", gbps(4 * f), 11, 0.05);
}

void convert() {
  const int64_t n = int64_t{1} << 24;
  const double f = static_cast<double>(n);
  Tensor a = rand({n});
  struct Conv { const char* name; DType d; double bytes; };
  for (const Conv& cv : {Conv{"f16", kFloat16, 6}, Conv{"bf16", kBFloat16, 6}, Conv{"f64", kFloat64, 12}, Conv{"i32", kInt32, 8}}) {
    Tensor out = empty({n}, cv.d);
    run(std::string("to_") + cv.name + "_16M_alloc", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = a.to(cv.d); } },
        "GB/s", gbps(cv.bytes * f), 11, 0.05);
    run(std::string("to_") + cv.name + "_16M_prealloc", [&](long k) { for (long i = 0; i < k; ++i) out.copy_(a); }, "GB/s",
        gbps(cv.bytes * f), 11, 0.05);
  }
  Tensor h = a.to(kFloat16), out = empty({n});
  run("f16_to_f32_16M_alloc", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = h.to(kFloat32); } }, "GB/s", gbps(6 * f), 11, 0.05);
  run("clone_16M_alloc", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = a.clone(); } }, "GB/s", gbps(8 * f), 11, 0.05);
  run("copy_16M_prealloc", [&](long k) { for (long i = 0; i < k; ++i) out.copy_(a); }, "GB/s", gbps(8 * f), 11, 0.05);
  Tensor sq = rand({4096, 4096});
  run("transpose_contiguous_4096sq", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = sq.t().contiguous(); } }, "GB/s",
      gbps(8.0 * 4096 * 4096), 11, 0.05);
}


// The ops of a training script beyond the MLP, with the sizes such scripts give them. Each body
// is the one bench/libtorch/libtorch_everyday_bench.cpp times.
void everyday() {
  manual_seed(0);
  const Tensor v1m = randn({int64_t{1} << 20});
  const Tensor rows = randn({256, 4096});
  run("sort_1M", [&](long k) { for (long i = 0; i < k; ++i) { auto r = sort(v1m); } }, "ms", ms, 11, 0.05,
      "sort(x) of 2^20 floats");
  run("sort_rows_256x4096", [&](long k) { for (long i = 0; i < k; ++i) { auto r = sort(rows, 1); } }, "ms", ms, 11, 0.05,
      "sort(x, 1): 256 rows of 4096");
  run("argsort_rows_256x4096", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = argsort(rows, 1, true); } }, "ms",
      ms, 11, 0.05, "argsort(x, 1, descending)");
  run("topk_1M_k100", [&](long k) { for (long i = 0; i < k; ++i) { auto r = topk(v1m, 100); } }, "ms", ms, 11, 0.05,
      "topk(x, 100) of 2^20 floats");
  run("topk_rows_256x4096_k10", [&](long k) { for (long i = 0; i < k; ++i) { auto r = topk(rows, 10, 1); } }, "ms", ms, 11,
      0.05, "topk(x, 10, 1)");
  const Tensor v16m = rand({int64_t{1} << 24});
  run("cumsum_16M", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = cumsum(v16m, 0); } }, "GB/s",
      gbps(8.0 * (1 << 24)), 11, 0.05, "cumsum(x, 0); 8 B/elt");
  const Tensor wide = rand({1024, 4096});
  run("cumsum_rows_1024x4096", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = cumsum(wide, 1); } }, "GB/s",
      gbps(8.0 * 1024 * 4096), 11, 0.05, "cumsum(x, 1); 8 B/elt");
  run("cumsum_cols_1024x4096", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = cumsum(wide, 0); } }, "GB/s",
      gbps(8.0 * 1024 * 4096), 11, 0.05, "cumsum(x, 0); 8 B/elt");
  // Segment sums as a graph network's message passing does them: 65536 messages of 64 features
  // into 4096 nodes.
  const Tensor src = randn({65536, 64});
  const Tensor node = randint(0, 4096, {65536});
  const Tensor index = node.unsqueeze(1).expand({65536, 64}).contiguous();
  Tensor nodes = zeros({4096, 64});
  run("scatter_add_65536x64", [&](long k) { for (long i = 0; i < k; ++i) nodes.scatter_add_(0, index, src); }, "ms", ms, 11,
      0.05, "out.scatter_add_(0, index, src) into 4096x64");
  run("index_add_65536x64", [&](long k) { for (long i = 0; i < k; ++i) nodes.index_add_(0, node, src); }, "ms", ms, 11, 0.05,
      "out.index_add_(0, index, src) into 4096x64");
  const Tensor perm = randperm(int64_t{1} << 20);
  run("scatter_1M", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = v1m.scatter(0, perm, v1m); } }, "ms",
      ms, 11, 0.05, "x.scatter(0, perm, x) of 2^20 floats");
  // Attention-shaped products: 8 sequences x 8 heads, 128 positions, 64 features per head.
  const Tensor q = randn({64, 128, 64}), kt = randn({64, 64, 128});
  run("bmm_64x128x64x128", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = bmm(q, kt); } }, "GFLOP/s",
      gflops(2.0 * 64 * 128 * 64 * 128), 11, 0.05, "bmm [64,128,64] x [64,64,128]");
  const Tensor q4 = randn({8, 8, 128, 64}), k4 = randn({8, 8, 128, 64});
  run("einsum_bhqd_bhkd", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = einsum("bhqd,bhkd->bhqk", {q4, k4}); } },
      "GFLOP/s", gflops(2.0 * 64 * 128 * 64 * 128), 11, 0.05, "einsum(\"bhqd,bhkd->bhqk\") 8x8x128x64");
  const Tensor xb = randn({512, 784}), w = randn({256, 784});
  run("einsum_bi_oi", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = einsum("bi,oi->bo", {xb, w}); } }, "GFLOP/s",
      gflops(2.0 * 512 * 784 * 256), 11, 0.05, "einsum(\"bi,oi->bo\"): a Linear layer");
  // The optimizer step alone on the MLP's parameters with weight decay 1e-4: in one group, and in
  // the usual two (the biases without decay), nearly the same work: the fused step must not care.
  for (const int groups : {1, 2}) {
    auto model = locus::cli::make_mlp();
    std::vector<Tensor> weights, biases, all = model->parameters();
    for (const auto& [name, p] : model->named_parameters()) (name.ends_with("bias") ? biases : weights).push_back(p);
    for (const Tensor& p : all) p.set_grad(randn(p.sizes()));
    std::vector<optim::OptimizerParamGroup> param_groups;
    if (groups == 1) {
      param_groups.emplace_back(all);
    } else {
      param_groups.emplace_back(weights);
      param_groups.emplace_back(biases, std::make_unique<optim::AdamOptions>(optim::AdamOptions(1e-3).weight_decay(0)));
    }
    optim::Adam adam(std::move(param_groups), optim::AdamOptions(1e-3).weight_decay(1e-4));
    run("optim_adam_step_mlp_" + std::to_string(groups) + "group" + (groups > 1 ? "s" : ""),
        [&](long k) { for (long i = 0; i < k; ++i) adam.step(); }, "us", us, 15, 0.05,
        "Adam.step() over 784-256-10's parameters");
  }
}
// The attention rows of ../shared/bench (--only attention): scaled_dot_product_attention forward
// and forward + backward at two shapes, causal and not, on the default path (the fused kernel);
// the char-LM's training step; and, beside them, forward + backward at L = 4096 with its peak
// memory, which the fused kernel keeps linear in L (the [L, L] scores alone would be 512 MiB).
void attention() {
  manual_seed(0);
  struct Dims {
    int64_t n, h, l, e;
  };
  for (Dims d : {Dims{8, 4, 256, 32}, Dims{1, 8, 1024, 64}}) {
    const int samples = d.l >= 1024 ? 11 : 15;
    const std::string p = "sdpa_" + std::to_string(d.n) + "x" + std::to_string(d.h) + "x" + std::to_string(d.l) + "x" +
                          std::to_string(d.e);
    const Tensor q = randn({d.n, d.h, d.l, d.e}), k = randn({d.n, d.h, d.l, d.e}), v = randn({d.n, d.h, d.l, d.e});
    run(p + "_fwd", [&](long n) {
      NoGradGuard g;
      for (long i = 0; i < n; ++i) { Tensor o = scaled_dot_product_attention(q, k, v); }
    }, "ms", ms, samples, 0.1);
    const Tensor qg = q.clone().requires_grad_(), kg = k.clone().requires_grad_(), vg = v.clone().requires_grad_();
    for (bool causal : {false, true}) {
      run(p + (causal ? "_causal_fwdbwd" : "_fwdbwd"), [&](long n) {
        // PyTorch's row takes autograd.grad (nothing accumulated): backward, gradients dropped.
        for (long i = 0; i < n; ++i) {
          scaled_dot_product_attention(qg, kg, vg, {}, 0.0, causal).sum().backward();
          for (Tensor t : {qg, kg, vg}) t.set_grad(Tensor());
        }
      }, "ms", ms, samples, 0.1);
    }
  }
  {
    const Device cpu("cpu");
    const Tensor q = randn({1, 8, 4096, 64}).requires_grad_(), k = randn({1, 8, 4096, 64}).requires_grad_(),
                 v = randn({1, 8, 4096, 64}).requires_grad_();
    memory::reset_peak_memory_stats(cpu);
    const int64_t before = memory::memory_allocated(cpu);
    scaled_dot_product_attention(q, k, v, {}, 0.0, true).sum().backward();
    const double peak_mib = static_cast<double>(memory::max_memory_allocated(cpu) - before) / (1 << 20);
    for (Tensor t : {q, k, v}) t.set_grad(Tensor());
    run("sdpa_1x8x4096x64_causal_fwdbwd", [&](long n) {
      for (long i = 0; i < n; ++i) {
        scaled_dot_product_attention(q, k, v, {}, 0.0, true).sum().backward();
        for (Tensor t : {q, k, v}) t.set_grad(Tensor());
      }
    }, "ms", ms, 5, 0.1, "peak memory above the inputs: " + std::to_string(peak_mib) + " MiB (the scores alone: 512 MiB)");
    std::fprintf(stderr, "sdpa 1x8x4096x64 causal forward+backward: peak %.1f MiB above the inputs\n", peak_mib);
  }
  cli::CharLMConfig config;
  config.vocab = 96, config.dropout = 0.0;
  cli::CharLM model(config);
  model->train();
  optim::AdamW opt(model->parameters(), optim::AdamW::with_default_decay().lr(3e-4));
  const Tensor x = randint(0, 96, {32, 128}), y = randint(0, 96, {32, 128});
  run("charlm_train_step_b32", [&](long n) {
    for (long i = 0; i < n; ++i) {
      opt.zero_grad();
      nn::functional::cross_entropy(model(x).view({-1, 96}), y.view({-1})).backward();
      opt.step();
    }
  }, "ms", ms, 11, 0.1);
}

// The rnn row of ../shared/bench (--only rnn): a word-level LSTM language model's training
// step, Embedding(1000, 128) -> LSTM(128, 256, 2 layers) -> Linear(256, 1000) over tokens
// [35, 32] (sequence-first, as LibTorch's), cross_entropy, SGD(0.1).
struct LstmLMImpl : nn::Module {
  LstmLMImpl(int64_t vocab, int64_t embed, int64_t hidden, int64_t layers) {
    emb = register_module("emb", nn::Embedding(vocab, embed));
    lstm = register_module("lstm", nn::LSTM(nn::LSTMOptions(embed, hidden).num_layers(layers)));
    head = register_module("head", nn::Linear(hidden, vocab));
  }
  Tensor forward(const Tensor& idx) { return head(std::get<0>(lstm(emb(idx)))); }
  nn::Embedding emb{nullptr};
  nn::LSTM lstm{nullptr};
  nn::Linear head{nullptr};
};
LOCUS_MODULE(LstmLM);

void rnn() {
  manual_seed(0);
  const int64_t V = 1000, L = 35, B = 32;
  LstmLM model(V, 128, 256, 2);
  model->train();
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1));
  const Tensor x = randint(0, V, {L, B}), y = randint(0, V, {L, B});
  run("lstm_lm_train_step_b32", [&](long n) {
    for (long i = 0; i < n; ++i) {
      opt.zero_grad();
      nn::functional::cross_entropy(model(x).view({-1, V}), y.view({-1})).backward();
      opt.step();
    }
  }, "ms", ms, 11, 0.1);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::Options opt(argc, argv, {"overhead", "matmul", "elementwise", "mlp", "convert", "amp", "everyday"});
  if (opt.wants("overhead")) overhead();
  if (opt.wants("mlp")) mlp();
  if (opt.wants("amp")) amp_group();
  if (opt.wants("matmul")) matmul_group();
  if (opt.wants("elementwise")) elementwise();
  if (opt.wants("convert")) convert();
  if (opt.wants("everyday")) everyday();
  if (opt.wants("cnn")) cnn();
  if (opt.wants("attention")) attention();
  if (opt.wants("rnn")) rnn();
  if (!opt.json.empty()) g_bench.write_json(opt.json, "locus", std::string("{\"version\": \"") + version() + "\"}");
}
