#include "adapt/statistical_efficiency.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace tessera {

double statistical_efficiency(double batch, double noise_scale, double reference_batch) {
  if (!std::isfinite(batch) || batch <= 0.0) throw Error("batch", "got " + std::to_string(batch), "a number > 0");
  if (!std::isfinite(reference_batch) || reference_batch <= 0.0)
    throw Error("reference_batch", "got " + std::to_string(reference_batch), "a number > 0");
  if (!std::isfinite(noise_scale) || noise_scale < 0.0)
    throw Error("noise_scale", "got " + std::to_string(noise_scale), "a finite number >= 0");
  return (noise_scale + reference_batch) / (noise_scale + batch);
}

double goodput(double throughput, double batch, double noise_scale, double reference_batch) {
  if (!std::isfinite(throughput) || throughput < 0.0)
    throw Error("throughput", "got " + std::to_string(throughput), "a finite number >= 0");
  return throughput * statistical_efficiency(batch, noise_scale, reference_batch);
}

}  // namespace tessera
