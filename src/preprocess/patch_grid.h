// The vision encoder's patch grid: how many patches (visual tokens) an image becomes under a resize
// policy, the bilinear resize that gives the image that grid, and the patch layout a ViT's patch
// embedding reads. grid_shape is pure arithmetic, so a sample index's image_tokens can be checked
// against the file's width and height without decoding the pixels.
#pragma once

#include <cstdint>
#include <vector>

#include "preprocess/image.h"

namespace tessera {

struct ResizePolicy {
  // fixed: every image becomes size x size (LLaVA-1.5, Liu et al. 2023, CLIP ViT-L/14-336: 336 px,
  // patch 14, a 24 x 24 grid = 576 tokens).
  // native: the aspect ratio is kept. The image is first scaled down so its longer side is at most
  // max_side, then each side is rounded to the nearest multiple of patch (at least one patch).
  // This is Qwen2-VL's dynamic resolution (Wang et al. 2024, "Qwen2-VL", section 2.1), simplified:
  // Qwen2-VL bounds the pixel count (min_pixels / max_pixels) instead of the longer side, rounds
  // to multiples of 28 (patch 14 times its 2 x 2 token merge) and rounds halves to even; here the
  // bound is on the side, the multiple is `patch` and halves round up.
  enum class Kind { fixed, native };
  Kind kind = Kind::fixed;
  int size = 336;        // fixed: output side in pixels (LLaVA-1.5's 336)
  int patch = 14;        // patch side in pixels (ViT-L/14)
  int max_side = 1344;   // native: longest side, 4 x 336 = 96 patches; Tessera's default, not a
                         // published figure
};

// Throws Error("resize.patch" / "resize.size" / "resize.max_side", ...) unless the policy is
// usable: patch 1 to 256, size and max_side multiples of patch up to 16384.
void validate_resize_policy(const ResizePolicy& policy);

struct GridShape {
  int rows = 0, cols = 0;
  int tokens() const { return rows * cols; }
};

// The grid an image of width x height pixels becomes under `policy` (validated; width and height
// must be 1 to 2^28). Integer arithmetic only, so it is exact and the same on every machine.
GridShape grid_shape(int width, int height, const ResizePolicy& policy);

// Bilinear resize with half-pixel centres: output pixel x samples the input at
// (x + 0.5) * in_width / out_width - 0.5, clamped to the edge pixels, as OpenCV's INTER_LINEAR
// and torchvision's resize(antialias=False) do. There is no antialiasing: downscaling by more than
// 2x skips input pixels (Pillow's BILINEAR widens its filter instead, so it differs there).
// Values are rounded to nearest; OpenCV's 11-bit fixed-point weights can differ by 1.
Image resize_bilinear(const Image& image, int width, int height);

// Patches of a resized image: values holds grid.tokens() patches in row-major grid order, each
// patch x patch x 3 bytes row-major, so a ViT's patch embedding can view it as
// [tokens, patch * patch * 3]. Pixel (y, x) channel c is at
// ((y / patch) * grid.cols + x / patch) * patch * patch * 3 + ((y % patch) * patch + x % patch) * 3 + c.
struct Patches {
  GridShape grid;
  int patch = 0;
  std::vector<std::uint8_t> values;
};

// Splits `resized` into patches; its width and height must be multiples of `patch`.
Patches patchify(const Image& resized, int patch);

// resize_bilinear to grid_shape's grid, then patchify: what the data service feeds an encoder.
Patches to_patch_grid(const Image& image, const ResizePolicy& policy);

}  // namespace tessera
