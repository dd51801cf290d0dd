#pragma once
// The forgotten eval(): a layer whose training mode changes its result (BatchNorm, Dropout) run
// in training mode while gradients are off (NoGradGuard, InferenceMode) is almost always
// evaluation code that missed `model->eval()`. PyTorch says nothing; Locus warns once per
// process on stderr.

namespace locus::nn::detail {

/// Prints the warning naming `layer` the first time it applies in this process.
void warn_if_training_without_grad(const char* layer);

}  // namespace locus::nn::detail
