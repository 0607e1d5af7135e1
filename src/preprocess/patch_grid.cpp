#include "preprocess/patch_grid.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace tessera {

namespace {

// Largest patch side: no published ViT uses more than 32 (ViT-B/32, Dosovitskiy et al. 2021);
// 256 leaves room without letting a typo ask for one patch the size of the image.
constexpr int kMaxPatch = 256;
// Largest resized side: 16384^2 = 2^28 pixels, the decoder's kMaxImagePixels.
constexpr int kMaxSide = 16384;

// `value` must be a multiple of `patch` from patch to kMaxSide.
void check_side(int value, int patch, const char* field) {
  if (value < patch || value > kMaxSide || value % patch != 0)
    throw Error(field, "is " + std::to_string(value),
                "a multiple of resize.patch (" + std::to_string(patch) + ") from " +
                    std::to_string(patch) + " to " + std::to_string(kMaxSide));
}

void check_extent(int value, const char* field) {
  if (value < 1 || value > kMaxImagePixels)
    throw Error(field, "is " + std::to_string(value), "1 to 2^28 pixels");
}

// Patches along one side under the native policy: side * min(longer, max_side) / longer pixels
// after the downscale, divided by patch and rounded to nearest (halves up), at least 1. In
// integers: round(n / d) = (2n + d) / (2d), with n < 2^43 so nothing overflows.
int native_cells(int side, int longer, const ResizePolicy& policy) {
  const std::int64_t n = std::int64_t{side} * std::min(longer, policy.max_side);
  const std::int64_t d = std::int64_t{longer} * policy.patch;
  return static_cast<int>(std::max<std::int64_t>(1, (2 * n + d) / (2 * d)));
}

// Where one output row or column samples the input: the two neighbouring input indices and the
// weight of the second, for all outputs at once so the pixel loop does no division or allocation.
struct Taps {
  std::vector<int> first, second;
  std::vector<float> weight;
};

Taps taps(int source, int target) {
  Taps t;
  t.first.resize(static_cast<std::size_t>(target));
  t.second.resize(t.first.size());
  t.weight.resize(t.first.size());
  const double scale = static_cast<double>(source) / target;
  for (int i = 0; i < target; ++i) {
    // Half-pixel centres, clamped to the edge pixels (OpenCV imgproc/src/resize.cpp, INTER_LINEAR).
    const double position = std::clamp((i + 0.5) * scale - 0.5, 0.0, static_cast<double>(source - 1));
    const int lower = static_cast<int>(position);
    const auto k = static_cast<std::size_t>(i);
    t.first[k] = lower;
    t.second[k] = std::min(lower + 1, source - 1);
    t.weight[k] = static_cast<float>(position - lower);
  }
  return t;
}

// One output row from two input rows. a + w (b - a) stays within [min(a, b), max(a, b)], so the
// result is in 0..255 and a constant image stays constant.
void blend_row(const std::uint8_t* top, const std::uint8_t* bottom, float wy, const Taps& x,
               std::uint8_t* out) {
  for (std::size_t i = 0; i < x.first.size(); ++i) {
    const std::size_t a = static_cast<std::size_t>(x.first[i]) * kRgbChannels;
    const std::size_t b = static_cast<std::size_t>(x.second[i]) * kRgbChannels;
    const float wx = x.weight[i];
    for (int c = 0; c < kRgbChannels; ++c) {
      const float upper = top[a + c] + wx * (top[b + c] - top[a + c]);
      const float lower = bottom[a + c] + wx * (bottom[b + c] - bottom[a + c]);
      const float value = upper + wy * (lower - upper);
      *out++ = static_cast<std::uint8_t>(value + 0.5f);  // round to nearest
    }
  }
}

}  // namespace

void validate_resize_policy(const ResizePolicy& policy) {
  if (policy.patch < 1 || policy.patch > kMaxPatch)
    throw Error("resize.patch", "is " + std::to_string(policy.patch),
                "1 to " + std::to_string(kMaxPatch) + " pixels");
  if (policy.kind == ResizePolicy::Kind::fixed) check_side(policy.size, policy.patch, "resize.size");
  else check_side(policy.max_side, policy.patch, "resize.max_side");
}

GridShape grid_shape(int width, int height, const ResizePolicy& policy) {
  validate_resize_policy(policy);
  check_extent(width, "image width");
  check_extent(height, "image height");
  if (policy.kind == ResizePolicy::Kind::fixed) return {policy.size / policy.patch, policy.size / policy.patch};
  const int longer = std::max(width, height);
  return {native_cells(height, longer, policy), native_cells(width, longer, policy)};
}

Image resize_bilinear(const Image& image, int width, int height) {
  check_image(image, "image");
  if (width < 1 || height < 1 || std::int64_t{width} * height > kMaxImagePixels)
    throw Error("resize target", std::to_string(width) + " x " + std::to_string(height),
                "width and height >= 1, at most 2^28 pixels");
  const Taps x = taps(image.width, width), y = taps(image.height, height);
  Image out{width, height, std::vector<std::uint8_t>(static_cast<std::size_t>(width) * height * kRgbChannels)};
  const std::size_t in_stride = static_cast<std::size_t>(image.width) * kRgbChannels;
  const std::size_t out_stride = static_cast<std::size_t>(width) * kRgbChannels;
  for (std::size_t row = 0; row < y.first.size(); ++row) {
    const std::uint8_t* top = image.rgb.data() + static_cast<std::size_t>(y.first[row]) * in_stride;
    const std::uint8_t* bottom = image.rgb.data() + static_cast<std::size_t>(y.second[row]) * in_stride;
    blend_row(top, bottom, y.weight[row], x, out.rgb.data() + row * out_stride);
  }
  return out;
}

Patches patchify(const Image& resized, int patch) {
  check_image(resized, "image");
  if (patch < 1 || patch > kMaxPatch)
    throw Error("patch", "is " + std::to_string(patch), "1 to " + std::to_string(kMaxPatch) + " pixels");
  if (resized.width % patch != 0 || resized.height % patch != 0)
    throw Error("image", std::to_string(resized.width) + " x " + std::to_string(resized.height) +
                             " pixels is not a whole number of " + std::to_string(patch) + " x " +
                             std::to_string(patch) + " patches",
                "width and height multiples of the patch size (resize_bilinear first)");
  const auto p = static_cast<std::size_t>(patch);
  Patches out{{resized.height / patch, resized.width / patch}, patch,
              std::vector<std::uint8_t>(resized.rgb.size())};
  const std::size_t width = static_cast<std::size_t>(resized.width);
  const std::size_t patch_row_bytes = p * kRgbChannels;
  std::uint8_t* next = out.values.data();
  for (std::size_t row = 0; row < static_cast<std::size_t>(out.grid.rows); ++row)
    for (std::size_t col = 0; col < static_cast<std::size_t>(out.grid.cols); ++col)
      for (std::size_t py = 0; py < p; ++py, next += patch_row_bytes)
        std::copy_n(resized.rgb.data() + ((row * p + py) * width + col * p) * kRgbChannels,
                    patch_row_bytes, next);
  return out;
}

Patches to_patch_grid(const Image& image, const ResizePolicy& policy) {
  const GridShape grid = grid_shape(image.width, image.height, policy);
  return patchify(resize_bilinear(image, grid.cols * policy.patch, grid.rows * policy.patch),
                  policy.patch);
}

}  // namespace tessera
