// The text `tessera calibrate` prints: what it was fitted on, every parameter (catalog, fitted,
// one-sigma uncertainty, status), the error before and after; with --report also every
// measurement's prediction before and after.
#pragma once

#include <string>

#include "calibrate/calibration.h"
#include "formats/calibration_profile_json.h"

namespace tessera {

std::string calibration_text(const CalibrationProfile& profile, const ProfileInputs& inputs, bool per_measurement);

}  // namespace tessera

#include "evaluation/held_out_calibration.h"

namespace tessera {
// `tessera calibrate --held-out`: per group, the median |error| of the rows not fitted on,
// before and after, over the draws (min / median / max of the draws' medians), and the totals.
// per_draw (--report) first lists every draw: its rows fitted on, its held-out median |error|
// before and after, and the parameters it moved as multiples of their catalog values.
std::string held_out_text(const HeldOutCalibration& result, bool per_draw = false);
}  // namespace tessera
