// GPU benchmarks with the names and JSON layout of ../shared/bench/README.md (the gpu_ rows of
// torch_gpu_bench.py), so compare.py sets them beside PyTorch run on the same machine in the
// same call (scripts/gpu-check.sh does both).
//   locus_gpu_bench --json out.json [--only copy,ew,mm,transfer,alloc,overhead,mlp,amp,cnn,attention]
// gpu_mlp_train_step_sgd_b512_graph (a CUDA-graph replay) has no Locus counterpart yet.

#include <optional>
#include <string>
#include <vector>

#include "bench/bench_cnn_model.h"
#include "bench/bench_harness.h"
#include "locus/locus.h"
#include "tools/locus/char_lm.h"
#include "tools/locus/mlp.h"

using namespace locus;
using bench::gbps;
using bench::ms;
using bench::us;
namespace {

const Device kGpu("cuda:0");
bench::Harness g_bench([] { cuda::synchronize(); });
template <class... A>
void run(A&&... args) { g_bench.run(std::forward<A>(args)...); }

void copy_group() {
  const int64_t n = int64_t{1} << 28;  // 1 GiB of float32
  Tensor src = randn({n}, kGpu), dst = empty({n}, kGpu);
  run("gpu_copy_d2d_1G", [&](long k) { for (long i = 0; i < k; ++i) dst.copy_(src); }, "GB/s", gbps(8.0 * n), 11);
}

void ew_group() {
  const int64_t n = int64_t{1} << 28;
  const double f = static_cast<double>(n);
  Tensor a = randn({n}, kGpu), b = randn({n}, kGpu), c = randn({n}, kGpu), out = empty({n}, kGpu);
  run("gpu_ew_add_256M_out", [&](long k) { for (long i = 0; i < k; ++i) add_out(out, a, b); }, "GB/s", gbps(12 * f), 11);
  run("gpu_ew_add_256M_alloc", [&](long k) { for (long i = 0; i < k; ++i) { Tensor r = a + b; } }, "GB/s", gbps(12 * f), 11);
  run("gpu_ew_relu_256M_out", [&](long k) { for (long i = 0; i < k; ++i) relu_out(out, a); }, "GB/s", gbps(8 * f), 11);
  run("gpu_ew_fma_relu_256M_prealloc", [&](long k) {
    for (long i = 0; i < k; ++i) {
      mul_out(out, a, b);
      add_out(out, out, c);
      out.relu_();
    }
  }, "GB/s", gbps(16 * f), 11, 0.02, "three kernels (ideal fused traffic counted, as on the PyTorch side)");
  run("gpu_reduce_sum_256M", [&](long k) { for (long i = 0; i < k; ++i) { Tensor s = a.sum(); } }, "GB/s", gbps(4 * f), 11);
  Tensor half = empty({n}, TensorOptions().dtype(kBFloat16).device(kGpu));
  run("gpu_to_bf16_256M_out", [&](long k) { for (long i = 0; i < k; ++i) half.copy_(a); }, "GB/s", gbps(6 * f), 11);
  a = b = c = out = half = Tensor();
  Tensor x = randn({8192, 8192}, kGpu);
  run("gpu_softmax_8192x8192", [&](long k) { for (long i = 0; i < k; ++i) { Tensor s = softmax(x, 1); } }, "GB/s",
      gbps(8.0 * 8192 * 8192), 11);
}

void mm_group() {
  struct Kind { const char* name; DType dtype; bool tf32; };
  for (const Kind& kind : {Kind{"fp32", kFloat32, false}, Kind{"tf32", kFloat32, true}, Kind{"bf16", kBFloat16, false},
                           Kind{"fp16", kFloat16, false}}) {
    cuda::set_allow_tf32(kind.tf32);
    for (int64_t n : {1024, 2048, 4096, 8192}) {
      // Rotating input sets larger than L2, so each product reads its operands from memory.
      const int64_t bytes = n * n * static_cast<int64_t>(itemsize(kind.dtype));
      const int sets = static_cast<int>(std::max<int64_t>(1, (int64_t{4} * 50 * 1024 * 1024 + 2 * bytes - 1) / (2 * bytes)));
      std::vector<Tensor> as, bs;
      for (int s = 0; s < sets; ++s) {
        as.push_back(randn({n, n}, TensorOptions().dtype(kind.dtype).device(kGpu)));
        bs.push_back(randn({n, n}, TensorOptions().dtype(kind.dtype).device(kGpu)));
      }
      Tensor c = empty({n, n}, TensorOptions().dtype(kind.dtype).device(kGpu));
      run(std::string("gpu_mm_") + kind.name + "_" + std::to_string(n),
          [&](long k) { for (long i = 0; i < k; ++i) mm_out(c, as[static_cast<size_t>(i % sets)], bs[static_cast<size_t>(i % sets)]); },
          "TFLOP/s", bench::flops(2.0 * n * n * n, 1e12), 11, 0.05);
    }
  }
  cuda::set_allow_tf32(false);
}

void transfer_group() {
  const int64_t n = int64_t{1} << 26;  // 256 MiB of float32
  const double bytes = 4.0 * n;
  Tensor dev = randn({n}, kGpu);
  Tensor pinned = empty({n}, TensorOptions().pinned_memory(true)), pageable = empty({n});
  pinned.fill_(1.f), pageable.fill_(1.f);
  run("gpu_h2d_pinned_256M", [&](long k) { for (long i = 0; i < k; ++i) dev.copy_(pinned, true); }, "GB/s", gbps(bytes), 11);
  run("gpu_h2d_pageable_256M", [&](long k) { for (long i = 0; i < k; ++i) dev.copy_(pageable); }, "GB/s", gbps(bytes), 11);
  run("gpu_d2h_pinned_256M", [&](long k) {
    for (long i = 0; i < k; ++i) pinned.copy_(dev, true);
    (void)pinned.data_ptr<float>()[0];  // the host waits for the last copy, as torch.cuda.synchronize does
  }, "GB/s", gbps(bytes), 11);
  run("gpu_d2h_pageable_256M", [&](long k) { for (long i = 0; i < k; ++i) pageable.copy_(dev); }, "GB/s", gbps(bytes), 11);
}

void alloc_group() {
  for (int64_t n : {int64_t{1} << 20, int64_t{1} << 26}) {
    { Tensor warm = empty({n}, kGpu); }
    run(std::string("gpu_alloc_free_") + (n == (1 << 20) ? "1M" : "64M"),
        [&](long k) { for (long i = 0; i < k; ++i) { Tensor t = empty({n}, kGpu); } }, "us", us, 15);
  }
  // empty_cache releasing 16 cached 64 MiB segments; the refill is outside the timed call.
  std::vector<double> samples;
  for (int s = 0; s < 11; ++s) {
    {
      std::vector<Tensor> keep;
      for (int i = 0; i < 16; ++i) keep.push_back(empty({int64_t{1} << 24}, kGpu));
    }
    cuda::synchronize();
    const double t0 = bench::now();
    cuda::empty_cache();
    samples.push_back(ms(bench::now() - t0));
  }
  g_bench.record("gpu_empty_cache_ms", "ms", samples, "host-timed calls releasing 16 x 64 MiB");
}

void overhead_group() {
  Tensor a = randn({1}, kGpu), b = randn({1}, kGpu), out = empty({1}, kGpu);
  run("gpu_add_1_launch", [&](long k) { for (long i = 0; i < k; ++i) { Tensor c = a + b; } }, "us", us, 15, 0.01);
  run("gpu_add_1_launch_out", [&](long k) { for (long i = 0; i < k; ++i) add_out(out, a, b); }, "us", us, 15, 0.01);
}

void mlp_group() {
  auto make = [] {
    manual_seed(0);
    auto m = locus::cli::make_mlp();
    m->to(kGpu);
    return m;
  };
  struct Case { int64_t batch; bool adam; };
  for (const Case c : {Case{64, false}, Case{512, false}, Case{4096, false}, Case{512, true}}) {
    auto model = make();
    std::unique_ptr<optim::Optimizer> opt;
    if (c.adam) opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions{1e-3});
    else opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions{0.01});
    const Tensor x = randn({c.batch, 784}, kGpu);
    const Tensor y = randint(0, 10, {c.batch}, kGpu);
    auto step = [&](long k) {
      for (long i = 0; i < k; ++i) {
        opt->zero_grad();
        nn::functional::cross_entropy((*model)(x), y).backward();
        opt->step();
      }
    };
    const std::string sfx = std::string(c.adam ? "adam" : "sgd") + "_b" + std::to_string(c.batch);
    run("gpu_mlp_train_step_" + sfx, step, "ms", ms, 11, 0.1);
    if (!c.adam) {
      const double b = static_cast<double>(c.batch);
      run("gpu_mlp_train_" + sfx + "_samples_per_s", step, "samples/s", [b](double sec) { return b / sec; }, 11, 0.1);
    }
  }
  // One epoch of 60000 pinned host samples, batch 64, each batch copied with non_blocking.
  auto model = make();
  optim::SGD opt(model->parameters(), {0.01});
  const Tensor images = randn({60000, 784}).pin_memory();
  const Tensor labels = randint(0, 10, {60000}).pin_memory();
  std::vector<double> samples;
  for (int s = 0; s < 3; ++s) {
    cuda::synchronize();
    const double t0 = bench::now();
    for (int64_t i = 0; i + 64 <= 60000; i += 64) {
      const Tensor xb = images.narrow(0, i, 64).to(kGpu, true), yb = labels.narrow(0, i, 64).to(kGpu, true);
      opt.zero_grad();
      nn::functional::cross_entropy((*model)(xb), yb).backward();
      opt.step();
    }
    cuda::synchronize();
    samples.push_back(bench::now() - t0);
  }
  g_bench.record("gpu_mlp_epoch_fashion_mnist_like_s", "s", samples, "60000 pinned samples, batch 64, SGD");
}

