// The checkpoint interval and the fraction of wall-clock it leaves for useful steps, under
// failures that arrive as a Poisson process of mean time between failures M (the job's MTBF).
// tau: compute time between two checkpoints; delta: the time a checkpoint stalls training;
// R: the time from a failure until training resumes from the last checkpoint.
//
//   Young (1974), "A first order approximation to the optimum checkpoint interval", CACM 17(9):
//     tau = sqrt(2 delta M)                                       (first order in delta / M)
//   Daly (2006), "A higher order estimate of the optimum checkpoint interval for restart dumps",
//   FGCS 22(3), eq. (37):
//     tau = sqrt(2 delta M) [1 + (1/3) sqrt(delta / 2M) + (1/9) (delta / 2M)] - delta   (delta < 2M)
//     tau = M                                                                          (delta >= 2M)
//   Daly's wall-clock model (ibid., eq. (13)): failures may strike during work, checkpoints and
//   restarts alike; per unit of useful work the expected wall time is
//     T_wall / T_solve = (M / tau) e^{R/M} (e^{(tau + delta)/M} - 1),
//   so the useful fraction (Llama 3's "effective training time") is its reciprocal. Its exact
//   maximiser solves e^{(tau+delta)/M} (1 - tau/M) = 1 (the derivative's zero; the left side
//   falls monotonically on [0, M], so bisection finds it); R only scales the fraction.
#pragma once

namespace tessera {

double young_interval_s(double checkpoint_s, double mtbf_s);
double daly_interval_s(double checkpoint_s, double mtbf_s);
// The exact optimum of useful_fraction over tau (bisection to a relative 1e-12).
double optimal_interval_s(double checkpoint_s, double mtbf_s);
// Daly's T_solve / T_wall for interval tau.
double useful_fraction(double interval_s, double checkpoint_s, double restart_s, double mtbf_s);

}  // namespace tessera
