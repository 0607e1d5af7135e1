// Statistical efficiency and goodput (Pollux: Qiao et al., OSDI'21, section 3.1).
//
// A step at global batch B makes the progress of E(B) * B / B0 steps at the reference batch B0:
//   E(B) = (B_noise + B0) / (B_noise + B)
// (McCandlish et al. 2018 section 2: at batch B a target takes S = S_min (1 + B_noise / B) steps
// and E = E_min (1 + B / B_noise) examples, so examples at B0 / examples at B is the ratio above).
// E(B0) = 1; E < 1 above B0, E > 1 below it.
// Goodput = throughput x E(B): examples per second, counted at the reference batch's efficiency.
// Batch sizes and the noise scale share one unit (sequences here).
#pragma once

namespace tessera {

// Throws Error unless batch > 0, reference_batch > 0 and noise_scale >= 0 (all finite).
double statistical_efficiency(double batch, double noise_scale, double reference_batch);

// throughput (examples or tokens per second) x statistical_efficiency(...).
double goodput(double throughput, double batch, double noise_scale, double reference_batch);

}  // namespace tessera
