#pragma once
/// \file nn.h
/// Everything of locus::nn: Module, the layers, their functional forms and the losses.

#include "locus/export.h"
LOCUS_API_BEGIN

#include "locus/nn/activation.h"
#include "locus/nn/clip_grad.h"
#include "locus/nn/cloneable.h"
#include "locus/nn/containers.h"
#include "locus/nn/conv.h"
#include "locus/nn/data_parallel.h"
#include "locus/nn/distributed_data_parallel.h"
#include "locus/nn/functional.h"
#include "locus/nn/functional_layer.h"
#include "locus/nn/init.h"
#include "locus/nn/layers.h"
#include "locus/nn/loss.h"
#include "locus/nn/loss_modules.h"
#include "locus/nn/loss_options.h"
#include "locus/nn/module.h"
#include "locus/nn/module_holder.h"
#include "locus/nn/embedding.h"
#include "locus/nn/layer_norm.h"
#include "locus/nn/multihead_attention.h"
#include "locus/nn/transformer.h"
#include "locus/nn/transformer_layer.h"
#include "locus/nn/normalization.h"
#include "locus/nn/pooling.h"
#include "locus/nn/upsampling.h"
#include "locus/nn/functional/conv.h"
#include "locus/nn/functional/embedding.h"
#include "locus/nn/functional/layer_norm.h"
#include "locus/nn/functional/normalization.h"
#include "locus/nn/functional/padding.h"
#include "locus/nn/functional/pooling.h"
#include "locus/nn/functional/upsampling.h"
#include "locus/nn_ops.h"

LOCUS_API_END
