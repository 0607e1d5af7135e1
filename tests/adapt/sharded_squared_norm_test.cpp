// The noise-scale estimate from per-rank shares of squared norms is the same whatever tensor-,
// pipeline- and data-parallel layout holds the same gradients.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "adapt/gradient_noise_scale.h"
#include "adapt/sharded_squared_norm.h"
#include "core/error.h"

namespace tessera {
namespace {

using Vector = std::vector<double>;

// A toy decoder's parameters, laid out as Megatron-LM shards them:
//   per layer: a column-parallel matrix (rows split over tp), a row-parallel matrix (split over tp),
//              a norm weight and a row-parallel bias (both replicated over tp);
//   word embedding on the first pipeline stage, tied output layer on the last (vocab-parallel over
//   tp, and the same tensor on both stages when pp > 1).
constexpr int kLayers = 4;
constexpr int kMatrix = 24;  // elements per matrix (divisible by every tp used)
constexpr int kNorm = 6;
constexpr int kBias = 5;
constexpr int kEmbedding = 16;

struct ToyModel {
  // Offsets of each tensor in the flat gradient.
  int column(int layer) const { return layer * kLayerSize; }
  int row(int layer) const { return column(layer) + kMatrix; }
  int norm(int layer) const { return row(layer) + kMatrix; }
  int bias(int layer) const { return norm(layer) + kNorm; }
  int embedding() const { return kLayers * kLayerSize; }
  int size() const { return embedding() + kEmbedding; }
  static constexpr int kLayerSize = 2 * kMatrix + kNorm + kBias;
};

double sq(const Vector& g, int begin, int count) {
  double s = 0;
  for (int i = begin; i < begin + count; ++i) s += g[i] * g[i];
  return s;
}

// One (pp stage, tp rank)'s share of |g|^2 for a full gradient g. `count_replicas_once` = false
// adds replicated tensors whole on every rank (the bug the shares avoid).
double rank_share(const ToyModel& m, const Vector& g, int tp, int pp, int tp_rank, int stage, bool count_replicas_once) {
  SquaredNormShare share;
  const int layers_per_stage = kLayers / pp;
  const std::int64_t tp_replicas = count_replicas_once ? tp : 1;
  for (int layer = stage * layers_per_stage; layer < (stage + 1) * layers_per_stage; ++layer) {
    const int piece = kMatrix / tp;
    share.add(sq(g, m.column(layer) + tp_rank * piece, piece));
    share.add(sq(g, m.row(layer) + tp_rank * piece, piece));
    share.add(sq(g, m.norm(layer), kNorm), tp_replicas);
    share.add(sq(g, m.bias(layer), kBias), tp_replicas);
  }
  const int piece = kEmbedding / tp;
  const std::int64_t tied_replicas = count_replicas_once && pp > 1 ? 2 : 1;
  if (stage == 0) share.add(sq(g, m.embedding() + tp_rank * piece, piece), tied_replicas);
  if (stage == pp - 1 && pp > 1) share.add(sq(g, m.embedding() + tp_rank * piece, piece), tied_replicas);
  return share.value();
}

// Squared norm of g as the model-parallel group sums its ranks' shares.
double group_squared_norm(const ToyModel& m, const Vector& g, int tp, int pp, bool count_replicas_once = true) {
  std::vector<double> shares;
  for (int stage = 0; stage < pp; ++stage)
    for (int r = 0; r < tp; ++r) shares.push_back(rank_share(m, g, tp, pp, r, stage, count_replicas_once));
  return model_squared_norm(shares);
}

Vector mean_of(const std::vector<Vector>& examples, std::size_t begin, std::size_t count) {
  Vector mean(examples[0].size(), 0.0);
  for (std::size_t e = begin; e < begin + count; ++e)
    for (std::size_t i = 0; i < mean.size(); ++i) mean[i] += examples[e][i] / static_cast<double>(count);
  return mean;
}

struct Layout {
  int tp, pp, dp;
};

// Steps of a batch of 64 examples in micro-batches of 4 (16 per step, spread over dp ranks, each
// rank's micro-batches in order); small-batch norm = mean over all micro-batches of their squared
// norm, each summed from the model-parallel shares; big-batch norm = the squared norm of the
// all-reduced gradient, from the shares of one data-parallel replica.
double estimate_noise_scale(const Layout& layout, bool count_replicas_once = true) {
  constexpr int kSteps = 30, kBatch = 64, kMicro = 4;
  const ToyModel m;
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 1.0);
  GnsEstimator gns(0.9);
  for (int step = 0; step < kSteps; ++step) {
    std::vector<Vector> examples(kBatch, Vector(m.size()));
    for (auto& e : examples)
      for (int layer = 0; layer < kLayers; ++layer)
        for (int i = m.column(layer); i < m.column(layer + 1); ++i)
          e[i] = i < m.norm(layer) ? 0.3 * std::cos(i) + normal(rng)  // matrices: noisy
                                   : 1.0 + 0.2 * normal(rng);         // norms, biases: mostly signal
    for (auto& e : examples)
      for (int i = m.embedding(); i < m.size(); ++i) e[i] = 0.3 * std::sin(i) + normal(rng);
    const int micro_batches = kBatch / kMicro, per_rank = micro_batches / layout.dp;
    double small_sum = 0;
    for (int rank = 0; rank < layout.dp; ++rank)
      for (int k = 0; k < per_rank; ++k) {
        const Vector micro = mean_of(examples, static_cast<std::size_t>((rank * per_rank + k) * kMicro), kMicro);
        small_sum += group_squared_norm(m, micro, layout.tp, layout.pp, count_replicas_once);
      }
    const double big = group_squared_norm(m, mean_of(examples, 0, kBatch), layout.tp, layout.pp, count_replicas_once);
    gns.update(small_sum / micro_batches, kMicro, big, kBatch);
  }
  return gns.noise_scale();
}

TEST(ShardedSquaredNorm, NoiseScaleIsTheSameUnderEveryLayout) {
  const double reference = estimate_noise_scale({1, 1, 1});
  for (const Layout& l : {Layout{2, 1, 1}, Layout{1, 2, 1}, Layout{1, 1, 4}, Layout{2, 2, 2}, Layout{4, 4, 1},
                          Layout{4, 2, 8}, Layout{8, 1, 16}})
    EXPECT_NEAR(estimate_noise_scale(l) / reference, 1.0, 1e-12) << "tp=" << l.tp << " pp=" << l.pp << " dp=" << l.dp;
  EXPECT_GT(reference, 0.0);
}

// Counting replicated tensors on every rank changes the estimate: the test above can fail.
TEST(ShardedSquaredNorm, CountingReplicasOnEveryRankWouldChangeTheEstimate) {
  const double reference = estimate_noise_scale({1, 1, 1});
  EXPECT_GT(std::abs(estimate_noise_scale({4, 2, 1}, false) / reference - 1.0), 1e-3);
}

TEST(ShardedSquaredNorm, SharesAddUpAndRejectBadInput) {
  SquaredNormShare s;
  s.add(3.0);
  s.add(4.0, 4);
  EXPECT_DOUBLE_EQ(s.value(), 4.0);
  const double shares[] = {1.0, 2.5};
  EXPECT_DOUBLE_EQ(model_squared_norm(shares), 3.5);
  EXPECT_THROW(s.add(-1.0), Error);
  EXPECT_THROW(s.add(1.0, 0), Error);
  EXPECT_THROW(s.add(INFINITY), Error);
}

}  // namespace
}  // namespace tessera