// The MLP step under autocast (GradScaler for float16), beside bench/torch_amp_bench.py --device cuda.
void amp_group() {
  for (const int64_t batch : {int64_t{512}, int64_t{4096}}) {
    for (const DType dtype : {kFloat16, kBFloat16}) {
      manual_seed(0);
      auto model = locus::cli::make_mlp();
      model->to(kGpu);
      optim::SGD opt(model->parameters(), {0.01});
      amp::GradScaler scaler(amp::GradScalerOptions().enabled(dtype == kFloat16));
      const Tensor x = randn({batch, 784}, kGpu);
      const Tensor y = randint(0, 10, {batch}, kGpu);
      run("gpu_mlp_amp_" + std::string(dtype == kFloat16 ? "fp16" : "bf16") + "_train_step_sgd_b" + std::to_string(batch),
          [&](long k) {
            for (long i = 0; i < k; ++i) {
              opt.zero_grad();
              Tensor loss;
              {
                const amp::AutocastGuard autocast(kCUDA, dtype);
                loss = nn::functional::cross_entropy((*model)(x), y);
              }
              scaler.scale(loss).backward();
              scaler.step(opt);
              scaler.update();
            }
          },
          "ms", ms, 11, 0.1);
    }
  }
}

// The cnn rows of torch_gpu_bench.py. Its float32 rows run with PyTorch's cuDNN default, TF32
// allowed, so Locus's allow it too here (Locus's own default is off). Its _bf16_cl rows are
// channels-last; Locus has no channels-last layout and runs the same bfloat16 work in NCHW.
void cnn_group() {
  cuda::set_allow_tf32(true);
  for (const int64_t batch : {int64_t{64}, int64_t{256}}) {
    for (const bool bf16 : {false, true}) {
      manual_seed(0);
      nn::Sequential model = bench::cnn_model();
      model->to(kGpu);
      optim::Adam opt(model->parameters(), optim::AdamOptions(1e-3));
      const Tensor x = randn({batch, 1, 28, 28}, kGpu);
      const Tensor y = randint(0, 10, {batch}, kGpu);
      const auto step = [&](long k) {
        for (long i = 0; i < k; ++i) {
          opt.zero_grad();
          Tensor loss;
          {
            const amp::AutocastGuard autocast(kCUDA, kBFloat16, bf16);
            loss = nn::functional::cross_entropy(model(x), y);
          }
          loss.backward();
          opt.step();
        }
      };
      const std::string b = "_b" + std::to_string(batch) + (bf16 ? "_bf16_cl" : "");
      const char* how = bf16 ? "autocast bf16, NCHW (no channels-last in Locus)" : "fp32, TF32 allowed";
      run("gpu_cnn_train_step_adam" + b, step, "ms", ms, 11, 0.1, how);
      const double n = static_cast<double>(batch);
      run("gpu_cnn_train_adam" + b + "_samples_per_s", step, "samples/s", [n](double s) { return n / s; }, 11, 0.1, how);
      if (batch != 64 || bf16) continue;
      model->eval();
      run("gpu_cnn_fwd_nograd_b64", [&](long k) {
        NoGradGuard g;
        for (long i = 0; i < k; ++i) { Tensor o = model(x); }
      }, "ms", ms, 11, 0.1, how);
    }
  }
  struct ConvRow {
    const char* name;
    int64_t cin, cout, hw, batch;
    bool backward;
  };
  for (const ConvRow& r : {ConvRow{"gpu_conv2d_3x3_32to64_14x14_b64", 32, 64, 14, 64, true},
                           ConvRow{"gpu_conv2d_3x3_64to64_56x56_b8", 64, 64, 56, 8, true},
                           ConvRow{"gpu_conv2d_1to32_28x28_b64", 1, 32, 28, 64, false}}) {
    for (const bool bf16 : {false, true}) {
      const DType dtype = bf16 ? kBFloat16 : kFloat32;
      nn::Conv2d conv(nn::Conv2dOptions(r.cin, r.cout, 3).padding(1));
      conv->to(kGpu, dtype);
      const Tensor x = randn({r.batch, r.cin, r.hw, r.hw}, kGpu).to(dtype);
      const std::string name = std::string(r.name) + (bf16 ? "_bf16_cl" : "");
      const char* how = bf16 ? "bf16, NCHW (no channels-last in Locus)" : "fp32, TF32 allowed";
      run(name + "_fwd", [&](long k) {
        NoGradGuard g;
        for (long i = 0; i < k; ++i) { Tensor o = conv(x); }
      }, "ms", ms, 11, 0.1, how);
      if (!r.backward) continue;
      const Tensor xg = x.clone().requires_grad_();
      run(name + "_fwdbwd", [&](long k) {
        // PyTorch's row takes autograd.grad (nothing accumulated): backward, gradients dropped.
        for (long i = 0; i < k; ++i) {
          conv(xg).sum().backward();
          for (Tensor t : {xg, conv->weight, conv->bias}) t.set_grad(Tensor());
        }
      }, "ms", ms, 11, 0.1, how);
    }
  }
  cuda::set_allow_tf32(false);
  nn::BatchNorm2d bn(64);
  bn->to(kGpu);
  const Tensor xb = randn({64, 64, 14, 14}, kGpu).requires_grad_();
  run("gpu_batchnorm2d_64ch_14x14_b64_train_fwdbwd", [&](long k) {
    for (long i = 0; i < k; ++i) {
      bn(xb).sum().backward();
      for (Tensor t : {xb, bn->weight, bn->bias}) t.set_grad(Tensor());
    }
  }, "ms", ms, 11, 0.1);
  nn::MaxPool2d pool(2);
  const Tensor xp = randn({64, 64, 28, 28}, kGpu);
  run("gpu_maxpool2d_2x2_64ch_28x28_b64_fwd", [&](long k) {
    NoGradGuard g;
    for (long i = 0; i < k; ++i) { Tensor o = pool(xp); }
  }, "ms", ms, 11, 0.1);
}

