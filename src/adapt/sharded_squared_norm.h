// Squared norm of a gradient that tensor, pipeline or expert parallelism splits over ranks: the
// squared norm of a concatenation is the sum of its pieces' squared norms, so each rank adds up
// its pieces and the model-parallel group sums the ranks' shares (one all-reduce of one number).
// A parameter held whole by r ranks of the group (norm weights and row-parallel biases replicated
// over tp; word embeddings tied between the first and last pipeline stages) would be counted r
// times; each copy adds 1/r of its squared norm instead, so the group's sum counts it once (and,
// should the copies differ slightly before their synchronisation, counts their mean).
#pragma once

#include <cstdint>
#include <span>

namespace tessera {

// One rank's share of a model's squared gradient norm.
class SquaredNormShare {
 public:
  // squared_norm: of this rank's piece of one parameter's gradient; replicas: how many ranks of
  // the model-parallel group hold this same piece (1 for sharded parameters). Throws Error on a
  // negative or non-finite norm or replicas < 1.
  void add(double squared_norm, std::int64_t replicas = 1);
  double value() const { return sum_; }

 private:
  double sum_ = 0;
};

// The model's squared norm from every rank's share of one model-parallel group (what an
// all-reduce sum of the shares returns).
double model_squared_norm(std::span<const double> rank_shares);

}  // namespace tessera
