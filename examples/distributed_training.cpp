// Seed 001, "Multi-GPU and distributed": DistributedDataParallel launched with torchrun. The
// usual PyTorch DDP script, in C++, launched with `locus run`:
//   torchrun --nproc-per-node 2 train.py        -> locus run --nproc-per-node 2 ./example_distributed_training
//   dist.init_process_group("nccl")             -> distributed::init_process_group("nccl")  (gloo on cpu)
//   torch.cuda.set_device(local_rank)           -> cuda::set_device(local_rank)
//   model = DDP(model.to(device), device_ids=[local_rank])
//                                               -> nn::DistributedDataParallel ddp(model, group)
//   sampler = DistributedSampler(ds); DataLoader(ds, batch_size=32, sampler=sampler)
//   for epoch ...: sampler.set_epoch(epoch); for x, y in loader: ...
//   if rank == 0: torch.save(model.module.state_dict(), "model.pt")
//   dist.destroy_process_group()
// Started without a launcher it runs as a group of one, over a store in a temporary directory.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "examples/example_main.h"
#include "locus/locus.h"

bool train(locus::Device device, int rank, int world);

void example() {
  using namespace locus;
  namespace dist = locus::distributed;
  const bool launched = std::getenv("LOCUS_STORE") != nullptr;
  const int local_rank = dist::get_local_rank();  // int(os.environ["LOCAL_RANK"])

  // One device per rank: cuda:LOCAL_RANK on a GPU machine, else cpu (or sim:LOCAL_RANK).
  Device device = best_device();
  if (device.is_cuda()) {
    cuda::set_device(local_rank % cuda::device_count());
    device = Device(DeviceType::CUDA, cuda::current_device());
  } else if (device.is_sim()) {
    device = Device(DeviceType::Sim, local_rank % sim::device_count());
  }
  const std::string backend = device.is_cuda() && dist::is_available("nccl") ? "nccl" : "gloo";
  dist::GroupOptions options;
  const auto private_store = std::filesystem::temp_directory_path() / ("locus-ddp-example-" + std::to_string(getpid()));
  if (!launched) options.store("file://" + private_store.string()).rank(0).world_size(1);
  dist::init_process_group(backend, options);
  const int rank = dist::get_rank(), world = dist::get_world_size();
  if (rank == 0) std::cout << world << " rank(s) over " << backend << ", each on its own device\n";

  const bool same = train(device, rank, world);
  dist::destroy_process_group();  // after the DDP wrapper, which uses the group, is gone
  std::filesystem::remove_all(private_store);
  if (!same) throw Error("the ranks' weights differ");
}

// Three epochs of DDP; true when every rank ends with the same weights.
bool train(locus::Device device, int rank, int world) {
  using namespace locus;
  namespace dist = locus::distributed;
  // A dataset every rank builds the same way; the sampler gives each rank its shard.
  manual_seed(0);
  const Tensor features = randn({1024, 20});
  const Tensor labels = argmax(features.narrow(1, 0, 4), 1);  // a learnable rule
  auto dataset = std::make_shared<data::TensorDataset>(features, labels);
  auto sampler = std::make_shared<data::DistributedSampler>(data::DistributedSamplerOptions(world, rank));
  data::DataLoader loader(dataset, data::DataLoaderOptions(32).sampler(sampler).device(device));

  manual_seed(rank);  // different initial weights on purpose: DDP starts every rank from rank 0's
  nn::Sequential model{nn::Linear(20, 32), nn::ReLU(), nn::Linear(32, 4)};
  model->to(device);
  nn::DistributedDataParallel ddp(model);  // over the default group
  optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));

  for (int epoch = 0; epoch < 3; ++epoch) {
    sampler->set_epoch(static_cast<uint64_t>(epoch));  // a new shuffle each epoch, the same on every rank
    Tensor total = zeros({}, TensorOptions().device(device));
    for (const data::Example<>& batch : loader) {
      opt.zero_grad();
      const Tensor loss = nn::functional::cross_entropy(ddp(batch.data), batch.target);
      loss.backward();  // gradients are averaged over the ranks during backward
      opt.step();
      total = total + loss.detach();
    }
    dist::all_reduce(total, dist::ReduceOp::Avg);  // the mean loss over every rank
    if (rank == 0) std::cout << "epoch " << epoch << ": mean loss " << total.item<float>() / loader.size() << "\n";
  }

  // Every rank holds the same weights: their sums agree.
  Tensor sum = zeros({1}, TensorOptions().dtype(kFloat64).device(device));
  for (const Tensor& p : model->parameters()) sum = sum + p.detach().to(kFloat64).sum();
  std::vector<Tensor> sums;
  for (int r = 0; r < world; ++r) sums.push_back(empty_like(sum));
  dist::all_gather(sums, sum);
  bool same = true;
  for (const Tensor& s : sums) same = same && s.item<double>() == sum.item<double>();
  if (rank == 0) {
    std::cout << "weights identical on every rank: " << (same ? "yes" : "NO") << "\n";
    const auto path = std::filesystem::temp_directory_path() / ("locus-ddp-" + std::to_string(getpid()) + ".safetensors");
    save(model->state_dict(), path.string());  // the inner model's names: 0.weight, 2.bias, ...
    std::cout << "rank 0 saved " << load(path.string()).size() << " tensors (0.weight, ...)\n";
    std::filesystem::remove(path);
  }
  return same;
}
