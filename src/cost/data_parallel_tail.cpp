#include "cost/data_parallel_tail.h"

#include "cost/memory_model.h"

namespace tessera {

EmbeddingBucket embedding_bucket(double params, OptimizerSharding zero, std::int64_t ranks, const GroupLink& link) {
  if (params <= 0) return {};
  const double grads = kGradBytesPerParam * params;
  EmbeddingBucket b;
  b.reduce_s = zero == OptimizerSharding::none ? all_reduce_time_s(grads, ranks, link)
                                               : reduce_scatter_time_s(grads, ranks, link);
  b.gather_s = all_gather_time_s(kWeightBytesPerParam * params, ranks, link);
  return b;
}

}  // namespace tessera
