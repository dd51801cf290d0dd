#pragma once
/// \file state_dict.h
/// The state of a sharded model as a whole (torch.distributed.checkpoint.state_dict's
/// get_model_state_dict / set_model_state_dict), and sharded checkpoints that every rank writes
/// its part of and that load on any number of ranks (torch.distributed.checkpoint's save/load).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <string>

#include "locus/arg.h"
#include "locus/nn/module.h"
#include "locus/optim/optimizer.h"
#include "locus/ordered_dict.h"

namespace locus::distributed {

/// Options of get_model_state_dict and set_model_state_dict, by name (PyTorch's StateDictOptions).
struct StateDictOptions {
  /// Whole tensors, gathered from every rank, instead of this rank's shards. A collective: every
  /// rank calls it.
  LOCUS_ARG(bool, full_state_dict) = false;
  /// With full_state_dict: the whole tensors on the CPU, on rank 0 only (the others get an empty
  /// dict), so no rank ever holds them all on its device.
  LOCUS_ARG(bool, cpu_offload) = false;
  /// set_model_state_dict with full_state_dict: only rank 0's dict is read (the others pass an
  /// empty one) and each tensor is broadcast from it.
  LOCUS_ARG(bool, broadcast_from_rank0) = false;
  /// set_model_state_dict: every key of the model must be in the dict and no other, as
  /// Module::load_state_dict's strict.
  LOCUS_ARG(bool, strict) = true;
};

/// The module's state in PyTorch's names and order (`0.weight`, `0.bias`, ...): by default what
/// state_dict() gives (this rank's rows of each sharded parameter); with full_state_dict the
/// whole parameters, gathered, which load into the same model unsharded, in Locus or PyTorch, as
/// they are. Buffers are not sharded and come as they are on this rank.
OrderedDict<std::string, Tensor> get_model_state_dict(const nn::Module& module, StateDictOptions options = {});

/// Loads `state` into the module: with full_state_dict, whole tensors (what an unsharded model
/// saved, or get_model_state_dict(full_state_dict)) of which each rank keeps its rows; without,
/// this rank's shards. Every problem is found before anything changes: ShapeError naming the
/// whole shapes for a tensor of another shape; ValueError with Module::load_state_dict's message
/// for missing or unexpected keys (with strict). Returns the keys it did not use (strict=false).
/// With broadcast_from_rank0 the other ranks raise the same error rank 0 found.
nn::IncompatibleKeys set_model_state_dict(nn::Module& module, const OrderedDict<std::string, Tensor>& state,
                                          StateDictOptions options = {});

namespace checkpoint {

/// Writes the module's state to `directory` (created if needed), each rank its own part: rank r
/// writes `rank-<r>-of-<size>.safetensors` with its rows of every sharded parameter (rank 0 also
/// the buffers and any parameter that is not sharded), and rank 0 writes `index.json` naming,
/// for each tensor, its whole shape and dtype and which file holds which rows. Returns once
/// every rank's files are complete (a barrier). A collective; IOError naming a file that could
/// not be written.
void save(const nn::Module& module, const std::string& directory);
/// The same with the optimizer's state (Optimizer::state_dict, under "optim.<key>"): the
/// tensors of a sharded parameter's shape (Adam's moments, momentum) split into rows as the
/// parameter is, the rest (step counts, the groups' options) written by rank 0.
void save(const nn::Module& module, const optim::Optimizer& optimizer, const std::string& directory);

/// Loads what save() wrote into the module, sharded over any number of ranks: each rank reads
/// the rows it now holds from whichever files have them, so a checkpoint saved on 4 ranks loads
/// on 2, on 8 or unsharded. IOError naming the file for a missing or damaged index or shard
/// file; ValueError naming the tensors the module and the checkpoint do not share; ShapeError
/// for a tensor whose whole shape differs. Nothing changes when it raises.
void load(nn::Module& module, const std::string& directory);
/// The same with the optimizer's state, each rank taking the rows of its parameters' state that
/// it holds now, so training resumes on another number of ranks where it stopped. ValueError for
/// a checkpoint saved without an optimizer, and Optimizer::load_state_dict's errors.
void load(nn::Module& module, optim::Optimizer& optimizer, const std::string& directory);

}  // namespace checkpoint

}  // namespace locus::distributed

LOCUS_API_END