// The attention rows of torch_gpu_bench.py: scaled_dot_product_attention forward and forward +
// backward (causal and not) in float32 and bfloat16, with the _cudnn rows forced to cuDNN's fused
// attention, and the char-LM's training step in float32 and under autocast bfloat16. Each row's
// note names the path that ran (Note [Attention paths]): bfloat16 takes cuDNN where it has an
// engine, float32 the composition.
void attention_group() {
  using nn::attention::SDPBackend;
  struct Case {
    int64_t n, h, l, e;
    DType dtype;
    bool forced_cudnn;
  };
  for (const Case& c : {Case{8, 4, 256, 32, kFloat32, false}, Case{1, 8, 1024, 64, kFloat32, false},
                        Case{8, 4, 256, 32, kBFloat16, false}, Case{1, 8, 1024, 64, kBFloat16, false},
                        Case{4, 16, 2048, 128, kBFloat16, false}, Case{4, 16, 2048, 128, kBFloat16, true}}) {
    const std::string p = "gpu_sdpa_" + std::to_string(c.n) + "x" + std::to_string(c.h) + "x" + std::to_string(c.l) + "x" +
                          std::to_string(c.e) + (c.dtype == kBFloat16 ? "_bf16" : "");
    const std::string suffix = c.forced_cudnn ? "_cudnn" : "";
    const TensorOptions o = TensorOptions().dtype(c.dtype).device(kGpu);
    const Tensor q = randn({c.n, c.h, c.l, c.e}, o), k = randn({c.n, c.h, c.l, c.e}, o), v = randn({c.n, c.h, c.l, c.e}, o);
    std::optional<nn::attention::sdpa_kernel> only;
    if (c.forced_cudnn) only.emplace(SDPBackend::CUDNN_ATTENTION);
    try {
      scaled_dot_product_attention(q, k, v);  // which path runs, for the notes
    } catch (const Error& e) {
      std::fprintf(stderr, "locus_gpu_bench: %s%s skipped: %s\n", p.c_str(), suffix.c_str(), e.what());
      continue;
    }
    const std::string how = std::string("path ") + nn::attention::sdpa_backend_name(nn::attention::last_sdpa_backend()) +
                            (c.forced_cudnn ? " (forced with sdpa_kernel)" : "");
    run(p + "_fwd" + suffix, [&](long n) {
      NoGradGuard g;
      for (long i = 0; i < n; ++i) { Tensor out = scaled_dot_product_attention(q, k, v); }
    }, "ms", ms, 11, 0.1, how.c_str());
    const Tensor qg = q.clone().requires_grad_(), kg = k.clone().requires_grad_(), vg = v.clone().requires_grad_();
    for (const bool causal : {false, true}) {
      run(p + (causal ? "_causal_fwdbwd" : "_fwdbwd") + suffix, [&](long n) {
        for (long i = 0; i < n; ++i) {
          scaled_dot_product_attention(qg, kg, vg, {}, 0.0, causal).sum().backward();
          for (Tensor t : {qg, kg, vg}) t.set_grad(Tensor());
        }
      }, "ms", ms, 11, 0.1, how.c_str());
    }
  }
  for (const bool bf16 : {false, true}) {
    manual_seed(0);
    cli::CharLMConfig config;
    config.vocab = 96, config.dropout = 0.0;
    cli::CharLM model(config);
    model->to(kGpu);
    optim::AdamW opt(model->parameters(), optim::AdamW::with_default_decay().lr(3e-4));
    const Tensor x = randint(0, 96, {32, 128}, kGpu), y = randint(0, 96, {32, 128}, kGpu);
    run(std::string("gpu_charlm_train_step_b32") + (bf16 ? "_bf16" : ""), [&](long n) {
      for (long i = 0; i < n; ++i) {
        opt.zero_grad();
        Tensor loss;
        {
          const amp::AutocastGuard autocast(kCUDA, kBFloat16, bf16);
          loss = nn::functional::cross_entropy(model(x).view({-1, 96}), y.view({-1}));
        }
        loss.backward();
        opt.step();
      }
    }, "ms", ms, 11, 0.1, bf16 ? "autocast bf16, float32 master weights" : "fp32");
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda::is_available()) {
    std::fprintf(stderr, "locus_gpu_bench: no GPU: %s\n", cuda::unavailable_reason().c_str());
    return 1;
  }
  const bench::Options opt(argc, argv, {"copy", "ew", "mm", "transfer", "alloc", "overhead", "mlp", "amp", "cnn"});
  if (opt.wants("copy")) copy_group();
  if (opt.wants("ew")) ew_group();
  if (opt.wants("mm")) mm_group();
  if (opt.wants("transfer")) transfer_group();
  if (opt.wants("alloc")) alloc_group();
  if (opt.wants("overhead")) overhead_group();
  if (opt.wants("mlp")) mlp_group();
  if (opt.wants("amp")) amp_group();
  if (opt.wants("cnn")) cnn_group();
  if (opt.wants("attention")) attention_group();
  const cuda::DeviceProperties p = cuda::get_device_properties(0);
  std::string meta = "{\"version\": \"" + std::string(version()) + "\", \"device\": \"" + p.name + "\", \"capability\": \"" +
                     std::to_string(p.major) + "." + std::to_string(p.minor) + "\", \"sm_count\": " +
                     std::to_string(p.multi_processor_count) + ", \"driver\": \"" + cuda::driver_version() +
                     "\", \"runtime\": \"" + cuda::runtime_version() +
                     "\", \"skipped\": [\"gpu_mlp_train_step_sgd_b512_graph: no CUDA graph capture yet\"]}";
  if (!opt.json.empty()) g_bench.write_json(opt.json, "locus-gpu", meta);
}
